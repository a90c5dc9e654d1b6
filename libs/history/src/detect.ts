/**
 * Change detection per series: a permutation test of the last `confirmRuns` runs against a rolling
 * baseline of the runs before them, walked along the series so that every detected change starts a
 * new segment (the baseline never mixes levels), in the spirit of E-divisive change points.
 *
 * The statistic is the smallest shift among the last k runs (each run's distance from the baseline
 * median, in the worse direction): only a shift that every one of the k runs shows scores high, so a
 * single outlier never does. Its null distribution is the same statistic over every way of choosing
 * k of the n + k values (exactly when that is at most `permutations` ways, else `permutations`
 * random draws from a seeded generator): the test adapts to each series' own noise and its
 * false-positive rate is at most `alpha` by construction. A change must also be at least
 * `minRelativeChange` of the baseline median in every one of the k runs to count. Pure and deterministic.
 */
import { errorRateChange, mulberry32 } from '@infersweep/stats';
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
    /** false-positive rate per metric and direction of one test */
    alpha: z.number().gt(0).lt(1).default(0.05),
    /** smallest change that counts, as a fraction of the baseline median */
    minRelativeChange: z.number().min(0).default(0.05),
    /** baseline runs a test needs (with k = 2, 5 are the fewest for alpha 0.05: 1 / C(7, 2) < 0.05) */
    minBaselineRuns: z.number().int().min(1).default(5),
    /** the rolling baseline: at most this many runs before the tested ones */
    baselineRuns: z.number().int().positive().default(20),
    /** k: the last k runs must all show the shift (2 ignores a single outlier) */
    confirmRuns: z.number().int().positive().default(2),
    /** exact test up to this many arrangements, else this many seeded random draws */
    permutations: z.number().int().positive().default(5000),
    seed: z.number().int().default(1),
    /** the metrics whose regression counts in a run's verdict */
    metrics: z.array(metricNameSchema).min(1).default(['throughputPerGpu', 'interactivityP50', 'errorRate']),
    /** the error rate regresses when it rises by at least this much (absolute, 0.02 = 2 points) at p ≤ alpha */
    minErrorRateRise: z.number().min(0).max(1).default(0.02),
    /** a run whose context differs in one of these fields from the run before starts a new segment */
    segmentOn: z.array(z.enum(CONTEXT_FIELDS as [ContextField, ...ContextField[]])).default([]),
  })
  .strict();
export type DetectionSettingsInput = z.input<typeof detectionSettingsSchema>;
type DetectionSettings = z.infer<typeof detectionSettingsSchema>;

// ---------------------------------------------------------------- statistics

