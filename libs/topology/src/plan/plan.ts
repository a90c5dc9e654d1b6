import { agentxSettingsSchema, defaultPublicDataset, type AgentxSettings } from '../config/agentx';
import { ConfigError, showValue, type ConfigIssue } from '../config/errors';
import { dotted, lineOf, zodIssuesToConfigIssues, type ConfigSource, type PathSegment } from '../config/parse';
import { all2allBackends, type Budgets, type ClusterProfile, type SweepConfig } from '../config/schema';
import { contentHash } from '@infersweep/core';
import { buildNodeCommands, checkCommonArgs, checkLaunchInvariants, type NodeCommand } from '../topology/commands';
import { cpuDifferences, cpuLaunch } from '../topology/cpu';
import { HEAD_ADDR, NODE_ADDR, nodeAddrOf, PORT, placeholdersIn } from '../topology/placeholders';
import { compareVersions, recipeFor, validatedShape } from '../topology/recipes';
import { checkTopology, deriveNodes, type Topology } from '../topology/validate';
import { sweepPlanSchema, type EngineIds, type PlanNode, type SweepPlan } from './schema';
import { computeTimeLimit, pointBudget } from './timelimit';
import { resolveEngineSettings } from './engine';
import { describeCapacity, estimateCapacity, gpuMemoryBytes, judgeCapacity } from './capacity';

export interface PlanOptions {
  orientation: string;
  cluster: string;
  /** Run only these concurrency points (each must be in the orientation's list). */
  points?: readonly number[];
  /** For error messages (file and line numbers). */
  source?: ConfigSource;
  /** Plan even when the capacity check refuses (the refusal stays in the plan's warnings and capacity block). */
  force?: boolean;
}

/** engine.env names that look like credentials (they belong in secretEnv). */
export const SECRET_LIKE = /(TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|ACCESS_?KEY|CREDENTIAL|PRIVATE_?KEY)/i;
/** Variables the planner sets per node. */
const DERIVED_ENV = [
  'VLLM_HOST_IP',
  'CUDA_VISIBLE_DEVICES',
  'GLOO_SOCKET_IFNAME',
  'NCCL_SOCKET_IFNAME',
  'VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS',
];

/** The stand-in a non-head node runs under the simulator override: lives as long as its step, prints the vLLM argv. */
export function standInArgv(rank: number, vllmArgv: readonly string[]): string[] {
  return ['bash', '-c', 'printf "infersweep stand-in for node rank %s: %s\\n" "$0" "$*"; exec sleep 2147483647', String(rank), ...vllmArgv];
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Deep merge of plain objects (arrays and scalars from `over` replace). */
export function deepMerge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const b = out[k];
    out[k] = isPlainObject(b) && isPlainObject(v) ? deepMerge(b, v) : v;
  }
  return out;
}

class Issues {
  readonly list: ConfigIssue[] = [];
  constructor(private readonly source: ConfigSource | undefined) {}
  add(path: readonly PathSegment[], value: unknown, message: string): void {
    this.list.push({ path: dotted(path), value: showValue(value), message, line: lineOf(this.source, path) });
  }
  throwIfAny(file: string): void {
    if (this.list.length > 0) throw new ConfigError(file, this.list);
  }
}

