/**
 * Synthetic nights through the history's own verdict (docs/history.md "Pre-registered targets"
 * H1–H4, H7, H9–H12): seeded AR(1) lognormal series as stored history points, judged by `evaluateRun`
 * exactly as a recorded run is. Used by libs/history/test/nightly.sim.test.ts (per commit) and
 * bench/history-nights.ts (the 1000-night tables). Each function returns counts, never a verdict.
 */
import {
  NO_METRICS,
  analyzeWhole,
  evaluateNight,
  evaluateRun,
  type DetectionSettingsInput,
  type HistoryPoint,
  type MetricName,
  type RunVerdict,
} from '@infersweep/history';
import { ar1Series, seededRng, type Rng } from '@infersweep/stats';
import { CONTEXT, KEY } from './series-fixture';

/** One primary metric, as registered (H1–H3). */
export const SIM_SETTINGS: DetectionSettingsInput = { metrics: ['throughputPerGpu'], secondaryMetrics: [] };

export interface HistoryNightShape {
  orientations: number;
  points: number;
  /** runs before the judged one (the baseline 20 and the window's older run) */
  history: number;
  sigma: number;
  rho: number;
  /** orientation 0's points all move by this factor in the newest `stepRuns` runs (default none) */
  step?: number;
  stepRuns?: number;
}

export const HISTORY_NIGHT: HistoryNightShape = { orientations: 16, points: 5, history: 21, sigma: 0.03, rho: 0 };

const CONCURRENCIES = [1, 2, 4, 8, 16, 32, 64, 128];
const runId = (t: number) => `n${String(t).padStart(3, '0')}`;

const TIMES = Array.from({ length: 400 }, (_, t) => new Date(Date.UTC(2026, 0, 1) + t * 86_400_000).toISOString());

function point(t: number, orientation: string, concurrency: number, value: number): HistoryPoint {
  return {
    runId: runId(t),
    time: TIMES[t]!,
    resultsDir: `/results/${runId(t)}`,
    key: { ...KEY, orientation, concurrency },
    context: CONTEXT,
    valid: true,
    invalidReasons: [],
    metrics: { ...NO_METRICS, throughputPerGpu: value },
  };
}

/** One night's verdict: every series' history, then the judged run holding every point. */
export function simulateHistoryNight(rng: Rng, s: HistoryNightShape, settings = SIM_SETTINGS): RunVerdict {
  const runs = s.history + 1;
  const series = new Map<string, HistoryPoint[]>();
  const newest: HistoryPoint[] = [];
  for (let o = 0; o < s.orientations; o++)
    for (let c = 0; c < s.points; c++) {
      const noise = ar1Series(rng, runs, s.sigma, s.rho);
      const pts = noise.map((x, t) => {
        const stepped = o === 0 && s.step !== undefined && t >= runs - (s.stepRuns ?? 2);
        return point(t, `o${o}`, CONCURRENCIES[c]!, 1000 * Math.exp(x) * (stepped ? s.step! : 1));
      });
      series.set(`o${o}:${c}`, pts);
      newest.push(pts.at(-1)!);
    }
  const byKey = new Map(
    [...series.values()].map((pts) => [`${pts[0]!.key.orientation}:${pts[0]!.key.concurrency}`, pts]),
  );
  return evaluateRun(runId(runs - 1), newest, (p) => byKey.get(`${p.key.orientation}:${p.key.concurrency}`)!, settings);
}

/** Orientations with a new regression (a finding of kind `regression`). */
const flaggedOrientations = (v: RunVerdict): Set<string> =>
  new Set(v.findings.filter((f) => f.kind === 'regression').map((f) => f.series.split(':')[1]!));

