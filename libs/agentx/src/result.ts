import { z } from 'zod';
import type { PointSummary, SloStatistic } from '@infersweep/sweep';
import { agentxSettingsSchema } from '@infersweep/topology';
import { statsSchema } from './metrics/stats';
import { serverMetricsSchema } from './server/window';
import { pointEnergySchema } from './server/energy';
import { idleRankCheckSchema, roleCheckSchema } from './server/idle-ranks';

/**
 * Result records. Field names follow InferenceX's agentic aggregate JSON
 * (`utils/agentic/aggregation/process_agentic_result.py`) where an equivalent exists; see README.md for
 * the mapping. Latencies in the record are seconds (as InferenceX); the per-request JSONL uses ms.
 */
export const identitySchema = z
  .object({
    sweepId: z.string(),
    /** Content hash of the sweep plan (resume key), when the caller has one. */
    planHash: z.string().optional(),
    orientation: z.string(),
    cluster: z.string().optional(),
    /** Topology summary (e.g. "tp8-dp4-ep32") or the structured plan. */
    topology: z.union([z.string(), z.record(z.string(), z.unknown())]),
    image: z.string(),
    model: z.string(),
    /** Hash of the engine args + env (InferenceX recipe_fingerprint). */
    engineArgsFingerprint: z.string(),
    jobId: z.string().nullable(),
    nodes: z.array(z.string()),
    attempt: z.number().int().nonnegative(),
    allocationAttempt: z.number().int().nonnegative().optional(),
    activityAttempt: z.number().int().nonnegative().optional(),
    /** 'shared-server' | 'server-per-point' | 'allocation-per-point' (libs/sweep DeploymentPolicy). */
    deploymentPolicy: z.string(),
    framework: z.string().default('vllm'),
    hw: z.string().optional(),
  })
  .strict();
export type PointIdentity = z.infer<typeof identitySchema>;
export type PointIdentityInput = z.input<typeof identitySchema>;

export const requestPhaseSchema = z.enum(['warmup', 'cache-pressure', 'profiling']);
export type RequestPhase = z.infer<typeof requestPhaseSchema>;

/** One line of the per-request JSONL. */
export const requestRecordSchema = z
  .object({
    id: z.string(),
    lane: z.number().int(),
    trace_id: z.string(),
    play: z.number().int(),
    /** Index among the root requests of the trace, or among the subagent's requests. */
    turn: z.number().int(),
    kind: z.enum(['root', 'subagent']),
    agent_id: z.string().nullable(),
    phase: requestPhaseSchema,
    endpoint: z.string(),
    /** ms since the run's monotonic origin (performance.now at run start). */
    start_ms: z.number(),
    end_ms: z.number(),
    ttft_ms: z.number().nullable(),
    itl_ms: z.number().nullable(),
    /**
     * Full-response ITL, ms: (end − first token) / (osl − 1) over every generated token (reasoning and
     * tool calls included); aiperf's `full_response_inter_token_latency`. The own client's `itl_ms` already
     * spans every streamed token, so it writes the same value. Absent in records written before this field.
     */
    full_response_itl_ms: z.number().nullable().optional(),
    e2el_ms: z.number().nullable(),
    /** Server-reported (usage) token counts — never counted from chunks. */
    isl: z.number().int().nullable(),
    osl: z.number().int().nullable(),
    cached_tokens: z.number().int().nullable(),
    expected_isl: z.number().int(),
    expected_osl: z.number().int(),
    max_tokens: z.number().int(),
    theoretical_cache_hit_tokens: z.number().int(),
    content_chunks: z.number().int(),
    status: z.number().int().nullable(),
    ok: z.boolean(),
    error_category: z.string().nullable(),
    /**
     * aiperf's error as InferenceX categorizes it (request_metrics.py `_error_category`: the error's type,
     * error_type, code, class or status, else its message up to the first ':'); the aiperf client only.
     */
    error_type: z.string().nullable().optional(),
    error: z.string().nullable(),
  })
  .strict();
