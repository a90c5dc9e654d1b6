/**
 * Synthetic data with known truth, for the seeded simulations that prove the estimators
 * (libs/stats/test/*.sim.test.ts, bench/stats-nights.ts): AR(1) nightly series and replicated points.
 */
import type { NightlyUnit } from './nightly';
import type { Rng } from './rng';

/** n consecutive values of a stationary AR(1) with marginal SD `sigma` and lag-1 correlation `rho`. */
export function ar1Series(rng: Rng, n: number, sigma: number, rho: number): number[] {
  const innovation = sigma * Math.sqrt(1 - rho * rho);
  let x = sigma * rng.normal(); // the stationary distribution: no burn-in needed
  const out = [x];
  for (let t = 1; t < n; t++) {
    x = rho * x + innovation * rng.normal();
    out.push(x);
  }
  return out;
}

export interface NightShape {
  units: number;
  pointsPerUnit: number;
  baselineRuns: number;
  windowRuns: number;
  /** relative run-to-run noise (SD on the log scale) */
  sigma: number;
  rho: number;
  /** units whose every point moved by `step` (a factor, e.g. 0.9) in the window */
  steppedUnits?: number;
  step?: number;
  /** how many points of a stepped unit moved (default all) */
  steppedPoints?: number;
  /** the correlation of a unit's points (they share an allocation each night), default 0 */
  crossCorrelation?: number;
}

/**
 * One night's family: throughput-like series (higher is better) around 1000; a unit's points share
 * a component of weight √r (r = crossCorrelation), the rest is their own.
 */
export function simulateNight(rng: Rng, s: NightShape): NightlyUnit[] {
  const runs = s.baselineRuns + s.windowRuns;
  const r = s.crossCorrelation ?? 0;
  return Array.from({ length: s.units }, (_, u) => {
    const shared = r > 0 ? ar1Series(rng, runs, s.sigma, s.rho) : new Array<number>(runs).fill(0);
    return {
      id: `unit-${u}`,
      higherIsBetter: true,
      points: Array.from({ length: s.pointsPerUnit }, (_, p) => {
        const own = ar1Series(rng, runs, s.sigma, s.rho);
        const x = own.map((v, t) => 1000 * Math.exp(Math.sqrt(r) * shared[t]! + Math.sqrt(1 - r) * v));
        const stepped = u < (s.steppedUnits ?? 0) && p < (s.steppedPoints ?? s.pointsPerUnit);
        const factor = stepped ? (s.step ?? 1) : 1;
        return { baseline: x.slice(0, s.baselineRuns), window: x.slice(s.baselineRuns).map((v) => v * factor) };
      }),
    };
  });
}

export interface ReplicateShape {
  mean: number;
  /** SD of the allocations' true means */
  between: number;
  /** SD of one request around its allocation's mean */
  within: number;
  requestsPerAllocation: number;
}

/** One allocation's request values: a fresh allocation effect, then its requests. */
export function simulateAllocation(rng: Rng, s: ReplicateShape): number[] {
  const level = s.mean + s.between * rng.normal();
  return Array.from({ length: s.requestsPerAllocation }, () => level + s.within * rng.normal());
}