/** H1–H3: false alarms (flagged orientations other than a stepped one) and the nights the stepped one flagged. */
export function historyNights(
  count: number,
  shape: HistoryNightShape,
  seed: number,
): { falseAlarms: number; nightsWithFalseAlarm: number; stepped: number } {
  const rng = seededRng(seed);
  let falseAlarms = 0;
  let nightsWithFalseAlarm = 0;
  let stepped = 0;
  for (let n = 0; n < count; n++) {
    const flagged = flaggedOrientations(simulateHistoryNight(rng, shape));
    const stepOn = shape.step !== undefined;
    const wrong = [...flagged].filter((o) => !(stepOn && o === 'o0')).length;
    falseAlarms += wrong;
    if (wrong > 0) nightsWithFalseAlarm++;
    if (stepOn && flagged.has('o0')) stepped++;
  }
  return { falseAlarms, nightsWithFalseAlarm, stepped };
}

/**
 * A scheduled night (H9–H12): `orientations` sweeps, each its own run id, each with `points` points ×
 * the primary `metrics`; orientation 0's first metric moves by `step` in the window when given.
 */
export interface ScheduledNightShape {
  orientations: number;
  points: number;
  metrics: readonly MetricName[];
  history: number;
  sigma: number;
  rho: number;
  step?: number;
}

export const SCHEDULED_NIGHT: ScheduledNightShape = {
  orientations: 3,
  points: 9,
  metrics: ['throughputPerGpu', 'interactivityP50', 'ttftP50Ms'],
  history: 21,
  sigma: 0.03,
  rho: 0,
};

/** Per night: the flagged units (orientation|metric) and the units BH rejected before the gate. */
interface NightOutcome {
  flagged: Set<string>;
  rejected: Set<string>;
}

function outcomeOf(verdicts: readonly RunVerdict[], q: number): NightOutcome {
  const flagged = new Set<string>();
  const rejected = new Set<string>();
  for (const v of verdicts)
    for (const p of v.points)
      for (const m of p.metrics) {
        const unit = `${p.series.split(':')[1]}|${m.metric}`;
        if (m.status === 'regression' && !m.pending) flagged.add(unit);
        if (m.qValue !== undefined && m.qValue <= q) rejected.add(unit);
      }
  return { flagged, rejected };
}

/**
 * One scheduled night judged two ways on the same data: as one family (`evaluateNight`, what a
 * scheduled run does) and as one family per orientation's sweep (`evaluateRun` per run).
 */
export function simulateScheduledNight(
  rng: Rng,
  s: ScheduledNightShape,
): { night: NightOutcome; perOrientation: NightOutcome } {
  const runs = s.history + 1;
  const settings: DetectionSettingsInput = { metrics: [...s.metrics], secondaryMetrics: [] };
  const byKey = new Map<string, HistoryPoint[]>();
  const newest = new Map<string, HistoryPoint[]>();
  for (let o = 0; o < s.orientations; o++)
    for (let c = 0; c < s.points; c++) {
      const noise = s.metrics.map(() => ar1Series(rng, runs, s.sigma, s.rho));
      const pts = Array.from({ length: runs }, (_, t): HistoryPoint => {
        const stepped = o === 0 && s.step !== undefined && t >= runs - 2;
        const metrics = { ...NO_METRICS };
        s.metrics.forEach((m, i) => (metrics[m] = 1000 * Math.exp(noise[i]![t]!) * (stepped && i === 0 ? s.step! : 1)));
        const p = point(t, `o${o}`, CONCURRENCIES[c]!, 0);
        return { ...p, runId: `${p.runId}-o${o}`, metrics };
      });
      byKey.set(`o${o}:${CONCURRENCIES[c]}`, pts);
      newest.set(`o${o}`, [...(newest.get(`o${o}`) ?? []), pts.at(-1)!]);
    }
  const historyOf = (p: HistoryPoint) => byKey.get(`${p.key.orientation}:${p.key.concurrency}`)!;
  const nightRuns = [...newest.values()].map((points) => ({ runId: points[0]!.runId, points }));
  const q = 0.05;
  return {
    night: outcomeOf(evaluateNight('night', nightRuns, historyOf, settings), q),
    perOrientation: outcomeOf(
      nightRuns.map((r) => evaluateRun(r.runId, r.points, historyOf, settings)),
      q,
    ),
  };
}