export type RequestRecord = z.infer<typeof requestRecordSchema>;

export const requestAccountingSchema = z
  .object({
    records_total: z.number().int(),
    records_profiled: z.number().int(),
    records_dropped_total: z.number().int(),
    records_warmup_dropped: z.number().int(),
    records_error_dropped: z.number().int(),
    context_overflow_count: z.number().int(),
    /** Requests still in flight when the profile grace period ran out (cancelled, counted as errors). */
    grace_cancelled: z.number().int(),
    error_categories: z.record(z.string(), z.number().int()),
  })
  .strict();

const tput = z.object({ tokens_per_second: z.number().nullable() }).strict();

export const requestMetricsSchema = z
  .object({
    latency: z
      .object({
        ttft: statsSchema,
        e2el: statsSchema,
        itl: statsSchema,
        tpot: statsSchema,
        intvty: statsSchema,
        e2e_norm_intvty: statsSchema,
      })
      .strict(),
    qps: statsSchema,
    tokens: z.object({ input: statsSchema, output_actual: statsSchema, output_expected: statsSchema }).strict(),
    throughput: z
      .object({
        input: tput,
        output: tput,
        total: tput,
        duration_seconds: z.number().nullable(),
        per_gpu: z
          .object({
            total_tput_tps: z.number().nullable(),
            output_tput_tps: z.number().nullable(),
            input_tput_tps: z.number().nullable(),
          })
          .strict(),
      })
      .strict(),
    cache: z.object({ theoretical_cache_hit_rate: z.number().nullable() }).strict(),
  })
  .strict();
export type RequestMetrics = z.infer<typeof requestMetricsSchema>;

/** Per-request SLO attainment (metrics/aggregate.ts `requestGoodput`), when the config gives goodput bounds. */
export const pointGoodputSchema = z
  .object({
    attainment_target: z.number(),
    bounds: z
      .object({ ttft_ms: z.number().nullable(), tpot_ms: z.number().nullable(), e2el_ms: z.number().nullable() })
      .strict(),
    good_requests: z.number().int(),
    profiled_requests: z.number().int(),
    /** good / profiled; null without profiled requests */
    attainment: z.number().nullable(),
    /** Wilson score interval at ci_level */
    ci_lower: z.number().nullable(),
    ci_upper: z.number().nullable(),
    ci_level: z.number(),
  })
  .strict();
export type PointGoodputRecord = z.infer<typeof pointGoodputSchema>;

/** The search's per-point uncertainty (metrics/aggregate.ts `sloUncertainty`): SD of log statistic over bootstrap resamples. */
export const sloUncertaintySchema = z
  .object({
    method: z.literal('percentile-bootstrap'),
    resamples: z.number().int().positive(),
    seed: z.number().int(),
    log_se: z
      .object({
        ttft_p50: z.number().nullable(),
        ttft_p99: z.number().nullable(),
        itl_p50: z.number().nullable(),
        itl_p99: z.number().nullable(),
        e2el_p50: z.number().nullable(),
        e2el_p99: z.number().nullable(),
        e2e_norm_intvty_p90: z.number().nullable(),
      })
      .strict(),
  })
  .strict();
export type SloUncertaintyRecord = z.infer<typeof sloUncertaintySchema>;

export const concurrencySchema = z
  .object({
    target_sessions: z.number().int(),
    /** Time-weighted live session trees during profiling (AgentX concurrency). */
    time_weighted_sessions: z.number().nullable(),
    /** Time-weighted lanes with ≥ 1 request in flight (0 think time ⇒ should be ≈ N). */
    time_weighted_busy_lanes: z.number().nullable(),
    time_weighted_requests_in_flight: z.number().nullable(),
    max_requests_in_flight: z.number().int(),
    subagent_requests_profiled: z.number().int(),
    plays_started: z.number().int(),
  })
  .strict();

