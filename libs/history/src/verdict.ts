/**
 * The verdict of one run: each of its points compared with the history of its series, the number
 * of points whose change detection found a new regression at this run, and the number of points
 * that could not be measured (`unmeasured`: invalid or failed while their series could be measured
 * before, or every point of the run invalid or failed). It fails closed: a night on which nothing
 * could be measured is never `none`. Pure.
 */
import { isUnmeasured } from '@infersweep/stats';
import { verdictLabel } from '@infersweep/sweep';
import { z } from 'zod';
import { analyzeSeries, detectionSettingsSchema, type DetectionSettingsInput } from './detect';
import {
  pointVerdictSchema,
  seriesId,
  type HistoryPoint,
  type MetricEvaluation,
  type MetricName,
  type PointVerdict,
  type PointVerdictStatus,
} from './schema';

/** How many runs of a series the trend chart shows. */
const TREND_RUNS = 12;

export const runVerdictSchema = z
  .object({
    runId: z.string(),
    /** points with a new regression in at least one tested metric */
    regressions: z.number().int().nonnegative(),
    /** points that could not be measured (invalid or failed) where a measurement was due; absent in older verdicts */
    unmeasured: z.number().int().nonnegative().default(0),
    points: z.array(pointVerdictSchema),
    settings: detectionSettingsSchema,
    /** lines of the file store that did not validate (a torn write): their runs are not in the baselines */
    skippedLines: z.number().int().positive().optional(),
  })
  .strict();
export type RunVerdict = z.infer<typeof runVerdictSchema>;

const RANK: Record<PointVerdictStatus, number> = {
  regression: 5,
  unmeasured: 4,
  improvement: 3,
  unchanged: 2,
  'insufficient-history': 1,
  invalid: 0,
};

function pointStatus(evals: readonly MetricEvaluation[], valid: boolean, unmeasured: boolean): PointVerdictStatus {
  if (!valid) return unmeasured ? 'unmeasured' : 'invalid';
  let best: PointVerdictStatus = 'insufficient-history';
  for (const e of evals) {
    const s: PointVerdictStatus =
      e.status === 'invalid' || e.status === 'not-measured' || e.status === 'unmeasured'
        ? 'insufficient-history'
        : e.status;
    if (RANK[s] > RANK[best]) best = s;
  }
  return best;
}

/**
 * The evaluation of each metric of `point` as of its run, over `series` (every stored point of its
 * series; the point itself included or not). Later runs of the series are ignored: a verdict
 * rebuilt later says what was known that night. An invalid or failed point is `unmeasured` when its
 * series has a valid run before it, or when `runMeasured` is false (no point of its run is valid).
 */
export function evaluatePoint(
  point: HistoryPoint,
  series: readonly HistoryPoint[],
  settingsIn: DetectionSettingsInput = {},
  runMeasured = true,
): PointVerdict {
  const settings = detectionSettingsSchema.parse(settingsIn);
  const before = series.filter((p) => p.runId !== point.runId && p.time <= point.time);
  const upTo = [...before, point];
  const outcome = point.valid ? 'valid' : point.failed ? 'failed' : 'invalid';
  const unmeasured = isUnmeasured(outcome, before.filter((p) => p.valid).length) || (!point.valid && !runMeasured);
  const metrics = settings.metrics.map((m: MetricName) => {
    const a = analyzeSeries(upTo, m, settings);
    const ev = a.evaluations.find((e) => e.runId === point.runId)!;
    const trend = a.evaluations
      .slice(-TREND_RUNS)
      .map((e) => ({ runId: e.runId, value: e.value, valid: e.status !== 'invalid' }));
    return { ...ev, trend };
  });
  return {
    series: seriesId(point.key),
    concurrency: point.key.concurrency,
    runId: point.runId,
    status: pointStatus(metrics, point.valid, unmeasured),
    metrics,
  };
}

/** The verdict of a run: its points against their series (`historyOf` gives a point's whole series). */
export function evaluateRun(
  runId: string,
  runPoints: readonly HistoryPoint[],
  historyOf: (p: HistoryPoint) => readonly HistoryPoint[],
  settingsIn: DetectionSettingsInput = {},
): RunVerdict {
  const settings = detectionSettingsSchema.parse(settingsIn);
  const measured = runPoints.some((p) => p.valid);
  const points = [...runPoints]
    .sort((a, b) => a.key.concurrency - b.key.concurrency)
    .map((p) => evaluatePoint(p, historyOf(p), settings, measured));
  return {
    runId,
    regressions: points.filter((p) => p.status === 'regression').length,
    unmeasured: points.filter((p) => p.status === 'unmeasured').length,
    points,
    settings,
  };
}

/** The search attribute's value: `none`, or what was found (`N`, `unmeasured:M`, `N,unmeasured:M`). */
export function regressionLabel(v: Pick<RunVerdict, 'regressions'> & { unmeasured?: number }): string {
  return verdictLabel({ regressions: v.regressions, unmeasured: v.unmeasured ?? 0 });
}

/** A verdict that found anything (a regression or an unmeasured point): what notifies. */
export const hasFindings = (v: Pick<RunVerdict, 'regressions'> & { unmeasured?: number }): boolean =>
  v.regressions > 0 || (v.unmeasured ?? 0) > 0;
