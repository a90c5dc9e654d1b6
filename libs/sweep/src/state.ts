/**
 * The point-state machine: pure functions over SweepProgress. The cursor is derived, never
 * stored: the next point is the first one still pending, so skip/retry edits compose.
 */
import type { AllocationEnd, PointState, PointSummary, SweepInput, SweepProgress, SweepResult } from './contract';
import { ledgerClosed, ledgerGranted } from './ledger';

export function initialProgress(input: SweepInput, now: string): SweepProgress {
  return {
    sweepId: input.sweepId,
    configName: input.configName,
    configHash: input.configHash,
    planHash: input.planHash,
    orientation: input.orientation,
    cluster: input.cluster,
    model: input.model,
    policy: input.policy,
    phase: 'starting',
    points: input.points.map((concurrency) => ({ concurrency, status: 'pending', attempts: 0 })),
    allocations: [],
    maxAllocationAttempts: input.maxAllocationAttempts,
    startedAt: now,
    updatedAt: now,
    resultsDir: input.resultsDir,
  };
}

/** The first point still to run, or undefined when every point is settled. */
export function nextPoint(p: SweepProgress): PointState | undefined {
  return p.points.find((pt) => pt.status === 'pending' || pt.status === 'running');
}

export function pointAt(p: SweepProgress, concurrency: number): PointState {
  const pt = p.points.find((x) => x.concurrency === concurrency);
  if (!pt)
    throw new Error(
      `no concurrency point ${concurrency} in this sweep (points: ${p.points.map((x) => x.concurrency).join(', ')})`,
    );
  return pt;
}

/** Points already done by an earlier run of the same sweep (results found on disk). */
export function applyCompleted(p: SweepProgress, done: PointSummary[]): void {
  for (const s of done) {
    const pt = p.points.find((x) => x.concurrency === s.concurrency);
    if (!pt || pt.status !== 'pending') continue;
    pt.status = s.valid ? 'done' : 'invalid';
    pt.summary = s;
    pt.resultPath = s.resultPath;
  }
}

export function startPoint(pt: PointState, jobId: string, now: string): void {
  pt.status = 'running';
  pt.attempts += 1;
  pt.startedAt = now;
  pt.jobId = jobId;
}

export function finishPoint(pt: PointState, s: PointSummary, now: string): void {
  pt.status = s.valid ? 'done' : 'invalid';
  pt.summary = s;
  pt.resultPath = s.resultPath;
  pt.finishedAt = now;
  pt.lastError = s.valid ? undefined : s.reasons.join('; ');
}

/**
 * The allocation was lost while the point ran: the point goes back to pending (the attempt is
 * not held against it) so it reruns first on the next allocation.
 */
export function requeuePoint(pt: PointState, reason: string): void {
  pt.status = 'pending';
  pt.attempts = Math.max(0, pt.attempts - 1);
  pt.lastError = reason;
}

/** The point itself failed (its activity exhausted retries): pending again while attempts remain. */
export function failPoint(pt: PointState, reason: string, maxAttempts: number, now: string): void {
  pt.lastError = reason;
  pt.finishedAt = now;
  pt.status = pt.attempts >= maxAttempts ? 'failed' : 'pending';
}

/** Validator for the skipPoint update: throws a message the caller sees. */
export function validateSkip(p: SweepProgress, concurrency: number): void {
  const pt = p.points.find((x) => x.concurrency === concurrency);
  if (!pt) {
    throw new Error(
      `no concurrency point ${concurrency}; this sweep has ${p.points.map((x) => x.concurrency).join(', ')}`,
    );
  }
  if (pt.status !== 'pending' && pt.status !== 'failed') {
    throw new Error(`point c=${concurrency} is ${pt.status}; only pending or failed points can be skipped`);
  }
}

export function skipPoint(p: SweepProgress, concurrency: number, reason: string): void {
  const pt = pointAt(p, concurrency);
  pt.status = 'skipped';
  pt.lastError = reason;
}

/**
 * Allocation attempts that ended badly. Orderly ends do not count: a release by policy, and a
 * replacement by the time guard after the allocation ran at least one point.
 */
export function failedAllocationAttempts(p: SweepProgress, since = 0): number {
  return failedAllocations(p, since).length;
}

/**
 * The failed allocation attempts since `since` all found the cluster unavailable (its login host
 * unreachable, its partition down: `clusterUnavailable`): the cluster, not the sweep, stopped it.
 */
export function clusterUnavailable(p: SweepProgress, since = 0): boolean {
  const failed = failedAllocations(p, since);
  return failed.length > 0 && failed.every((a) => a.clusterUnavailable === true);
}

function failedAllocations(p: SweepProgress, since: number): SweepProgress['allocations'] {
  return p.allocations.filter(
    (a) => a.attempt > since && a.ended !== undefined && a.ended !== 'released' && a.ended !== 'insufficient-time',
  );
}

export function recordAllocationEnd(
  p: SweepProgress,
  jobName: string,
  ended: AllocationEnd,
  reason: string | undefined,
  now: string,
): void {
  const a = p.allocations.find((x) => x.jobName === jobName);
  if (!a || a.ended) return;
  a.ended = ended;
  a.reason = reason;
  a.endedAt = now;
}

