import { z } from 'zod';
import { agentxSettingsSchema } from './agentx';
import { replicatesSchema } from './replicates';
import { kvConnectorSchema, roleSchema, routerSchema } from './disagg';
import { searchSchema } from './search';

/**
 * The sweep config schema (configs/*.yaml). Strict everywhere: an unknown key is an error.
 * This is the single source of the config types (z.infer below).
 */
const nonEmpty = z.string().trim().min(1, 'must not be empty');
const posInt = z.number().int().positive();
const seconds = z.number().nonnegative();
const envValue = z.string().min(1, 'must not be empty (unset the variable instead of setting it to "")');
const envName = /^[A-Za-z_][A-Za-z0-9_]*$/;

export const envMapSchema = z.record(
  z.string().regex(envName, 'environment variable names are [A-Za-z_][A-Za-z0-9_]*'),
  envValue,
);

/** Bytes per element of the KV-cache / weight dtypes the capacity check knows. */
export const DTYPE_BYTES = { fp32: 4, bf16: 2, fp16: 2, fp8: 1, fp4: 0.5 } as const;
export const dtypeSchema = z.enum(['fp32', 'bf16', 'fp16', 'fp8', 'fp4']);

/**
 * Attention layers whose KV cache grows with the context. MLA stores one latent per token and layer
 * (kv_lora_rank + qk_rope_head_dim elements, replicated on every TP rank); GQA stores K and V for each
 * KV head (sharded over TP ranks down to one head per rank).
 */
export const fullAttentionSchema = z.discriminatedUnion('kind', [
  z
    .object({
      kind: z.literal('mla'),
      layers: posInt,
      kvLoraRank: posInt,
      qkRopeHeadDim: z.number().int().nonnegative(),
    })
    .strict(),
  z.object({ kind: z.literal('gqa'), layers: posInt, kvHeads: posInt, headDim: posInt }).strict(),
]);

/**
 * The model's architecture numbers for the plan's capacity check (libs/topology/src/plan/capacity.ts):
 * weight memory per GPU and KV-cache tokens per replica. Estimates, not a substitute for vLLM's own
 * profiling at startup; see docs/engine-settings.md "Capacity check".
 */
export const modelArchitectureSchema = z
  .object({
    /** Informational: total parameters. */
    parameters: z.number().positive().optional(),
    /** Bytes of all weights as loaded (≈ the checkpoint size). */
    weightBytes: z.number().positive(),
    /** The part of weightBytes in routed experts: sharded over EP ranks (or TP ranks without EP); the rest over TP. */
    expertWeightBytes: z.number().nonnegative(),
    /** All decoder layers (informational; the KV math uses fullAttention.layers and linearAttention.layers). */
    layers: posInt,
    fullAttention: fullAttentionSchema,
    /** Linear-attention layers (e.g. KDA, Mamba): a fixed recurrent state per running sequence instead of a growing KV cache. */
    linearAttention: z
      .object({ layers: posInt, stateBytesPerSequencePerLayer: z.number().positive() })
      .strict()
      .optional(),
    kvCacheDtype: dtypeSchema.default('bf16'),
    /** Per GPU: activations, CUDA graphs, NCCL buffers and allocator slack that vLLM's profile run reserves, GiB. */
    runtimeReserveGiB: z.number().nonnegative().default(8),
  })
  .strict()
  .refine((a) => a.expertWeightBytes <= a.weightBytes, {
    message: 'expertWeightBytes must be ≤ weightBytes',
    path: ['expertWeightBytes'],
  })
  .refine((a) => a.fullAttention.layers + (a.linearAttention?.layers ?? 0) <= a.layers, {
    message: 'fullAttention.layers + linearAttention.layers must be ≤ layers',
    path: ['layers'],
  });

/**
 * Names (never values) of secrets the server needs (`HF_TOKEN`, …). Their values are resolved on
 * the worker at launch, from its environment or the cluster's `secretsFile`, and reach `srun`
 * through its environment only: never the plan, the workflow history, a log or an argv.
 */
