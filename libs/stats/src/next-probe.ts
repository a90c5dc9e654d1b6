/**
 * Where a noisy SLO search measures next: each point's probability of meeting the bound (the share of
 * its bootstrap replicates that do), made non-increasing in concurrency by PAVA; re-measure a point
 * whose own pass/fail is a coin flip, else split the bracket where the fitted probability crosses ½.
 */
import { bootstrapDistribution } from './bootstrap';
import { isotonic } from './isotonic';
import type { Rng } from './rng';

/** A point's own pass probability in this band means "measure it again" before it counts. */
export const UNCERTAIN_BAND = [0.2, 0.8] as const;

/** The share of bootstrap replicates of `statistic` over the point's requests that meet `bound` (≤). */
export function passProbability(
  samples: readonly number[],
  statistic: (xs: number[]) => number,
  bound: number,
  rng: Rng,
  resamples = 400,
): number {
  const dist = bootstrapDistribution(samples, statistic, rng, resamples);
  return dist.filter((v) => v <= bound).length / dist.length;
}

export interface ProbePoint {
  concurrency: number;
  passProbability: number;
}

export interface SearchRange {
  min: number;
  max: number;
  /** the bracket is resolved when hi / lo − 1 ≤ this */
  relativeResolution: number;
}

export type NextProbe =
  | { kind: 'remeasure'; concurrency: number; reason: string }
  | { kind: 'probe'; concurrency: number; bracket: [number | null, number | null]; reason: string }
  | { kind: 'done'; limit: number | null; bracket: [number | null, number | null] };

function uncertainPoint(points: readonly ProbePoint[]): ProbePoint | undefined {
  return points
    .filter((p) => p.passProbability > UNCERTAIN_BAND[0] && p.passProbability < UNCERTAIN_BAND[1])
    .sort((a, b) => Math.abs(a.passProbability - 0.5) - Math.abs(b.passProbability - 0.5))[0];
}

export function nextProbe(pointsIn: readonly ProbePoint[], range: SearchRange): NextProbe {
  const points = [...pointsIn].sort((a, b) => a.concurrency - b.concurrency);
  if (points.length === 0) throw new RangeError('nextProbe: no measured points');
  const unsure = uncertainPoint(points);
  if (unsure)
    return {
      kind: 'remeasure',
      concurrency: unsure.concurrency,
      reason: `P(pass) ${unsure.passProbability.toFixed(2)}`,
    };
  const fit = isotonic(
    points.map((p) => p.passProbability),
    { increasing: false },
  );
  const last = fit.reduce((k, f, i) => (f >= 0.5 ? i : k), -1);
  const lo = last >= 0 ? points[last]!.concurrency : null;
  const hi = last + 1 < points.length ? points[last + 1]!.concurrency : null;
  const bracket: [number | null, number | null] = [lo, hi];
  if (lo === null && hi !== null && hi <= range.min) return { kind: 'done', limit: null, bracket };
  if (hi === null && lo !== null && lo >= range.max) return { kind: 'done', limit: lo, bracket };
  const a = lo ?? range.min;
  const b = hi ?? Math.min(range.max, 2 * a);
  if (lo !== null && hi !== null && hi / lo - 1 <= range.relativeResolution)
    return { kind: 'done', limit: lo, bracket };
  const mid = lo === null ? a : hi === null ? b : Math.round(Math.sqrt(a * b));
  if (mid <= a && lo !== null) return { kind: 'done', limit: lo, bracket };
  return { kind: 'probe', concurrency: mid, bracket, reason: `P(pass) crosses ½ in [${lo ?? '—'}, ${hi ?? '—'}]` };
}
