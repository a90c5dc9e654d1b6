/**
 * What the history of results holds, as zod schemas (the one source of truth for the file store,
 * the PostgreSQL store, the activity's verdict and the CLI), and the interface both stores implement.
 * Pure: no I/O.
 *
 * A point of history is one ConcurrencyPoint of one sweep run. Runs are comparable when their
 * {@link SeriesKey} is equal (same config, orientation, model, GPU, cluster, client, workload and
 * concurrency). What may change from night to night inside one series is the {@link RunContext}
 * (image, engine version, the plan's launch fingerprint, the plan hash; the cluster is kept there
 * too): change detection attributes a shift to it.
 */
import { InfersweepError } from '@infersweep/core';
import { z } from 'zod';

const str = z.string().min(1);

/** What makes runs comparable: one series per key. */
export const seriesKeySchema = z
  .object({
    /** the config's `name` */
    config: str,
    orientation: str,
    /** served model name */
    model: str,
    /** GPU type and count of the deployment, e.g. `h200x32` */
    gpu: str,
    /** the cluster the run measured (config clusters.<name>) */
    cluster: str,
    /** the load generator and its version's name, e.g. `infersweep`, `aiperf` */
    client: str,
    /** what the client replayed: the dataset's source, loader, file and seed (extract.ts workloadOf) */
    workload: str,
    concurrency: z.number().int().positive(),
  })
  .strict();
export type SeriesKey = z.infer<typeof seriesKeySchema>;

/** What may differ between runs of one series; a change is attributed to the fields that differ around it. */
export const runContextSchema = z
  .object({
    cluster: str,
    image: str,
    engineVersion: str,
    /** content hash (libs/core contentHash) of the engine and its common launch arguments (the point record's engineArgsFingerprint) */
    launchFingerprint: str,
    /** the plan's content hash: any config change that reaches the plan changes it */
    planHash: str,
  })
  .strict();
export type RunContext = z.infer<typeof runContextSchema>;
export const CONTEXT_FIELDS = Object.keys(runContextSchema.shape) as (keyof RunContext)[];
export type ContextField = keyof RunContext;

/**
 * Headline metrics of a point: throughputs in tokens/s per GPU, interactivity in tok/s/user (p50),
 * latencies in ms, error rate as a fraction of the requests the profile issued. null: not measured.
 */
export const headlineMetricsSchema = z
  .object({
    throughputPerGpu: z.number().nullable(),
    outputThroughputPerGpu: z.number().nullable(),
    interactivityP50: z.number().nullable(),
    ttftP50Ms: z.number().nullable(),
    ttftP99Ms: z.number().nullable(),
    itlP50Ms: z.number().nullable(),
    itlP99Ms: z.number().nullable(),
    errorRate: z.number().min(0).max(1).nullable(),
  })
  .strict();
export type HeadlineMetrics = z.infer<typeof headlineMetricsSchema>;

/** The metrics of a point that measured nothing (a failed point). */
export const NO_METRICS: HeadlineMetrics = {
  throughputPerGpu: null,
  outputThroughputPerGpu: null,
  interactivityP50: null,
  ttftP50Ms: null,
  ttftP99Ms: null,
  itlP50Ms: null,
  itlP99Ms: null,
  errorRate: null,
};
export type MetricName = keyof HeadlineMetrics;
export const metricNameSchema = z.enum(Object.keys(headlineMetricsSchema.shape) as [MetricName, ...MetricName[]]);

/** Which way is better for each metric (a regression is a move the other way). */
export const HIGHER_IS_BETTER: Record<MetricName, boolean> = {
  throughputPerGpu: true,
  outputThroughputPerGpu: true,
  interactivityP50: true,
  ttftP50Ms: false,
  ttftP99Ms: false,
  itlP50Ms: false,
  itlP99Ms: false,
  errorRate: false,
};

export const METRIC_LABELS: Record<MetricName, string> = {
  throughputPerGpu: 'tok/s/GPU',
  outputThroughputPerGpu: 'out tok/s/GPU',
  interactivityP50: 'interactivity p50',
  ttftP50Ms: 'TTFT p50 ms',
  ttftP99Ms: 'TTFT p99 ms',
  itlP50Ms: 'ITL p50 ms',
  itlP99Ms: 'ITL p99 ms',
  errorRate: 'error rate',
};

