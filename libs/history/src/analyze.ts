/**
 * The whole-series pass (`infersweep history analyze`, docs/history.md "Drift and re-localisation"):
 * E-divisive means (libs/stats `eDivisive`) over every valid run of a series on the log scale, its
 * change points grouped into steps and drifts, and each change the nightly walk flagged placed
 * against them (confirmed, moved, or not confirmed). Reads stored values only. Pure and seeded.
 */
import { eDivisive, mean, seededRng } from '@infersweep/stats';
import { analyzeSeries, detectionSettingsSchema, inTimeOrder, type DetectionSettingsInput } from './detect';
import { HIGHER_IS_BETTER, seriesId, type HistoryPoint, type MetricName } from './schema';

/** Segments of at least this many runs on either side of a change point. */
export const MIN_SEGMENT = 5;
/** Consecutive same-way change points with no segment between them longer than this are one drift. */
export const DRIFT_GAP = 15;
/** A nightly change within this many runs of a whole-series change point is the same change. */
export const RELOCATE_TOLERANCE = 2;

export interface WholeChangePoint {
  /** the first run of the new level, and the run before it */
  runId: string;
  previousRunId: string;
  /** index among the series' valid runs */
  index: number;
  /** the new segment's mean against the previous one's (geometric means: ≈ relative) */
  relativeChange: number;
  pValue: number;
}

/** One finding of the pass: a step (one change point) or a drift (several, the same way, close together). */
export interface Shift {
  kind: 'step' | 'drift';
  direction: 'regression' | 'improvement';
  fromRunId: string;
  toRunId: string;
  changePoints: number;
  /** the level after the last change point against the level before the first */
  relativeChange: number;
}

/** A change the nightly walk flagged, placed against the whole series. */
export interface Relocation {
  nightlyRunId: string;
  status: 'confirmed' | 'moved' | 'not-confirmed';
  /** the whole-series change point it matches (absent when not confirmed) */
  wholeSeriesRunId?: string;
}

export interface WholeSeriesAnalysis {
  series: string;
  metric: MetricName;
  runs: number;
  changePoints: WholeChangePoint[];
  shifts: Shift[];
  relocations: Relocation[];
}

/** Change points over the whole of one metric of one series (valid runs with the metric, time order). */
export function analyzeWhole(
  points: readonly HistoryPoint[],
  metric: MetricName,
  settingsIn: DetectionSettingsInput = {},
): WholeSeriesAnalysis {
  const s = detectionSettingsSchema.parse(settingsIn);
  const usable = inTimeOrder(points).filter((p) => p.valid && (p.metrics[metric] ?? 0) > 0);
  const logs = usable.map((p) => Math.log(p.metrics[metric]!));
  const found = eDivisive(logs, { rng: seededRng(s.seed), permutations: s.permutations, minSize: MIN_SEGMENT });
  const bounds = [0, ...found.map((f) => f.index), logs.length];
  const levels = bounds.slice(0, -1).map((b, i) => mean(logs.slice(b, bounds[i + 1])));
  const changePoints = found.map((f, i) => ({
    runId: usable[f.index]!.runId,
    previousRunId: usable[f.index - 1]!.runId,
    index: f.index,
    relativeChange: Math.expm1(levels[i + 1]! - levels[i]!),
    pValue: f.pValue,
  }));
  const worseSign = HIGHER_IS_BETTER[metric] ? -1 : 1;
  const shifts: Shift[] = [];
  changePoints.forEach((c, i) => {
    const last = shifts.at(-1);
    const prev = changePoints[i - 1];
    const sameWay = prev !== undefined && Math.sign(prev.relativeChange) === Math.sign(c.relativeChange);
    if (last && sameWay && c.index - prev.index <= DRIFT_GAP) {
      last.kind = 'drift';
      last.toRunId = c.runId;
      last.changePoints++;
      last.relativeChange = Math.expm1(levels[i + 1]! - levels[i + 1 - last.changePoints]!);
    } else
      shifts.push({
        kind: 'step',
        direction: worseSign * c.relativeChange > 0 ? 'regression' : 'improvement',
        fromRunId: c.runId,
        toRunId: c.runId,
        changePoints: 1,
        relativeChange: c.relativeChange,
      });
  });
  const position = new Map(usable.map((p, i) => [p.runId, i]));
  const relocations = analyzeSeries(points, metric, s).changes.map((c): Relocation => {
    const at = position.get(c.firstRunId)!;
    const near = changePoints
      .filter((w) => Math.abs(w.index - at) <= RELOCATE_TOLERANCE)
      .sort((a, b) => Math.abs(a.index - at) - Math.abs(b.index - at))[0];
    if (!near) return { nightlyRunId: c.firstRunId, status: 'not-confirmed' };
    return {
      nightlyRunId: c.firstRunId,
      status: near.index === at ? 'confirmed' : 'moved',
      wholeSeriesRunId: near.runId,
    };
  });
  const series = points[0] ? seriesId(points[0].key) : '';
  return { series, metric, runs: usable.length, changePoints, shifts, relocations };
}