export const secretEnvSchema = z
  .array(
    z
      .string()
      .regex(
        envName,
        'secret names are environment variable names [A-Za-z_][A-Za-z0-9_]* (names only: never put a value here)',
      ),
  )
  .refine((a) => new Set(a).size === a.length, 'secret names must be distinct')
  .default([]);

/**
 * A path on the cluster: absolute (a relative path or `~` would be resolved by whichever shell and
 * cwd the remote command has). A `${VAR}` left as written belongs to a cluster that was not
 * selected (validated, never used).
 */
const absoluteOrUnexpanded = (p: string): boolean => p.startsWith('/') || p.startsWith('${');
const clusterPath = nonEmpty.refine(absoluteOrUnexpanded, {
  message: 'must be an absolute path on the cluster (starts with /); relative paths and ~ are not expanded there',
});

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
    /** InferenceX's model prefix (e.g. `kimik3`): picks the aiperf trace corpus and fills `infmax_model_prefix`. */
    prefix: z
      .string()
      .regex(/^[a-z0-9][a-z0-9._-]*$/, 'lower-case [a-z0-9._-], e.g. kimik3')
      .optional(),
    /** Weight precision as InferenceX names it (`fp4`, `fp8`, `bf16`): the exported `precision` field. */
    precision: nonEmpty.optional(),
    /** Architecture numbers for the plan's capacity check. */
    architecture: modelArchitectureSchema.optional(),
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
    /** Environment for every node (rule 17/18); per-node values (VLLM_HOST_IP, …) are derived. No secrets: see secretEnv. */
    env: envMapSchema.default({}),
    /** Secret variables for every node, names only (see secretEnvSchema). */
    secretEnv: secretEnvSchema,
    /** `--max-model-len`. Unset keeps the model default (InferenceX's agentic rule); see warnings. */
    maxModelLen: posInt.optional(),
    /** `--gpu-memory-utilization` (vLLM's default 0.9); per orientation too. The capacity check reads it. */
    gpuMemoryUtilization: z.number().gt(0).max(1).default(0.9),
    /** `--max-num-batched-tokens`; per orientation too. Unset: vLLM's default. */
    maxNumBatchedTokens: posInt.optional(),
    /**
     * `--max-num-seqs` (per DP rank). Unset: derived per orientation as ⌈max concurrency / DP⌉ so no
     * point queues in the scheduler. Set: pinned, and the plan warns about the points that will queue.
     */
    maxNumSeqs: posInt.optional(),
    /**
     * `--enable-prefix-caching` (true) or `--no-enable-prefix-caching` (false), always explicit: vLLM keeps it
     * off by default for hybrid models (Kimi K3: KDA + MLA) and AgentX measures multi-turn prefix reuse.
     * When on, a point whose server reports no cached tokens on multi-turn traffic is invalid.
     */
    prefixCaching: z.boolean().default(true),
    /** `--enable-prompt-tokens-details`: usage.prompt_tokens_details.cached_tokens in every response (the clients read it). */
    promptTokensDetails: z.boolean().default(true),
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
      /** A number, or a string of digits (what a `${VAR}` placeholder expands to). */
      port: z
        .union([z.number(), z.string().regex(/^\d+$/, 'a port number').transform(Number)])
        .pipe(z.number().int().min(1).max(65535))
        .default(22),
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

export const allocationSpeedSchema = z
  .object({
    seed: z.number().int().nonnegative(),
    /** SD of the log multiplier, e.g. 0.05 (≈ 5 % between allocations) */
    sd: z.number().positive().max(1),
  })
  .strict();

/** The simulator's executable when the override names none (on the nodes' PATH; `npm run setup` builds it). */
export const SIMULATOR_BINARY = 'llm-d-inference-sim';

