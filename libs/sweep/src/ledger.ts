/**
 * The GPU-hour ledger: where the GPU time a sweep's allocations held went, per sweep and per point,
 * in GPU-seconds. Every held second of every allocation lands in exactly one category, so the
 * categories sum to the allocations' time × GPUs: what the workflow timed (image import on the
 * head node, model load, a point's drain, warm-up and measurement, attempts that failed) and, as
 * the remainder, `idle` (granted but doing none of these: between steps, log capture, release).
 * The queue wait holds no GPU and is kept beside it (wall seconds and the GPU-seconds it waited for).
 * Pure and workflow-safe: the workflow passes workflow time (libs/orchestrator/src/workflows/run.ts).
 */

export const LEDGER_CATEGORIES = [
  'imageImport',
  'modelLoad',
  'warmup',
  'measurement',
  'drain',
  'failedAttempts',
  'idle',
] as const;
export type LedgerCategory = (typeof LEDGER_CATEGORIES)[number];
export type LedgerEntry = Record<LedgerCategory, number>;

/** What the workflow timed itself; `idle` is never entered, it is the remainder. */
export type TimedCategory = 'imageImport' | 'modelLoad' | 'point';

export interface GpuLedger {
  /** GPU-seconds per category over every closed allocation */
  sweep: LedgerEntry;
  /** GPU-seconds of each point (by concurrency): its warm-up, measurement, drain and failed attempts */
  points: Record<string, LedgerEntry>;
  /** the allocations' held time × GPUs, closed allocations only (= the sum of `sweep`) */
  heldGpuSeconds: number;
  /** wall seconds the allocations waited in the queue, and × the GPUs they waited for */
  queueWaitSeconds: number;
  queueWaitGpuSeconds: number;
  /** the plan's worst case, GPU-seconds ({@link worstCaseGpuSeconds}), shown beside the ledger */
  worstCaseGpuSeconds?: number;
  /** per allocation (job id): the seconds timed so far, per category; removed when it closes */
  open: Record<string, { gpus: number; timed: LedgerEntry; segment?: { category: TimedCategory; since: number } }>;
}

export const emptyEntry = (): LedgerEntry => ({
  imageImport: 0,
  modelLoad: 0,
  warmup: 0,
  measurement: 0,
  drain: 0,
  failedAttempts: 0,
  idle: 0,
});

export function emptyLedger(): GpuLedger {
  return { sweep: emptyEntry(), points: {}, heldGpuSeconds: 0, queueWaitSeconds: 0, queueWaitGpuSeconds: 0, open: {} };
}

/** An allocation was granted after `waitedSeconds` in the queue; its GPUs are held from now. */
export function ledgerGranted(l: GpuLedger, jobId: string, gpus: number, waitedSeconds: number): void {
  l.open[jobId] = { gpus, timed: emptyEntry() };
  const w = Math.max(0, waitedSeconds);
  l.queueWaitSeconds += w;
  l.queueWaitGpuSeconds += w * gpus;
}

/** A timed step starts on the allocation (the one before it, if any, ends now). */
export function ledgerStart(l: GpuLedger, jobId: string, category: TimedCategory, nowMs: number): void {
  const a = l.open[jobId];
  if (!a) return;
  closeSegment(a, nowMs);
  a.segment = { category, since: nowMs };
}

/** The current non-point step ends (image imported, server ready). */
export function ledgerStop(l: GpuLedger, jobId: string, nowMs: number): void {
  const a = l.open[jobId];
  if (a) closeSegment(a, nowMs);
}

/**
 * The point's step ended at `nowMs`: `ok` splits its time into drain, warm-up and measurement (the
 * drain and warm-up the point activity measured, capped by the time itself); `failed` books it all
 * as a failed attempt. The point's own entry gets the same GPU-seconds.
 */
export function ledgerPointEnded(
  l: GpuLedger,
  jobId: string,
  concurrency: number,
  nowMs: number,
  outcome: { ok: true; drainSeconds?: number; warmupSeconds?: number } | { ok: false },
): void {
  const a = l.open[jobId];
  if (!a?.segment || a.segment.category !== 'point') return;
  const total = Math.max(0, (nowMs - a.segment.since) / 1000);
  a.segment = undefined;
  const split: Partial<LedgerEntry> = {};
  if (!outcome.ok) split.failedAttempts = total;
  else {
    const drain = Math.min(total, Math.max(0, outcome.drainSeconds ?? 0));
    const warmup = Math.min(total - drain, Math.max(0, outcome.warmupSeconds ?? 0));
    Object.assign(split, { drain, warmup, measurement: total - drain - warmup });
  }
  const pt = (l.points[String(concurrency)] ??= emptyEntry());
  for (const [k, s] of Object.entries(split) as [LedgerCategory, number][]) {
    a.timed[k] += s;
    pt[k] += s * a.gpus;
  }
}