/** One ConcurrencyPoint of one run, as the history stores it. */
export const historyPointSchema = z
  .object({
    /** the sweep id of the run (a schedule's runs each have their own) */
    runId: str,
    /** when the run's first point started (ISO 8601): the series' order */
    time: z.string().datetime({ offset: true }),
    resultsDir: str,
    key: seriesKeySchema,
    context: runContextSchema,
    /** the record's validity gate; an invalid point is kept (shown) but never enters a baseline */
    valid: z.boolean(),
    invalidReasons: z.array(z.string()),
    metrics: headlineMetricsSchema,
    /** requests the profile issued (the error rate's denominator); absent in points stored before it was kept */
    requests: z.number().int().nonnegative().optional(),
    /** the point failed (no record: no metrics); absent: it has a record */
    failed: z.boolean().optional(),
    /** the schedule that started the run (`infersweep schedule`); absent: an ad-hoc run */
    schedule: str.optional(),
    /** replicates of the point (allocations it was measured on; `metrics` are then the means over them, extract.ts); absent: one */
    n: z.number().int().positive().optional(),
    /** per metric, the replicates' 95 % CI of the point's value (libs/sweep replicateInterval; absent: not replicated) */
    ci: z.partialRecord(metricNameSchema, z.object({ lower: z.number(), upper: z.number() }).strict()).optional(),
    /** the point's GPU-seconds by ledger category (libs/sweep/src/ledger.ts); absent before the ledger */
    gpuSeconds: z.record(z.string(), z.number().nonnegative()).optional(),
    /** the classes of the point's failed attempts (libs/core/src/attempt-class.ts), oldest first */
    failureClasses: z.array(z.string()).optional(),
  })
  .strict();
export type HistoryPoint = z.infer<typeof historyPointSchema>;

/** A part of a series id: `%` and `:` escaped (`%25`, `%3A`), so that no two keys share an id. */
const idPart = (s: string) => s.replace(/%/g, '%25').replace(/:/g, '%3A');

/**
 * The series id the CLI prints and accepts: `config:orientation:model:gpu:cluster:client:workload:c<N>`,
 * each part with `%` and `:` escaped (a model `a:b` of config `c` and a model `b` of config `c:a` never
 * collide).
 */
export function seriesId(k: SeriesKey): string {
  return `${orientationId(k)}:c${k.concurrency}`;
}

/** The id of a series without its concurrency: an orientation's points share it (one unit per metric). */
export function orientationId(k: Omit<SeriesKey, 'concurrency'>): string {
  return [k.config, k.orientation, k.model, k.gpu, k.cluster, k.client, k.workload].map(idPart).join(':');
}

/**
 * A store written before cluster, client and workload joined the series key (or otherwise in another
 * format): it cannot be read, and the error says how to rewrite it. `fatal`: retrying cannot help.
 */
export class HistoryFormatError extends InfersweepError {
  constructor(
    readonly where: string,
    readonly detail: string,
    fix = 'rewrite it from the results folders with `infersweep history rebuild --root <results root>`',
  ) {
    super(
      `the history store ${where} holds points in an older format (${detail}); ${fix} (pre-1.0: the old format is not read)`,
      { kind: 'fatal', context: { step: 'history', store: where } },
    );
  }
}

/** A stored point of an older format: a series key without the fields the current one requires. */
export function olderFormat(raw: unknown): string | undefined {
  const key = (raw as { key?: Record<string, unknown> } | null)?.key;
  if (!key || typeof key !== 'object') return undefined;
  const missing = (['cluster', 'client', 'workload'] as const).filter((f) => !(f in key));
  return missing.length ? `series keys without ${missing.join(', ')}` : undefined;
}

/** True when `query` names this series: its whole id, or a prefix of it ending at a `:`. */
export function seriesMatches(k: SeriesKey, query: string): boolean {
  const id = seriesId(k);
  return id === query || id.startsWith(query.endsWith(':') ? query : `${query}:`);
}

/** Where the history is kept: a JSON-lines file (./store.ts) or PostgreSQL (./pg-store.ts); openStore picks one. */
export interface HistoryStore {
  /** where it is, for messages (no credentials) */
  readonly where: string;
  /** Store the points of a run, replacing what the store held for that run. */
  putRun(runId: string, points: readonly HistoryPoint[]): Promise<void>;
  /** Every stored point of one series. */
  series(key: SeriesKey): Promise<HistoryPoint[]>;
  /** The points of one run (empty when unknown). */
  run(runId: string): Promise<HistoryPoint[]>;
  /** Every series key the store holds (each once). */
  seriesKeys(): Promise<SeriesKey[]>;
  /**
   * Replace these runs, all or none (PostgreSQL: one transaction; the file: one rename): what the store held
   * for each run id is dropped, the given points stored. Runs not named stay as they are.
   */
  replaceRuns(runs: readonly StoredRun[]): Promise<void>;
  /** Stored lines that did not validate at the last read, or that `replaceRuns` dropped (the file store; 0 for PostgreSQL). */
  readonly skippedLines: number;
  close(): Promise<void>;
}

