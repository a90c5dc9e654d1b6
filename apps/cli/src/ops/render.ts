/**
 * Text views of a sweep for `status`, `watch` and `sweep`: a header, one line per
 * ConcurrencyPoint (live requests done / in flight / ETA for the running one) and one per
 * Allocation. Pure functions over SweepView, so unit tests cover them.
 */
import {
  cellLines,
  headlineLine,
  ledgerLine,
  replicateStatusLines,
  searchLines,
  type AllocationRecord,
  type AttemptRecord,
  type PointState,
  type SnapshotProgress,
  type SweepProgress,
} from '@infersweep/sweep';
import { fmtDuration } from './cli';
import type { LiveDetail, SweepView } from './temporal';
import type { FailureView } from './failure';

/** A reason worth showing: Slurm says `None` when it has none (squeue %r), which is not one. */
export function slurmReason(reason: string | undefined): reason is string {
  return reason !== undefined && reason !== '' && reason !== 'None';
}

const pad = (s: string, n: number) => (s.length >= n ? s : s + ' '.repeat(n - s.length));
const f1 = (v: number | undefined) => (v === undefined ? '–' : v >= 100 ? v.toFixed(0) : v.toFixed(1));

/** The live detail that belongs to a point (heartbeat of its runPoint activity). */
export function liveFor(view: Pick<SweepView, 'live'>, concurrency: number): LiveDetail | undefined {
  return view.live.find((l) => l.concurrency === concurrency);
}

/** The allocation waiting in the queue (heartbeat of the allocate activity), if any. */
export function queuedFor(view: Pick<SweepView, 'live'>): LiveDetail | undefined {
  return view.live.find((l) => l.phase === 'allocating');
}

/**
 * The allocate activity's live detail (libs/orchestrator/src/activities/allocation.ts heartbeats
 * libs/slurm's AllocationProgress): e.g. `allocating: job 123 PENDING (Resources) for 12m00s`.
 */
export function allocatingLine(live: LiveDetail): string {
  const job = live.jobId ? `job ${live.jobId}` : (live.jobName ?? 'the request');
  const reason = slurmReason(live.reason) ? ` (${live.reason})` : '';
  const waited = live.waitedSeconds !== undefined ? ` for ${fmtDuration(live.waitedSeconds)}` : '';
  return `allocating: ${job} ${live.state ?? 'submitting'}${reason}${waited}`;
}

export function pointLine(pt: PointState, live?: LiveDetail): string {
  const parts = [pad(`c=${pt.concurrency}`, 7), pad(pt.status, 8)];
  if (pt.status === 'running') {
    if (live) {
      parts.push(pad(live.phase ?? 'running', 10));
      if (live.completed !== undefined) parts.push(`${live.completed} requests done`);
      if (live.inFlight !== undefined) parts.push(`${live.inFlight} in flight`);
      if (live.etaSeconds !== undefined) parts.push(`ETA ${fmtDuration(live.etaSeconds)}`);
    }
  } else if (pt.summary) {
    const s = pt.summary;
    parts.push(s.valid ? 'valid  ' : 'INVALID');
    if (s.totalThroughputPerGpu !== undefined) parts.push(`${f1(s.totalThroughputPerGpu)} tok/s/GPU`);
    if (s.interactivityP50 !== undefined) parts.push(`${f1(s.interactivityP50)} tok/s/user`);
    if (s.e2eNormInteractivityP90 !== undefined) parts.push(`${f1(s.e2eNormInteractivityP90)} tok/s/user E2E-norm P90`);
    if (s.goodput !== undefined)
      parts.push(
        `goodput ${f1(100 * s.goodput.attainment)} % [${f1(100 * s.goodput.lower)}, ${f1(100 * s.goodput.upper)}]`,
      );
    if (s.specAcceptanceLength !== undefined) parts.push(`acceptance length ${s.specAcceptanceLength.toFixed(2)}`);
    if (!s.valid && s.reasons.length) parts.push(`(${s.reasons.join('; ')})`);
    if (s.warnings?.length) parts.push(`warnings: ${s.warnings.join('; ')}`);
  }
  parts.push(`attempts ${pt.attempts}`);
  if (pt.resultPath) parts.push(pt.resultPath);
  if (pt.lastError && pt.status !== 'done' && pt.status !== 'invalid') parts.push(`last error: ${pt.lastError}`);
  // every failed attempt's class and what the sweep did (libs/core/src/attempt-class.ts)
  if (pt.failures?.length) parts.push(`failed attempts: ${pt.failures.map(attemptText).join(', ')}`);
  return parts.join('  ');
}

export function allocationLine(a: AllocationRecord): string {
  return [
    pad(`#${a.attempt}`, 4),
    pad(`job ${a.jobId ?? '–'}`, 12),
    pad(a.nodes.length ? a.nodes.join(',') : 'no nodes yet', 22),
    a.ended
      ? `ended ${a.ended}${slurmReason(a.reason) ? ` (${a.reason})` : ''}`
      : a.grantedAt
        ? 'holding'
        : 'requested',
    ...(a.failureClass ? [`[${a.failureClass}]`] : []),
    ...(a.excluded?.length ? [`excluded ${a.excluded.join(',')} (quarantine)`] : []),
    // what went wrong without ending it (a failed log capture, libs/orchestrator/src/workflows/lease.ts)
    ...(a.warnings ?? []).map((w) => `warning: ${w}`),
  ].join('  ');
}

