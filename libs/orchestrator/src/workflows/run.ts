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
  TemporalFailure,
  continueAsNew,
  isCancellation,
  setCurrentDetails,
  upsertSearchAttributes,
  upsertMemo,
  workflowInfo,
} from '@temporalio/workflow';
import {
  applyCompleted,
  clusterUnavailable,
  emptyLedger,
  ledgerPointEnded,
  ledgerStart,
  failedAllocationAttempts,
  finishPoint,
  initialProgress,
  nextPoint,
  nextPointOrSearch,
  pointWindow,
  searchAttributeKeys,
  skipPoint,
  startPoint,
  summaryLine,
  sweepResultOf,
  type GpuLedger,
  type PointState,
  type SweepPhase,
  type SweepFailureDetails,
  type SweepProgress,
  type SweepResult,
} from '@infersweep/sweep';
import { CLUSTER_UNAVAILABLE } from '@infersweep/core';
import type { PlanInput } from '../activities/types';
import { Judgement } from './judge';
import { OperatorWait, type OperatorHost } from './operator';
import { recoverAttempt, type RecoveringSweep } from './recover';
import { phaseSeconds, planWorstCase } from './ledger';
import { Lease, type LeaseHolder } from './lease';
import { planOf, type SweepVerbs } from './activities';
import type { SweepCarryOver, SweepRunInput } from './carry-over';
import { classify, messageOf, type ClassifiedFailure } from './failures';
import { ReplicateRounds } from './replicates';
import { recordInvalidPoint } from './attempt-recovery';

export type { SweepRunInput } from './carry-over';
export { RELEASE_FAILED } from './lease';

const now = () => new Date().toISOString();

export class SweepRun implements LeaseHolder, OperatorHost, RecoveringSweep {
  readonly state: SweepProgress;
  /** what the sweep holds on the cluster, with its verbs; continue-as-new carries its snapshot */
  readonly lease: Lease;
  readonly plan: PlanInput;
  /** the operator wait and the retryNow update (./operator.ts) */
  readonly operator: OperatorWait;
  /** the verdict of a completed sweep against the history, and its confirmation (./judge.ts) */
  private readonly judgement: Judgement;
  private pointScope?: CancellationScope;
  /** the replicates after the first pass (./replicates.ts; no-ops without the config's block) */
  private readonly rounds: ReplicateRounds;
  /** the workflow's own scope: a cancelled sweep does not wait for an operator (the lease's releaseHeld) */
  private readonly root = CancellationScope.current();

  constructor(
    readonly input: SweepRunInput,
    readonly act: SweepVerbs,
  ) {
    const c = input.carried;
    this.state = c ? c.progress : initialProgress(input, now());
    this.rounds = new ReplicateRounds(this.state, input.replicates);
    this.state.ledger ??= { ...emptyLedger(), worstCaseGpuSeconds: planWorstCase(input) };
    this.lease = new Lease(this, input, act, c?.lease);
    this.operator = new OperatorWait(this, input.operatorTimeout ?? '7 days', c?.allocationBudgetBase ?? 0);
    this.plan = planOf(input);
    const { state, root } = this;
    this.judgement = new Judgement({ input, state, act, root, publish: (p, m) => this.publish(p, m) });
  }

  get aborted(): boolean {
    return !!this.state.abortRequested;
  }

  noPointsLeft(): boolean {
    return nextPoint(this.state) === undefined && !this.rounds.pending();
  }

  cancelled(): boolean {
    return this.root.consideredCancelled;
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
    return failedAllocationAttempts(this.state, this.operator.budgetBase) >= this.input.maxAllocationAttempts;
  }

  /**
   * The allocation attempts are spent: wait for an operator. Unanswered, the sweep fails: with
   * ClusterUnavailableError when every attempt found the cluster unavailable (libs/core/src/errors.ts:
   * a snapshot delays the cell), else OperatorTimeout.
   */
  async allocationAttemptsSpent(): Promise<void> {
    const down = clusterUnavailable(this.state, this.operator.budgetBase);
    const failed = `${this.input.maxAllocationAttempts} allocation attempts failed`;
    const reason = down ? `${failed}: cluster ${this.input.cluster} unavailable` : failed;
    await this.operator.wait(reason, 'points', down ? CLUSTER_UNAVAILABLE : 'OperatorTimeout');
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
    // an invalid point a rule classifies (zero output tokens) is a failed attempt: recorded and booked as one
    const failed = !summary.valid && recordInvalidPoint(pt, summary.reasons, a.jobId, now());
    const booked = failed ? ({ ok: false } as const) : ({ ok: true, ...phaseSeconds(summary) } as const);
    this.ledger((l) => ledgerPointEnded(l, a.jobId, pt.concurrency, Date.now(), booked));
    this.state.currentPoint = undefined;
    this.lease.pointDone();
    const verdict = summary.valid ? 'valid' : `invalid: ${summary.reasons.join('; ')}`;
    this.publish(undefined, `c=${pt.concurrency} ${verdict}`);
  }

  /** After a failure in ensureServer/measure (./recover.ts): 'stop' ends the loop (abort); a fatal one rethrows. */
  recover(pt: PointState, f: ClassifiedFailure, err: unknown): Promise<'next' | 'stop'> {
    this.pointScope = undefined;
    return recoverAttempt(this, pt, f, err);
  }

  /** The GPU-hour ledger's step (libs/sweep/src/ledger.ts). */
  private ledger(step: (l: GpuLedger) => void): void {
    if (this.state.ledger) step(this.state.ledger);
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
      allocationBudgetBase: this.operator.budgetBase,
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
    if (final === 'completed') await this.judgement.judge();
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
   * What a failed sweep fails with: a Temporal failure keeps its type and message (its cause stays
   * under it) and carries the ledger in details[0] (libs/sweep SweepFailureDetails), so a parent
   * snapshot counts the GPU time it held. A cancellation, or an error of the workflow code itself
   * (a workflow task failure, retried), passes through.
   */
  failure(err: unknown): unknown {
    if (isCancellation(err) || !(err instanceof TemporalFailure)) return err;
    const f = classify(err);
    const details: SweepFailureDetails = this.state.ledger ? { ledger: this.state.ledger } : {};
    return ApplicationFailure.create({
      type: f.type ?? 'SweepFailed',
      message: f.message,
      nonRetryable: true,
      details: [details],
      cause: err,
    });
  }

  result(): SweepResult {
    const { sweepId, resultsDir } = this.input;
    return { ...sweepResultOf(this.state, { sweepId, resultsDir }), ...this.judgement.resultFields() };
  }
}
