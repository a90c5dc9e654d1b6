import { z } from 'zod';
import { agentxSettingsSchema } from '../config/agentx';
import { DISAGG_ROLES, kvConnectorSchema, routerSchema } from '../config/disagg';
import {
  allocationSpeedSchema,
  budgetsSchema,
  gpuTelemetrySchema,
  loginHostSchema,
  modelSchema,
} from '../config/schema';
import { replicateAnswerSchema, replicateMetricSchema } from '../config/replicates';
import { resolutionSchema, searchGoalSchema, sloSchema } from '../config/search';
import { topologySchema } from '../topology/validate';

/**
 * The sweep plan: everything needed to run one orientation on one cluster, JSON-serializable
 * (it crosses Temporal boundaries). Values known only after allocation are `{{NAME}}` placeholders
 * (see topology/placeholders.ts); `bindPlan` substitutes them.
 */
const str = z.string().min(1);

export const planNodeSchema = z
  .object({
    rank: z.number().int().nonnegative(),
    /** This node runs an HTTP API server (`--port`). */
    serves: z.boolean(),
    /** The real `vllm serve` argv (always computed and validated, even under a simulator override). */
    argv: z.array(str),
    /** Per-node environment (engine env + rule-17 values), as launched (vllm-cpu: with its env changes). */
    env: z.record(z.string(), str),
    /** What is actually launched: `argv`, or the simulator / stand-in under engineOverride. */
    launchArgv: z.array(str),
    /** Identical on every node (rule 9). */
    commonArgs: z.array(str),
    /** This node's delta (rules 10–13). */
    deltaArgs: z.array(str),
    /** DP ranks whose engines run on this node. */
    dpRanks: z.array(z.number().int().nonnegative()),
    /** Disaggregated plans: the node's role and worker (rule 23); its DP ranks are its worker's. */
    role: z.enum(DISAGG_ROLES).optional(),
    worker: z.number().int().nonnegative().optional(),
  })
  .strict();

export const engineIdsSchema = z.discriminatedUnion('labelled', [
  z
    .object({
      labelled: z.literal(true),
      /** For metricsEndpoints[i], the `engine="…"` label values that must appear (rule 19/20). */
      perMetricsEndpoint: z.array(z.array(str)),
    })
    .strict(),
  z.object({ labelled: z.literal(false), reason: str }).strict(),
]);

export const timeLimitSchema = z
  .object({
    minutes: z.number().int().positive(),
    /** Seconds before the margin. */
    baseSeconds: z.number().nonnegative(),
    marginSeconds: z.number().nonnegative(),
    /** Human-readable sum, e.g. `import 1800 s + startup 3600 s + 4 × (…) + teardown 600 s = … → 598 min`. */
    derivation: str,
  })
  .strict();

export const slurmRequestSchema = z
  .object({
    nodes: z.number().int().positive(),
    gpusPerNode: z.number().int().positive(),
    /** The cluster profile's GPU model (`H200`; anything else for fakes): InferenceX's `hw`. */
    gpu: str,
    gres: z.boolean(),
    exclusive: z.boolean(),
    partition: str,
    account: str.optional(),
    timeLimitMinutes: z.number().int().positive(),
    timeLimitDerivation: str,
    maxWallMinutes: z.number().int().positive(),
    /** Queue wait allowed per allocation request, minutes (absent in plans frozen before it existed: 720). */
    grantWaitMinutes: z.number().int().positive().optional(),
    containerRuntime: z.enum(['pyxis', 'host']),
    image: str,
    mounts: z.array(str),
    squashDir: str.optional(),
    /** Where the enroot import runs: the login node before allocating, or the head compute node under srun. */
    imageImport: z.object({ on: z.enum(['login', 'head-node']), enrootCachePath: str.optional() }).strict(),
  })
  .strict();

/** The engine settings derived for this orientation (plan/engine.ts). */
export const engineSettingsSchema = z
  .object({
    gpuMemoryUtilization: z.number().gt(0).max(1),
    /** Per DP rank. */
    maxNumSeqs: z.number().int().positive(),
    maxNumSeqsSource: z.enum(['derived', 'pinned']),
    maxNumSeqsDerivation: str,
    maxNumBatchedTokens: z.number().int().positive().nullable(),
    prefixCaching: z.boolean(),
    promptTokensDetails: z.boolean(),
    /** Points whose per-rank share exceeds maxNumSeqs. */
    queuedPoints: z.array(z.number().int().positive()),
  })
  .strict();