export const simulatorOverrideSchema = z
  .object({
    kind: z.literal('simulator'),
    binary: nonEmpty.default(SIMULATOR_BINARY),
    timeToFirstTokenMs: z.number().nonnegative().default(20),
    interTokenLatencyMs: z.number().nonnegative().default(5),
    /** Defaults to engine.maxModelLen, else the model's default context. */
    maxModelLen: posInt.optional(),
    /** Defaults to vLLM's per-DP-rank --max-num-seqs × DP (the whole deployment's concurrency). */
    maxNumSeqs: posInt.optional(),
    mode: z.enum(['random', 'echo']).default('random'),
    extraArgs: z.array(nonEmpty).default([]),
    /**
     * Between-allocation variance on the local stack: each server launch scales the simulator's
     * latencies by a multiplier drawn per allocation (lognormal, SD `sd` on the log scale, seeded by
     * `seed` and the job id), recorded on the allocation's record, so replicates differ the way
     * allocations do on a real cluster and the truth is known.
     */
    allocationSpeed: allocationSpeedSchema.optional(),
    /**
     * The P/D router that stands in for a disaggregated orientation's own on this cluster, as the simulator
     * stands in for vLLM (the local profile: llm-d's pd-sidecar in front of the simulators, which speak its
     * `kv_transfer_params` protocol). Unset: the orientation's router.
     */
    pdRouter: routerSchema.optional(),
  })
  .strict();

/**
 * The real vLLM on CPU-only Slurm nodes (the local-vllm profile, docs/vllm-cpu.md): every node runs the
 * planner's own `vllm serve` argv with only what the CPU build requires changed — the executable, the
 * model path (a local config + tokenizer; random weights through --load-format dummy), a bounded KV
 * cache instead of GPU memory utilisation, a compilation config, per-node thread binding and an offline
 * environment. `plan` lists every difference (SweepPlan.launchDifferences).
 */
export const vllmCpuOverrideSchema = z
  .object({
    kind: z.literal('vllm-cpu'),
    /** The `vllm` executable (its own venv, scripts/setup-vllm.sh); replaces argv[0]. */
    binary: nonEmpty,
    /** Replaces model.path (a directory with config.json and a tokenizer; no weights needed). */
    modelPath: nonEmpty,
    /** `--load-format`: `dummy` = random weights (the model directory has none). */
    loadFormat: nonEmpty.default('dummy'),
    /** `--kv-cache-memory-bytes` per engine. Required: unbounded, the CPU worker takes 92 % of the node's RAM. */
    kvCacheMemoryBytes: posInt,
    /** `VLLM_CPU_OMP_THREADS_BIND` of node rank k is entry k mod length (e.g. ["0","1"]: one core per node). */
    ompThreadsBind: z.array(nonEmpty).min(1, 'list at least one core set, e.g. ["0", "1"]'),
    /**
     * `--compilation-config` (JSON) for PP > 1, where `--enforce-eager` makes a second pipeline stage assert at
     * its first request (warm-up skipped). Other shapes run `--enforce-eager` (topology/cpu.ts compileArgs).
     */
    compilationConfig: nonEmpty.default('{"mode":2,"backend":"eager"}'),
    /** Flags of engine.commonArgs the CPU build rejects or ignores, removed with their value (e.g. GPU memory utilisation). */
    dropArgs: z.array(nonEmpty).default(['--gpu-memory-utilization']),
    /** Environment added on every node (offline: nothing is downloaded). CUDA_VISIBLE_DEVICES is removed. */
    env: envMapSchema.default({
      HF_HUB_OFFLINE: '1',
      TRANSFORMERS_OFFLINE: '1',
      VLLM_NO_USAGE_STATS: '1',
      DO_NOT_TRACK: '1',
    }),
  })
  .strict();

export const engineOverrideSchema = z.discriminatedUnion('kind', [simulatorOverrideSchema, vllmCpuOverrideSchema]);

/**
 * GPU telemetry the cluster exposes: NVIDIA's DCGM exporter on every node at `http://<node>:<port>/metrics`
 * (its default port is 9400). The client scrapes it at the profile window's start, every `intervalSeconds`
 * during it and at its end, and the point's record gets its GPU energy (libs/agentx/src/server/energy.ts).
 * The interval stays under the 3 s sampling gap that invalidates power (InferenceX's `_DEFAULT_MAX_SAMPLE_GAP_S`).
 */
