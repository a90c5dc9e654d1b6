/**
 * SweepRun: the state of one sweep and the steps its story is told in (./sweep.ts, which also wires
 * the message handlers to the methods here): the points, the operator wait, the history bound and
 * the close. What the sweep holds on the cluster, and the verbs that get and give it back, are the
 * Lease's (./lease.ts). Workflow code: deterministic, all work in activities. The point cursor is
 * derived from the point states (libs/sweep), so a lost allocation is cleaned up, replaced, and the
 * sweep resumes at the first unfinished point; completed points are never run again.
 */
import {
  ApplicationFailure,
  CancellationScope,
  condition,
  continueAsNew,
  executeChild,
  isCancellation,
  ParentClosePolicy,
  setCurrentDetails,
  upsertMemo,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import {
  applyCompleted,
  emptyLedger,
  ledgerPointEnded,
  ledgerStart,
  worstCaseGpuSeconds,
  confirmIdOf,
  failPoint,
  failedAllocationAttempts,
  finishPoint,
  initialProgress,
  nextPoint,
  nextPointOrSearch,
  pointCosts,
  pointWindow,
  requeuePoint,
  searchAttributeKeys,
  skipPoint,
  startPoint,
  summaryLine,
  unmeasuredPoints,
  type GpuLedger,
  type PointState,
  type PointSummary,
  type SweepPhase,
  type SweepProgress,
  type SweepResult,
} from '@infersweep/sweep';
import type { PlanInput } from '../activities/types';
import type { RecordHistoryResult } from '../activities/history';
import { confirmWorkflow } from './confirm';
import { Lease, RELEASE_FAILED, type LeaseHolder } from './lease';
import { planOf, type SweepVerbs } from './activities';
import type { SweepCarryOver, SweepRunInput } from './carry-over';
import { lossEnd, messageOf, type ClassifiedFailure } from './failures';
import { ReplicateRounds } from './replicates';
import { quarantineSuspects, recordFailedAttempt, recordInvalidPoint } from './attempt-recovery';

export type { SweepRunInput } from './carry-over';
export { RELEASE_FAILED } from './lease';

const now = () => new Date().toISOString();

export class SweepRun implements LeaseHolder {
  readonly state: SweepProgress;
  /** what the sweep holds on the cluster, with its verbs; continue-as-new carries its snapshot */
  readonly lease: Lease;
  private readonly plan: PlanInput;
  /** allocation attempts before the last operator retry do not count */
  private allocationBudgetBase = 0;
  private operatorRetry = false;
  /** the verdict of a completed sweep against the history (judge) */
  private regressions?: number;
  private unmeasured?: number;
  private confirmation?: SweepResult['confirmation'];
  private pointScope?: CancellationScope;
  /** the replicates after the first pass (./replicates.ts; no-ops without the config's block) */
  private readonly rounds: ReplicateRounds;
  /** the workflow's own scope: a cancelled sweep does not wait for an operator (the lease's releaseHeld) */
  private readonly root = CancellationScope.current();

  constructor(
    private readonly input: SweepRunInput,
    private readonly act: SweepVerbs,
  ) {
    const c = input.carried;
    this.state = c ? c.progress : initialProgress(input, now());
    this.rounds = new ReplicateRounds(this.state, input.replicates);
    this.state.ledger ??= { ...emptyLedger(), worstCaseGpuSeconds: planWorstCase(input) };
    this.lease = new Lease(this, input, act, c?.lease);
    this.allocationBudgetBase = c?.allocationBudgetBase ?? 0;
    this.plan = planOf(input);
  }

  get aborted(): boolean {
    return !!this.state.abortRequested;
  }

  /** The next point: the first pass (with the search's points), then the replicates. */
  next(): PointState | undefined {
    return nextPointOrSearch(this.state, this.input.search) ?? this.rounds.next();
  }

  /** A replicate never runs on an allocation its point already ran on: give that one back first. */
  async freshAllocationFor(pt: PointState): Promise<void> {
    const why = this.rounds.freshAllocationReason(pt, this.lease.held.allocation?.jobId);
    if (why) await this.lease.teardown('released', why);
  }

  /** The nodes the next allocation avoids (independent replicates); undefined: any. */
  avoidNodes(): string[] | undefined {
    return this.rounds.avoidNodes();
  }

  // ------------------------------------------------------------ messages (wired in ./sweep.ts)

  /** skipPoint: the point will not run. */
  skip({ concurrency, reason }: { concurrency: number; reason?: string }): SweepProgress {
    skipPoint(this.state, concurrency, reason ?? 'skipped by operator');
    this.publish();
    return this.state;
  }

  /** retryNow: the operator wait ends with a retry. */
  retryNow(): SweepProgress {
    this.operatorRetry = true;
    return this.state;
  }

  /** retryNow's validator: only a sweep waiting for an operator. */
  assertAwaitingOperator(): void {
    if (!this.state.awaitingOperator)
      throw new Error(`sweep is ${this.state.phase}, not waiting for an operator; nothing to retry`);
  }

  /** abort: the point or the setup under way is cancelled, cleanup runs, the sweep ends aborted. */
  abort(arg: { reason?: string } | undefined): SweepProgress {
    this.state.abortRequested = arg?.reason ?? 'aborted by operator';
    this.pointScope?.cancel();
    this.lease.cancelSetup();
    this.publish(undefined, `abort requested: ${this.state.abortRequested}`);
    return this.state;
  }

  /** The progress the query answers with, in the Web UI's current details too. */
  publish(phase?: SweepPhase, message?: string): void {
    const s = this.state;
    if (phase) s.phase = phase;
    if (message !== undefined) s.message = message;
    s.updatedAt = now();
    const pt = s.currentPoint === undefined ? '' : ` · point c=${s.currentPoint}`;
    setCurrentDetails(`**${s.phase}**${pt}\n\n${summaryLine(s)}${s.message ? `\n\n${s.message}` : ''}`);
  }

  setStatus(status: string): void {
    upsertSearchAttributes([{ key: searchAttributeKeys.status, value: status }]);
  }

  // ------------------------------------------------------------ the story's steps

  /** Points an earlier run already measured, the stored plan, the image (first run only). */
  async prepare(): Promise<void> {
    this.setStatus('running');
    this.publish('starting');
    if (this.input.carried) return;
    const { sweepId, planHash, plan, resultsDir, points } = this.input;
    applyCompleted(this.state, await this.act.prepareSweep({ sweepId, planHash, plan, resultsDir, points }));
    if (this.input.importImage && this.input.importImageOn !== 'head-node') {
      this.publish('importing-image');
      await this.act.importImage({ ...this.plan, sweepId });
    }
  }

  outOfAllocationAttempts(): boolean {
    return failedAllocationAttempts(this.state, this.allocationBudgetBase) >= this.input.maxAllocationAttempts;
  }

  /** Run one point on the ready server (cancellable by the abort update). */
  async measure(pt: PointState): Promise<void> {
    const a = this.lease.held.allocation!;
    startPoint(pt, a.jobId, now());
    this.state.currentPoint = pt.concurrency;
    this.publish('running-point');
    this.ledger((l) => ledgerStart(l, a.jobId, 'point', Date.now()));
    this.pointScope = new CancellationScope();
    const { sweepId, planHash, policy, pointBudgetSeconds, resultsDir } = this.input;
    const replicate = this.rounds.replicateOf(pt);
    const summary = await this.pointScope.run(() =>
      this.act.runPoint({
        ...this.plan,
        sweepId,
        planHash,
        deployment: this.lease.held.deployment!,
        concurrency: pt.concurrency,
        attempt: pt.attempts,
        allocationAttempt: this.state.allocation?.attempt ?? 0,
        policy,
        pointBudgetSeconds,
        resultsDir,
        serverUsed: this.lease.held.serverUsed,
        // a re-measure the search asked for: a fresh window in its own folder
        ...(pt.windows?.length ? { window: pointWindow(pt) } : {}),
        ...(replicate === undefined ? {} : { replicate }),
      }),
    );
    this.pointScope = undefined;
    finishPoint(pt, summary, now());
    this.ledger((l) =>
      ledgerPointEnded(l, a.jobId, pt.concurrency, Date.now(), { ok: true, ...phaseSeconds(summary) }),
    );
    // an invalid point whose reasons name a class (zero output tokens) records it like a failed attempt
    if (!summary.valid) recordInvalidPoint(pt, summary.reasons, a.jobId, now());
    this.state.currentPoint = undefined;
    this.lease.pointDone();
    const verdict = summary.valid ? 'valid' : `invalid: ${summary.reasons.join('; ')}`;
    this.publish(undefined, `c=${pt.concurrency} ${verdict}`);
  }

  /** After a failure in ensureServer/measure: 'stop' ends the loop (abort); a fatal failure rethrows. */
  async recover(pt: PointState, f: ClassifiedFailure, err: unknown): Promise<'next' | 'stop'> {
    this.pointScope = undefined;
    this.state.currentPoint = undefined;
    if (f.class === 'cancelled' && this.aborted) {
      if (pt.status === 'running') requeuePoint(pt, `aborted: ${this.state.abortRequested}`);
      return 'stop';
    }
    // cancelled, a wrong input, or a job it could not release (releaseHeld): the sweep ends
    if (f.class === 'cancelled' || f.class === 'input' || f.type === RELEASE_FAILED) throw err;
    const failed = this.classifyAttempt(pt, f);
    const noted = failed ? await quarantineSuspects(this.act, this.plan, this.input.sweepId, failed) : undefined;
    const action = failed?.decision.action;
    const label = failed ? ` [${failed.seen.class}${noted ? `; ${noted}` : ''}]` : '';
    // a class that fails the point at once (an OOM at this concurrency) spends its attempts now
    const maxAttempts = action === 'fail-point' && pt.status === 'running' ? pt.attempts : this.input.maxPointAttempts;
    if (this.serverLostUnderPoint(pt, f)) {
      // the server died under this point while its allocation lives (an OOM at high concurrency, an
      // NCCL timeout): a failed point attempt, with the server's last words; the allocation is kept,
      // unless the class re-places the point (its nodes are suspect)
      const logTail =
        typeof f.details?.logTail === 'string' && f.details.logTail
          ? `\n--- server log (tail):\n${f.details.logTail}`
          : '';
      failPoint(pt, `${f.message}${logTail}`, maxAttempts, now());
      this.publish('recovering', `c=${pt.concurrency} lost its server${label}: ${f.message}`);
      if (action === 're-place') await this.lease.teardown('server-lost', f.message);
      else await this.lease.stopServer('server-lost').catch(() => undefined);
    } else if (f.class === 'loss') {
      if (pt.status === 'running' && action === 'fail-point') failPoint(pt, f.message, maxAttempts, now());
      else if (pt.status === 'running') requeuePoint(pt, f.message);
      let end = lossEnd(f);
      // the time guard replacing an allocation that never ran a point is a failed attempt
      if (end === 'insufficient-time' && this.lease.held.pointsOnAllocation === 0) end = 'allocation-failed';
      this.publish('recovering', `${f.type}: ${f.message}${label}`);
      await this.lease.teardown(end, f.message);
    } else if (pt.status === 'running') {
      // the point itself failed after its activity retries: the server may be the cause
      failPoint(pt, f.message, maxAttempts, now());
      this.publish('recovering', `c=${pt.concurrency} failed${label}: ${f.message}`);
      if (action === 're-place') await this.lease.teardown('released', `re-placed: ${f.message}`);
      else await this.lease.stopServer('policy').catch(() => undefined);
    } else {
      // allocation/launch/readiness failed after retries: count the attempt, start over
      this.publish('recovering', `${f.message}${label}`);
      await this.lease.teardown(
        f.activity === 'allocate' || !this.lease.held.allocation ? 'allocation-failed' : 'launch-failed',
        f.message,
      );
      // the quarantine leaves too few nodes, or the class says the plan cannot run as it is
      if (f.details?.quarantineBlocks === true || action === 'wait-operator')
        await this.waitForOperator(
          f.details?.quarantineBlocks === true ? f.message : `${failed!.decision.why}: ${f.message}`,
        );
    }
    return 'next';
  }

  /**
   * The failed attempt classified, decided and recorded (./attempt-recovery.ts); none for the time
   * guard replacing an allocation, which is no failure. The point's time so far is a failed attempt.
   */
  private classifyAttempt(pt: PointState, f: ClassifiedFailure) {
    const jobId = this.lease.held.allocation?.jobId;
    if (pt.status === 'running' && jobId)
      this.ledger((l) => ledgerPointEnded(l, jobId, pt.concurrency, Date.now(), { ok: false }));
    if (f.class === 'loss' && lossEnd(f) === 'insufficient-time') return undefined;
    return recordFailedAttempt(this.state, pt, f, this.input.maxPointAttempts, now());
  }

  /** The GPU-hour ledger's step (libs/sweep/src/ledger.ts). */
  private ledger(step: (l: GpuLedger) => void): void {
    if (this.state.ledger) step(this.state.ledger);
  }

  /** A server lost during a point on a live allocation; a lost allocation is not. */
  private serverLostUnderPoint(pt: PointState, f: ClassifiedFailure): boolean {
    return f.class === 'loss' && f.details?.end === 'server-lost' && pt.status === 'running';
  }

  /**
   * Wait for the operator: retryNow (true), abort or no points left (false). `points`: the allocation
   * attempts are spent (no answer in time fails the sweep); `release`: a job could not be released
   * (a cancel of the workflow or no answer in time also ends the wait).
   */
  async waitForOperator(reason: string, on: 'points' | 'release' = 'points'): Promise<boolean> {
    const s = this.state;
    s.awaitingOperator = { reason, since: now() };
    const choices =
      on === 'points' ? 'resume (retryNow), skip points (skipPoint) or abort' : 'resume (retryNow) or abort';
    this.publish('awaiting-operator', `${reason} — ${choices}`);
    this.setStatus('awaiting-operator');
    this.operatorRetry = false;
    const timeout = this.input.operatorTimeout ?? '7 days';
    const over =
      on === 'points'
        ? () => nextPoint(s) === undefined && !this.rounds.pending()
        : () => this.root.consideredCancelled;
    const answered = await condition(() => this.operatorRetry || this.aborted || over(), timeout);
    s.awaitingOperator = undefined;
    if (!answered && on === 'points')
      throw ApplicationFailure.nonRetryable(`no operator answer within ${timeout}: ${reason}`, 'OperatorTimeout');
    if (this.operatorRetry && on === 'points') this.allocationBudgetBase = s.allocations.length;
    this.setStatus('running');
    return this.operatorRetry;
  }

  // ------------------------------------------------------------ history bound

  /** Past the history bound (or when the server suggests it): true once, between points. */
  historyFull(): boolean {
    const info = workflowInfo();
    return info.continueAsNewSuggested || info.historyLength >= (this.input.historyEventLimit ?? 10_000);
  }

  /** Continue as new with the whole state and the lease (allocation, server, image import) carried over. */
  async continueAsNew(): Promise<never> {
    const carried: SweepCarryOver = {
      progress: this.state,
      lease: this.lease.snapshot(),
      allocationBudgetBase: this.allocationBudgetBase,
      runs: (this.input.carried?.runs ?? 0) + 1,
    };
    return continueAsNew<(input: SweepRunInput) => Promise<SweepResult>>({ ...this.input, carried });
  }

  // ------------------------------------------------------------ the end

  /** Always: release what is held, publish the final status and summary. */
  async close(outcome: { phase?: SweepPhase; error?: unknown }): Promise<void> {
    if (outcome.error !== undefined) {
      this.state.phase = outcome.phase ?? 'failed';
      this.state.message = messageOf(outcome.error);
    } else if (outcome.phase) this.state.phase = outcome.phase;
    await this.lease.teardown('released', undefined);
    const final = this.state.phase === 'cleaning-up' ? 'failed' : this.state.phase;
    this.publish(final);
    if (final === 'completed') await this.judge();
    await CancellationScope.nonCancellable(async () => {
      this.setStatus(final);
      upsertMemo({
        summary: summaryLine(this.state),
        resultsDir: this.input.resultsDir,
        planHash: this.input.planHash,
      });
    });
  }

  /**
   * A completed sweep against the history of its series (../activities/history.ts): the verdict
   * `none` or N becomes the InfersweepRegression search attribute. A history that cannot be
   * recorded is reported in the sweep's message and never fails the sweep.
   */
  async judge(): Promise<void> {
    const confirm = await CancellationScope.nonCancellable(async () => {
      try {
        const { sweepId, resultsDir } = this.input;
        const h = await this.act.recordHistory({
          sweepId,
          resultsDir,
          failed: unmeasuredPoints(this.state),
          costs: pointCosts(this.state),
        });
        this.regressions = h.regressions;
        this.unmeasured = h.unmeasured;
        upsertSearchAttributes([{ key: searchAttributeKeys.regression, value: h.label }]);
        this.publish(undefined, `regressions: ${h.label} (history in ${h.store})`);
        return h.confirm;
      } catch (err) {
        this.publish(undefined, `history not recorded: ${messageOf(err)}`);
        return undefined;
      }
    });
    if (confirm) await this.confirm(confirm);
  }

  /**
   * A flagged regression: the paired A/B and bisection as a child workflow (./confirm.ts), then its
   * notification (a failed confirmation notifies the flag: fail closed). Cancelling the sweep cancels it.
   */
  async confirm(request: NonNullable<RecordHistoryResult['confirm']>): Promise<void> {
    const { sweepId, resultsDir, startupBudgetSeconds, pointBudgetSeconds, deploymentTag } = this.input;
    const confirmId = confirmIdOf(sweepId);
    this.publish(undefined, `confirming the regression by a paired A/B (${confirmId})`);
    let outcome: Parameters<SweepVerbs['notifyConfirmation']>[0]['result'];
    try {
      const r = await executeChild(confirmWorkflow, {
        workflowId: confirmId,
        args: [
          {
            ...request,
            confirmId,
            resultsRoot: resultsDir.replace(/\/+$/, '').replace(/\/[^/]*$/, ''),
            startupBudgetSeconds,
            pointBudgetSeconds,
            deploymentTag,
          },
        ],
        parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
      });
      outcome = r;
      this.confirmation = { confirmId, outcome: r.outcome, ...(r.culprit ? { culprit: r.culprit.image } : {}) };
      const culprit = r.culprit ? `; first bad image ${r.culprit.image}` : '';
      this.publish(undefined, `regression ${r.outcome} by the paired A/B${culprit}`);
    } catch (err) {
      if (isCancellation(err) && this.root.consideredCancelled) throw err;
      outcome = { failed: messageOf(err) };
      this.confirmation = { confirmId, outcome: 'failed', error: messageOf(err) };
      this.publish(undefined, `the paired A/B failed, the regression stands: ${messageOf(err)}`);
    }
    await CancellationScope.nonCancellable(() =>
      this.act.notifyConfirmation({ sweepId, resultsDir, result: outcome }).catch(() => undefined),
    );
  }

  result(): SweepResult {
    const s = this.state;
    return {
      sweepId: this.input.sweepId,
      status: s.phase === 'aborted' ? 'aborted' : 'completed',
      points: s.points,
      allocations: s.allocations,
      resultsDir: this.input.resultsDir,
      ...(this.regressions === undefined ? {} : { regressions: this.regressions }),
      ...(this.unmeasured ? { unmeasured: this.unmeasured } : {}),
      ...(this.confirmation ? { confirmation: this.confirmation } : {}),
      // what `status` and `report` show of a closed sweep with no worker to answer a query
      ...(s.search ? { search: s.search } : {}),
      ...(s.replicates ? { replicates: s.replicates } : {}),
      ...(s.message ? { message: s.message } : {}),
      ...(s.ledger ? { ledger: s.ledger } : {}),
    };
  }
}

/** The plan's worst case in GPU-seconds (libs/sweep/src/ledger.ts), for the ledger to be read beside. */
function planWorstCase(input: SweepRunInput): number {
  const g = input.plan.slurm.nodes * input.plan.slurm.gpusPerNode;
  const gpus = Number.isFinite(g) && g > 0 ? g : 0;
  const s = input.search;
  return worstCaseGpuSeconds({
    gpus,
    points: input.points.length,
    maxPointAttempts: input.maxPointAttempts,
    pointBudgetSeconds: input.pointBudgetSeconds,
    maxAllocationAttempts: input.maxAllocationAttempts,
    startupBudgetSeconds: input.startupBudgetSeconds,
    ...(s && s.maxAddedPoints !== undefined && s.pointGpuHours !== undefined
      ? { search: { maxAddedPoints: s.maxAddedPoints, pointGpuHours: s.pointGpuHours } }
      : {}),
  });
}

/** The drain and warm-up seconds a point's activity measured (the ledger splits the point's time by them). */
function phaseSeconds(s: PointSummary): { drainSeconds?: number; warmupSeconds?: number } {
  return {
    ...(s.phaseSeconds?.drain === undefined ? {} : { drainSeconds: s.phaseSeconds.drain }),
    ...(s.phaseSeconds?.warmup === undefined ? {} : { warmupSeconds: s.phaseSeconds.warmup }),
  };
}
