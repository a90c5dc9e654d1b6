/**
 * Change detection per series and metric (docs/history.md "How a change is detected"): at every valid
 * run the newest `confirmRuns` runs are tested against the valid runs before them (libs/stats
 * `shiftTest`: a one-sided t-test on log values with the baseline's AR(1) autocorrelation, continuous
 * p-values), walked along the series. A flag does not restart the baseline: the flagged runs leave
 * later baselines (pending) until the change has held for `minBaselineRuns` tested runs (confirmed:
 * the series restarts at its first run) or a night no longer tests worse (transient: its runs stay
 * out). Past nights are judged per point at the Bonferroni level `q / familySize` and the magnitude
 * gate; the night being judged is decided by its family in ./verdict.ts. The error rate is tested on
 * absolute change (binomial). Pure and deterministic.
 */
import {
  errorRateChange,
  gateThreshold,
  mean,
  MIN_BASELINE,
  shiftTest,
  tQuantile,
  type ShiftTestResult,
} from '@infersweep/stats';
import { z } from 'zod';
import {
  CONTEXT_FIELDS,
  HIGHER_IS_BETTER,
  metricNameSchema,
  type ChangePoint,
  type ContextChange,
  type ContextField,
  type HistoryPoint,
  type MetricEvaluation,
  type MetricName,
  type RunContext,
} from './schema';

export const detectionSettingsSchema = z
  .object({
    /** the error rate's binomial test level (the continuous metrics are controlled by `q` across the family) */
    alpha: z.number().gt(0).lt(1).default(0.01),
    /** Benjamini–Hochberg level across a run's family of units */
    q: z.number().gt(0).lt(1).default(0.05),
    /** smallest change that counts (log scale ≈ relative) */
    minRelativeChange: z.number().min(0).default(0.05),
    /** and at least this many run-SDs of the series */
    gateSigmas: z.number().min(0).default(2),
    /** baseline runs a test needs (at least libs/stats MIN_BASELINE) */
    minBaselineRuns: z.number().int().min(MIN_BASELINE).default(5),
    /** the baseline: at most this many valid runs before the tested ones */
    baselineRuns: z.number().int().positive().default(20),
    /** k: the newest k runs are the window (2: one outlier night is half the evidence) */
    confirmRuns: z.number().int().positive().default(2),
    /** the primary metrics: their regressions count in a run's verdict and notify */
    metrics: z.array(metricNameSchema).min(1).default(['throughputPerGpu', 'interactivityP50', 'errorRate']),
    /** the secondary metrics: a family of their own, reported, never counted */
    secondaryMetrics: z.array(metricNameSchema).default(['ttftP99Ms', 'itlP99Ms']),
    /** the error rate regresses when it rises by at least this much (absolute, 0.02 = 2 points) at p ≤ alpha */
    minErrorRateRise: z.number().min(0).max(1).default(0.02),
    /** a run whose context differs in one of these fields from the run before starts a new segment */
    segmentOn: z.array(z.enum(CONTEXT_FIELDS as [ContextField, ...ContextField[]])).default([]),
    /** ad-hoc runs enter a scheduled run's baseline too (default: only its schedule's runs) */
    includeAdhoc: z.boolean().default(false),
    /** `history analyze`: E-divisive permutations per candidate and their seed */
    permutations: z.number().int().positive().default(199),
    seed: z.number().int().default(1),
  })
  .strict();
export type DetectionSettingsInput = z.input<typeof detectionSettingsSchema>;
export type DetectionSettings = z.infer<typeof detectionSettingsSchema>;

// ---------------------------------------------------------------- statistics