/**
 * The allocation is given back: `heldSeconds` (granted → ended) × its GPUs is booked, the timed
 * categories as timed, the remainder as idle (never below zero: timed time beyond the held time, a
 * clock step, is capped to it).
 */
export function ledgerClosed(l: GpuLedger, jobId: string, heldSeconds: number, nowMs: number): void {
  const a = l.open[jobId];
  if (!a) return;
  closeSegment(a, nowMs);
  delete l.open[jobId];
  const held = Math.max(0, heldSeconds);
  const timed = LEDGER_CATEGORIES.reduce((s, k) => s + a.timed[k], 0);
  const scale = timed > held && timed > 0 ? held / timed : 1;
  for (const k of LEDGER_CATEGORIES) l.sweep[k] += a.timed[k] * scale * a.gpus;
  l.sweep.idle += Math.max(0, held - timed) * a.gpus;
  l.heldGpuSeconds += held * a.gpus;
}

/** Sum of the categories, GPU-seconds. */
export function ledgerTotal(e: LedgerEntry): number {
  return LEDGER_CATEGORIES.reduce((s, k) => s + e[k], 0);
}

/** One line: `12.3 GPU-h held: measurement 40 %, …` (categories over 0.5 %), and the queue wait. */
export function ledgerLine(l: GpuLedger): string {
  const held = l.heldGpuSeconds;
  if (held <= 0) return 'no GPU time held yet';
  const parts = LEDGER_CATEGORIES.filter((k) => l.sweep[k] / held >= 0.005).map(
    (k) => `${k} ${((100 * l.sweep[k]) / held).toFixed(0)} %`,
  );
  const worst =
    l.worstCaseGpuSeconds === undefined ? '' : ` (plan's worst case ${gpuHours(l.worstCaseGpuSeconds)} GPU-h)`;
  return `${gpuHours(held)} GPU-h held${worst}: ${parts.join(', ')}; queue wait ${Math.round(l.queueWaitSeconds)} s`;
}

/**
 * What a sweep's ledger adds to a snapshot's GPU time (libs/sweep/src/snapshot.ts): everything its
 * closed allocations held, and of it the failed part: a finished sweep's failed attempts; all of a
 * failed sweep's (its cell runs again in a new sweep or gives up, so nothing it held counts toward a
 * result). A sweep with no ledger held nothing the snapshot can count.
 */
export function sweepSpend(
  l: GpuLedger | undefined,
  outcome: 'finished' | 'failed',
): { gpuSeconds: number; failedGpuSeconds: number } {
  if (!l) return { gpuSeconds: 0, failedGpuSeconds: 0 };
  const held = Math.max(0, l.heldGpuSeconds);
  return { gpuSeconds: held, failedGpuSeconds: outcome === 'failed' ? held : Math.min(held, l.sweep.failedAttempts) };
}

export const gpuHours = (gpuSeconds: number): string => (gpuSeconds / 3600).toFixed(gpuSeconds < 36 ? 4 : 2);

/** End the open step; a point step ended any other way than ledgerPointEnded (a loss) is a failed attempt. */
function closeSegment(a: GpuLedger['open'][string], nowMs: number): void {
  const seg = a.segment;
  if (!seg) return;
  a.segment = undefined;
  const s = Math.max(0, (nowMs - seg.since) / 1000);
  a.timed[seg.category === 'point' ? 'failedAttempts' : seg.category] += s;
}

/**
 * The plan's worst case, GPU-seconds: every point at its budget on every attempt, a server start on
 * every allocation attempt, and the search's added points at their cost. What the ledger is shown
 * beside: a sweep that spends more held more idle time than its plan allowed for.
 */
export function worstCaseGpuSeconds(p: {
  gpus: number;
  points: number;
  maxPointAttempts: number;
  pointBudgetSeconds: number;
  maxAllocationAttempts: number;
  startupBudgetSeconds: number;
  search?: { maxAddedPoints: number; pointGpuHours: number };
}): number {
  const points = p.points * p.maxPointAttempts * p.pointBudgetSeconds;
  const starts = p.maxAllocationAttempts * p.startupBudgetSeconds;
  const search = p.search ? p.search.maxAddedPoints * p.search.pointGpuHours * 3600 : 0;
  return Math.max(0, p.gpus) * (points + starts) + search;
}
