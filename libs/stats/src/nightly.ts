/**
 * The nightly verdict over a family of units (an orientation's points for one metric): per point a
 * shift test, per unit the points' evidence combined (Stouffer, corrected for their correlation),
 * Benjamini–Hochberg across the family, and the magnitude gate on the unit's mean effect. Every
 * point is also tested on its own (BH across all points, the gate on its own effect): reported, and
 * with `perPoint` flagging its unit, so a regression at one concurrency is not averaged away.
 */
import { meanPairwiseCorrelation, stouffer } from './combine';
import { median } from './describe';
import { benjaminiHochberg } from './fdr';
import { gateThreshold, type GateSettings } from './gate';
import { shiftTest, type ShiftTestResult } from './shift-test';

export interface SeriesRuns {
  /** the baseline runs' values, oldest first */
  baseline: readonly number[];
  /** the newest k runs' values, oldest first */
  window: readonly number[];
}

export interface NightlyUnit {
  id: string;
  higherIsBetter: boolean;
  points: readonly SeriesRuns[];
}

export interface NightlySettings extends GateSettings {
  /** the BH level across the family, default 0.05 */
  q?: number;
  /**
   * a point flagged on its own flags its unit (default false: at q = 0.05 this path exceeds the
   * false-alarm targets, docs/statistics.md "Third registration"); the point flags are reported either way
   */
  perPoint?: boolean;
}

export interface UnitVerdict {
  id: string;
  points: ShiftTestResult[];
  /** the mean pairwise correlation of the points' baseline log values */
  correlation: number;
  /** the combined one-sided p-value and its BH adjustment across the family */
  pValue: number;
  adjusted: number;
  /** the mean of the points' log changes, and the gate it had to pass */
  effect: number;
  threshold: number;
  worse: boolean;
  /** the combined test flagged the unit */
  combinedFlag: boolean;
  /** per point: flagged on its own */
  pointFlags: boolean[];
  /** the combined test, or (with `perPoint`) any point */
  flagged: boolean;
}

/** The points' baselines aligned on their newest runs (the shortest length), on the log scale. */
function alignedLogBaselines(points: readonly SeriesRuns[]): number[][] {
  const len = Math.min(...points.map((p) => p.baseline.length));
  return points.map((p) => p.baseline.slice(p.baseline.length - len).map(Math.log));
}

type Combined = Omit<UnitVerdict, 'adjusted' | 'flagged' | 'combinedFlag' | 'pointFlags'>;

function combineUnit(u: NightlyUnit, s: NightlySettings): Combined {
  if (u.points.length === 0) throw new RangeError(`nightly unit ${u.id}: no points`);
  const points = u.points.map((p) => shiftTest(p.baseline, p.window, { higherIsBetter: u.higherIsBetter }));
  const correlation = u.points.length > 1 ? meanPairwiseCorrelation(alignedLogBaselines(u.points)) : 0;
  const { pValue } = stouffer(
    points.map((p) => p.pValue),
    correlation,
  );
  const effect = points.reduce((sum, p) => sum + p.effect, 0) / points.length;
  const threshold = gateThreshold(median(points.map((p) => p.sigma)), s);
  const worse = (u.higherIsBetter ? -1 : 1) * effect > 0;
  return { id: u.id, points, correlation, pValue, effect, threshold, worse };
}

/** Per point of every unit: BH across all the family's points, worse, and past its own gate. */
function pointFlags(combined: readonly Combined[], s: NightlySettings): boolean[][] {
  const all = combined.flatMap((c) => c.points);
  const family = benjaminiHochberg(
    all.map((p) => p.pValue),
    s.q ?? 0.05,
  );
  let i = 0;
  return combined.map((c) =>
    c.points.map((p) => family.rejected[i++]! && p.worse && Math.abs(p.effect) >= gateThreshold(p.sigma, s)),
  );
}

export function nightlyVerdict(units: readonly NightlyUnit[], s: NightlySettings = {}): UnitVerdict[] {
  const combined = units.map((u) => combineUnit(u, s));
  const family = benjaminiHochberg(
    combined.map((c) => c.pValue),
    s.q ?? 0.05,
  );
  const points = pointFlags(combined, s);
  return combined.map((c, i) => {
    const combinedFlag = family.rejected[i]! && c.worse && Math.abs(c.effect) >= c.threshold;
    return {
      ...c,
      adjusted: family.adjusted[i]!,
      combinedFlag,
      pointFlags: points[i]!,
      flagged: combinedFlag || (s.perPoint === true && points[i]!.some(Boolean)),
    };
  });
}

export type RunOutcome = 'valid' | 'invalid' | 'failed' | 'missing';

/**
 * A point whose newest run could not be measured while its baseline could is a finding of its own
 * kind: the verdict fails closed instead of reading "no regression".
 */
export function isUnmeasured(newest: RunOutcome, baselineValidRuns: number): boolean {
  return newest !== 'valid' && baselineValidRuns > 0;
}