export const clientHealthResultSchema = z
  .object({
    event_loop_delay_p99_ms: z.number().nullable(),
    event_loop_delay_max_ms: z.number().nullable(),
    /** The delay p99 less the run-queue wait of the client's thread (its own work's delay); absent in older records. */
    own_event_loop_delay_p99_ms: z.number().nullable().optional(),
    /** CPU of the client's own process over the window, in cores. */
    cpu_fraction: z.number().nullable(),
    /** Time the client's thread waited for a CPU (runnable, not running) / window; null off Linux. */
    run_queue_wait_fraction: z.number().nullable().optional(),
    peak_rss_bytes: z.number().nullable(),
    /** The most points the worker process measured at once during this point's window (1 = alone). */
    concurrent_points_max: z.number().int().positive().nullable().optional(),
    /** The host the client ran on, at the window's end (steal over the window; null off Linux). */
    host: z
      .object({
        name: z.string(),
        cpus: z.number().int().positive(),
        load_average_1m: z.number(),
        steal_fraction: z.number().nullable(),
      })
      .strict()
      .optional(),
    /** The client's own figures over the limits (`client_saturated`). */
    saturated: z.boolean(),
    reason: z.string().nullable(),
    /** A delay the client's own work does not explain: the host gave it no CPU (`host_saturated`). */
    host_saturated: z.boolean().optional(),
    host_reason: z.string().nullable().optional(),
  })
  .strict();

export const pointResultSchema = z
  .object({
    schema_version: z.literal(1),
    scenario_type: z.literal('agentic-coding'),
    benchmark_type: z.literal('agentic_traces'),
    client: z.object({ name: z.enum(['infersweep', 'aiperf']), version: z.string() }).strict(),
    identity: identitySchema,
    conc: z.number().int().positive(),
    served_model: z.string(),
    endpoints: z.array(z.string()),
    metrics_endpoints: z.array(z.string()),
    gpu_count: z.number().int().positive(),
    settings: agentxSettingsSchema,
    dataset: z
      .object({
        source_type: z.enum(['synthetic', 'file', 'public']),
        loader: z.string(),
        path: z.string().nullable(),
        seed: z.number().int().nullable(),
        entry_count: z.number().int(),
        /** aiperf's `metadata.dataset` from profile_export_aiperf.json, verbatim (the aiperf client only). */
        aiperf_metadata: z.record(z.string(), z.unknown()).optional(),
      })
      .strict(),
    num_requests_total: z.number().int(),
    num_requests_successful: z.number().int(),
    request_accounting: requestAccountingSchema,
    request_metrics: requestMetricsSchema,
    /** Absent when the config gives no goodput bounds (search.slo.goodput). */
    goodput: pointGoodputSchema.optional(),
    /** The search's per-point uncertainty; absent in records written before it existed. */
    slo_uncertainty: sloUncertaintySchema.optional(),
    concurrency: concurrencySchema,
    client_health: clientHealthResultSchema,
    server_metrics: serverMetricsSchema,
    /** GPU energy over the profiling window (server/energy.ts); absent when the cluster exposes no telemetry. */
    energy: pointEnergySchema.optional(),
    idle_rank_checks: z.array(idleRankCheckSchema),
    /** A disaggregated (P/D) point: each role's served requests against the client's (rule 27); absent otherwise. */
    role_checks: z.array(roleCheckSchema).optional(),
    timing: z
      .object({
        started_at: z.string(),
        profiling_started_at: z.string().nullable(),
        profiling_ended_at: z.string().nullable(),
        ended_at: z.string(),
        /** Configured profile window, s, and the measured one (profile start → last profiled request end). */
        profile_duration_seconds: z.number(),
        measured_profile_seconds: z.number().nullable(),
        warmup_seconds: z.number().nullable(),
      })
      .strict(),
    submission_valid: z.boolean(),
    submission_invalid_reasons: z.array(z.string()),
    /** Data the client dropped and why (NaN in /metrics, a non-numeric usage field, …). */
    warnings: z.array(z.string()).default([]),
    artifacts: z
      .object({
        record: z.string().nullable(),
        requests_jsonl: z.string().nullable(),
        command: z.string().nullable(),
        raw_dir: z.string().nullable(),
      })
      .strict(),
  })
  .strict();
