import { describe, expect, it } from 'vitest';
import { seededRng } from '@infersweep/stats';
import { sequentialCount, simulatedGpuHours, sweepGpuHours } from '../lib/replicates';

const cost = { points: 6, pointGpuHours: 2, startupGpuHours: 1 };

describe('the GPU-hour cost of replicates', () => {
  it('a single pass: its points and one startup', () => {
    expect(sweepGpuHours(cost, [])).toBe(13);
  });

  it('each extra replicate costs a point; each round one more startup', () => {
    // 2 points at 3 replicates: 4 extra points, 2 more allocations
    expect(sweepGpuHours(cost, [3, 3])).toBe(13 + 4 * 2 + 2 * 1);
    // rounds follow the point with the most replicates
    expect(sweepGpuHours(cost, [3, 5])).toBe(13 + 6 * 2 + 4 * 1);
  });

  it('the sequential rule stops at min on steady values and at max on noisy ones', () => {
    expect(sequentialCount({ min: 3, max: 6, target: 0.03, cv: 0.0001 }, seededRng(1))).toBe(3);
    expect(sequentialCount({ min: 3, max: 6, target: 0.001, cv: 0.2 }, seededRng(1))).toBe(6);
  });

  it('the simulation is seeded and averages replicate counts between min and max', () => {
    const r = { min: 3, max: 6, target: 0.03, cv: 0.02 };
    const a = simulatedGpuHours(cost, 1, r, 50, 9);
    expect(simulatedGpuHours(cost, 1, r, 50, 9)).toEqual(a);
    expect(a.meanReplicates).toBeGreaterThanOrEqual(3);
    expect(a.meanReplicates).toBeLessThanOrEqual(6);
  });
});
