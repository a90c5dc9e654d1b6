/**
 * The seeded SLO-limit simulation of docs/search.md ("Pre-registered simulation"): a curve with a
 * known limit (40), noisy windows with a reported bootstrap SE, spurious invalid windows and an
 * optional client limit, searched by the real `nextPointOrSearch`. Used by libs/sweep/test/limit.sim.test.ts (the
 * registered cases) and bench/search-noise.ts (the bigger table).
 */
import { seededRng, type Rng } from '@infersweep/stats';
import { finishPoint, nextPointOrSearch, startPoint, type PointState, type SweepSearch } from '@infersweep/sweep';
import { progress } from './progress-fixture';

export const TRUE_LIMIT = 40;
const BOUND_MS = 500;

const search: SweepSearch = {
  goal: ['slo-limit'],
  slo: { ttftMs: { p99: BOUND_MS } },
  minConcurrency: 1,
  maxConcurrency: 256,
  maxAddedPoints: 30,
  resolution: { relative: 0.1 },
  pointGpuHours: 0,
};

export interface Case {
  elasticity: number;
  sigma: number;
  spurious: number;
  /** windows at or above this concurrency are client-saturated */
  clientLimit?: number;
  /** windows at or below this concurrency are invalid with an idle DP rank, every time (below the DP size) */
  idleAtOrBelow?: number;
}

/** The SD-of-log a bootstrap reports: σ × √(χ²₃₀/30). */
const reportedSe = (rng: Rng, sigma: number): number => {
  let chi = 0;
  for (let i = 0; i < 30; i++) chi += rng.normal() ** 2;
  return sigma * Math.sqrt(chi / 30);
};

function measureWindow(pt: PointState, k: Case, rng: Rng): void {
  const c = pt.concurrency;
  startPoint(pt, 'job', 't');
  const base = { concurrency: c, resultPath: `c${c}`, reused: false };
  const invalid = (reason: string) => finishPoint(pt, { ...base, valid: false, reasons: [reason] }, 't');
  if (k.spurious > 0 && rng.next() < k.spurious) return invalid('idle_dp_rank: engine 1 served no request');
  if (k.idleAtOrBelow !== undefined && c <= k.idleAtOrBelow)
    return invalid(`idle_dp_rank: ${16 - c} of 16 engines served no request`);
  if (k.clientLimit !== undefined && c >= k.clientLimit) return invalid('client_saturated: event loop lag 900 ms');
  const truth = BOUND_MS * (c / (TRUE_LIMIT + 0.5)) ** k.elasticity;
  const ttft = truth * Math.exp(k.sigma * rng.normal());
  const noisy = k.sigma > 0;
  finishPoint(
    pt,
    {
      ...base,
      valid: true,
      reasons: [],
      ttftP99Ms: ttft,
      ...(noisy ? { logSe: { ttftP99Ms: reportedSe(rng, k.sigma) } } : {}),
    },
    't',
  );
}

export interface Outcome {
  limit: number | null;
  status: string;
  ci: { lower: number | null; upper: number | null };
  windows: number;
}

export function runOne(k: Case, seed: number): Outcome {
  const rng = seededRng(seed);
  const p = progress([8]);
  let windows = 0;
  for (let pt = nextPointOrSearch(p, search); pt; pt = nextPointOrSearch(p, search)) {
    if (++windows > 200) throw new Error('the search did not end');
    measureWindow(pt, k, rng);
  }
  const l = p.search!.limit!;
  return { limit: l.concurrency, status: l.status, ci: l.ci ?? { lower: null, upper: null }, windows };
}

export function runCase(k: Case, seed0: number, searches: number) {
  const runs = Array.from({ length: searches }, (_, i) => runOne(k, seed0 + i));
  const share = (f: (o: Outcome) => boolean) => runs.filter(f).length / runs.length;
  const step = Math.max(1, Math.floor(TRUE_LIMIT * 0.1));
  return {
    runs,
    within: share((o) => o.limit !== null && Math.abs(o.limit - TRUE_LIMIT) <= step),
    covers: share((o) => (o.ci.lower ?? 0) <= TRUE_LIMIT && TRUE_LIMIT <= (o.ci.upper ?? Infinity)),
    meanWindows: runs.reduce((a, o) => a + o.windows, 0) / runs.length,
  };
}

export const noiseFree = (elasticity: number) => runOne({ elasticity, sigma: 0, spurious: 0 }, 1).windows;