export const gpuTelemetrySchema = z
  .object({
    dcgmExporterPort: z.number().int().min(1).max(65535),
    intervalSeconds: z
      .number()
      .positive()
      .lt(3, 'a DCGM sample interval of 3 s or more leaves gaps that invalidate power: use e.g. 1')
      .default(1),
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
    /**
     * How long one allocation request may wait in the queue before the attempt counts as failed
     * (minutes; default 720 = 12 h). The queued job keeps its place across activity retries.
     */
    grantWaitMinutes: posInt.default(720),
    containerRuntime: z.enum(['pyxis', 'host']),
    /** pyxis `--container-mounts` entries `src:dst[:flags]`, both absolute. */
    mounts: z
      .array(
        nonEmpty.refine((m) => m.split(':').slice(0, 2).every(absoluteOrUnexpanded), {
          message: 'a mount is src:dst[:flags] with absolute src and dst, e.g. /models:/models:ro',
        }),
      )
      .default([]),
    squashDir: clusterPath.optional(),
    /**
     * Where the enroot import runs (pyxis): on the login node before allocating (`login`), or on the
     * allocation's head compute node under `srun` (`head-node`, InferenceX's way: compute nodes often
     * have the registry access and local disk the login node lacks), with ENROOT_CACHE_PATH set.
     */
    imageImport: z
      .object({
        on: z.enum(['login', 'head-node']).default('login'),
        /** ENROOT_CACHE_PATH for the import (InferenceX: $HOME/.cache/enroot). */
        enrootCachePath: nonEmpty.optional(),
      })
      .strict()
      .optional(),
    loginHost: loginHostSchema,
    /** Shared storage for per-node logs and results. */
    sharedDir: clusterPath,
    /**
     * Where sweep results go (`<resultsRoot>/<sweep id>/…`): a folder on storage the worker's host
     * sees (shared storage of the cluster), so a worker on another host than the CLI writes where the
     * CLI and the report read. Absent: the CLI's data folder (`.infersweep/results`), fine when the
     * worker runs next to the CLI.
     */
    resultsRoot: clusterPath.optional(),
    /** More secret names for this cluster (merged with engine.secretEnv). */
    secretEnv: secretEnvSchema,
    /**
     * File on the worker's host with `NAME=value` lines for the secrets the worker's environment
     * does not hold (mode 600, like a private key). Absolute or `~/…`.
     */
    secretsFile: nonEmpty.optional(),
    /** NIC for NCCL_SOCKET_IFNAME / GLOO_SOCKET_IFNAME (rule 17). */
    dataInterface: nonEmpty.optional(),
    engineOverride: engineOverrideSchema.optional(),
    /** Merged over the top-level budgets. */
    budgets: budgetsOverrideSchema.optional(),
    /** Merged (deeply) over the top-level agentx block, then validated as AgentX settings. */
    agentx: z.record(z.string(), z.unknown()).optional(),
    /** GPU telemetry for each point's energy and cost (absent: no energy in the records). */
    gpuTelemetry: gpuTelemetrySchema.optional(),
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

/** Engine settings one orientation overrides (the bash runner's recipe differs per orientation after OOMs). */
export const orientationEngineSchema = z
  .object({
    gpuMemoryUtilization: z.number().gt(0).max(1).optional(),
    maxNumBatchedTokens: posInt.optional(),
    maxNumSeqs: posInt.optional(),
    /** Appended to engine.commonArgs for this orientation (same rules: no derived or per-node flags). */
    extraArgs: z.array(nonEmpty).default([]),
    /** Merged over engine.env for this orientation. */
    env: envMapSchema.default({}),
  })
  .strict();

/**
 * A disaggregated prefill/decode deployment (config/disagg.ts; rules 23–28 of docs/topology-rules.md):
 * x prefill workers and y decode workers, each a whole vLLM deployment of its role's topology.
 */
export const disaggregatedSchema = z
  .object({
    prefill: roleSchema(topologySpecSchema, orientationEngineSchema),
    decode: roleSchema(topologySpecSchema, orientationEngineSchema),
    connector: kvConnectorSchema,
    router: routerSchema.default(routerSchema.parse({})),
  })
  .strict();

export const orientationSchema = z
  .object({
    /** The aggregated deployment; a disaggregated orientation sets `disaggregated` instead. */
    topology: topologySpecSchema.optional(),
    /** A prefill/decode-disaggregated deployment (instead of `topology`). */
    disaggregated: disaggregatedSchema.optional(),
    engine: orientationEngineSchema.optional(),
    /** Overrides the top-level deployment block for this orientation (e.g. InferenceX's one point per allocation). */
    deployment: z
      .object({
        policy: z.enum(['shared-server', 'server-per-point', 'allocation-per-point']).optional(),
        pointsPerAllocation: posInt.optional(),
      })
      .strict()
      .optional(),
    concurrency: z
      .array(posInt)
      .min(1, 'list at least one concurrency')
      .refine((c) => new Set(c).size === c.length, 'concurrency values must be distinct'),
    notes: nonEmpty.optional(),
    allowUnvalidated: z.boolean().optional(),
    /** Adaptive points after the configured ones (config/search.ts, docs/search.md). */
    search: searchSchema.optional(),
    /** Error bars across allocations for this orientation (config/replicates.ts); overrides the sweep's block. */
    replicates: replicatesSchema.optional(),
  })
  .strict()
  .superRefine((o, ctx) => {
    if ((o.topology === undefined) === (o.disaggregated === undefined))
      ctx.addIssue({
        code: 'custom',
        path: o.topology === undefined ? ['topology'] : ['disaggregated'],
        message:
          o.topology === undefined
            ? 'set topology (an aggregated deployment) or disaggregated (prefill and decode roles)'
            : 'set either topology (aggregated) or disaggregated (prefill/decode), not both',
      });
  });

export const deploymentSchema = z
  .object({
    policy: z.enum(['shared-server', 'server-per-point', 'allocation-per-point']).default('shared-server'),
    /**
     * At most this many points per allocation (a fresh allocation after them); unset: all. InferenceX runs
     * one (`policy: allocation-per-point` is the same as 1). Bounds the Slurm time limit to that many points.
     */
    pointsPerAllocation: posInt.optional(),
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
    clusters: z
      .record(nameKey, clusterSchema)
      .refine((c) => Object.keys(c).length > 0, 'define at least one cluster profile'),
    budgets: budgetsSchema.default(budgetsSchema.parse({})),
    /** Raw AgentX block; validated with agentxSettingsSchema after cluster overrides are merged in. */
    agentx: z.record(z.string(), z.unknown()).default({}),
    deployment: deploymentSchema.default(deploymentSchema.parse({})),
    orientations: z
      .record(nameKey, orientationSchema)
      .refine((o) => Object.keys(o).length > 0, 'define at least one orientation'),
    /** Error bars across allocations for every orientation without its own block (config/replicates.ts). */
    replicates: replicatesSchema.optional(),
  })
  .strict();

export type SweepConfig = z.infer<typeof sweepConfigSchema>;
export type EngineSpec = z.infer<typeof engineSchema>;
export type Budgets = z.infer<typeof budgetsSchema>;
export type ClusterProfile = z.infer<typeof clusterSchema>;
export type LoginHost = z.infer<typeof loginHostSchema>;
export type SimulatorOverride = z.infer<typeof simulatorOverrideSchema>;
export type VllmCpuOverride = z.infer<typeof vllmCpuOverrideSchema>;
export type TopologySpec = z.infer<typeof topologySpecSchema>;
export type Orientation = z.infer<typeof orientationSchema>;
export type OrientationEngine = z.infer<typeof orientationEngineSchema>;
export type Disaggregated = z.infer<typeof disaggregatedSchema>;
export type ModelArchitecture = z.infer<typeof modelArchitectureSchema>;
export type LbMode = z.infer<typeof lbModeSchema>;
export type EndpointsMode = z.infer<typeof endpointsModeSchema>;

export { agentxSettingsSchema };