export interface StoredRun {
  runId: string;
  points: readonly HistoryPoint[];
}

// ---------------------------------------------------------------- verdicts

/** One field of the run context that differs across a change. */
export const contextChangeSchema = z
  .object({ field: z.enum(CONTEXT_FIELDS as [ContextField, ...ContextField[]]), before: z.string(), after: z.string() })
  .strict();
export type ContextChange = z.infer<typeof contextChangeSchema>;

export const changeDirectionSchema = z.enum(['regression', 'improvement']);

/** A detected change of one metric of one series. */
export const changePointSchema = z
  .object({
    metric: metricNameSchema,
    direction: changeDirectionSchema,
    /** the first run of the new level, and the last run before it */
    firstRunId: z.string(),
    previousRunId: z.string(),
    /** the run whose test detected it (the last of the k runs) */
    detectedAtRunId: z.string(),
    baseline: z.number(),
    value: z.number(),
    /** (window median - baseline median) / baseline median */
    relativeChange: z.number(),
    pValue: z.number(),
    /** the runs the baseline held and the runs tested (every verdict names the runs it compared) */
    baselineRunIds: z.array(z.string()),
    windowRunIds: z.array(z.string()),
    /** what changed in the run context between the previous run and the first one of the new level */
    attribution: z.array(contextChangeSchema),
  })
  .strict();
export type ChangePoint = z.infer<typeof changePointSchema>;

export const metricStatusSchema = z.enum([
  'regression',
  'improvement',
  'unchanged',
  'insufficient-history',
  'invalid',
  'not-measured',
  'unmeasured',
]);

/** The test of one metric at one run. */
export const metricEvaluationSchema = z
  .object({
    metric: metricNameSchema,
    runId: z.string(),
    value: z.number().nullable(),
    status: metricStatusSchema,
    /** median of the baseline runs */
    baseline: z.number().nullable(),
    relativeChange: z.number().nullable(),
    /** p-value of the test in the direction the tested runs moved; null when no test ran */
    pValue: z.number().nullable(),
    baselineRunIds: z.array(z.string()),
    windowRunIds: z.array(z.string()),
    /** the baseline's run-to-run SD on the log scale (≈ relative), corrected for its autocorrelation */
    relativeNoise: z.number().nullable(),
    change: changePointSchema.optional(),
    /** the baseline's AR(1) coefficient the test used */
    rho: z.number().optional(),
    /** the magnitude gate the change had to pass (log scale ≈ relative) */
    gate: z.number().optional(),
    /** the combined one-sided p-value of the point's unit (its orientation's points for this metric), and its BH adjustment across the family (q-value) */
    unitPValue: z.number().optional(),
    qValue: z.number().optional(),
    /** a change flagged on an earlier night still holds: shown, not counted or notified again */
    pending: z.boolean().optional(),
    /** a secondary metric: its own family, reported, never counted */
    secondary: z.boolean().optional(),
  })
  .strict();
export type MetricEvaluation = z.infer<typeof metricEvaluationSchema>;

export const trendPointSchema = z
  .object({ runId: z.string(), value: z.number().nullable(), valid: z.boolean() })
  .strict();
export type TrendPoint = z.infer<typeof trendPointSchema>;

/**
 * `unmeasured`: the point is invalid or failed while its series has valid runs before it, or no point
 * of its run is valid: a finding of its own kind, never a pass (docs/history.md). `invalid`: invalid
 * with nothing to compare it with.
 */
export const pointStatusSchema = z.enum([
  'regression',
  'unmeasured',
  'improvement',
  'unchanged',
  'insufficient-history',
  'invalid',
]);
export type PointVerdictStatus = z.infer<typeof pointStatusSchema>;

export const pointVerdictSchema = z
  .object({
    series: z.string(),
    concurrency: z.number().int().positive(),
    runId: z.string(),
    status: pointStatusSchema,
    /** one evaluation per tested metric, each with the series' recent values */
    metrics: z.array(metricEvaluationSchema.extend({ trend: z.array(trendPointSchema) })),
  })
  .strict();
export type PointVerdict = z.infer<typeof pointVerdictSchema>;
