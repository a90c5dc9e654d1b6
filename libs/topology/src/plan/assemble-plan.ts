import { contentHash } from '@infersweep/core';
import type { AgentxSettings } from '../config/agentx';
import type { Budgets } from '../config/schema';
import type { NodeCommand } from '../topology/commands';
import { cpuDifferences } from '../topology/cpu';
import { placeholdersIn } from '../topology/placeholders';
import type { Topology } from '../topology/validate';
import type { PlanDraft } from './draft';
import { speculativeOf } from './speculative';
import type { EngineSettings } from './engine';
import type { AllocationPlan } from './plan-allocation';
import type { EngineOverrideView } from './resolve-override';
import {
  sweepPlanSchema,
  type EngineIds,
  type PlanNode,
  type PlanReplicates,
  type PlanSearch,
  type SweepPlan,
} from './schema';

/** The parts the plan steps produced. */
export interface PlanParts {
  topology: Topology;
  secretEnv: string[];
  agentx: AgentxSettings;
  budgets: Budgets;
  override: EngineOverrideView;
  points: number[];
  settings: EngineSettings;
  capacity: SweepPlan['capacity'];
  commands: NodeCommand[];
  nodes: PlanNode[];
  endpoints: string[];
  engineIds: EngineIds;
  allocation: AllocationPlan;
  /** the adaptive search's bounds and worst case (plan-search.ts) */
  search?: PlanSearch;
  /** replicates across allocations and their worst case (plan-replicates.ts) */
  replicates?: PlanReplicates;
}

/** Every placeholder the nodes' argv, launch argv, env and the endpoints use (bindPlan fills them), sorted. */
export function placeholdersUsed(nodes: readonly PlanNode[], endpoints: readonly string[]): string[] {
  const used = new Set<string>();
  const scan = (s: string) => placeholdersIn(s).forEach((p) => used.add(p));
  nodes.forEach((n) => [...n.argv, ...n.launchArgv, ...Object.values(n.env)].forEach(scan));
  endpoints.forEach(scan);
  return [...used].sort();
}

/** Recompute a plan's hash: the content hash of everything but `planHash`. */
export function planContentHash(plan: SweepPlan): string {
  const { planHash: _h, ...body } = plan;
  return contentHash(body);
}

/** The engine block of the plan: what runs (vLLM, the simulator or vLLM on CPU) with the derived settings. */
function enginePart(d: PlanDraft, p: PlanParts): SweepPlan['engine'] {
  const { engine } = d.config;
  const es = p.settings;
  return {
    kind: 'vllm',
    version: engine.version,
    launch: p.override.sim !== undefined ? 'simulator' : p.override.cpu !== undefined ? 'vllm-cpu' : 'vllm',
    ...(engine.maxModelLen === undefined ? {} : { maxModelLen: engine.maxModelLen }),
    ...(p.override.sim?.allocationSpeed ? { allocationSpeed: p.override.sim.allocationSpeed } : {}),
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
  };
}

/** The Slurm request of one allocation. */
function slurmPart(d: PlanDraft, p: PlanParts): SweepPlan['slurm'] {
  const { cluster } = d;
  return {
    nodes: p.topology.nodes,
    gpusPerNode: cluster.gpusPerNode,
    gpu: cluster.gpu,
    gres: cluster.gres,
    exclusive: cluster.exclusive,
    partition: cluster.partition,
    ...(cluster.account === undefined ? {} : { account: cluster.account }),
    timeLimitMinutes: p.allocation.timeLimit.minutes,
    timeLimitDerivation: p.allocation.timeLimit.derivation,
    maxWallMinutes: cluster.maxWallMinutes,
    grantWaitMinutes: cluster.grantWaitMinutes,
    containerRuntime: cluster.containerRuntime,
    image: d.config.image,
    mounts: cluster.mounts,
    ...(cluster.squashDir === undefined ? {} : { squashDir: cluster.squashDir }),
    imageImport: {
      on: cluster.imageImport?.on ?? 'login',
      ...(cluster.imageImport?.enrootCachePath === undefined
        ? {}
        : { enrootCachePath: cluster.imageImport.enrootCachePath }),
    },
  };
}

/** GPU telemetry that no point would sample: aiperf's points have no energy (only infersweep's client scrapes). */
function telemetryWarnings(telemetry: boolean, client: AgentxSettings['client']): string[] {
  return telemetry && client === 'aiperf'
    ? [
        'gpuTelemetry is set but agentx.client is aiperf: its points get no energy (only the infersweep client samples the DCGM exporters)',
      ]
    : [];
}

/** The plan from its parts, schema-checked, with its content hash. */
export function assemblePlan(d: PlanDraft, p: PlanParts): SweepPlan {
  const { config, cluster } = d;
  const { endpoints, allocation, topology } = p;
  const cpu = p.override.cpu;
  const body: Omit<SweepPlan, 'planHash'> = {
    schemaVersion: 1,
    sweep: config.name,
    orientation: d.oName,
    cluster: d.opts.cluster,
    // the real vLLM on CPU serves the generated model: its directory is also the tokenizer clients count with
    model: cpu === undefined ? config.model : { ...config.model, tokenizer: cpu.modelPath },
    image: config.image,
    engine: enginePart(d, p),
    topology,
    slurm: slurmPart(d, p),
    timeLimit: allocation.timeLimit,
    login: cluster.loginHost,
    sharedDir: cluster.sharedDir,
    ...(cluster.resultsRoot === undefined ? {} : { resultsRoot: cluster.resultsRoot }),
    // names and where the worker finds values; never a value
    ...(p.secretEnv.length > 0 ? { secretEnv: p.secretEnv } : {}),
    ...(cluster.secretsFile === undefined ? {} : { secretsFile: cluster.secretsFile }),
    // absent without telemetry: the plan and its hash stay what they were
    ...(cluster.gpuTelemetry === undefined ? {} : { gpuTelemetry: cluster.gpuTelemetry }),
    nodes: p.nodes,
    endpoints,
    metricsEndpoints: endpoints.map((e) => `${e}/metrics`),
    healthEndpoints: endpoints.map((e) => `${e}/health`),
    clientMustBalance: endpoints.length > 1,
    engineIds: p.engineIds,
    points: p.points,
    ...(p.search === undefined ? {} : { search: p.search }),
    ...(p.replicates === undefined ? {} : { replicates: p.replicates }),
    pointBudgets: allocation.pointBudgets,
    budgets: p.budgets,
    readinessTimeoutSeconds: p.budgets.startupSeconds,
    deployment: allocation.deployment,
    agentx: p.agentx,
    capacity: p.capacity,
    placeholders: placeholdersUsed(p.nodes, endpoints),
    warnings: [...d.warnings, ...telemetryWarnings(cluster.gpuTelemetry !== undefined, p.agentx.client)],
    notes: d.notes,
    ...(cpu === undefined
      ? {}
      : { launchDifferences: cpuDifferences(cpu, p.commands[0]?.argv ?? [], topology.nodes, topology.pp) }),
  };
  const speculative = speculativeOf(p.nodes);
  if (speculative !== undefined) body.speculative = speculative;
  return sweepPlanSchema.parse({ ...body, planHash: contentHash(body) });
}