export function median(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Median absolute deviation, scaled to σ for normal noise. */
export function mad(xs: readonly number[]): number {
  const m = median(xs);
  return 1.4826 * median(xs.map((x) => Math.abs(x - m)));
}

/** mulberry32: a small seeded PRNG, uniform in [0, 1). */
export const prng = mulberry32;

function binomial(n: number, k: number): number {
  let r = 1;
  for (let i = 1; i <= k; i++) r = (r * (n - k + i)) / i;
  return Math.round(r);
}

/** Every k-subset of 0..n-1 (lexicographic), passed to `visit` as an index array it must not keep. */
function forEachSubset(n: number, k: number, visit: (idx: readonly number[]) => void): void {
  const idx = Array.from({ length: k }, (_, i) => i);
  for (;;) {
    visit(idx);
    let i = k - 1;
    while (i >= 0 && idx[i] === n - k + i) i--;
    if (i < 0) return;
    idx[i]!++;
    for (let j = i + 1; j < k; j++) idx[j] = idx[j - 1]! + 1;
  }
}

/**
 * The smallest worse-direction shift of `window` from the median of `baseline` (`sign` +1: larger is
 * worse, -1: smaller is worse).
 */
function minShift(baseline: readonly number[], window: readonly number[], sign: 1 | -1): number {
  const m = median(baseline);
  return Math.min(...window.map((x) => sign * (x - m)));
}

export interface ShiftTest {
  /** one-sided p-value of "the last k runs moved in this direction" */
  pValue: number;
  /** arrangements the p-value counts over, and whether all of them were enumerated */
  arrangements: number;
  exact: boolean;
}

/** Permutation test of `window` against `baseline`, one-sided in direction `sign`. */
export function shiftTest(
  baseline: readonly number[],
  window: readonly number[],
  sign: 1 | -1,
  opts: { permutations: number; seed: number },
): ShiftTest {
  const pooled = [...baseline, ...window];
  const n = pooled.length;
  const k = window.length;
  const observed = minShift(baseline, window, sign);
  const total = binomial(n, k);
  const statOf = (picked: readonly number[]): number => {
    const inWin = new Set(picked);
    const w: number[] = [];
    const b: number[] = [];
    pooled.forEach((x, i) => (inWin.has(i) ? w : b).push(x));
    return minShift(b, w, sign);
  };
  // a tolerance for floating-point ties: an arrangement as extreme as the observed one counts
  const eps = 1e-12 * Math.max(1, Math.abs(observed));
  if (total <= opts.permutations) {
    let atLeast = 0;
    forEachSubset(n, k, (idx) => {
      if (statOf(idx) >= observed - eps) atLeast++;
    });
    return { pValue: atLeast / total, arrangements: total, exact: true };
  }
  const rand = prng(opts.seed);
  const order = Array.from({ length: n }, (_, i) => i);
  let atLeast = 0;
  for (let b = 0; b < opts.permutations; b++) {
    // partial Fisher-Yates: the first k of a random permutation
    for (let i = 0; i < k; i++) {
      const j = i + Math.floor(rand() * (n - i));
      [order[i], order[j]] = [order[j]!, order[i]!];
    }
    if (statOf(order.slice(0, k)) >= observed - eps) atLeast++;
  }
  // the observed arrangement is one of the draws' population: (1 + count) / (1 + B) keeps p > 0
  return { pValue: (1 + atLeast) / (1 + opts.permutations), arrangements: opts.permutations, exact: false };
}

// ---------------------------------------------------------------- series

export interface SeriesAnalysis {
  metric: MetricName;
  changes: ChangePoint[];
  /** the evaluation at every run of the series, in time order (invalid runs included, untested) */
  evaluations: MetricEvaluation[];
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

/**
 * Walk one metric of one series in time order. At each valid run t the last k valid runs of the
 * current segment are tested against up to `baselineRuns` valid runs before them (same segment);
 * a significant, large-enough shift is a change point at the first of the k runs, and the segment
 * restarts there. A run whose context differs in a `segmentOn` field from the previous valid run
 * restarts the segment too. Invalid points and points without the metric are never in a baseline.
 */
export function analyzeSeries(
  points: readonly HistoryPoint[],
  metric: MetricName,
  settingsIn: DetectionSettingsInput = {},
): SeriesAnalysis {
  const s = detectionSettingsSchema.parse(settingsIn);
  const sign: 1 | -1 = HIGHER_IS_BETTER[metric] ? -1 : 1; // worse = smaller when higher is better
  const ordered = inTimeOrder(points);
  const usable: UsablePoint[] = [];
  const changes: ChangePoint[] = [];
  const evaluations: MetricEvaluation[] = [];
  let segStart = 0;
  for (const p of ordered) {
    const v = p.metrics[metric];
    const base: MetricEvaluation = {
      metric,
      runId: p.runId,
      value: v,
      status: 'insufficient-history',
      baseline: null,
      relativeChange: null,
      pValue: null,
      baselineRunIds: [],
      windowRunIds: [],
      relativeNoise: null,
    };
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
    const winStart = t - s.confirmRuns + 1;
    const baseStart = Math.max(segStart, winStart - s.baselineRuns);
    const short =
      metric === 'errorRate'
        ? t - Math.max(segStart, t - s.baselineRuns) < s.minBaselineRuns
        : winStart < segStart || winStart - baseStart < s.minBaselineRuns;
    if (short) {
      evaluations.push(base);
      continue;
    }
    const ev =
      metric === 'errorRate'
        ? compareErrors(base, usable.slice(Math.max(segStart, t - s.baselineRuns), t), usable[t]!, s)
        : compareWindow(base, usable.slice(baseStart, winStart), usable.slice(winStart, t + 1), sign, s);
    if (ev.change) {
      changes.push(ev.change);
      segStart = metric === 'errorRate' ? t : winStart;
    }
    evaluations.push(ev);
  }
  return { metric, changes, evaluations };
}

/** A valid point with the metric measured, and its value. */
interface UsablePoint {
  p: HistoryPoint;
  v: number;
}

/**
 * Test the window `w` (the last k valid runs, the last of them the run being evaluated) against its
 * baseline `b` (pure): the shift in the direction the window moved, and its magnitude. A significant,
 * large-enough shift carries its change point (at the window's first run).
 */
function compareWindow(
  base: MetricEvaluation,
  b: UsablePoint[],
  w: UsablePoint[],
  sign: 1 | -1,
  s: DetectionSettings,
): MetricEvaluation {
  const bv = b.map((x) => x.v);
  const wv = w.map((x) => x.v);
  const bMed = median(bv);
  const wMed = median(wv);
  const rel =
    bMed === 0 ? (wMed === 0 ? 0 : Number.POSITIVE_INFINITY * Math.sign(wMed)) : (wMed - bMed) / Math.abs(bMed);
  // test the direction the window moved (the other direction's p-value would be large)
  const worse = sign * (wMed - bMed) > 0;
  const dirSign: 1 | -1 = worse ? sign : (-sign as 1 | -1);
  const test = shiftTest(bv, wv, dirSign, { permutations: s.permutations, seed: s.seed });
  // the magnitude gate, like the statistic, asks every one of the k runs to have moved that far
  const smallestMove = bMed === 0 ? 0 : minShift(bv, wv, dirSign) / Math.abs(bMed);
  const significant = test.pValue <= s.alpha && smallestMove >= s.minRelativeChange;
  const ev: MetricEvaluation = {
    ...base,
    status: significant ? (worse ? 'regression' : 'improvement') : 'unchanged',
    baseline: bMed,
    relativeChange: rel,
    pValue: test.pValue,
    baselineRunIds: b.map((x) => x.p.runId),
    windowRunIds: w.map((x) => x.p.runId),
    relativeNoise: bMed === 0 ? null : mad(bv) / Math.abs(bMed),
  };
  if (!significant) return ev;
  const first = w[0]!.p;
  const before = b[b.length - 1]!.p;
  ev.change = {
    metric: base.metric,
    direction: worse ? 'regression' : 'improvement',
    firstRunId: first.runId,
    previousRunId: before.runId,
    detectedAtRunId: w[w.length - 1]!.p.runId,
    baseline: bMed,
    value: wMed,
    relativeChange: rel,
    pValue: test.pValue,
    baselineRunIds: ev.baselineRunIds,
    windowRunIds: ev.windowRunIds,
    attribution: contextChanges(before.context, first.context),
  };
  return ev;
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
