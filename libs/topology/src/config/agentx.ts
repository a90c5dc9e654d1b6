import { z } from 'zod';

/**
 * AgentX client settings (the `agentx:` block of a sweep config). Mirrors the flags InferenceX
 * passes to `aiperf profile --scenario inferencex-agentx-mvp` (docs/inferencex.md, "The aiperf command").
 * Owned by libs/agentx (which consumes it); lives here so the config schema stays one pure schema.
 * Defaults are InferenceX's (HEAD 843c6254f, `build_replay_cmd`) unless a comment says otherwise.
 */
export const traceSourceSchema = z.discriminatedUnion('kind', [
  z
    .object({
      kind: z.literal('synthetic'),
      seed: z.number().int().nonnegative().default(42),
      traces: z.number().int().positive().default(64),
      /** Cap on a single request's prompt, tokens (keep below the server's context window). */
      maxContextTokens: z.number().int().positive().default(32768),
      /** Multiplies every recorded think time (1 = as generated; 0 = back-to-back, for client tests). */
      thinkTimeScale: z.number().min(0).default(1),
      /**
       * Share of a trace's middle turns that spawn a subagent (default 0.12). A subagent runs beside its
       * parent's later turns until the turn it is joined before (aiperf's rule, libs/agentx/README.md), so with
       * subagents a point holds more requests in flight than its concurrency (sessions); 0 makes the two equal.
       */
      subagentProbability: z.number().min(0).max(1).optional(),
    })
    .strict(),
  z
    .object({
      kind: z.literal('file'),
      /** JSONL/JSON Weka-style traces (a file or a directory of *.json) on the machine that runs the client. */
      path: z.string().min(1),
    })
    .strict(),
]);

export const clientHealthSchema = z
  .object({
    /** Event-loop delay p99 above this marks the point client-bound (peers.md G4: 5 ms). */
    maxEventLoopDelayP99Ms: z.number().positive().default(5),
    /** Client CPU (fraction of one core, user+system) above this marks the point client-bound (aiperf warns at 0.85). */
    maxCpuFraction: z.number().positive().default(0.85),
  })
  .strict();

export const aiperfSettingsSchema = z
  .object({
    /** The aiperf executable (InferenceX: the fork pinned at utils/aiperf 754356e9 in its own venv). */
    binary: z.string().min(1).default('aiperf'),
    /**
     * `inferencex` = the exact InferenceX flag set for the pinned fork; `pypi` = the same run expressed with
     * the flags PyPI aiperf 0.13 accepts (no --warmup-requests-per-lane; the per-trace idle cap is a scenario
     * lock there, so it needs --unsafe-override). The argv is persisted verbatim either way.
     */
    flavor: z.enum(['inferencex', 'pypi']).default('inferencex'),
    /**
     * `--public-dataset` loader. Unset: InferenceX's model-prefix rule (`defaultPublicDataset`): the 1M-context
     * corpus for dsv4*, glm5.2*, minimaxm3*, kimik3*, else the `_256k` one. Ignored for file traces.
     */
    publicDataset: z.string().min(1).optional(),
    /**
     * Where aiperf runs: in the worker process's host (`worker`), or on the allocation's head node in an
     * `srun --overlap` step (`head-node`, InferenceX's way on clusters: inside the container under pyxis, a
     * host step otherwise; libs/orchestrator/src/activities/aiperf-step.ts).
     */
    runOn: z.enum(['worker', 'head-node']).default('worker'),
    /**
     * The trace corpus aiperf replays: InferenceX's `public` loader (publicDataset), or the `configured`
     * agentx.traces (synthetic traces are written as Weka files next to the point; offline runs).
     */
    traces: z.enum(['public', 'configured']).default('public'),
    numDatasetEntries: z.number().int().positive().default(393),
    statsIntervalSeconds: z.number().positive().default(30),
    sliceDurationSeconds: z.number().positive().default(1),
    /** `--extra-inputs` (recipe-specific request fields), passed verbatim. */
    extraInputs: z.array(z.string()).default([]),
    /** Tokenizer id (always the real HF repo, not the served alias); `builtin` for offline runs. */
    tokenizer: z.string().min(1).optional(),
    /** Hard wall-clock bound for the aiperf process beyond profile + grace, seconds. */
    processTimeoutSeconds: z
      .number()
      .positive()
      .default(3 * 3600),
  })
  .strict();

