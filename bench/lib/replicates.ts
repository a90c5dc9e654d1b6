/**
 * The GPU-hour cost of replicates (pure; unit-tested in bench/test/replicates.test.ts): a sweep's
 * first pass plus, per replicated point, its extra replicates, and one server startup per allocation
 * (a replicate round is a fresh allocation). The sequential rule's replicate count is simulated
 * (seeded): each replicated point's allocation values drawn with a known CV, stopped by libs/stats
 * `calibratedSequentialDecision`.
 */
import { calibratedSequentialDecision, seededRng } from '@infersweep/stats';

export interface SweepCost {
  /** points of the first pass */
  points: number;
  pointGpuHours: number;
  startupGpuHours: number;
}

/** GPU-hours of a sweep whose replicated points took `replicates[i]` replicates each (the first pass is 1). */
export function sweepGpuHours(c: SweepCost, replicates: readonly number[]): number {
  const extra = replicates.reduce((s, n) => s + (n - 1), 0);
  const rounds = Math.max(0, ...replicates.map((n) => n - 1));
  return (c.points + extra) * c.pointGpuHours + (1 + rounds) * c.startupGpuHours;
}

export interface SequentialRun {
  min: number;
  max: number;
  /** relative half-width target */
  target: number;
  /** the allocation values' coefficient of variation */
  cv: number;
}

/** The replicate count of one point under the calibrated sequential rule, values drawn from `rng`. */
export function sequentialCount(r: SequentialRun, rng: ReturnType<typeof seededRng>): number {
  const values: number[] = [];
  for (;;) {
    values.push(1000 * (1 + r.cv * rng.normal()));
    if (calibratedSequentialDecision(values, { min: r.min, max: r.max, relativeHalfWidth: r.target }).stop)
      return values.length;
  }
}

/** Mean GPU-hours over `sweeps` seeded sweeps replicating `replicated` points with the sequential rule. */
export function simulatedGpuHours(
  c: SweepCost,
  replicated: number,
  r: SequentialRun,
  sweeps: number,
  seed: number,
): { gpuHours: number; meanReplicates: number } {
  const rng = seededRng(seed);
  let total = 0;
  let n = 0;
  for (let s = 0; s < sweeps; s++) {
    const counts = Array.from({ length: replicated }, () => sequentialCount(r, rng));
    total += sweepGpuHours(c, counts);
    n += counts.reduce((a, b) => a + b, 0);
  }
  return { gpuHours: total / sweeps, meanReplicates: replicated > 0 ? n / (sweeps * replicated) : 0 };
}