const capacityPointSchema = z
  .object({
    concurrency: z.number().int().positive(),
    sessionsPerReplica: z.number().int().positive(),
    tokensNeededPerReplica: z.number().nonnegative(),
    /** Infinity (no KV pool) is stored as null. */
    kvDemandRatio: z.number().nonnegative().nullable(),
    fits: z.boolean(),
  })
  .strict();

/** The capacity check (plan/capacity.ts): numbers, verdict, or why it was skipped. */
export const capacitySchema = z.discriminatedUnion('checked', [
  z
    .object({
      checked: z.literal(true),
      verdict: z.enum(['ok', 'warn', 'refuse']),
      /** The plan was made despite a refuse verdict (--force). */
      forced: z.boolean(),
      gpuMemoryBytes: z.number().positive(),
      budgetBytesPerGpu: z.number().nonnegative(),
      weightBytesPerGpu: z.number().nonnegative(),
      reserveBytesPerGpu: z.number().nonnegative(),
      linearStateBytesPerGpu: z.number().nonnegative(),
      kvPoolBytesPerGpu: z.number().nonnegative(),
      kvBytesPerTokenPerGpu: z.number().positive(),
      kvTokensPerReplica: z.number().int().nonnegative(),
      fullContextRequestsPerReplica: z.number().nonnegative(),
      servedContextTokens: z.number().int().positive(),
      traceContextTokens: z.number().int().positive(),
      points: z.array(capacityPointSchema),
      summary: str,
    })
    .strict(),
  z.object({ checked: z.literal(false), reason: str }).strict(),
]);

export const pointBudgetSchema = z
  .object({
    concurrency: z.number().int().positive(),
    warmupSeconds: z.number().nonnegative(),
    profileSeconds: z.number().nonnegative(),
    drainSeconds: z.number().nonnegative(),
    totalSeconds: z.number().nonnegative(),
  })
  .strict();

/** The adaptive search of this orientation (config search block) with its worst case (plan/plan-search.ts). */
export const planSearchSchema = z
  .object({
    goal: z.array(searchGoalSchema),
    slo: sloSchema.optional(),
    minConcurrency: z.number().int().positive(),
    maxConcurrency: z.number().int().positive(),
    /** as configured */
    maxPoints: z.number().int().positive(),
    gpuHourBudget: z.number().positive().optional(),
    resolution: resolutionSchema,
    /** GPUs × the point budget, hours */
    pointGpuHours: z.number().nonnegative(),
    /** points the search may add: maxPoints, or fewer when the GPU-hour budget (or the range) allows fewer */
    maxAddedPoints: z.number().int().nonnegative(),
    /** the slo-limit search's proven bound (libs/core/src/search-bounds.ts) */
    sloLimitPointBound: z.number().int().nonnegative().optional(),
    /** concurrencies the time limit and the engine settings cover for the added points (the top of the range) */
    budgetedPoints: z.array(z.number().int().positive()),
    /** configured + added, at most */
    worstCasePoints: z.number().int().positive(),
    worstCaseSeconds: z.number().nonnegative(),
    summary: str,
  })
  .strict();

/** The replicates block of this orientation with its worst case (plan/plan-replicates.ts). */
export const planReplicatesSchema = z
  .object({
    points: z.union([z.literal('all'), z.array(z.union([z.number().int().positive(), replicateAnswerSchema]))]),
    min: z.number().int().min(3),
    /** resolved: the configured max, else min */
    max: z.number().int().min(3),
    /** relative half-width of the 95 % CI per metric (empty: a fixed n = min) */
    target: z.partialRecord(replicateMetricSchema, z.number().positive()),
    independentAllocations: z.boolean(),
    gpuHourBudget: z.number().positive().optional(),
    /** GPUs × the point budget, hours */
    pointGpuHours: z.number().nonnegative(),
    /** GPUs × the server's startup budget, hours (paid once per allocation) */
    startupGpuHours: z.number().nonnegative(),
    /** points that may be replicated, at most */
    replicatedPoints: z.number().int().nonnegative(),
    /** (max − 1) × replicatedPoints */
    worstCaseExtraPoints: z.number().int().nonnegative(),
    /** one fresh allocation per round after the first pass */
    worstCaseExtraAllocations: z.number().int().nonnegative(),
    /** the whole sweep (first pass, search, every replicate, each round's startup), GPU-hours */
    worstCaseGpuHours: z.number().nonnegative(),
    /** the first pass alone (with the search's worst case and one startup), GPU-hours */
    singlePassGpuHours: z.number().nonnegative(),
    summary: str,
  })
  .strict();