/**
 * An allocation attempt was granted (pure): the attempt's record (the last) gets the job, its nodes, the grant
 * time, the GPUs it holds and the nodes it was asked to avoid; the sweep holds it now; the GPU-hour ledger, when
 * the sweep keeps one, books its queue wait.
 */
export function recordAllocationGranted(
  p: SweepProgress,
  attempt: number,
  a: { jobId: string; nodes: string[]; grantedAt: string; timeLimitMinutes: number; excluded?: string[] },
  heldGpus: number,
): void {
  const rec = p.allocations[p.allocations.length - 1]!;
  const gpus = Number.isFinite(heldGpus) && heldGpus > 0 ? heldGpus : 0;
  Object.assign(rec, { jobId: a.jobId, nodes: a.nodes, grantedAt: a.grantedAt, gpus });
  if (a.excluded) rec.excluded = a.excluded;
  const waited = (Date.parse(a.grantedAt) - Date.parse(rec.requestedAt)) / 1000;
  if (p.ledger) ledgerGranted(p.ledger, a.jobId, gpus, Number.isFinite(waited) ? waited : 0);
  const { jobId, nodes, grantedAt, timeLimitMinutes } = a;
  p.allocation = { jobId, nodes, attempt, grantedAt, timeLimitMinutes };
}

/**
 * A held allocation was released (pure): its end (Slurm's own terminal state wins over the caller's), the
 * seconds it held its nodes (Slurm's start and end when Slurm still knew the job, else granted → ended here), and
 * the ledger's close of it.
 */
export function recordAllocationReleased(
  p: SweepProgress,
  a: { jobId: string; jobName: string; grantedAt: string },
  r: { ended: AllocationEnd; reason?: string; heldSeconds?: number },
  end: { ended: AllocationEnd; reason: string | undefined; at: string; atMs: number },
): void {
  recordAllocationEnd(p, a.jobName, r.ended !== 'released' ? r.ended : end.ended, end.reason ?? r.reason, end.at);
  const rec = p.allocations.find((x) => x.jobName === a.jobName);
  const seen = (Date.parse(rec?.endedAt ?? end.at) - Date.parse(a.grantedAt)) / 1000;
  const held = r.heldSeconds ?? (Number.isFinite(seen) ? seen : 0);
  if (rec) rec.heldSeconds = held;
  if (p.ledger) ledgerClosed(p.ledger, a.jobId, held, end.atMs);
}

/**
 * What a sweep returns (pure): its points, allocations and results folder, and what `status` and `report` show of
 * a closed sweep with no worker to answer a query (the search, the replicates, the last message, the ledger).
 */
export function sweepResultOf(p: SweepProgress, where: { sweepId: string; resultsDir: string }): SweepResult {
  return {
    sweepId: where.sweepId,
    status: p.phase === 'aborted' ? 'aborted' : 'completed',
    points: p.points,
    allocations: p.allocations,
    resultsDir: where.resultsDir,
    ...(p.search ? { search: p.search } : {}),
    ...(p.replicates ? { replicates: p.replicates } : {}),
    ...(p.message ? { message: p.message } : {}),
    ...(p.ledger ? { ledger: p.ledger } : {}),
  };
}

/** Counts for a one-line summary (memo, status lines). */
export function countPoints(p: SweepProgress): Record<PointState['status'], number> {
  const c: Record<PointState['status'], number> = {
    pending: 0,
    running: 0,
    done: 0,
    invalid: 0,
    failed: 0,
    skipped: 0,
  };
  for (const pt of p.points) c[pt.status] += 1;
  return c;
}

export function summaryLine(p: SweepProgress): string {
  const c = countPoints(p);
  const parts = Object.entries(c)
    .filter(([, n]) => n > 0)
    .map(([k, n]) => `${n} ${k}`);
  // the Web UI's current details and the memo: which points the search added, and its limit so far
  const added = p.points.filter((pt) => pt.origin === 'search').length;
  if (added > 0) parts.push(`${added} added by search`);
  const limit = p.search?.limit ? `; SLO limit ${p.search.limit.text}` : '';
  const open = p.replicates?.points.filter((rp) => rp.status === 'replicating').length;
  const reps = p.replicates ? `; replicates: ${open} of ${p.replicates.points.length} point(s) pending` : '';
  return `${p.orientation} on ${p.cluster}: ${p.points.length} points (${parts.join(', ')}), ${p.allocations.length} allocation(s)${limit}${reps}`;
}

/** The points that ended without a measurement (failed or skipped) and why: the history records them (libs/history). */
export function unmeasuredPoints(p: SweepProgress): { concurrency: number; reason: string }[] {
  return p.points.flatMap((pt) =>
    pt.status === 'failed' || pt.status === 'skipped'
      ? [{ concurrency: pt.concurrency, reason: `${pt.status}: ${pt.lastError ?? 'no reason recorded'}` }]
      : [],
  );
}

/** Each point's GPU-seconds (the ledger's entry) and the classes of its failed attempts, for the history. */
export function pointCosts(
  p: SweepProgress,
): { concurrency: number; gpuSeconds?: Record<string, number>; failureClasses?: string[] }[] {
  return p.points.map((pt) => {
    const g = p.ledger?.points[String(pt.concurrency)];
    return {
      concurrency: pt.concurrency,
      ...(g ? { gpuSeconds: { ...g } } : {}),
      ...(pt.failures?.length ? { failureClasses: pt.failures.map((f) => f.class) } : {}),
    };
  });
}