export function median(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/**
 * The standard error of a point's value on the log scale from its replicates' 95 % CI (half-width /
 * t(0.975, n − 1), relative to the value); undefined when the point was not replicated.
 */
export function replicateSe(p: HistoryPoint, metric: MetricName): number | undefined {
  const ci = p.ci?.[metric];
  const v = p.metrics[metric];
  if (!ci || p.n === undefined || p.n < 2 || v === null || !(v > 0)) return undefined;
  return (ci.upper - ci.lower) / 2 / tQuantile(0.975, p.n - 1) / v;
}

// ---------------------------------------------------------------- series

/** The raw test of one run of a series (the newest, and every flagged one), for the family decision of ./verdict.ts. */
export interface RunTest {
  test: ShiftTestResult;
  baseline: number[];
  window: number[];
  /** the gate's noise: max(σ̂, the newest run's replicate SE) */
  noise: number;
  /** a change flagged on an earlier night, in the direction this window moved, was still pending */
  pendingWorse: boolean;
  pendingBetter: boolean;
  /** the change point this window would be (at its first run, with its attribution) */
  candidate: ChangePoint;
}

export interface SeriesAnalysis {
  metric: MetricName;
  changes: ChangePoint[];
  /** the evaluation at every run of the series, in time order (invalid runs included, untested) */
  evaluations: MetricEvaluation[];
  /** the raw test of the newest run and of every flagged run, by run id */
  tests: Map<string, RunTest>;
}

export function contextChanges(
  before: RunContext,
  after: RunContext,
  fields: readonly ContextField[] = CONTEXT_FIELDS,
): ContextChange[] {
  return fields.filter((f) => before[f] !== after[f]).map((f) => ({ field: f, before: before[f], after: after[f] }));
}

/** Points of one series in time order (ties: run id), as the analysis reads them. */
export function inTimeOrder(points: readonly HistoryPoint[]): HistoryPoint[] {
  return [...points].sort((a, b) => a.time.localeCompare(b.time) || a.runId.localeCompare(b.runId));
}

/** A valid point with the metric measured, and its value. */
interface UsablePoint {
  p: HistoryPoint;
  v: number;
}

/** A flagged change still pending: its first run (a usable index) and its direction. */
interface Pending {
  first: number;
  worse: boolean;
}

/**
 * Walk one metric of one series in time order (docs/history.md "A flag does not blind the series").
 * At each valid run t the newest k valid runs of the current segment are tested against up to
 * `baselineRuns` valid runs before them, flagged-and-pending runs left out. Each run is decided per
 * point at the level `q / familySize` with the gate (the caller overrides the newest run's decision
 * by its family). A run whose context differs in a `segmentOn` field from the previous valid run
 * starts a new segment. Invalid points and points without the metric are never in a baseline.
 */
export function analyzeSeries(
  points: readonly HistoryPoint[],
  metric: MetricName,
  settingsIn: DetectionSettingsInput = {},
  familySize = 1,
): SeriesAnalysis {
  const s = detectionSettingsSchema.parse(settingsIn);
  if (metric === 'errorRate') return analyzeErrors(points, s);
  const ordered = inTimeOrder(points);
  const walk: Walk = { usable: [], excluded: new Set(), segStart: 0 };
  const out: SeriesAnalysis = { metric, changes: [], evaluations: [], tests: new Map() };
  for (const p of ordered) {
    const v = p.metrics[metric];
    const base = emptyEvaluation(metric, p.runId, v);
    if (!p.valid || v === null || !(v > 0)) {
      out.evaluations.push({ ...base, status: p.valid ? 'not-measured' : 'invalid' });
      continue;
    }
    const prev = walk.usable[walk.usable.length - 1];
    if (prev && contextChanges(prev.p.context, p.context, s.segmentOn).length > 0) {
      walk.segStart = walk.usable.length;
      walk.pending = undefined;
    }
    walk.usable.push({ p, v });
    const r = testNewest(walk, base, s, s.q / Math.max(1, familySize), p === ordered.at(-1));
    out.evaluations.push(r?.ev ?? base);
    if (!r) continue;
    if (r.run) out.tests.set(p.runId, r.run);
    if (r.ev.change) out.changes.push(r.ev.change);
    advance(walk, r, s);
  }
  return out;
}

/** The state of the walk along one series: its valid runs, the flagged runs left out, the segment, a pending change. */
interface Walk {
  usable: UsablePoint[];
  excluded: Set<number>;
  segStart: number;
  pending?: Pending;
}

interface NewestTest {
  ev: MetricEvaluation;
  flagged: boolean;
  continuing: boolean;
  worse: boolean;
  /** the window's runs that moved past the gate the flagged way (usable indices), and the first of them */
  moved: number[];
  first: number;
  run?: RunTest;
}

/**
 * Test the newest usable run's window against the runs before it in its segment (flagged ones left
 * out), decided per point at `level` and the gate; undefined when the baseline is too short.
 */
function testNewest(
  walk: Walk,
  base: MetricEvaluation,
  s: DetectionSettings,
  level: number,
  newest: boolean,
): NewestTest | undefined {
  const t = walk.usable.length - 1;
  const winStart = t - s.confirmRuns + 1;
  const baseIdx: number[] = [];
  for (let i = winStart - 1; i >= walk.segStart && baseIdx.length < s.baselineRuns; i--)
    if (!walk.excluded.has(i)) baseIdx.unshift(i);
  if (winStart < walk.segStart || baseIdx.length < s.minBaselineRuns) return undefined;
  const higherIsBetter = HIGHER_IS_BETTER[base.metric];
  const b = baseIdx.map((i) => walk.usable[i]!);
  const w = walk.usable.slice(winStart, t + 1);
  const bv = b.map((x) => x.v);
  const wv = w.map((x) => x.v);
  const test = shiftTest(bv, wv, { higherIsBetter });
  const noise = Math.max(test.sigma, replicateSe(w[w.length - 1]!.p, base.metric) ?? 0);
  const gate = gateThreshold(noise, { minRelative: s.minRelativeChange, sigmas: s.gateSigmas });
  // the p-value in the direction the window moved (the t-test's other tail)
  const pDir = test.worse ? test.pValue : 1 - test.pValue;
  const flagged = pDir <= level && Math.abs(test.effect) >= gate;
  const pending = walk.pending;
  const continuing = flagged && pending !== undefined && pending.worse === test.worse;
  const ev: MetricEvaluation = {
    ...base,
    status: flagged ? (test.worse ? 'regression' : 'improvement') : 'unchanged',
    baseline: median(bv),
    relativeChange: Math.expm1(test.effect),
    pValue: pDir,
    baselineRunIds: b.map((x) => x.p.runId),
    windowRunIds: w.map((x) => x.p.runId),
    relativeNoise: test.sigma,
    rho: test.rho,
    gate,
    ...(continuing ? { pending: true } : {}),
  };
  // the runs of the window that moved past the gate the way the window did: where the change starts
  const lb = mean(bv.map(Math.log));
  const moved = w.map((x) => (test.worse === higherIsBetter ? -1 : 1) * (Math.log(x.v) - lb) >= gate);
  const firstMoved = Math.max(0, moved.indexOf(true));
  // the change point this window would be: built for a flag, and for the newest run (its family decides)
  const candidate = flagged || newest ? changeOf(ev, b, w, firstMoved, lb, test.worse) : undefined;
  if (flagged && !continuing) ev.change = candidate!;
  const run: RunTest | undefined = candidate && {
    test,
    baseline: bv,
    window: wv,
    noise,
    pendingWorse: pending?.worse === true,
    pendingBetter: pending?.worse === false,
    candidate,
  };
  return {
    ev,
    flagged,
    continuing,
    worse: test.worse,
    moved: moved.flatMap((m, j) => (m ? [winStart + j] : [])),
    first: winStart + firstMoved,
    ...(run ? { run } : {}),
  };
}

/** The walk after a tested run: a new flag opens a pending change; a continuing one holds until confirmed; a quiet night ends it. */
function advance(walk: Walk, r: NewestTest, s: DetectionSettings): void {
  if (!r.flagged) {
    walk.pending = undefined;
    return;
  }
  for (const i of r.moved) walk.excluded.add(i);
  if (!r.continuing) walk.pending = { first: r.first, worse: r.worse };
  else if (walk.usable.length - 1 - walk.pending!.first >= s.minBaselineRuns) {
    // confirmed: the new level becomes the baseline (its runs are back in), which already holds
    // minBaselineRuns runs for the next night's test
    walk.segStart = walk.pending!.first;
    for (const i of [...walk.excluded]) if (i >= walk.segStart) walk.excluded.delete(i);
    walk.pending = undefined;
  }
}

function emptyEvaluation(metric: MetricName, runId: string, value: number | null): MetricEvaluation {
  return {
    metric,
    runId,
    value,
    status: 'insufficient-history',
    baseline: null,
    relativeChange: null,
    pValue: null,
    baselineRunIds: [],
    windowRunIds: [],
    relativeNoise: null,
  };
}

/**
 * The change point of a flagged window: at the first window run that moved past the gate (a step
 * found on its first night sits at the newest run, not at the run before it), its change the mean
 * log level of the runs from there against the baseline's, attributed to what changed in the context.
 */
function changeOf(
  ev: MetricEvaluation,
  b: readonly UsablePoint[],
  w: readonly UsablePoint[],
  firstMoved: number,
  baselineLogMean: number,
  worse: boolean,
): ChangePoint {
  const first = w[firstMoved]!.p;
  const before = firstMoved > 0 ? w[firstMoved - 1]!.p : b[b.length - 1]!.p;
  const after = w.slice(firstMoved).map((x) => x.v);
  return {
    metric: ev.metric,
    direction: worse ? 'regression' : 'improvement',
    firstRunId: first.runId,
    previousRunId: before.runId,
    detectedAtRunId: w[w.length - 1]!.p.runId,
    baseline: ev.baseline ?? Number.NaN,
    value: median(after),
    relativeChange: Math.expm1(mean(after.map(Math.log)) - baselineLogMean),
    pValue: ev.pValue ?? 1,
    baselineRunIds: ev.baselineRunIds,
    windowRunIds: ev.windowRunIds,
    attribution: contextChanges(before.context, first.context),
  };
}

/**
 * The error rate along a series: each valid run with counted requests against the pooled runs before
 * it in its segment (at least `minBaselineRuns`); a flag starts a new segment at that run.
 */
function analyzeErrors(points: readonly HistoryPoint[], s: DetectionSettings): SeriesAnalysis {
  const usable: UsablePoint[] = [];
  const changes: ChangePoint[] = [];
  const evaluations: MetricEvaluation[] = [];
  let segStart = 0;
  for (const p of inTimeOrder(points)) {
    const v = p.metrics.errorRate;
    const base = emptyEvaluation('errorRate', p.runId, v);
    if (!p.valid) {
      evaluations.push({ ...base, status: 'invalid' });
      continue;
    }
    if (v === null || !Number.isFinite(v)) {
      evaluations.push({ ...base, status: 'not-measured' });
      continue;
    }
    const prev = usable[usable.length - 1];
    if (prev && contextChanges(prev.p.context, p.context, s.segmentOn).length > 0) segStart = usable.length;
    usable.push({ p, v });
    const t = usable.length - 1;
    const from = Math.max(segStart, t - s.baselineRuns);
    if (t - from < s.minBaselineRuns) {
      evaluations.push(base);
      continue;
    }
    const ev = compareErrors(base, usable.slice(from, t), usable[t]!, s);
    if (ev.change) {
      changes.push(ev.change);
      segStart = t;
    }
    evaluations.push(ev);
  }
  return { metric: 'errorRate', changes, evaluations, tests: new Map() };
}

/** Errors and requests of a valid run (its error rate × the requests it issued); undefined when it did not keep the count. */
function errorCounts(u: UsablePoint): { errors: number; requests: number } | undefined {
  const n = u.p.requests;
  return n === undefined || n === 0 ? undefined : { errors: Math.round(u.v * n), requests: n };
}

/**
 * The error rate on absolute change (libs/stats errorRateChange): the newest run's errors against the
 * pooled baseline's rate, a binomial test whose null is never 0, so a rise from a zero baseline is a
 * finding. One run suffices: errors are counted requests, not a noisy level. Runs that did not keep
 * their request count (stored before it was) are left out of the baseline; without counts no test runs.
 */
function compareErrors(
  base: MetricEvaluation,
  b: UsablePoint[],
  w: UsablePoint,
  s: DetectionSettings,
): MetricEvaluation {
  const now = errorCounts(w);
  const counted = b.flatMap((x) => errorCounts(x) ?? []);
  if (now === undefined || counted.length === 0) return base;
  const pooled = counted.reduce((a, c) => ({ errors: a.errors + c.errors, requests: a.requests + c.requests }));
  const r = errorRateChange(pooled, now, { alpha: s.alpha, minAbsolute: s.minErrorRateRise });
  const ev: MetricEvaluation = {
    ...base,
    status: r.flagged ? 'regression' : 'unchanged',
    baseline: r.baselineRate,
    // the absolute rise (percentage points as a fraction): a relative change of a zero rate has no meaning
    relativeChange: r.rise,
    pValue: r.pValue,
    baselineRunIds: b.map((x) => x.p.runId),
    windowRunIds: [w.p.runId],
    relativeNoise: null,
  };
  if (!r.flagged) return ev;
  const before = b[b.length - 1]!.p;
  ev.change = {
    metric: base.metric,
    direction: 'regression',
    firstRunId: w.p.runId,
    previousRunId: before.runId,
    detectedAtRunId: w.p.runId,
    baseline: r.baselineRate,
    value: r.windowRate,
    relativeChange: r.rise,
    pValue: r.pValue,
    baselineRunIds: ev.baselineRunIds,
    windowRunIds: ev.windowRunIds,
    attribution: contextChanges(before.context, w.p.context),
  };
  return ev;
}