export type PlanReplicates = z.infer<typeof planReplicatesSchema>;

/** One role of a disaggregated plan (rules 23–28): its worker topology, settings, capacity and where its workers run. */
export const disaggRolePlanSchema = z
  .object({
    role: z.enum(DISAGG_ROLES),
    workers: z.number().int().positive(),
    /** One worker's validated topology. */
    topology: topologySchema,
    /** GPUs of all the role's workers. */
    gpus: z.number().int().positive(),
    /** The role's `--kv-transfer-config` (rule 24). */
    kvTransferConfig: str,
    settings: engineSettingsSchema,
    /** The capacity check of one worker (rule 28). */
    capacity: capacitySchema,
    /** Per worker, its nodes' allocation ranks (the first is its head). */
    workerNodes: z.array(z.array(z.number().int().nonnegative())),
    /** Per worker, the endpoints the router sends to (rule 26). */
    endpoints: z.array(z.array(str)),
    /** The role's own plan warnings. */
    warnings: z.array(str),
  })
  .strict();

export const disaggregationSchema = z
  .object({
    connector: kvConnectorSchema,
    router: z
      .object({
        kind: routerSchema.shape.kind,
        version: str.optional(),
        /** The allocation rank it runs on. */
        node: z.number().int().nonnegative(),
        argv: z.array(str),
        /** The environment of a router infersweep launches (llm-d-pd-sidecar). */
        env: z.record(z.string(), str).optional(),
        /** The client's one endpoint. */
        endpoint: str,
        /** Headers the client sends with every request (llm-d-pd-sidecar: the prefillers, `x-prefiller-host-port`). */
        requestHeaders: z.record(z.string(), str).optional(),
      })
      .strict(),
    roles: z.array(disaggRolePlanSchema).length(2),
  })
  .strict();

/** The deployment's speculative decoding, from its `--speculative-config` (plan/speculative.ts). */
export const speculativeSchema = z
  .object({
    method: str,
    /** The draft model, when the method has one (ngram has none). */
    model: str.optional(),
    numSpeculativeTokens: z.number().int().positive().optional(),
    /** The recipe's expected acceptance length (its `synthetic_acceptance_length`): points far from it are warned about. */
    expectedAcceptanceLength: z.number().positive().optional(),
    /** The whole setting as launched. */
    config: z.record(z.string(), z.unknown()),
  })
  .strict();

