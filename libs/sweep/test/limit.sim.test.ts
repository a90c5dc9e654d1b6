/**
 * The SLO-limit search under noise, by seeded simulation: the model of docs/search.md ("Pre-registered
 * simulation"), 200 searches per case, under the rule and targets of the eighth registration
 * (docs/statistics.md: a point invalid twice for a reason not load carries no evidence) and the ninth
 * (C3), on their seeds.
 * The first registration's cases A–C ran at seeds 10 000–30 000 under the earlier rule; their figures
 * stay in docs/search.md "Measured". The figures are printed so the docs can quote them.
 */
import { describe, expect, it } from 'vitest';
import { noiseFree, runCase, runOne, TRUE_LIMIT } from '@infersweep/testkit/limit-sim';

const SEARCHES = 200;
const fmt = (r: ReturnType<typeof runCase>, base: number) =>
  `within ±4 ${(100 * r.within).toFixed(1)} %, CI covers ${(100 * r.covers).toFixed(1)} %, mean windows ${r.meanWindows.toFixed(2)} vs noise-free ${base}`;

describe('the SLO limit under 10 % noise and 5 % spurious invalid points (docs/statistics.md, eighth registration)', () => {
  it('noise-free: finds the limit exactly in its bracket', () => {
    for (const e of [1.5, 0.5]) {
      const o = runOne({ elasticity: e, sigma: 0, spurious: 0 }, 1);
      expect(o).toMatchObject({ status: 'found', ci: { lower: o.limit, upper: o.ci.upper } });
      expect(o.limit! <= TRUE_LIMIT && TRUE_LIMIT <= o.ci.upper!).toBe(true);
    }
  });

  it('A2, steep curve: within the resolution ≥ 95 %, the interval covers ≥ 93 %, ≤ 1.5× the points', () => {
    const r = runCase({ elasticity: 1.5, sigma: 0.1, spurious: 0.05 }, 50_000, SEARCHES);
    const base = noiseFree(1.5);
    console.log(`A2: ${fmt(r, base)}`);
    expect(r.within).toBeGreaterThanOrEqual(0.95);
    expect(r.covers).toBeGreaterThanOrEqual(0.93);
    expect(r.meanWindows).toBeLessThanOrEqual(1.5 * base);
  });

  it('B2, flat curve: the interval covers ≥ 93 % within ≤ 1.5× the points; within the resolution reported', () => {
    const r = runCase({ elasticity: 0.5, sigma: 0.1, spurious: 0.05 }, 60_000, SEARCHES);
    const base = noiseFree(0.5);
    console.log(`B2: ${fmt(r, base)}`);
    expect(r.covers).toBeGreaterThanOrEqual(0.93);
    expect(r.meanWindows).toBeLessThanOrEqual(1.5 * base);
  });

  // C2 (seed 40 000) missed, 199/200: a skipped doubling walked down from the client ceiling; the ninth
  // registration corrected the code and registered C3 on a new seed (docs/statistics.md)
  it('C3, a client limit at c=32: client-bound in 200/200, never reported as the server limit', () => {
    const r = runCase({ elasticity: 1.5, sigma: 0.1, spurious: 0.05, clientLimit: 32 }, 80_000, SEARCHES);
    const bound = r.runs.filter((o) => o.status === 'client-bound');
    const other = r.runs.filter((o) => o.status !== 'client-bound');
    console.log(
      `C3: client-bound ${bound.length}/${r.runs.length}; otherwise ${other.map((o) => `${o.status} ${o.limit}`).join(', ') || 'none'}; mean windows ${r.meanWindows.toFixed(2)}`,
    );
    expect(other.map((o) => `${o.status} ${o.limit}`)).toEqual([]);
    expect(r.runs.every((o) => o.limit !== null && o.limit < 32)).toBe(true);
    expect(bound.every((o) => o.ci.upper === null)).toBe(true);
  });

  it('D, every window at c ≤ 8 an idle DP rank (below DP 16): within the resolution ≥ 95 %, covers ≥ 93 %', () => {
    const r = runCase({ elasticity: 1.5, sigma: 0.1, spurious: 0.05, idleAtOrBelow: 8 }, 70_000, SEARCHES);
    const statuses = new Map<string, number>();
    for (const o of r.runs) statuses.set(o.status, (statuses.get(o.status) ?? 0) + 1);
    console.log(`D: ${fmt(r, noiseFree(1.5))}; statuses ${JSON.stringify(Object.fromEntries(statuses))}`);
    expect(r.within).toBeGreaterThanOrEqual(0.95);
    expect(r.covers).toBeGreaterThanOrEqual(0.93);
  });
});
