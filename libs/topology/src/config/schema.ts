import { z } from 'zod';
import { agentxSettingsSchema } from './agentx';

/**
 * The sweep config schema (configs/*.yaml). Strict everywhere: an unknown key is an error.
 * This is the single source of the config types (z.infer below).
 */
const nonEmpty = z.string().trim().min(1, 'must not be empty');
const posInt = z.number().int().positive();
const seconds = z.number().nonnegative();
const envValue = z.string().min(1, 'must not be empty (unset the variable instead of setting it to "")');
const envName = /^[A-Za-z_][A-Za-z0-9_]*$/;

export const envMapSchema = z.record(z.string().regex(envName, 'environment variable names are [A-Za-z_][A-Za-z0-9_]*'), envValue);

export const modelSchema = z
  .object({
    /** Weights path on the cluster (shared storage), passed to `vllm serve`. */
    path: nonEmpty,
    /** Name clients send as `model` (`--served-model-name`). */
    servedName: nonEmpty,
    /** Tokenizer id the client uses to count tokens (HF id or path). */
    tokenizer: nonEmpty,
    /** Mixture-of-experts? Expert parallelism needs it (rule 5). */
    moe: z.boolean(),
    /** Model family, used to look up recipe constraints (e.g. `kimi-k3`). */
    family: nonEmpty.optional(),
    /** The context length the model advertises (what vLLM uses without --max-model-len). */
    defaultContextTokens: posInt.optional(),
  })
  .strict();

export const all2allBackends = [
  'allgather_reducescatter',
  'deepep_high_throughput',
  'deepep_low_latency',
  'deepep_v2',
  'mori_high_throughput',
  'mori_low_latency',
  'nixl_ep',
  'flashinfer_nvlink_two_sided',
  'flashinfer_nvlink_one_sided',
] as const;

export const engineSchema = z
  .object({
    kind: z.literal('vllm'),
    /** vLLM version of the image (K3 needs ≥ 0.27.1). */
    version: nonEmpty,
    /** Arguments identical on every node (rule 9); topology and per-node flags are derived, not listed here. */
    commonArgs: z.array(nonEmpty).default([]),
    /** Environment for every node (rule 17/18); per-node values (VLLM_HOST_IP, …) are derived. */
    env: envMapSchema.default({}),
    /** `--max-model-len`. Unset keeps the model default (InferenceX's agentic rule); see warnings. */
    maxModelLen: posInt.optional(),
    /** `--all2all-backend` (only emitted when EP > 1, rule 8). Free string so removed values get a specific error. */
    all2allBackend: nonEmpty.optional(),
    /** `--api-server-count` on the serving node(s) only. */
    apiServerCount: posInt.optional(),
    /** EPLB (rule 7): present = enabled. */
    eplb: z
      .object({
        numRedundantExperts: z.number().int().nonnegative().default(0),
        windowSize: posInt.optional(),
        stepInterval: posInt.optional(),
      })
      .strict()
      .optional(),
    /** Allow topologies the model's recipe marks unsupported on this hardware (rule 18). Per orientation too. */
    allowUnvalidated: z.boolean().default(false),
  })
  .strict();

export const budgetsSchema = z
  .object({
    /** Container image import (enroot/pyxis), once per allocation. */
    imageImportSeconds: seconds.default(1800),
    /** Server launch until /health is 200 and every DP engine reports. */
    startupSeconds: seconds.default(3600),
    /** Per concurrency point: warmup phase. Profile = agentx.profileDurationSeconds, drain = agentx.drain.deadlineSeconds. */
    pointWarmupSeconds: seconds.default(900),
    /** Stopping the server and collecting logs. */
    teardownSeconds: seconds.default(600),
    /** Safety margin on the Slurm time limit: max(percent, minimum minutes). */
    marginPercent: z.number().min(0).max(200).default(15),
    marginMinMinutes: z.number().nonnegative().default(10),
  })
  .strict();

/** Partial budgets a cluster profile may override. */
export const budgetsOverrideSchema = budgetsSchema.partial().strict();

export const loginHostSchema = z.union([
  z.object({ local: z.literal(true) }).strict(),
  z
    .object({
      host: nonEmpty,
      port: z.number().int().min(1).max(65535).default(22),
      user: nonEmpty,
      keyPath: nonEmpty.optional(),
      /** Pinned server public key (`ssh-ed25519 AAAA…`) or a path to a .pub file holding it. */
      hostKey: nonEmpty.optional(),
      knownHostsPath: nonEmpty.optional(),
    })
    .strict()
    .refine((h) => h.hostKey !== undefined || h.knownHostsPath !== undefined, {
      message: 'pin the login host: set hostKey (public key or .pub path) or knownHostsPath',
      path: ['hostKey'],
    }),
]);