export const sweepPlanSchema = z
  .object({
    schemaVersion: z.literal(1),
    /** FNV-1a 64 of the canonical JSON of the plan without this field. */
    planHash: z.string().regex(/^[0-9a-f]{16}$/),
    sweep: str,
    orientation: str,
    cluster: str,
    model: modelSchema,
    image: str,
    engine: z
      .object({
        kind: z.literal('vllm'),
        version: str,
        /** What runs: real vLLM, the simulator standing in for it on node 0, or vLLM's CPU build (launchDifferences). */
        launch: z.enum(['vllm', 'simulator', 'vllm-cpu']),
        maxModelLen: z.number().int().positive().optional(),
        settings: engineSettingsSchema,
        /** the simulator's per-allocation speed multiplier (engineOverride.allocationSpeed) */
        allocationSpeed: allocationSpeedSchema.optional(),
      })
      .strict(),
    topology: topologySchema,
    slurm: slurmRequestSchema,
    timeLimit: timeLimitSchema,
    login: loginHostSchema,
    sharedDir: str,
    /** The cluster's results root (config clusters.<name>.resultsRoot), when set. */
    resultsRoot: str.optional(),
    /** Secret variable names (values are resolved by the worker at launch, never stored here). */
    secretEnv: z.array(str).optional(),
    /** File on the worker's host holding secret values (`NAME=value` lines). */
    secretsFile: str.optional(),
    nodes: z.array(planNodeSchema),
    /** Client endpoints (base URLs). More than one ⇒ clientMustBalance. */
    endpoints: z.array(str),
    metricsEndpoints: z.array(str),
    healthEndpoints: z.array(str),
    clientMustBalance: z.boolean(),
    engineIds: engineIdsSchema,
    points: z.array(z.number().int().positive()),
    /** Adaptive points after `points` (absent: the configured points only). */
    search: planSearchSchema.optional(),
    /** Replicates across allocations (absent: one measurement per point). */
    replicates: planReplicatesSchema.optional(),
    pointBudgets: z.array(pointBudgetSchema),
    budgets: budgetsSchema,
    /** Readiness deadline for the server (startup budget), seconds. */
    readinessTimeoutSeconds: z.number().positive(),
    deployment: z
      .object({
        policy: z.enum(['shared-server', 'server-per-point', 'allocation-per-point']),
        maxAllocationAttempts: z.number().int().positive(),
        /** At most this many points per allocation (1 under allocation-per-point); absent: all points. */
        pointsPerAllocation: z.number().int().positive().optional(),
        /** Allocations the sweep makes (1, or one per point). */
        allocations: z.number().int().positive(),
      })
      .strict(),
    agentx: agentxSettingsSchema,
    capacity: capacitySchema,
    /** Placeholder names that bindPlan must fill. */
    placeholders: z.array(str),
    warnings: z.array(str),
    notes: z.array(str),
    /** Under the vllm-cpu override: every way launchArgv/env differ from the planner's argv/env (one line each). */
    launchDifferences: z.array(str).optional(),
    /**
     * A prefill/decode-disaggregated orientation (rules 23–28): the roles, the connector and the router.
     * Then `nodes` lists both roles' nodes, `topology.nodes`/`gpus` count the whole allocation (the other
     * topology fields are the decode worker's) and `endpoints` is the router.
     */
    disaggregation: disaggregationSchema.optional(),
    /** Speculative decoding, when the engine runs it (absent: none). */
    speculative: speculativeSchema.optional(),
    /** The cluster's GPU telemetry (config clusters.<name>.gpuTelemetry): each point's energy; absent: none. */
    gpuTelemetry: gpuTelemetrySchema.optional(),
  })
  .strict();

export type SweepPlan = z.infer<typeof sweepPlanSchema>;
export type PlanNode = z.infer<typeof planNodeSchema>;
export type EngineIds = z.infer<typeof engineIdsSchema>;
export type PointBudget = z.infer<typeof pointBudgetSchema>;
export type TimeLimit = z.infer<typeof timeLimitSchema>;
export type PlanSearch = z.infer<typeof planSearchSchema>;
export type DisaggRolePlan = z.infer<typeof disaggRolePlanSchema>;
export type Speculative = z.infer<typeof speculativeSchema>;

export const boundNodeSchema = z
  .object({
    rank: z.number().int().nonnegative(),
    /** Slurm node name (SLURM_JOB_NODELIST order; rank 0 is the head). */
    node: str,
    address: str,
    serves: z.boolean(),
    argv: z.array(str),
    env: z.record(z.string(), str),
    launchArgv: z.array(str),
  })
  .strict();

export const boundDeploymentSchema = z
  .object({
    planHash: z.string(),
    jobId: str,
    headAddress: str,
    ports: z
      .object({
        port: z.number().int().min(1024).max(65535),
        dpRpcPort: z.number().int().min(1024).max(65535),
        masterPort: z.number().int().min(1024).max(65535),
        /** Disaggregated plans only: the router's port (rule 26). */
        routerPort: z.number().int().min(1024).max(65535).optional(),
      })
      .strict(),
    nodes: z.array(boundNodeSchema),
    endpoints: z.array(str),
    metricsEndpoints: z.array(str),
    healthEndpoints: z.array(str),
    clientMustBalance: z.boolean(),
    engineIds: engineIdsSchema,
    /** A P/D router infersweep launches as a step of its own (llm-d-pd-sidecar), bound. */
    router: z
      .object({
        rank: z.number().int().nonnegative(),
        node: str,
        argv: z.array(str),
        env: z.record(z.string(), str),
        endpoint: str,
      })
      .strict()
      .optional(),
    /** Headers the client sends with every request (the router's `requestHeaders`, bound). */
    requestHeaders: z.record(z.string(), str).optional(),
  })
  .strict();

export type BoundDeployment = z.infer<typeof boundDeploymentSchema>;