export interface ScheduledNightCounts {
  /** flagged units other than the stepped one, summed over the nights */
  falseAlarms: number;
  nightsWithFalseAlarm: number;
  /** nights on which BH rejected a unit other than the stepped one (before the gate) */
  nightsRejected: number;
  /** nights on which the stepped unit flagged */
  stepped: number;
}

/** H9–H12: `count` seeded nights, counted for the night's one family and for one family per orientation. */
export function scheduledNights(
  count: number,
  shape: ScheduledNightShape,
  seed: number,
): { night: ScheduledNightCounts; perOrientation: ScheduledNightCounts } {
  const rng = seededRng(seed);
  const zero = (): ScheduledNightCounts => ({ falseAlarms: 0, nightsWithFalseAlarm: 0, nightsRejected: 0, stepped: 0 });
  const out = { night: zero(), perOrientation: zero() };
  const steppedUnit = `o0|${shape.metrics[0]}`;
  for (let n = 0; n < count; n++) {
    const r = simulateScheduledNight(rng, shape);
    for (const k of ['night', 'perOrientation'] as const) {
      const wrong = [...r[k].flagged].filter((u) => !(shape.step !== undefined && u === steppedUnit)).length;
      const rejected = [...r[k].rejected].filter((u) => !(shape.step !== undefined && u === steppedUnit)).length;
      out[k].falseAlarms += wrong;
      if (wrong > 0) out[k].nightsWithFalseAlarm++;
      if (rejected > 0) out[k].nightsRejected++;
      if (shape.step !== undefined && r[k].flagged.has(steppedUnit)) out[k].stepped++;
    }
  }
  return out;
}

/** A drifting series: `flat` runs, then `drift` runs moving by `perNight` (e.g. −0.005) each, noise σ. */
export function driftSeries(rng: Rng, flat: number, drift: number, perNight: number, sigma: number): HistoryPoint[] {
  return Array.from({ length: flat + drift }, (_, t) =>
    point(t, 'o0', 8, 1000 * Math.exp(sigma * rng.normal() + perNight * Math.max(0, t - flat + 1))),
  );
}

/**
 * H4: per series, the whole-series pass's findings inside the drift (and outside it), and the new
 * regressions the nightly verdicts counted over all nights.
 */
export function driftOutcomes(
  series: number,
  seed: number,
  o = { flat: 20, drift: 30, perNight: -0.005, sigma: 0.01 },
): { oneFindingInDrift: number; nightlyAtMostOnce: number; nightlyCounts: number[]; findings: number[] } {
  const rng = seededRng(seed);
  let oneFindingInDrift = 0;
  let nightlyAtMostOnce = 0;
  const nightlyCounts: number[] = [];
  const findings: number[] = [];
  for (let s = 0; s < series; s++) {
    const pts = driftSeries(rng, o.flat, o.drift, o.perNight, o.sigma);
    const whole = analyzeWhole(pts, 'throughputPerGpu', SIM_SETTINGS);
    const inDrift = whole.shifts.filter((f) => Number(f.fromRunId.slice(1)) >= o.flat - 2);
    findings.push(whole.shifts.length);
    if (whole.shifts.length === 1 && inDrift.length === 1) oneFindingInDrift++;
    let counted = 0;
    for (let t = 0; t < pts.length; t++)
      counted += evaluateRun(pts[t]!.runId, [pts[t]!], () => pts.slice(0, t + 1), SIM_SETTINGS).regressions;
    nightlyCounts.push(counted);
    if (counted <= 1) nightlyAtMostOnce++;
  }
  return { oneFindingInDrift, nightlyAtMostOnce, nightlyCounts, findings };
}