/** Resolve the cluster's AgentX settings: top-level block deep-merged with the cluster's override. */
export function resolveAgentx(config: SweepConfig, clusterName: string, source?: ConfigSource): AgentxSettings {
  const cluster = config.clusters[clusterName];
  const merged = deepMerge(config.agentx, cluster?.agentx ?? {});
  const r = agentxSettingsSchema.safeParse(merged);
  if (r.success) return r.data;
  const issues = zodIssuesToConfigIssues(r.error.issues, merged, source, agentxSettingsSchema).map((i) => {
    const overridden = cluster?.agentx !== undefined && i.path.split(/[.[]/)[0]! in cluster.agentx;
    const path = overridden ? `clusters.${clusterName}.agentx.${i.path}` : `agentx.${i.path}`;
    return { ...i, path, line: source?.lines[path] ?? i.line };
  });
  throw new ConfigError(source?.file ?? '(config)', issues);
}

export function resolveBudgets(config: SweepConfig, cluster: ClusterProfile): Budgets {
  return { ...config.budgets, ...(cluster.budgets ?? {}) } as Budgets;
}

/**
 * Plan one orientation on one cluster profile: validated topology, per-node argv/env/launchArgv
 * with placeholders, endpoints, expected DP engine ids, the Slurm request and time limit, points,
 * budgets, warnings and a content hash. Pure. Throws ConfigError listing every problem.
 */
export function planSweep(config: SweepConfig, opts: PlanOptions): SweepPlan {
  const file = opts.source?.file ?? '(config)';
  const issues = new Issues(opts.source);
  const oName = opts.orientation;
  const orientation = config.orientations[oName];
  const cluster = config.clusters[opts.cluster];
  if (orientation === undefined)
    issues.add(['orientations'], oName, `no orientation "${oName}" (have: ${Object.keys(config.orientations).join(', ')})`);
  if (cluster === undefined)
    issues.add(['clusters'], opts.cluster, `no cluster profile "${opts.cluster}" (have: ${Object.keys(config.clusters).join(', ')})`);
  issues.throwIfAny(file);
  if (orientation === undefined || cluster === undefined) throw new Error('unreachable');

  const oPath = ['orientations', oName];
  const tPath = [...oPath, 'topology'];
  const spec = orientation.topology;
  const G = cluster.gpusPerNode;
  const warnings: string[] = [];
  const notes: string[] = [];

  // Nodes are derived; a given value is only a check.
  const derived = deriveNodes(spec.tp, spec.pp, spec.dp, G);
  if (derived === null) {
    issues.add(
      [...tPath, 'dp'],
      spec.dp,
      `TP×PP×DP = ${spec.tp * spec.pp * spec.dp} GPUs do not tile nodes of ${G} GPUs (cluster ${opts.cluster}); make TP×PP×DP a multiple of ${G}`,
    );
  } else if (spec.nodes !== undefined && spec.nodes !== derived) {
    issues.add(
      [...tPath, 'nodes'],
      spec.nodes,
      `TP×PP×DP = ${spec.tp * spec.pp * spec.dp} GPUs on ${G}-GPU nodes (cluster ${opts.cluster}) need ${derived} nodes; fix nodes or omit it (it is derived)`,
    );
  }
  issues.throwIfAny(file);
  const nodes = derived ?? 1;

  const result = checkTopology({ ...spec, nodes, gpusPerNode: G, moe: config.model.moe });
  if (!result.ok) {
    for (const v of result.violations)
      issues.add(v.field === 'gpusPerNode' ? ['clusters', opts.cluster, 'gpusPerNode'] : [...tPath, v.field], v.value, v.message);
    issues.throwIfAny(file);
    throw new Error('unreachable');
  }
  const topology: Topology = result.topology;
  warnings.push(...topology.warnings);
  warnings.push(...topology.experimental.map((e) => `experimental: ${e}`));

  // Engine checks (rules 7, 8, 15, 17, 18).
  const engine = config.engine;
  checkCommonArgs(engine.commonArgs).forEach((p) => issues.add(['engine', 'commonArgs', p.index], p.arg, p.message));
  checkCommonArgs(orientation.engine?.extraArgs ?? []).forEach((p) =>
    issues.add([...oPath, 'engine', 'extraArgs', p.index], p.arg, p.message),
  );
  const envSources: [PathSegment[], Record<string, string>][] = [
    [['engine', 'env'], engine.env],
    [[...oPath, 'engine', 'env'], orientation.engine?.env ?? {}],
  ];
  for (const [where, env] of envSources) {
    for (const removed of ['VLLM_RPC_TIMEOUT', 'VLLM_ALL2ALL_BACKEND']) {
      if (env[removed] !== undefined) {
        issues.add(
          [...where, removed],
          env[removed],
          removed === 'VLLM_RPC_TIMEOUT'
            ? 'removed from vLLM (PR #44128); delete it'
            : 'removed from vLLM; set engine.all2allBackend instead',
        );
      }
    }
  }
  if (engine.all2allBackend !== undefined) {
    if (engine.all2allBackend === 'pplx' || engine.all2allBackend === 'naive') {
      issues.add(
        ['engine', 'all2allBackend'],
        engine.all2allBackend,
        `removed from vLLM (falls back silently); allowed: ${all2allBackends.join(', ')}`,
      );
    } else if (!(all2allBackends as readonly string[]).includes(engine.all2allBackend)) {
      issues.add(['engine', 'all2allBackend'], engine.all2allBackend, `allowed: ${all2allBackends.join(', ')}`);
    } else if (!topology.expertParallel) {
      warnings.push(
        `engine.all2allBackend ${engine.all2allBackend} is not emitted: orientation ${oName} has no expert parallelism (rule 8)`,
      );
    }
  }
  if (engine.eplb !== undefined && !topology.expertParallel) {
    issues.add(
      ['engine', 'eplb'],
      engine.eplb,
      `EPLB needs expert parallelism (EP > 1) but orientation ${oName} has EP ${topology.ep}; remove engine.eplb or set topology.ep (rule 7)`,
    );
  }
  // Secrets: names only. A credential typed into engine.env would be expanded into the plan (and so
  // into the workflow history, plan.json and srun's argv): refused, with the fix.
  for (const k of Object.keys(engine.env)) {
    if (SECRET_LIKE.test(k)) {
      issues.add(
        ['engine', 'env', k],
        '(value not shown)',
        `looks like a credential: engine.env values are stored in the plan and the workflow history. Move the name to engine.secretEnv (e.g. secretEnv: [${k}]) and give the value to the worker (its environment or clusters.${opts.cluster}.secretsFile)`,
      );
    }
  }
  const secretEnv = [...new Set([...engine.secretEnv, ...cluster.secretEnv])];
  for (const k of secretEnv) {
    const where = engine.secretEnv.includes(k) ? ['engine', 'secretEnv'] : ['clusters', opts.cluster, 'secretEnv'];
    if (engine.env[k] !== undefined)
      issues.add(where, k, `${k} is also in engine.env; a variable is either plain (engine.env) or secret (secretEnv), not both`);
    if (DERIVED_ENV.includes(k)) issues.add(where, k, `${k} is derived per node by the planner; it cannot be a secret`);
  }
  if (engine.env.VLLM_USE_RUST_FRONTEND === '1') {
    warnings.push(
      'VLLM_USE_RUST_FRONTEND=1: /metrics parity of per-engine labels is unverified; readiness and idle-rank checks may fail (rule 18)',
    );
  }
  const recipe = recipeFor(config.model.family, cluster.gpu);
  const modelDefault = config.model.defaultContextTokens ?? recipe?.modelDefaultContext;
  if (recipe !== undefined) {
    if (compareVersions(engine.version, recipe.minVllmVersion) < 0) {
      issues.add(['engine', 'version'], engine.version, `${recipe.family} needs vLLM ≥ ${recipe.minVllmVersion}`);
    }
    // with architecture numbers the capacity check below says more than this rule of thumb
    if (config.model.architecture !== undefined) {
      /* capacity check */
    } else if (engine.maxModelLen === undefined && (modelDefault ?? Infinity) > recipe.kvSafeMaxModelLen) {
      warnings.push(
        `engine.maxModelLen is not set: vLLM uses the model default context (${modelDefault ?? 'unknown'} tokens), more than the ${recipe.gpu} KV capacity the ${recipe.family} recipe allows (--max-model-len ${recipe.kvSafeMaxModelLen}); startup may fail the KV-capacity check. Set engine.maxModelLen: ${recipe.kvSafeMaxModelLen} (rule 18) unless the model default is intended`,
      );
    } else if (engine.maxModelLen !== undefined && engine.maxModelLen > recipe.kvSafeMaxModelLen) {
      warnings.push(
        `engine.maxModelLen ${engine.maxModelLen} exceeds the ${recipe.family} ${recipe.gpu} recipe's ${recipe.kvSafeMaxModelLen}; startup may fail the KV-capacity check`,
      );
    }
    const shape = validatedShape(recipe, topology);
    if (topology.dp > 1 && topology.expertParallel && !recipe.dpEpValidated && shape !== undefined) {
      notes.push(
        `DP${topology.dp}×EP${topology.ep} with TP${topology.tp}/PP${topology.pp} is validated on ${recipe.gpu} by ${shape.source}`,
      );
    } else if (topology.dp > 1 && topology.expertParallel && !recipe.dpEpValidated) {
      const allowed = orientation.allowUnvalidated ?? engine.allowUnvalidated;
      const what = `DP${topology.dp}×EP${topology.ep} is not a validated ${recipe.family} profile on ${recipe.gpu} (${recipe.source})`;
      if (allowed) warnings.push(`experimental on ${recipe.gpu}: ${what}; allowed by allowUnvalidated`);
      else issues.add([...tPath, 'ep'], spec.ep, `${what}; set orientations.${oName}.allowUnvalidated: true to run it anyway (rule 18)`);
    }
  }

  // AgentX settings and budgets for this cluster.
  const agentx = resolveAgentx(config, opts.cluster, opts.source);
  const budgets = resolveBudgets(config, cluster);
  if (agentx.profileDurationSeconds < agentx.canonicalMinDurationSeconds && !agentx.nonCanonical) {
    issues.add(
      ['agentx', 'profileDurationSeconds'],
      agentx.profileDurationSeconds,
      `shorter than the canonical minimum ${agentx.canonicalMinDurationSeconds} s; set nonCanonical: true (results are then not submission-valid) or lengthen it`,
    );
  } else if (agentx.nonCanonical) {
    warnings.push(
      `non-canonical run: profileDurationSeconds ${agentx.profileDurationSeconds} s (canonical ≥ ${agentx.canonicalMinDurationSeconds} s); results are not submission-valid`,
    );
  }

  // Engine override: the simulator on node 0, or the real vLLM on CPU nodes.
  const override = cluster.engineOverride;
  const sim = override?.kind === 'simulator' ? override : undefined;
  const cpu = override?.kind === 'vllm-cpu' ? override : undefined;
  const servedContext = sim?.maxModelLen ?? engine.maxModelLen ?? modelDefault;
  if (sim !== undefined && servedContext === undefined) {
    issues.add(
      ['clusters', opts.cluster, 'engineOverride', 'maxModelLen'],
      undefined,
      'the simulator needs a context length: set it, engine.maxModelLen or model.defaultContextTokens',
    );
  }
  if (sim !== undefined && topology.endpoints !== 'single') {
    issues.add(
      [...tPath, 'lbMode'],
      topology.lbMode,
      `the simulator override runs one server on node 0 only; lbMode ${topology.lbMode} needs per-node servers. Use a real engine or lbMode: internal`,
    );
  }
  if (agentx.traces.kind === 'synthetic' && servedContext !== undefined && agentx.traces.maxContextTokens > servedContext) {
    issues.add(
      ['agentx', 'traces', 'maxContextTokens'],
      agentx.traces.maxContextTokens,
      `exceeds the served context window ${servedContext} tokens; lower it or raise the context length`,
    );
  }

  // Points.
  const all = orientation.concurrency;
  let points = [...all];
  if (opts.points !== undefined) {
    if (opts.points.length === 0) issues.add([...oPath, 'concurrency'], all, 'no points requested; pass at least one');
    for (const p of opts.points) {
      if (!all.includes(p))
        issues.add(
          [...oPath, 'concurrency'],
          all,
          `requested point ${p} is not in orientation ${oName}'s concurrency list [${all.join(', ')}]`,
        );
    }
    points = all.filter((c) => opts.points!.includes(c));
  }
  issues.throwIfAny(file);

  // Engine settings derived for this orientation (plan/engine.ts).
  const derivedEngine = resolveEngineSettings({
    orientation: oName,
    engine,
    override: orientation.engine,
    dp: topology.dp,
    pp: topology.pp,
    points,
  });
  const es = derivedEngine.settings;
  warnings.push(...derivedEngine.warnings);
  notes.push(...derivedEngine.notes);
  if (agentx.aiperf.publicDataset === undefined) agentx.aiperf.publicDataset = defaultPublicDataset(config.model.prefix);
  if (agentx.requireCachedTokens === undefined) agentx.requireCachedTokens = es.prefixCaching;
  if (agentx.client === 'aiperf' && agentx.aiperf.runOn === 'head-node') {
    issues.add(
      ['agentx', 'aiperf', 'runOn'],
      'head-node',
      'running aiperf in an srun step on the head node is not implemented yet; use runOn: worker (aiperf runs next to the worker and reaches the endpoints over the network)',
    );
    issues.throwIfAny(file);
  }

  // Capacity check (plan/capacity.ts): against the real engine's context, not the simulator's.
  let capacity: SweepPlan['capacity'];
  const arch = config.model.architecture;
  const gpuBytes = gpuMemoryBytes(cluster.gpu);
  const engineContext = engine.maxModelLen ?? modelDefault;
  if (arch === undefined) capacity = { checked: false, reason: 'model.architecture is not set' };
  else if (gpuBytes === undefined)
    capacity = { checked: false, reason: `GPU "${cluster.gpu}" has no known memory size (known: H100, H200, B200, GB200, B300, GB300)` };
  else if (engineContext === undefined)
    capacity = { checked: false, reason: 'no served context: set engine.maxModelLen or model.defaultContextTokens' };
  else {
    const est = estimateCapacity({
      arch,
      gpuMemoryBytes: gpuBytes,
      tp: topology.tp,
      pp: topology.pp,
      dp: topology.dp,
      ep: topology.expertParallel ? topology.ep : 1,
      gpuMemoryUtilization: es.gpuMemoryUtilization,
      maxNumSeqs: es.maxNumSeqs,
      servedContextTokens: engineContext,
      traceContextTokens: agentx.traces.kind === 'synthetic' ? Math.min(agentx.traces.maxContextTokens, engineContext) : engineContext,
      points,
    });
    const judged = judgeCapacity(est, oName);
    warnings.push(...judged.warnings);
    if (judged.verdict === 'refuse') {
      if (opts.force) warnings.push(...judged.problems.map((p) => `capacity (forced): ${p}`));
      else
        judged.problems.forEach((p) =>
          issues.add(['model', 'architecture'], '(capacity check)', `${p}; or plan with --force to run it anyway`),
        );
    }
    issues.throwIfAny(file);
    capacity = {
      checked: true,
      verdict: judged.verdict,
      forced: judged.verdict === 'refuse' && opts.force === true,
      ...est,
      points: est.points.map((p) => ({ ...p, kvDemandRatio: Number.isFinite(p.kvDemandRatio) ? p.kvDemandRatio : null })),
      summary: describeCapacity(est),
    };
  }

  // Per-node commands (rules 9–16) and the self-check.
  const commands: NodeCommand[] = buildNodeCommands(topology, {
    modelPath: config.model.path,
    servedName: config.model.servedName,
    commonArgs: engine.commonArgs,
    maxModelLen: engine.maxModelLen,
    all2allBackend: engine.all2allBackend,
    apiServerCount: engine.apiServerCount,
    eplb: engine.eplb,
    gpuMemoryUtilization: es.gpuMemoryUtilization,
    maxNumSeqs: es.maxNumSeqs,
    maxNumBatchedTokens: es.maxNumBatchedTokens ?? undefined,
    prefixCaching: es.prefixCaching,
    promptTokensDetails: es.promptTokensDetails,
    extraArgs: es.extraArgs,
  });
  const broken = checkLaunchInvariants(topology, commands, config.model.path);
  if (broken.length > 0)
    throw new ConfigError(
      file,
      broken.map((b) => ({ path: dotted(tPath), value: showValue(spec), message: `internal planner error: ${b}` })),
    );

  const baseEnv: Record<string, string> = { ...es.env };
  const nodeEnv = (): Record<string, string> => {
    const env: Record<string, string> = {
      ...baseEnv,
      VLLM_HOST_IP: NODE_ADDR,
      CUDA_VISIBLE_DEVICES: Array.from({ length: G }, (_, i) => String(i)).join(','),
    };
    if (cluster.dataInterface !== undefined) {
      env.GLOO_SOCKET_IFNAME = cluster.dataInterface;
      env.NCCL_SOCKET_IFNAME = cluster.dataInterface;
    }
    if (topology.pp > 1 && env.VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS === undefined) env.VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS = '1800';
    return env;
  };
  if (topology.nodes > 1 && cluster.dataInterface === undefined && sim === undefined) {
    warnings.push(
      `clusters.${opts.cluster}.dataInterface is not set: NCCL/Gloo pick an interface themselves and can hang on InfiniBand clusters (rule 17)`,
    );
  }

  const simArgv = (): string[] => {
    if (sim === undefined) return [];
    const maxNumSeqs = sim.maxNumSeqs ?? es.maxNumSeqs * topology.dp;
    // prefix caching on: the simulator's KV cache reports cached tokens (usage and vllm:prefix_cache_*);
    // its pool holds every running sequence at the full context so it never rejects for capacity
    const kv = es.prefixCaching
      ? ['--enable-kvcache', '--block-size', '16', '--kv-cache-size', String(Math.ceil((maxNumSeqs * (servedContext ?? 0)) / 16))]
      : [];
    return [
      sim.binary,
      '--port',
      PORT,
      '--model',
      config.model.servedName,
      '--force-dummy-tokenizer',
      '--max-model-len',
      String(servedContext),
      '--time-to-first-token',
      `${sim.timeToFirstTokenMs}ms`,
      '--inter-token-latency',
      `${sim.interTokenLatencyMs}ms`,
      '--max-num-seqs',
      String(maxNumSeqs),
      '--mode',
      sim.mode,
      ...kv,
      ...sim.extraArgs,
    ];
  };

  const planNodes: PlanNode[] = commands.map((c) => {
    // the simulator's KV cache needs its address (it names its event publisher after it)
    const env = sim !== undefined && c.rank === 0 && es.prefixCaching ? { ...nodeEnv(), POD_IP: NODE_ADDR } : nodeEnv();
    const launched = cpu !== undefined ? cpuLaunch({ rank: c.rank, argv: c.argv, env }, cpu, topology.pp) : undefined;
    return {
      rank: c.rank,
      serves: c.serves,
      argv: c.argv,
      env: launched?.env ?? env,
      launchArgv: launched?.launchArgv ?? (sim === undefined ? c.argv : c.rank === 0 ? simArgv() : standInArgv(c.rank, c.argv)),
      commonArgs: c.commonArgs,
      deltaArgs: c.deltaArgs,
      dpRanks: c.dpRanks,
    };
  });

  // Endpoints (rule 13: one per serving node under hybrid/external LB).
  const serving = commands.filter((c) => c.serves);
  const base = (c: NodeCommand) => `http://${topology.endpoints === 'single' ? HEAD_ADDR : nodeAddrOf(c.rank)}:${PORT}`;
  const endpoints = serving.map(base);
  const engineIds: EngineIds =
    sim !== undefined
      ? {
          labelled: false,
          reason: `the simulator (${sim.binary}) stands in for all ${topology.dp} DP engine(s) and exposes no per-engine labels; readiness and idle-rank checks cannot verify DP ranks`,
        }
      : {
          labelled: true,
          perMetricsEndpoint: serving.map((c) =>
            topology.lbMode === 'internal' ? Array.from({ length: topology.dp }, (_, i) => String(i)) : c.dpRanks.map(String),
          ),
        };
  if (sim !== undefined) {
    notes.push(
      `engine override: node 0 runs ${sim.binary} in place of vLLM; nodes 1..${topology.nodes - 1} run stand-ins that print the vLLM argv they replace`,
    );
  }
  if (cpu !== undefined) {
    notes.push(
      `engine override vllm-cpu: every node runs the planner's vllm serve argv on the CPU build, changed only as launchDifferences lists`,
    );
  }
  if (topology.nodes > 1)
    notes.push('inter-node firewalls must allow all TCP between the nodes: vLLM opens ZMQ connections on ephemeral ports (rule 16)');
  if (topology.endpoints !== 'single')
    notes.push(`${topology.lbMode} LB: the client must spread requests over all ${endpoints.length} endpoints`);

  // Time limit and budgets.
  const pointBudgets = points.map((c) => pointBudget(c, budgets, agentx.profileDurationSeconds, agentx.drain.deadlineSeconds));
  const policy = orientation.deployment?.policy ?? config.deployment.policy;
  const perAllocation =
    policy === 'allocation-per-point' ? 1 : (orientation.deployment?.pointsPerAllocation ?? config.deployment.pointsPerAllocation);
  // the allocation holds at most `perAllocation` points: its time limit covers the longest that many
  const allocationPoints =
    perAllocation === undefined ? pointBudgets : [...pointBudgets].sort((a, b) => b.totalSeconds - a.totalSeconds).slice(0, perAllocation);
  const timeLimit = computeTimeLimit(budgets, allocationPoints, policy);
  if (timeLimit.minutes > cluster.maxWallMinutes) {
    issues.add(
      ['clusters', opts.cluster, 'maxWallMinutes'],
      cluster.maxWallMinutes,
      `orientation ${oName} needs a ${timeLimit.minutes}-minute allocation (${timeLimit.derivation}) but partition ${cluster.partition} allows ${cluster.maxWallMinutes} minutes; ` +
        `fix: fewer points (--points), shorter durations (agentx.profileDurationSeconds, budgets.*), deployment.policy: allocation-per-point, or a partition with a longer MaxTime`,
    );
    issues.throwIfAny(file);
  }

  const engineVllmTimeout = Number(es.env.VLLM_ENGINE_READY_TIMEOUT_S ?? '600');
  if (sim === undefined && engineVllmTimeout > budgets.startupSeconds) {
    warnings.push(
      `VLLM_ENGINE_READY_TIMEOUT_S=${engineVllmTimeout} exceeds budgets.startupSeconds ${budgets.startupSeconds}: the readiness deadline will cut vLLM's own wait short`,
    );
  }

  const body: Omit<SweepPlan, 'planHash'> = {
    schemaVersion: 1,
    sweep: config.name,
    orientation: oName,
    cluster: opts.cluster,
    model: config.model,
    image: config.image,
    engine: {
      kind: 'vllm',
      version: engine.version,
      launch: sim !== undefined ? 'simulator' : cpu !== undefined ? 'vllm-cpu' : 'vllm',
      ...(engine.maxModelLen === undefined ? {} : { maxModelLen: engine.maxModelLen }),
      settings: {
        gpuMemoryUtilization: es.gpuMemoryUtilization,
        maxNumSeqs: es.maxNumSeqs,
        maxNumSeqsSource: es.maxNumSeqsSource,
        maxNumSeqsDerivation: es.maxNumSeqsDerivation,
        maxNumBatchedTokens: es.maxNumBatchedTokens,
        prefixCaching: es.prefixCaching,
        promptTokensDetails: es.promptTokensDetails,
        queuedPoints: es.queued.map((q) => q.concurrency),
      },
    },
    topology,
    slurm: {
      nodes: topology.nodes,
      gpusPerNode: G,
      gpu: cluster.gpu,
      gres: cluster.gres,
      exclusive: cluster.exclusive,
      partition: cluster.partition,
      ...(cluster.account === undefined ? {} : { account: cluster.account }),
      timeLimitMinutes: timeLimit.minutes,
      timeLimitDerivation: timeLimit.derivation,
      maxWallMinutes: cluster.maxWallMinutes,
      grantWaitMinutes: cluster.grantWaitMinutes,
      containerRuntime: cluster.containerRuntime,
      image: config.image,
      mounts: cluster.mounts,
      ...(cluster.squashDir === undefined ? {} : { squashDir: cluster.squashDir }),
      imageImport: {
        on: cluster.imageImport?.on ?? 'login',
        ...(cluster.imageImport?.enrootCachePath === undefined ? {} : { enrootCachePath: cluster.imageImport.enrootCachePath }),
      },
    },
    timeLimit,
    login: cluster.loginHost,
    sharedDir: cluster.sharedDir,
    ...(cluster.resultsRoot === undefined ? {} : { resultsRoot: cluster.resultsRoot }),
    // names and where the worker finds values; never a value
    ...(secretEnv.length > 0 ? { secretEnv } : {}),
    ...(cluster.secretsFile === undefined ? {} : { secretsFile: cluster.secretsFile }),
    nodes: planNodes,
    endpoints,
    metricsEndpoints: endpoints.map((e) => `${e}/metrics`),
    healthEndpoints: endpoints.map((e) => `${e}/health`),
    clientMustBalance: endpoints.length > 1,
    engineIds,
    points,
    pointBudgets,
    budgets,
    readinessTimeoutSeconds: budgets.startupSeconds,
    deployment: {
      policy,
      maxAllocationAttempts: config.deployment.maxAllocationAttempts,
      ...(perAllocation === undefined ? {} : { pointsPerAllocation: perAllocation }),
      allocations: perAllocation === undefined ? 1 : Math.ceil(points.length / perAllocation),
    },
    agentx,
    capacity,
    placeholders: [],
    warnings,
    notes,
    ...(cpu === undefined ? {} : { launchDifferences: cpuDifferences(cpu, commands[0]?.argv ?? [], topology.nodes, topology.pp) }),
  };
  const used = new Set<string>();
  const scan = (s: string) => placeholdersIn(s).forEach((p) => used.add(p));
  planNodes.forEach((n) => [...n.argv, ...n.launchArgv, ...Object.values(n.env)].forEach(scan));
  endpoints.forEach(scan);
  body.placeholders = [...used].sort();
  return sweepPlanSchema.parse({ ...body, planHash: contentHash(body) });
}

/** Recompute a plan's hash (to verify a plan that crossed a boundary). */
export function planContentHash(plan: SweepPlan): string {
  const { planHash: _h, ...body } = plan;
  return contentHash(body);
}