export function progressLines(p: SweepProgress, view: Pick<SweepView, 'live'>): string[] {
  const lines: string[] = [];
  const counts: Record<string, number> = {};
  for (const pt of p.points) counts[pt.status] = (counts[pt.status] ?? 0) + 1;
  lines.push(
    `  phase        ${p.phase}${p.currentPoint !== undefined ? ` (c=${p.currentPoint})` : ''}${p.message ? ` — ${p.message}` : ''}`,
  );
  const queued = queuedFor(view);
  if (queued) lines.push(`  queue        ${allocatingLine(queued)}`);
  if (p.awaitingOperator)
    lines.push(
      `  WAITING FOR AN OPERATOR since ${p.awaitingOperator.since}: ${p.awaitingOperator.reason} — \`infersweep resume ${p.sweepId}\` retries now`,
    );
  lines.push(
    `  sweep        ${p.orientation} of ${p.model} on ${p.cluster} (config ${p.configName}, plan ${p.planHash})`,
  );
  lines.push(`  results      ${p.resultsDir}`);
  lines.push(
    `  points       ${Object.entries(counts)
      .map(([k, v]) => `${v} ${k}`)
      .join(', ')}`,
  );
  for (const pt of p.points)
    lines.push(
      `    ${pointLine(pt, liveFor(view, pt.concurrency))}${pt.origin === 'search' ? '  (added by search)' : ''}`,
    );
  searchLines(p).forEach((l, i) => lines.push(`  ${i === 0 ? 'search       ' : '    '}${l}`));
  replicateStatusLines(p).forEach((l, i) => lines.push(`  ${i === 0 ? 'replicates   ' : '    '}${l}`));
  lines.push(`  allocations  ${p.allocations.length === 0 ? 'none yet' : ''}`);
  for (const a of p.allocations) lines.push(`    ${allocationLine(a)}`);
  for (const f of p.setupFailures ?? []) lines.push(`    setup failed: ${attemptText(f)}`);
  if (p.ledger) lines.push(`  GPU time     ${ledgerLine(p.ledger)}`);
  return lines;
}

/** One failed attempt: `node-health → re-place (quarantined node2)`. */
export function attemptText(f: AttemptRecord): string {
  const q = f.quarantined?.length ? ` (quarantined ${f.quarantined.join(',')})` : '';
  return `${f.class} → ${f.action}${q}`;
}

/** Why a sweep ended: the root cause first, then where it happened and what the layers above said. */
export function failureLines(f: FailureView): string[] {
  const lines = [`  failure      ${f.rootCause}`];
  if (f.where.length || f.type)
    lines.push(`  failed in    ${[...f.where, ...(f.type ? [`(${f.type})`] : [])].join(' ')}`);
  for (const v of f.via) lines.push(`  while        ${v}`);
  return lines;
}

/** The whole `status` text of a sweep (and its children for `--orientation all`). */
export function statusText(v: SweepView): string {
  const lines: string[] = [];
  lines.push(`${v.workflowId}  ${v.status}${v.kind === 'all' ? '  (all orientations)' : ''}`);
  lines.push(`  Web UI       ${v.uiLink}`);
  if (v.failure) lines.push(...failureLines(v.failure));
  if (v.snapshot) lines.push(...snapshotLines(v.snapshot));
  else if (v.kind === 'snapshot') lines.push(`  snapshot     unavailable: ${v.progressNote ?? 'unknown'}`);
  if (v.progressFrom)
    lines.push(`  progress     as saved when it ended: ${v.progressFrom} (no worker answered a query)`);
  if (v.progress) lines.push(...progressLines(v.progress, v));
  else if (v.kind === 'sweep') lines.push(`  progress     unavailable: ${v.progressNote ?? 'unknown'}`);
  for (const c of v.children) {
    lines.push('');
    lines.push(
      ...statusText(c)
        .split('\n')
        .map((l) => `  ${l}`),
    );
  }
  return lines.join('\n');
}

/** `status --json`: the progress query's result plus the workflow's status and link. */
export function statusJson(v: SweepView): Record<string, unknown> {
  const base = {
    workflowId: v.workflowId,
    runId: v.runId,
    workflowStatus: v.status,
    uiLink: v.uiLink,
    ...(v.failure ? { failure: v.failure.rootCause, failureDetail: v.failure } : {}),
  };
  if (v.kind === 'all') return { ...base, kind: 'all', sweeps: v.children.map(statusJson) };
  if (v.kind === 'snapshot')
    return { ...base, kind: 'snapshot', ...(v.snapshot ?? { snapshotUnavailable: v.progressNote }) };
  return {
    ...base,
    kind: v.kind,
    ...(v.progress ?? { progressUnavailable: v.progressNote }),
    ...(v.progressFrom ? { progressFrom: v.progressFrom } : {}),
    live: v.live,
  };
}

/** Is a closed sweep a success? (completed with every point done and valid) */
export function sweepSucceeded(v: SweepView): boolean {
  if (v.status !== 'COMPLETED') return false;
  if (v.kind === 'all') return v.children.length > 0 && v.children.every(sweepSucceeded);
  const p = v.progress;
  if (!p) return true;
  // a search's points past saturation are its evidence, not a failure of the sweep
  return (
    p.phase !== 'aborted' &&
    p.points.every((pt) => pt.status === 'done' || (p.search !== undefined && pt.status === 'invalid'))
  );
}

/** A snapshot for `status` and `snapshot run --wait`: its window, headline and one line per cell. */
export function snapshotLines(p: SnapshotProgress): string[] {
  return [
    `  snapshot     ${p.name}: ${p.phase}, window ${p.startedAt} – ${p.windowEndsAt}`,
    `  headline     ${headlineLine(p.headline)}`,
    ...cellLines(p.cells),
  ];
}