export type PointResult = z.infer<typeof pointResultSchema>;

/**
 * The one projection of a point record onto the numbers everyone shows: the point activity's result
 * (the workflow's PointSummary), the CLI's `results` and the report. Latencies in ms, throughputs in
 * tokens/s (per GPU), interactivity in tok/s/user.
 */
export function pointSummary(r: PointResult, where: { resultPath: string; reused: boolean }): PointSummary {
  const m = r.request_metrics;
  const lat = m.latency;
  const val = (x: number | null | undefined) => (x === null || x === undefined ? undefined : x);
  const ms = (s: number | null | undefined) => (s === null || s === undefined ? undefined : s * 1000);
  // optional chains: records written before server metrics or warnings existed still summarise
  const sd = r.server_metrics?.spec_decode?.acceptance_length;
  return {
    concurrency: r.conc,
    valid: r.submission_valid,
    reasons: r.submission_invalid_reasons,
    resultPath: where.resultPath,
    reused: where.reused,
    jobId: r.identity.jobId ?? undefined,
    nodes: r.identity.nodes,
    attempt: r.identity.attempt,
    gpuCount: r.gpu_count,
    requestsProfiled: r.request_accounting.records_profiled,
    requestsFailed: r.request_accounting.records_error_dropped,
    requestsJsonl: r.artifacts.requests_jsonl ?? undefined,
    outputThroughputPerGpu: val(m.throughput.per_gpu.output_tput_tps),
    totalThroughputPerGpu: val(m.throughput.per_gpu.total_tput_tps),
    interactivityP50: val(lat.intvty.p50),
    e2eNormInteractivityP90: val(lat.e2e_norm_intvty.p90),
    ...(r.goodput?.attainment === null || r.goodput?.attainment === undefined
      ? {}
      : {
          goodput: {
            good: r.goodput.good_requests,
            total: r.goodput.profiled_requests,
            attainment: r.goodput.attainment,
            lower: r.goodput.ci_lower ?? 0,
            upper: r.goodput.ci_upper ?? 1,
          },
        }),
    ttftP50Ms: ms(lat.ttft.p50),
    ttftP99Ms: ms(lat.ttft.p99),
    itlP50Ms: ms(lat.itl.p50),
    itlP99Ms: ms(lat.itl.p99),
    e2elP50Ms: ms(lat.e2el.p50),
    e2elP99Ms: ms(lat.e2el.p99),
    ...(r.slo_uncertainty ? { logSe: logSeOf(r.slo_uncertainty) } : {}),
    ...(sd === null || sd === undefined ? {} : { specAcceptanceLength: sd }),
    ...(r.warnings?.length ? { warnings: r.warnings } : {}),
    ...(r.timing.warmup_seconds === null ? {} : { phaseSeconds: { warmup: r.timing.warmup_seconds } }),
  };
}

/** The record's bootstrap log-SEs as the summary's (PointSummary.logSe), measured ones only. */
function logSeOf(u: SloUncertaintyRecord): NonNullable<PointSummary['logSe']> {
  const l = u.log_se;
  const pairs: [SloStatistic, number | null][] = [
    ['ttftP50Ms', l.ttft_p50],
    ['ttftP99Ms', l.ttft_p99],
    ['itlP50Ms', l.itl_p50],
    ['itlP99Ms', l.itl_p99],
    ['e2elP50Ms', l.e2el_p50],
    ['e2elP99Ms', l.e2el_p99],
    ['e2eNormInteractivityP90', l.e2e_norm_intvty_p90],
  ];
  return Object.fromEntries(pairs.filter(([, v]) => v !== null)) as NonNullable<PointSummary['logSe']>;
}
