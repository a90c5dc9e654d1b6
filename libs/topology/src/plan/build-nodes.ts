import { ConfigError, showValue } from '../config/errors';
import { dotted } from '../config/parse';
import type { SimulatorOverride } from '../config/schema';
import { buildNodeCommands, checkLaunchInvariants, type NodeCommand } from '../topology/commands';
import { cpuLaunch } from '../topology/cpu';
import { NODE_ADDR, PORT } from '../topology/placeholders';
import type { Topology } from '../topology/validate';
import type { PlanDraft } from './draft';
import type { EngineSettings } from './engine';
import type { EngineOverrideView } from './resolve-override';
import type { PlanNode } from './schema';

/** The stand-in's script: prints its arguments (never runs them) and lives as long as its step. */
export const STAND_IN_SCRIPT = 'printf "infersweep stand-in for node rank %s: %s\\n" "$0" "$*"; exec sleep 2147483647';

/** The stand-in a non-head node runs under the simulator override: lives as long as its step, prints the vLLM argv. */
export function standInArgv(rank: number, vllmArgv: readonly string[]): string[] {
  return ['bash', '-c', STAND_IN_SCRIPT, String(rank), ...vllmArgv];
}

/** The simulator's argv on node 0, sized like the vLLM it replaces. */
export function simulatorArgv(
  sim: SimulatorOverride,
  servedName: string,
  servedContext: number | undefined,
  es: EngineSettings,
  dp: number,
): string[] {
  const maxNumSeqs = sim.maxNumSeqs ?? es.maxNumSeqs * dp;
  // prefix caching on: the simulator's KV cache reports cached tokens (usage and vllm:prefix_cache_*);
  // its pool holds every running sequence at the full context so it never rejects for capacity
  const kv = es.prefixCaching
    ? [
        '--enable-kvcache',
        '--block-size',
        '16',
        '--kv-cache-size',
        String(Math.ceil((maxNumSeqs * (servedContext ?? 0)) / 16)),
      ]
    : [];
  return [
    sim.binary,
    '--port',
    PORT,
    '--model',
    servedName,
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
}

/** The environment every node starts with: the engine settings' env plus what the planner derives per node (DERIVED_ENV). */
function nodeEnv(d: PlanDraft, topology: Topology, es: EngineSettings): Record<string, string> {
  const env: Record<string, string> = {
    ...es.env,
    VLLM_HOST_IP: NODE_ADDR,
    CUDA_VISIBLE_DEVICES: Array.from({ length: d.cluster.gpusPerNode }, (_, i) => String(i)).join(','),
  };
  if (d.cluster.dataInterface !== undefined) {
    env.GLOO_SOCKET_IFNAME = d.cluster.dataInterface;
    env.NCCL_SOCKET_IFNAME = d.cluster.dataInterface;
  }
  if (topology.pp > 1 && env.VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS === undefined)
    env.VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS = '1800';
  return env;
}

/**
 * One `vllm serve` command per node (rules 9–16), self-checked (checkLaunchInvariants), and what
 * each node actually launches: the command itself, the simulator on node 0 and stand-ins elsewhere,
 * or the CPU build's launch.
 */
export function buildNodes(
  d: PlanDraft,
  topology: Topology,
  es: EngineSettings,
  o: EngineOverrideView,
): { commands: NodeCommand[]; nodes: PlanNode[] } {
  const { config, cluster } = d;
  const engine = config.engine;
  const commands = buildNodeCommands(topology, {
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
      d.issues.file,
      broken.map((b) => ({ path: dotted(d.tPath), value: showValue(d.spec), message: `internal planner error: ${b}` })),
    );
  if (topology.nodes > 1 && cluster.dataInterface === undefined && o.sim === undefined) {
    d.warnings.push(
      `clusters.${d.opts.cluster}.dataInterface is not set: NCCL/Gloo pick an interface themselves and can hang on InfiniBand clusters (rule 17)`,
    );
  }
  const { sim, cpu } = o;
  const nodes = commands.map((c): PlanNode => {
    // the simulator's KV cache needs its address (it names its event publisher after it)
    const base = nodeEnv(d, topology, es);
    const env = sim !== undefined && c.rank === 0 && es.prefixCaching ? { ...base, POD_IP: NODE_ADDR } : base;
    const launched = cpu !== undefined ? cpuLaunch({ rank: c.rank, argv: c.argv, env }, cpu, topology.pp) : undefined;
    const simLaunch = (): string[] =>
      c.rank === 0
        ? simulatorArgv(sim!, config.model.servedName, o.servedContext, es, topology.dp)
        : standInArgv(c.rank, c.argv);
    return {
      rank: c.rank,
      serves: c.serves,
      argv: c.argv,
      env: launched?.env ?? env,
      launchArgv: launched?.launchArgv ?? (sim === undefined ? c.argv : simLaunch()),
      commonArgs: c.commonArgs,
      deltaArgs: c.deltaArgs,
      dpRanks: c.dpRanks,
    };
  });
  return { commands, nodes };
}
