/**
 * The contract of the confirmation of a flagged regression (the `confirmWorkflow`,
 * libs/orchestrator/src/workflows/confirm.ts): what it is asked, what it answers, and the bisection
 * over the user's ordered candidate images. Pure and workflow-safe.
 *
 * A confirmation is a paired A/B on one allocation: A is the last good run's context, B the flagged
 * run's, measured `pairs` times each, interleaved A-B-A-B at the flagged point's concurrency; the
 * statistic is libs/stats `pairedComparison`. When B is confirmed worse and candidates lie between
 * the two images, each bisection step is one more paired comparison: the last good context against
 * the flagged run's with the candidate image, until the first bad image is found.
 */
import type { PointSummary } from './contract';

/** The confirmation's workflow id: not prefixed by the flagged sweep's own id, so never taken for one of its runs. */
export const confirmIdOf = (sweepId: string): string => `confirm-${sweepId}`;

/** The stored plan of a run: `<resultsDir>/plan.json` whose planHash must match. */
export interface ConfirmPlanRef {
  planHash: string;
  resultsDir: string;
}

/** A point metric the A/B can measure from a point summary (the history's headline metric names). */
export type ConfirmMetric =
  | 'throughputPerGpu'
  | 'outputThroughputPerGpu'
  | 'interactivityP50'
  | 'ttftP50Ms'
  | 'ttftP99Ms'
  | 'itlP50Ms'
  | 'itlP99Ms';

/** The point summary's field of each history metric (the history's replicate targets use it too). */
export const SUMMARY_FIELD = {
  throughputPerGpu: 'totalThroughputPerGpu',
  outputThroughputPerGpu: 'outputThroughputPerGpu',
  interactivityP50: 'interactivityP50',
  ttftP50Ms: 'ttftP50Ms',
  ttftP99Ms: 'ttftP99Ms',
  itlP50Ms: 'itlP50Ms',
  itlP99Ms: 'itlP99Ms',
} as const satisfies Record<ConfirmMetric, keyof PointSummary>;

export const CONFIRM_METRICS = Object.keys(SUMMARY_FIELD) as ConfirmMetric[];

/** The metric's value of one measured arm: null when the point is invalid or did not measure it. */
export function armValue(s: PointSummary, metric: ConfirmMetric): number | null {
  const v = s[SUMMARY_FIELD[metric]];
  return s.valid && typeof v === 'number' && Number.isFinite(v) ? v : null;
}

/** One side of a comparison: the stored plan it derives from, run with `image`. */
export interface ConfirmArm {
  /** the run whose plan this is (the last good run, or the flagged one) */
  runId: string;
  image: string;
  planRef: ConfirmPlanRef;
}

export interface ConfirmInput {
  /** the workflow's id: its allocations, server logs and results folders are named after it */
  confirmId: string;
  /** the flagged run (a sweep id) */
  sweepId: string;
  /** the A/B's results go under `<resultsRoot>/<confirmId>/` */
  resultsRoot: string;
  /** the last good run (A) and the flagged run (B) */
  good: ConfirmArm;
  current: ConfirmArm;
  /** the flagged point's concurrency and the metric that regressed */
  concurrency: number;
  metric: ConfirmMetric;
  higherIsBetter: boolean;
  /** the smallest regression that counts (the verdict's gate), relative */
  gate: number;
  /** pairs per comparison (k) and the interval's level */
  pairs: number;
  level: number;
  /** the ordered images strictly between the good and the current image (empty: no bisection) */
  candidates: string[];
  startupBudgetSeconds: number;
  pointBudgetSeconds: number;
  /** the Slurm job name tag (the sweep input's deploymentTag) */
  deploymentTag?: string;
}

/** The statistic of one comparison (libs/stats PairedComparison, plus what was compared). */
export interface ComparisonResult {
  /** `confirm`, or `bisect-<n>` */
  step: string;
  a: string;
  b: string;
  /** [A, B] values per pair (null: that arm's point did not measure it) */
  values: [number | null, number | null][];
  pairs: number;
  relativeEffect: number;
  relativeLower: number;
  relativeUpper: number;
  level: number;
  gate: number;
  outcome: 'confirmed' | 'cleared';
  jobId: string;
}

export interface ConfirmResult {
  confirmId: string;
  sweepId: string;
  outcome: 'confirmed' | 'cleared';
  metric: ConfirmMetric;
  concurrency: number;
  comparison: ComparisonResult;
  /** the first image worse than the last good one, with its comparison (bisected, or the current image) */
  culprit?: { image: string; comparison: ComparisonResult; bisected: boolean };
  steps: ComparisonResult[];
}

/**
 * Binary search for the first bad image over `n` ordered candidates, the good image before them
 * (index −1) and the confirmed bad current image after them (index n). Each step tests the middle
 * candidate; at most ⌈log2(n + 1)⌉ steps.
 */
export class Bisection {
  private lo = -1;
  private hi: number;

  constructor(readonly n: number) {
    this.hi = n;
  }

  /** The candidate index to test next, or undefined when the first bad one is known. */
  next(): number | undefined {
    return this.hi - this.lo > 1 ? Math.floor((this.lo + this.hi) / 2) : undefined;
  }

  /** The result of testing candidate `i`. */
  record(i: number, bad: boolean): void {
    if (i <= this.lo || i >= this.hi)
      throw new Error(`candidate ${i} is outside the open range (${this.lo}, ${this.hi})`);
    if (bad) this.hi = i;
    else this.lo = i;
  }

  /** The first bad index: n means the current image itself. */
  get firstBad(): number {
    return this.hi;
  }
}

/** The most steps a bisection of `n` candidates takes: ⌈log2(n + 1)⌉. */
export const maxBisectionSteps = (n: number): number => (n <= 0 ? 0 : Math.ceil(Math.log2(n + 1)));