export const agentxSettingsSchema = z
  .object({
    traces: traceSourceSchema.default({
      kind: 'synthetic',
      seed: 42,
      traces: 64,
      maxContextTokens: 32768,
      thinkTimeScale: 1,
    }),
    /** Profiling window, seconds (InferenceX default 3600; canonical minimum 900). */
    profileDurationSeconds: z.number().positive().default(3600),
    /** Runs shorter than the canonical minimum must say so explicitly. */
    nonCanonical: z.boolean().default(false),
    canonicalMinDurationSeconds: z.number().positive().default(900),
    randomSeed: z.number().int().nonnegative().default(42),
    trajectoryStartMinRatio: z.number().min(0).max(1).default(0.25),
    trajectoryStartMaxRatio: z.number().min(0).max(1).default(0.75),
    warmupRequestsPerLane: z.number().int().nonnegative().default(10),
    warmupGracePeriodSeconds: z.number().positive().default(1800),
    /** After the profile ends no request starts; in-flight ones get this long to finish (and count). */
    profileGracePeriodSeconds: z.number().positive().default(1800),
    traceIdleGapCapSeconds: z.number().positive().default(300),
    /** Whole-system idle cap (nothing in flight, every lane thinking), seconds: the AgentX scenario lock is 10 s. */
    systemIdleGapCapSeconds: z.number().positive().default(10),
    failedRequestThreshold: z.number().min(0).max(1).default(0.1),
    /** Context-overflow requests / profiled requests above this invalidates the point (AgentX: 1 %). */
    contextOverflowThreshold: z.number().min(0).max(1).default(0.01),
    /** TTFT/ITL observations must span at least this fraction of the profiling phase (aiperf coverage gate). */
    minMetricCoverage: z.number().min(0).max(1).default(0.98),
    /** Per-request HTTP timeout, seconds (InferenceX raises aiperf's TCP user timeout to 900 s). */
    requestTimeoutSeconds: z.number().positive().default(3600),
    /** Server /metrics sampling period during profiling (KV usage max, time series), seconds. */
    serverMetricsIntervalSeconds: z.number().positive().default(5),
    clientHealth: clientHealthSchema.default({ maxEventLoopDelayP99Ms: 5, maxCpuFraction: 0.85 }),
    /** Sticky sessions: pin each session to one DP rank with X-data-parallel-rank. */
    stickyDpRouting: z.boolean().default(false),
    /**
     * Invalidate a point whose server reports no cached prompt tokens on multi-turn traffic (neither
     * usage.prompt_tokens_details.cached_tokens nor the prefix-cache hit counter). Unset: on exactly when the
     * plan turns prefix caching on (engine.prefixCaching).
     */
    requireCachedTokens: z.boolean().optional(),
    /** Which client runs the point: infersweep's own, or the pinned aiperf (InferenceX's client and flags; docs/inferencex.md). */
    client: z.enum(['infersweep', 'aiperf']).default('infersweep'),
    aiperf: aiperfSettingsSchema.default({
      binary: 'aiperf',
      flavor: 'inferencex',
      runOn: 'worker',
      traces: 'public',
      numDatasetEntries: 393,
      statsIntervalSeconds: 30,
      sliceDurationSeconds: 1,
      extraInputs: [],
      processTimeoutSeconds: 3 * 3600,
    }),
    /** Drain gate between points. */
    drain: z
      .object({
        pollSeconds: z.number().positive().default(10),
        idlePolls: z.number().int().positive().default(3),
        deadlineSeconds: z.number().positive().default(1800),
        scrapeTimeoutSeconds: z.number().positive().default(10),
      })
      .strict()
      .default({ pollSeconds: 10, idlePolls: 3, deadlineSeconds: 1800, scrapeTimeoutSeconds: 10 }),
  })
  .strict()
  .refine((s) => s.trajectoryStartMinRatio <= s.trajectoryStartMaxRatio, {
    message: 'trajectoryStartMinRatio must be ≤ trajectoryStartMaxRatio',
    path: ['trajectoryStartMinRatio'],
  })
  .refine((s) => s.nonCanonical || s.profileDurationSeconds >= s.canonicalMinDurationSeconds, {
    message: 'profileDurationSeconds is below the canonical minimum: set nonCanonical: true to run it anyway',
    path: ['profileDurationSeconds'],
  });

/** InferenceX `resolve_trace_source` (benchmarks/benchmark_lib.sh): model prefixes with 1M-context traces. */
export const MILLION_CONTEXT_PREFIXES = ['dsv4', 'glm5.2', 'minimaxm3', 'kimik3'] as const;

/** The aiperf `--public-dataset` loader InferenceX picks for a model prefix (docs/inferencex.md). */
export function defaultPublicDataset(modelPrefix: string | undefined): string {
  const p = (modelPrefix ?? '').toLowerCase();
  return MILLION_CONTEXT_PREFIXES.some((x) => p.startsWith(x))
    ? 'semianalysis_cc_traces_weka_062126'
    : 'semianalysis_cc_traces_weka_062126_256k';
}

export type AgentxSettings = z.infer<typeof agentxSettingsSchema>;
export type AgentxSettingsInput = z.input<typeof agentxSettingsSchema>;
export type TraceSource = z.infer<typeof traceSourceSchema>;