export const simulatorOverrideSchema = z
  .object({
    kind: z.literal('simulator'),
    binary: nonEmpty.default('llm-d-inference-sim'),
    timeToFirstTokenMs: z.number().nonnegative().default(20),
    interTokenLatencyMs: z.number().nonnegative().default(5),
    /** Defaults to engine.maxModelLen, else the model's default context. */
    maxModelLen: posInt.optional(),
    /** Defaults to vLLM's per-DP-rank --max-num-seqs × DP (the whole deployment's concurrency). */
    maxNumSeqs: posInt.optional(),
    mode: z.enum(['random', 'echo']).default('random'),
    extraArgs: z.array(nonEmpty).default([]),
  })
  .strict();

export const clusterSchema = z
  .object({
    partition: nonEmpty,
    account: nonEmpty.optional(),
    /** GPU model, for recipe constraints (e.g. `H200`; anything else for fakes). */
    gpu: nonEmpty,
    gpusPerNode: posInt,
    /** Request `--gres=gpu:N`. */
    gres: z.boolean(),
    exclusive: z.boolean(),
    /** The partition's MaxTime, minutes. */
    maxWallMinutes: posInt,
    containerRuntime: z.enum(['pyxis', 'host']),
    mounts: z.array(nonEmpty).default([]),
    squashDir: nonEmpty.optional(),
    loginHost: loginHostSchema,
    /** Shared storage for per-node logs and results. */
    sharedDir: nonEmpty,
    /** NIC for NCCL_SOCKET_IFNAME / GLOO_SOCKET_IFNAME (rule 17). */
    dataInterface: nonEmpty.optional(),
    engineOverride: simulatorOverrideSchema.optional(),
    /** Merged over the top-level budgets. */
    budgets: budgetsOverrideSchema.optional(),
    /** Merged (deeply) over the top-level agentx block, then validated as AgentX settings. */
    agentx: z.record(z.string(), z.unknown()).optional(),
  })
  .strict();

export const lbModeSchema = z.enum(['internal', 'hybrid', 'external']);
export const endpointsModeSchema = z.enum(['single', 'per-node']);

export const topologySpecSchema = z
  .object({
    tp: posInt,
    pp: posInt.default(1),
    dp: posInt.default(1),
    /** Optional check only: EP is derived (TP×DP); omit it to disable expert parallelism. */
    ep: posInt.optional(),
    /** Optional check only: nodes are derived from TP×PP×DP and the cluster's GPUs per node. */
    nodes: posInt.optional(),
    lbMode: lbModeSchema.default('internal'),
    /** Defaults to `single` for internal LB and `per-node` for hybrid/external. */
    endpoints: endpointsModeSchema.optional(),
  })
  .strict();

export const orientationSchema = z
  .object({
    topology: topologySpecSchema,
    concurrency: z
      .array(posInt)
      .min(1, 'list at least one concurrency')
      .refine((c) => new Set(c).size === c.length, 'concurrency values must be distinct'),
    notes: nonEmpty.optional(),
    allowUnvalidated: z.boolean().optional(),
  })
  .strict();

export const deploymentSchema = z
  .object({
    policy: z.enum(['shared-server', 'server-per-point', 'allocation-per-point']).default('shared-server'),
    maxAllocationAttempts: posInt.default(3),
  })
  .strict();

const nameKey = z.string().regex(/^[a-z0-9][a-z0-9_-]*$/, 'names are lower-case [a-z0-9_-]');

export const sweepConfigSchema = z
  .object({
    name: nonEmpty,
    model: modelSchema,
    image: nonEmpty,
    engine: engineSchema,
    clusters: z.record(nameKey, clusterSchema).refine((c) => Object.keys(c).length > 0, 'define at least one cluster profile'),
    budgets: budgetsSchema.default(budgetsSchema.parse({})),
    /** Raw AgentX block; validated with agentxSettingsSchema after cluster overrides are merged in. */
    agentx: z.record(z.string(), z.unknown()).default({}),
    deployment: deploymentSchema.default(deploymentSchema.parse({})),
    orientations: z
      .record(nameKey, orientationSchema)
      .refine((o) => Object.keys(o).length > 0, 'define at least one orientation'),
  })
  .strict();

export type SweepConfig = z.infer<typeof sweepConfigSchema>;
export type ModelSpec = z.infer<typeof modelSchema>;
export type EngineSpec = z.infer<typeof engineSchema>;
export type Budgets = z.infer<typeof budgetsSchema>;
export type ClusterProfile = z.infer<typeof clusterSchema>;
export type LoginHost = z.infer<typeof loginHostSchema>;
export type SimulatorOverride = z.infer<typeof simulatorOverrideSchema>;
export type TopologySpec = z.infer<typeof topologySpecSchema>;
export type Orientation = z.infer<typeof orientationSchema>;
export type DeploymentSpec = z.infer<typeof deploymentSchema>;
export type LbMode = z.infer<typeof lbModeSchema>;
export type EndpointsMode = z.infer<typeof endpointsModeSchema>;

export { agentxSettingsSchema };
