/**
 * The seeded simulations of docs/statistics.md ("Pre-registered targets"), as functions: the unit
 * tests assert their targets, bench/stats-nights.ts prints the full tables. Each returns counts, never
 * a verdict, so a test states its own bound.
 */
import {
  bootstrapCi,
  calibratedSequentialDecision,
  eDivisive,
  knee,
  mean,
  nightlyVerdict,
  quantile,
  runSequential,
  seededRng,
  simulateAllocation,
  simulateNight,
  steinInterval,
  steinTotal,
  tInterval,
  varianceSplit,
  type NightShape,
  type NightlySettings,
  type ReplicateShape,
} from '@infersweep/stats';

export const REPLICATE_POINT: ReplicateShape = { mean: 1000, between: 30, within: 300, requestsPerAllocation: 200 };

/** R3: the mean variance split over sets of allocations with known τ² and σ². */
export function varianceSplitMeans(
  sets: number,
  allocations: number,
  seed: number,
): { between: number; within: number } {
  const rng = seededRng(seed);
  let between = 0;
  let within = 0;
  for (let s = 0; s < sets; s++) {
    const v = varianceSplit(Array.from({ length: allocations }, () => simulateAllocation(rng, REPLICATE_POINT)));
    between += v.between;
    within += v.within;
  }
  return { between: between / sets, within: within / sets };
}

/** R4: coverage of the percentile bootstrap CI of p90 of lognormal requests (σ_log 0.5). */
export function bootstrapP90Coverage(runs: number, requests: number, resamples: number, seed: number): number {
  const rng = seededRng(seed);
  const truth = Math.exp(0.5 * 1.2815515655446004);
  const p90 = (v: number[]) => quantile(v, 0.9);
  let covered = 0;
  for (let r = 0; r < runs; r++) {
    const xs = Array.from({ length: requests }, () => Math.exp(0.5 * rng.normal()));
    const ci = bootstrapCi(xs, p90, { rng, resamples });
    if (ci.lower <= truth && truth <= ci.upper) covered++;
  }
  return covered / runs;
}

export const NIGHT: NightShape = { units: 16, pointsPerUnit: 5, baselineRuns: 20, windowRuns: 2, sigma: 0.03, rho: 0 };

/** V1–V3: flagged units per night; `stepped` counts the nights on which the stepped unit 0 flagged. */
export function nights(
  count: number,
  shape: NightShape,
  seed: number,
  settings: NightlySettings = {},
): { falseAlarms: number; nightsWithFalseAlarm: number; stepped: number } {
  const rng = seededRng(seed);
  let falseAlarms = 0;
  let nightsWithFalseAlarm = 0;
  let stepped = 0;
  for (let n = 0; n < count; n++) {
    const verdicts = nightlyVerdict(simulateNight(rng, shape), settings);
    const wrong = verdicts.filter((v, u) => v.flagged && u >= (shape.steppedUnits ?? 0)).length;
    falseAlarms += wrong;
    if (wrong > 0) nightsWithFalseAlarm++;
    if ((shape.steppedUnits ?? 0) > 0 && verdicts[0]!.flagged) stepped++;
  }
  return { falseAlarms, nightsWithFalseAlarm, stepped };
}

/** V6: E-divisive on 60-run series (σ 2 %), with a −10 % step at run 30 or without. */
export function eDivisiveRates(series: number, seed: number): { stepFound: number; quietClean: number } {
  const rng = seededRng(seed);
  let stepFound = 0;
  let quietClean = 0;
  for (let s = 0; s < series; s++) {
    const stepped = Array.from({ length: 60 }, (_, i) => 1000 * Math.exp(0.02 * rng.normal()) * (i >= 30 ? 0.9 : 1));
    if (eDivisive(stepped, { rng }).some((c) => Math.abs(c.index - 30) <= 2)) stepFound++;
    const quiet = Array.from({ length: 60 }, () => 1000 * Math.exp(0.02 * rng.normal()));
    if (eDivisive(quiet, { rng }).length === 0) quietClean++;
  }
  return { stepFound: stepFound / series, quietClean: quietClean / series };
}

const GRID = [1, 2, 4, 8, 16, 32, 64, 128];

/** S1/S2: the knee of a noisy curve (2 % noise) over the doubling grid 1…128. */
export function kneeOutcomes(runs: number, curve: (c: number) => number, seed: number): Map<number | null, number> {
  const rng = seededRng(seed);
  const out = new Map<number | null, number>();
  for (let r = 0; r < runs; r++) {
    const k = knee(GRID.map((c) => ({ concurrency: c, throughput: curve(c) * (1 + 0.02 * rng.normal()) }))).knee;
    out.set(k, (out.get(k) ?? 0) + 1);
  }
  return out;
}

export const smoothCurve = (c: number): number => c / (c + 16);
export const cliffCurve = (c: number): number => Math.min(c, 32) / (Math.min(c, 32) + 64);

export interface RuleFigures {
  coverage: number;
  meanN: number;
}

/**
 * R1b, R2b, R5: 2000-sweep figures of every replicate rule on the same allocations (common random
 * numbers): fixed n = 3 and 5, the sequential rule, the calibrated sequential rule (R6), Stein with n0 = 3, 6, 8, and the fixed-n rule
 * for the target (smallest n meeting it in ≥ 90 % of sweeps).
 */
export function replicateRules(
  sweeps: number,
  seed: number,
  target = 0.03,
  max = 20,
): { rules: Record<string, RuleFigures>; fixedN: number | null } {
  const rng = seededRng(seed);
  const tally: Record<string, { covered: number; n: number }> = {};
  const add = (name: string, ci: { lower: number; upper: number; n: number }) => {
    const t = (tally[name] ??= { covered: 0, n: 0 });
    if (ci.lower <= REPLICATE_POINT.mean && REPLICATE_POINT.mean <= ci.upper) t.covered++;
    t.n += ci.n;
  };
  const met = new Array<number>(max + 1).fill(0);
  for (let s = 0; s < sweeps; s++) {
    const values = Array.from({ length: max }, () => mean(simulateAllocation(rng, REPLICATE_POINT)));
    add('fixed n=3', tInterval(values.slice(0, 3)));
    add('fixed n=5', tInterval(values.slice(0, 5)));
    let i = 0;
    add(
      'sequential min 3',
      runSequential(() => values[i++]!, { min: 3, max, relativeHalfWidth: target }).decision.interval,
    );
    const rule = { min: 3, max, relativeHalfWidth: target };
    let k = rule.min;
    while (!calibratedSequentialDecision(values.slice(0, k), rule).stop) k++;
    add('calibrated sequential min 3', calibratedSequentialDecision(values.slice(0, k), rule).interval!);
    for (const n0 of [3, 6, 8]) {
      const total = steinTotal(values.slice(0, n0), { max, relativeHalfWidth: target });
      add(`stein n0=${n0}`, steinInterval(values.slice(0, total), n0));
    }
    for (let n = 3; n <= max; n++) if (tInterval(values.slice(0, n)).relativeHalfWidth <= target) met[n]!++;
  }
  const rules = Object.fromEntries(
    Object.entries(tally).map(([k, t]) => [k, { coverage: t.covered / sweeps, meanN: t.n / sweeps }]),
  );
  const fixedN = met.findIndex((m, n) => n >= 3 && m / sweeps >= 0.9);
  return { rules, fixedN: fixedN < 0 ? null : fixedN };
}
