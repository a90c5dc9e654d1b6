/**
 * A failed attempt in the sweep's loop (./run.ts, ./sweep.ts): classified and recorded
 * (./attempt-recovery.ts), its suspects quarantined, then the point failed or requeued and the server
 * or the allocation given back as the class decides; an operator wait where the plan cannot run as it
 * is. Workflow code: deterministic, all work in activities.
 */
import {
  failPoint,
  requeuePoint,
  ledgerPointEnded,
  type PointState,
  type SweepPhase,
  type SweepProgress,
} from '@infersweep/sweep';
import type { PlanInput } from '../activities/types';
import type { SweepVerbs } from './activities';
import { quarantineSuspects, recordFailedAttempt } from './attempt-recovery';
import type { SweepRunInput } from './carry-over';
import { lossEnd, type ClassifiedFailure } from './failures';
import { RELEASE_FAILED, type Lease } from './lease';
import type { OperatorWait } from './operator';

const now = () => new Date().toISOString();

/** What recovery needs of the sweep. */
export interface RecoveringSweep {
  readonly state: SweepProgress;
  readonly aborted: boolean;
  readonly lease: Lease;
  readonly operator: OperatorWait;
  readonly act: SweepVerbs;
  readonly plan: PlanInput;
  readonly input: SweepRunInput;
  publish(phase?: SweepPhase, message?: string): void;
}

/** After a failure in ensureServer/measure: 'stop' ends the loop (abort); a fatal failure rethrows. */
export async function recoverAttempt(
  run: RecoveringSweep,
  pt: PointState,
  f: ClassifiedFailure,
  err: unknown,
): Promise<'next' | 'stop'> {
  run.state.currentPoint = undefined;
  if (f.class === 'cancelled' && run.aborted) {
    if (pt.status === 'running') requeuePoint(pt, `aborted: ${run.state.abortRequested}`);
    return 'stop';
  }
  // cancelled, a wrong input, or a job it could not release (releaseHeld): the sweep ends
  if (f.class === 'cancelled' || f.class === 'input' || f.type === RELEASE_FAILED) throw err;
  const failed = classifyAttempt(run, pt, f);
  const held = failed && run.state.allocations.find((a) => a.jobId && a.jobId === failed.record.jobId);
  const noted = failed
    ? await quarantineSuspects(run.act, run.plan, run.input.sweepId, failed, held?.nodes ?? [])
    : undefined;
  const action = failed?.decision.action;
  const label = failed ? ` [${failed.seen.class}${noted ? `; ${noted}` : ''}]` : '';
  // a class that fails the point at once (an OOM at this concurrency) spends its attempts now
  const maxAttempts = action === 'fail-point' && pt.status === 'running' ? pt.attempts : run.input.maxPointAttempts;
  if (serverLostUnderPoint(pt, f)) {
    // the server died under this point while its allocation lives (an OOM at high concurrency, an
    // NCCL timeout): a failed point attempt, with the server's last words; the allocation is kept,
    // unless the class re-places the point (its nodes are suspect)
    const logTail =
      typeof f.details?.logTail === 'string' && f.details.logTail
        ? `\n--- server log (tail):\n${f.details.logTail}`
        : '';
    failPoint(pt, `${f.message}${logTail}`, maxAttempts, now());
    run.publish('recovering', `c=${pt.concurrency} lost its server${label}: ${f.message}`);
    if (action === 're-place') await run.lease.teardown('server-lost', f.message);
    else await run.lease.stopServer('server-lost').catch(() => undefined);
  } else if (f.class === 'loss') {
    if (pt.status === 'running' && action === 'fail-point') failPoint(pt, f.message, maxAttempts, now());
    else if (pt.status === 'running') requeuePoint(pt, f.message);
    let end = lossEnd(f);
    // the time guard replacing an allocation that never ran a point is a failed attempt
    if (end === 'insufficient-time' && run.lease.held.pointsOnAllocation === 0) end = 'allocation-failed';
    run.publish('recovering', `${f.type}: ${f.message}${label}`);
    await run.lease.teardown(end, f.message);
  } else if (pt.status === 'running') {
    // the point itself failed after its activity retries: the server may be the cause
    failPoint(pt, f.message, maxAttempts, now());
    run.publish('recovering', `c=${pt.concurrency} failed${label}: ${f.message}`);
    if (action === 're-place') await run.lease.teardown('released', `re-placed: ${f.message}`);
    else await run.lease.stopServer('policy').catch(() => undefined);
  } else {
    // allocation/launch/readiness failed after retries: count the attempt, start over
    run.publish('recovering', `${f.message}${label}`);
    await run.lease.teardown(
      f.activity === 'allocate' || !run.lease.held.allocation ? 'allocation-failed' : 'launch-failed',
      f.message,
    );
    // the quarantine leaves too few nodes, or the class says the plan cannot run as it is
    if (f.details?.quarantineBlocks === true || action === 'wait-operator')
      await run.operator.wait(
        f.details?.quarantineBlocks === true ? f.message : `${failed!.decision.why}: ${f.message}`,
      );
  }
  return 'next';
}

/**
 * The failed attempt classified, decided and recorded (./attempt-recovery.ts); none for the time
 * guard replacing an allocation, which is no failure. The point's time so far is a failed attempt.
 */
function classifyAttempt(run: RecoveringSweep, pt: PointState, f: ClassifiedFailure) {
  const jobId = run.lease.held.allocation?.jobId;
  if (pt.status === 'running' && jobId)
    if (run.state.ledger) ledgerPointEnded(run.state.ledger, jobId, pt.concurrency, Date.now(), { ok: false });
  if (f.class === 'loss' && lossEnd(f) === 'insufficient-time') return undefined;
  return recordFailedAttempt(run.state, pt, f, run.input.maxPointAttempts, now());
}

/** A server lost during a point on a live allocation; a lost allocation is not. */
function serverLostUnderPoint(pt: PointState, f: ClassifiedFailure): boolean {
  return f.class === 'loss' && f.details?.end === 'server-lost' && pt.status === 'running';
}
