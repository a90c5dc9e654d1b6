/**
 * The verdict of one run (docs/history.md "How a change is detected"): its points against their
 * series, judged as one family. Per point and metric a shift test on log values (./detect.ts); per
 * unit (an orientation's points for one metric) the points' evidence combined (libs/stats
 * `nightlyVerdict`: Stouffer corrected for their correlation); Benjamini–Hochberg across the family,
 * the primary metrics and the secondary ones apart; a unit flags when it is BH-significant, moved the
 * worse way and passes the gate scaled to its series' noise. The error rate regresses on absolute
 * change; a point that could not be measured is `unmeasured`. It fails closed: a night on which
 * nothing could be measured is never `none`. Pure.
 */
import { gateThreshold, isUnmeasured, nightlyVerdict, type NightlyUnit } from '@infersweep/stats';
import { verdictLabel } from '@infersweep/sweep';
import { z } from 'zod';
import {
  analyzeSeries,
  detectionSettingsSchema,
  median,
  type DetectionSettings,
  type DetectionSettingsInput,
  type RunTest,
} from './detect';
import {
  HIGHER_IS_BETTER,
  metricNameSchema,
  orientationId,
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

/** One finding of a run, per series: what part 5 (confirmation) and the notification consume. */
export const findingSchema = z
  .object({
    series: z.string(),
    concurrency: z.number().int().positive(),
    /** `regression`: a primary metric, counted; `secondary`: reported only; `unmeasured`: no value where one was due */
    kind: z.enum(['regression', 'secondary', 'unmeasured']),
    /** null for `unmeasured` */
    metric: metricNameSchema.nullable(),
    /** the relative change (the error rate: the absolute rise); null for `unmeasured` */
    effect: z.number().nullable(),
    pValue: z.number().nullable(),
    /** the unit's BH-adjusted p-value across its family (absent for the error rate and `unmeasured`) */
    qValue: z.number().optional(),
  })
  .strict();
export type Finding = z.infer<typeof findingSchema>;

/** The family a run's verdict controlled, and what it costs in false alarms. */
export const familySchema = z
  .object({
    /** orientation × primary continuous metric */
    primaryUnits: z.number().int().nonnegative(),
    secondaryUnits: z.number().int().nonnegative(),
    /** the series tested (points × metrics) */
    tests: z.number().int().nonnegative(),
    q: z.number(),
    /** the bound on this run's expected false alarms from the p-values alone (before the gate): q when it has a unit */
    falseAlarmBound: z.number(),
    /** the scheduled run whose sweeps (one per orientation) were judged as this one family; absent: the run alone */
    night: z.string().optional(),
    /** the sweeps of that night in the family */
    runs: z.number().int().positive().optional(),
  })
  .strict();

export const runVerdictSchema = z
  .object({
    runId: z.string(),
    /** points with a new regression in at least one primary metric */
    regressions: z.number().int().nonnegative(),
    /** points that could not be measured (invalid or failed) where a measurement was due */
    unmeasured: z.number().int().nonnegative().default(0),
    points: z.array(pointVerdictSchema),
    /** every finding of the run, per series (regressions, secondary findings, unmeasured points) */
    findings: z.array(findingSchema).default([]),
    family: familySchema.optional(),
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
    if (e.secondary) continue;
    const s: PointVerdictStatus =
      e.status === 'invalid' || e.status === 'not-measured' || e.status === 'unmeasured'
        ? 'insufficient-history'
        : e.status === 'regression' && e.pending
          ? 'unchanged'
          : e.status;
    if (RANK[s] > RANK[best]) best = s;
  }
  return best;
}

/**
 * The runs a point is compared with: a scheduled run's own schedule only (unless `includeAdhoc`),
 * an ad-hoc run every run of its series; never a later run (a verdict rebuilt later says what was
 * known that night).
 */
export function comparable(point: HistoryPoint, series: readonly HistoryPoint[], s: DetectionSettings): HistoryPoint[] {
  return series.filter(
    (p) =>
      p.runId !== point.runId &&
      p.time <= point.time &&
      (point.schedule === undefined || s.includeAdhoc || p.schedule === point.schedule),
  );
}

interface JudgedPoint {
  verdict: PointVerdict;
  tests: Map<MetricName, RunTest>;
}

function judgePoint(
  point: HistoryPoint,
  series: readonly HistoryPoint[],
  settings: DetectionSettings,
  runMeasured: boolean,
  familySize: number,
): JudgedPoint {
  const before = comparable(point, series, settings);
  const upTo = [...before, point];
  const outcome = point.valid ? 'valid' : point.failed ? 'failed' : 'invalid';
  const unmeasured = isUnmeasured(outcome, before.filter((p) => p.valid).length) || (!point.valid && !runMeasured);
  const tests = new Map<MetricName, RunTest>();
  const secondary = new Set(settings.secondaryMetrics.filter((m) => !settings.metrics.includes(m)));
  const metrics = [...settings.metrics, ...secondary].map((m: MetricName) => {
    const a = analyzeSeries(upTo, m, settings, familySize);
    const ev = a.evaluations.find((e) => e.runId === point.runId)!;
    const t = a.tests.get(point.runId);
    if (t) tests.set(m, t);
    const trend = a.evaluations
      .slice(-TREND_RUNS)
      .map((e) => ({ runId: e.runId, value: e.value, valid: e.status !== 'invalid' }));
    return { ...ev, ...(secondary.has(m) ? { secondary: true } : {}), trend };
  });
  return {
    verdict: {
      series: seriesId(point.key),
      concurrency: point.key.concurrency,
      runId: point.runId,
      status: pointStatus(metrics, point.valid, unmeasured),
      metrics,
    },
    tests,
  };
}

/**
 * The evaluation of each metric of `point` as of its run, over `series` (every stored point of its
 * series; the point itself included or not), judged on its own (a family of one unit per metric).
 * An invalid or failed point is `unmeasured` when its series has a valid run before it, or when
 * `runMeasured` is false (no point of its run is valid).
 */
export function evaluatePoint(
  point: HistoryPoint,
  series: readonly HistoryPoint[],
  settingsIn: DetectionSettingsInput = {},
  runMeasured = true,
): PointVerdict {
  return evaluateRun(point.runId, [point], () => series, settingsIn, runMeasured).points[0]!;
}

/** The primary continuous metrics (the error rate is tested on absolute change, outside the family). */
const continuous = (ms: readonly MetricName[]) => ms.filter((m) => m !== 'errorRate');

interface UnitMember {
  point: JudgedPoint;
  metric: MetricName;
  test: RunTest;
}

/**
 * Decide one family (the primary or the secondary metrics): its units through `nightlyVerdict` (BH at
 * q), the gate on each unit's noise, then each flagged unit's regressed points.
 */
function decideFamily(
  judged: readonly JudgedPoint[],
  points: readonly HistoryPoint[],
  metrics: readonly MetricName[],
  s: DetectionSettings,
): number {
  const units = new Map<string, UnitMember[]>();
  judged.forEach((j, i) => {
    for (const m of metrics) {
      const test = j.tests.get(m);
      if (!test) continue;
      const id = `${orientationId(points[i]!.key)}|${m}`;
      units.set(id, [...(units.get(id) ?? []), { point: j, metric: m, test }]);
    }
  });
  const list = [...units.entries()];
  if (list.length === 0) return 0;
  const input: NightlyUnit[] = list.map(([id, members]) => ({
    id,
    higherIsBetter: HIGHER_IS_BETTER[members[0]!.metric],
    points: members.map((u) => ({ baseline: u.test.baseline, window: u.test.window })),
  }));
  const gateOf = (noise: number) => gateThreshold(noise, { minRelative: s.minRelativeChange, sigmas: s.gateSigmas });
  nightlyVerdict(input, { q: s.q }).forEach((uv, i) => {
    const members = list[i]![1];
    const gate = gateOf(median(members.map((u) => u.test.noise)));
    const flagged = uv.adjusted <= s.q && uv.worse && Math.abs(uv.effect) >= gate;
    const worseMove = (u: UnitMember) => (HIGHER_IS_BETTER[u.metric] ? -1 : 1) * u.test.test.effect;
    const own = members.filter((u) => u.test.test.worse && Math.abs(u.test.test.effect) >= gateOf(u.test.noise));
    const carriers = own.length > 0 ? own : [members.reduce((a, b) => (worseMove(b) > worseMove(a) ? b : a))];
    for (const u of members) {
      const ev = u.point.verdict.metrics.find((e) => e.metric === u.metric)!;
      ev.unitPValue = uv.pValue;
      ev.qValue = uv.adjusted;
      // the newest night is the family's: a per-point regression the family did not confirm is unchanged
      if (ev.status === 'regression' && !(flagged && carriers.includes(u))) {
        ev.status = 'unchanged';
        delete ev.change;
        delete ev.pending;
      } else if (flagged && carriers.includes(u) && ev.status !== 'regression') {
        ev.status = 'regression';
        if (u.test.pendingWorse) ev.pending = true;
      }
      if (ev.status === 'regression' && !ev.pending && !ev.change) ev.change = u.test.candidate;
    }
  });
  return list.length;
}

/** A run of a night: its id and its points. */
export interface NightRun {
  runId: string;
  points: readonly HistoryPoint[];
}

/**
 * The verdict of a run: its points against their series (`historyOf` gives a point's whole series),
 * as one family. `measured`: some point of the run is valid (default: one of `runPoints` is).
 */
export function evaluateRun(
  runId: string,
  runPoints: readonly HistoryPoint[],
  historyOf: (p: HistoryPoint) => readonly HistoryPoint[],
  settingsIn: DetectionSettingsInput = {},
  measured = runPoints.some((p) => p.valid),
): RunVerdict {
  return judgeFamily([{ runId, points: runPoints }], historyOf, settingsIn, () => measured)[0]!;
}

/**
 * The verdicts of a scheduled night's sweeps (one run per orientation) as ONE family (docs/history.md
 * "A scheduled night is one family"): every primary unit of every run in one Benjamini–Hochberg at q,
 * so the night's bound is q whatever its number of orientations. A run is `measured` when one of its
 * own points is valid. One verdict per run, in the order given.
 */
export function evaluateNight(
  night: string,
  runs: readonly NightRun[],
  historyOf: (p: HistoryPoint) => readonly HistoryPoint[],
  settingsIn: DetectionSettingsInput = {},
): RunVerdict[] {
  const measured = new Set(runs.filter((r) => r.points.some((p) => p.valid)).map((r) => r.runId));
  return judgeFamily(runs, historyOf, settingsIn, (id) => measured.has(id)).map((v) => ({
    ...v,
    family: { ...v.family!, night, runs: runs.length },
  }));
}

/** The runs' points judged as one family, then split into one verdict per run. */
function judgeFamily(
  runs: readonly NightRun[],
  historyOf: (p: HistoryPoint) => readonly HistoryPoint[],
  settingsIn: DetectionSettingsInput,
  measured: (runId: string) => boolean,
): RunVerdict[] {
  const settings = detectionSettingsSchema.parse(settingsIn);
  const sorted = runs
    .flatMap((r) => r.points)
    .sort((a, b) => orientationId(a.key).localeCompare(orientationId(b.key)) || a.key.concurrency - b.key.concurrency);
  const orientations = new Set(sorted.map((p) => orientationId(p.key))).size;
  const primary = continuous(settings.metrics);
  const secondary = continuous(settings.secondaryMetrics.filter((m) => !settings.metrics.includes(m)));
  const familySize = Math.max(1, orientations * primary.length);
  const judged = sorted.map((p) => judgePoint(p, historyOf(p), settings, measured(p.runId), familySize));
  const primaryUnits = decideFamily(judged, sorted, primary, settings);
  const secondaryUnits = decideFamily(judged, sorted, secondary, settings);
  const family = {
    primaryUnits,
    secondaryUnits,
    tests: judged.reduce((a, j) => a + j.tests.size, 0),
    q: settings.q,
    falseAlarmBound: primaryUnits > 0 ? settings.q : 0,
  };
  const points = judged.map((j, i) => {
    const v = j.verdict;
    return { ...v, status: pointStatus(v.metrics, sorted[i]!.valid, v.status === 'unmeasured') };
  });
  return runs.map((r) => {
    const own = points.filter((p) => p.runId === r.runId);
    return {
      runId: r.runId,
      regressions: own.filter((p) => p.status === 'regression').length,
      unmeasured: own.filter((p) => p.status === 'unmeasured').length,
      points: own,
      findings: own.flatMap(findingsOf),
      family,
      settings,
    };
  });
}

/** A point's findings: unmeasured, or each new regression of a metric. */
function findingsOf(p: PointVerdict): Finding[] {
  if (p.status === 'unmeasured')
    return [
      { series: p.series, concurrency: p.concurrency, kind: 'unmeasured', metric: null, effect: null, pValue: null },
    ];
  return p.metrics
    .filter((m) => m.status === 'regression' && !m.pending)
    .map((m) => ({
      series: p.series,
      concurrency: p.concurrency,
      kind: m.secondary ? 'secondary' : 'regression',
      metric: m.metric,
      effect: m.relativeChange,
      pValue: m.pValue,
      ...(m.qValue === undefined ? {} : { qValue: m.qValue }),
    }));
}

/** The search attribute's value: `none`, or what was found (`N`, `unmeasured:M`, `N,unmeasured:M`). */
export function regressionLabel(v: Pick<RunVerdict, 'regressions'> & { unmeasured?: number }): string {
  return verdictLabel({ regressions: v.regressions, unmeasured: v.unmeasured ?? 0 });
}

/** A verdict that found anything (a regression or an unmeasured point): what notifies. */
export const hasFindings = (v: Pick<RunVerdict, 'regressions'> & { unmeasured?: number }): boolean =>
  v.regressions > 0 || (v.unmeasured ?? 0) > 0;
