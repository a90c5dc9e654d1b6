/**
 * SweepRun: the state of one sweep and the operations its story is told in (./sweep.ts). Workflow
 * code: deterministic, all work in activities. The point cursor is derived from the point states
 * (libs/sweep), so a lost allocation is cleaned up, replaced, and the sweep resumes at the first
 * unfinished point; completed points are never run again.
 */
import {
  ApplicationFailure,
  CancellationScope,
  condition,
  continueAsNew,
  isCancellation,
  setCurrentDetails,
  setHandler,
  upsertMemo,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import {
  abortUpdate,
  applyCompleted,
  failPoint,
  failedAllocationAttempts,
  finishPoint,
  initialProgress,
  nextPoint,
  nextPointOrSearch,
  progressQuery,
  recordAllocationEnd,
  requeuePoint,
  retryNowUpdate,
  searchAttributeKeys,
  skipPoint,
  skipPointUpdate,
  startPoint,
  summaryLine,
  unmeasuredPoints,
  validateSkip,
  type AllocationEnd,
  type PointState,
  type SweepPhase,
  type SweepProgress,
  type SweepResult,
} from '@infersweep/sweep';
import { allocationJobName, ResultsLayout } from '@infersweep/core';
import type { Deployment, PlanInput, ReleaseResult } from '../activities/types';
import { Lease } from './lease';
import type { SweepVerbs } from './activities';
import type { SweepCarryOver, SweepRunInput } from './carry-over';
import { lossEnd, messageOf, type ClassifiedFailure } from './failures';

export type { SweepRunInput } from './carry-over';

/** The failure type a sweep ends with when it could not release a job it holds (never retried). */
export const RELEASE_FAILED = 'ReleaseFailed';

const now = () => new Date().toISOString();

export class SweepRun {
  readonly state: SweepProgress;
  private readonly layout: ResultsLayout;
  private readonly plan: PlanInput;
  /** what the sweep holds on the cluster; continue-as-new carries its snapshot */
  private readonly lease: Lease;
  /** allocation attempts before the last operator retry do not count */
  private allocationBudgetBase = 0;
  private operatorRetry = false;
  /** the verdict of a completed sweep against the history (judge) */
  private regressions?: number;
  private unmeasured?: number;
  private pointScope?: CancellationScope;
  /** allocation, image import, launch and readiness: cancelled by abort too */
  private setupScope?: CancellationScope;
  /** the workflow's own scope: a cancelled sweep does not wait for an operator (releaseHeld) */
  private readonly root = CancellationScope.current();

  constructor(
    private readonly input: SweepRunInput,
    private readonly act: SweepVerbs,
  ) {
    const c = input.carried;
    this.state = c ? c.progress : initialProgress(input, now());
    this.lease = new Lease(c?.lease);
    this.allocationBudgetBase = c?.allocationBudgetBase ?? 0;
    this.layout = new ResultsLayout(input.resultsDir);
    this.plan = { planRef: { planHash: input.planHash, resultsDir: input.resultsDir } };
  }

  get aborted(): boolean {
    return !!this.state.abortRequested;
  }

  next(): PointState | undefined {
    return nextPointOrSearch(this.state, this.input.search);
  }

  // ------------------------------------------------------------ messages

  listen(): void {
    setHandler(progressQuery, () => this.state);
    setHandler(
      skipPointUpdate,
      ({ concurrency, reason }) => {
        skipPoint(this.state, concurrency, reason ?? 'skipped by operator');
        this.touch();
        return this.state;
      },
      { validator: ({ concurrency }) => validateSkip(this.state, concurrency) },
    );
    setHandler(
      retryNowUpdate,
      () => {
        this.operatorRetry = true;
        return this.state;
      },
      {
        validator: (_arg) => {
          if (!this.state.awaitingOperator)
            throw new Error(`sweep is ${this.state.phase}, not waiting for an operator; nothing to retry`);
        },
      },
    );
    setHandler(abortUpdate, (arg) => {
      this.state.abortRequested = arg?.reason ?? 'aborted by operator';
      this.pointScope?.cancel();
      this.setupScope?.cancel();
      this.touch(undefined, `abort requested: ${this.state.abortRequested}`);
      return this.state;
    });
  }

  touch(phase?: SweepPhase, message?: string): void {
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
    this.touch('starting');
    if (this.input.carried) return;
    const { sweepId, planHash, plan, resultsDir, points } = this.input;
    applyCompleted(this.state, await this.act.prepareSweep({ sweepId, planHash, plan, resultsDir, points }));
    if (this.input.importImage && this.input.importImageOn !== 'head-node') {
      this.touch('importing-image');
      await this.act.importImage({ ...this.plan, sweepId });
    }
  }

  outOfAllocationAttempts(): boolean {
    return failedAllocationAttempts(this.state, this.allocationBudgetBase) >= this.input.maxAllocationAttempts;
  }

  /** An allocation (a new attempt if there is none) and a ready server on it (cancellable by the abort update). */
  async ensureServer(): Promise<void> {
    this.setupScope = new CancellationScope();
    try {
      await this.setupScope.run(() => this.setUp());
    } finally {
      this.setupScope = undefined;
    }
  }

  private async setUp(): Promise<void> {
    if (!this.lease.allocation) await this.allocate();
    const alloc = this.lease.allocation!;
    if (this.lease.deployment) return;
    if (this.input.importImage && this.input.importImageOn === 'head-node' && this.lease.needsImport(alloc.jobId)) {
      // InferenceX's way: on the allocation's head compute node (one import per squash file, under a lock)
      this.touch('importing-image', `on ${alloc.headNode} of job ${alloc.jobId}`);
      await this.act.importImage({ ...this.plan, sweepId: this.input.sweepId, allocation: alloc });
      this.lease.importedOnJob = alloc.jobId;
    }
    const serverIndex = this.lease.nextServer();
    this.touch('launching', `server ${serverIndex} on job ${alloc.jobId} (${alloc.nodes.join(',')})`);
    const deployment = await this.act.launchServer({
      ...this.plan,
      sweepId: this.input.sweepId,
      allocation: alloc,
      serverIndex,
      resultsDir: this.input.resultsDir,
    });
    this.lease.deployment = deployment;
    this.touch('waiting-ready');
    await this.act.waitReady({ ...this.plan, deployment, startupBudgetSeconds: this.input.startupBudgetSeconds });
    this.lease.ready(deployment);
  }

  private async allocate(): Promise<void> {
    const attempt = this.state.allocations.length + 1;
    const jobName = allocationJobName(this.input.sweepId, attempt, this.input.deploymentTag);
    this.state.allocations.push({ attempt, jobName, nodes: [], requestedAt: now() });
    this.touch('allocating', `allocation attempt ${attempt}`);
    try {
      this.lease.granted(await this.act.allocate({ ...this.plan, sweepId: this.input.sweepId, jobName, attempt }));
    } catch (err) {
      // the attempt counts before anything else can fail (an unreachable cluster reaches the operator wait)
      const why = isCancellation(err) && this.aborted ? `aborted: ${this.state.abortRequested}` : messageOf(err);
      recordAllocationEnd(this.state, jobName, isCancellation(err) ? 'released' : 'allocation-failed', why, now());
      // never leak, cancelled or not: whatever was queued or granted under this name is released (the
      // allocate activity withdrew its request first: it is waited for, WAIT_CANCELLATION_COMPLETED);
      // a release that keeps failing waits for the operator like any other (releaseHeld)
      await CancellationScope.nonCancellable(() => this.releaseHeld({ jobName }));
      throw err;
    }
    const a = this.lease.allocation!;
    const rec = this.state.allocations[this.state.allocations.length - 1]!;
    Object.assign(rec, { jobId: a.jobId, nodes: a.nodes, grantedAt: a.grantedAt });
    this.state.allocation = {
      jobId: a.jobId,
      nodes: a.nodes,
      attempt,
      grantedAt: a.grantedAt,
      timeLimitMinutes: a.timeLimitMinutes,
    };
  }

  /** Run one point on the ready server (cancellable by the abort update). */
  async measure(pt: PointState): Promise<void> {
    const a = this.lease.allocation!;
    startPoint(pt, a.jobId, now());
    this.state.currentPoint = pt.concurrency;
    this.touch('running-point');
    this.pointScope = new CancellationScope();
    const { sweepId, planHash, policy, pointBudgetSeconds, resultsDir } = this.input;
    const summary = await this.pointScope.run(() =>
      this.act.runPoint({
        ...this.plan,
        sweepId,
        planHash,
        deployment: this.lease.deployment!,
        concurrency: pt.concurrency,
        attempt: pt.attempts,
        allocationAttempt: this.state.allocation?.attempt ?? 0,
        policy,
        pointBudgetSeconds,
        resultsDir,
        serverUsed: this.lease.serverUsed,
      }),
    );
    this.pointScope = undefined;
    finishPoint(pt, summary, now());
    this.state.currentPoint = undefined;
    this.lease.pointDone();
    this.touch(undefined, `c=${pt.concurrency} ${summary.valid ? 'valid' : `invalid: ${summary.reasons.join('; ')}`}`);
  }

  /** The deployment policy after a point: keep the server, restart it, or release the allocation. */
  async applyPolicy(): Promise<void> {
    if (this.input.policy === 'server-per-point') await this.stopServer('policy');
    if (this.input.policy === 'allocation-per-point')
      await this.teardown('released', 'policy: fresh allocation per point');
    else if (
      this.input.pointsPerAllocation !== undefined &&
      this.lease.allocation &&
      this.lease.pointsOnAllocation >= this.input.pointsPerAllocation
    ) {
      await this.teardown('released', `policy: ${this.input.pointsPerAllocation} point(s) per allocation`);
    }
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
    if (this.serverLostUnderPoint(pt, f)) {
      // the server died under this point while its allocation lives (an OOM at high concurrency, an
      // NCCL timeout): a failed point attempt, with the server's last words; the allocation is kept
      const logTail =
        typeof f.details?.logTail === 'string' && f.details.logTail
          ? `\n--- server log (tail):\n${f.details.logTail}`
          : '';
      failPoint(pt, `${f.message}${logTail}`, this.input.maxPointAttempts, now());
      this.touch('recovering', `c=${pt.concurrency} lost its server: ${f.message}`);
      await this.stopServer('server-lost').catch(() => undefined);
    } else if (f.class === 'loss') {
      if (pt.status === 'running') requeuePoint(pt, f.message);
      let end = lossEnd(f);
      // the time guard replacing an allocation that never ran a point is a failed attempt
      if (end === 'insufficient-time' && this.lease.pointsOnAllocation === 0) end = 'allocation-failed';
      this.touch('recovering', `${f.type}: ${f.message}`);
      await this.teardown(end, f.message);
    } else if (pt.status === 'running') {
      // the point itself failed after its activity retries: the server may be the cause
      failPoint(pt, f.message, this.input.maxPointAttempts, now());
      this.touch('recovering', `c=${pt.concurrency} failed: ${f.message}`);
      await this.stopServer('policy').catch(() => undefined);
    } else {
      // allocation/launch/readiness failed after retries: count the attempt, start over
      this.touch('recovering', f.message);
      await this.teardown(
        f.activity === 'allocate' || !this.lease.allocation ? 'allocation-failed' : 'launch-failed',
        f.message,
      );
    }
    return 'next';
  }

  /** A server lost during a point on a live allocation; a lost allocation is not. */
  private serverLostUnderPoint(pt: PointState, f: ClassifiedFailure): boolean {
    return f.class === 'loss' && f.details?.end === 'server-lost' && pt.status === 'running';
  }

  private async stopServer(reason: string): Promise<void> {
    const dep = this.lease.dropServer();
    if (!dep) return;
    await CancellationScope.nonCancellable(async () => {
      await this.captureLogs(dep, reason);
      await this.act.stopServer({ ...this.plan, deployment: dep });
    });
  }

  /**
   * Copy a server's logs before it stops. A failed capture is a missing log, never a reason to
   * release a healthy allocation: it is noted on the allocation's record and in the progress message.
   */
  private async captureLogs(dep: Deployment, reason: string): Promise<void> {
    try {
      await this.act.captureLogs({
        ...this.plan,
        deployment: dep,
        destDir: this.layout.serverLogsDir(dep.serverIndex),
        reason,
      });
    } catch (err) {
      this.warn(
        dep.jobId,
        `log capture of server ${dep.serverIndex} on job ${dep.jobId} failed (its logs are missing): ${messageOf(err)}`,
      );
    }
  }

  /** A warning on an allocation's record and in the progress message. */
  private warn(jobId: string, warning: string): void {
    const rec = this.state.allocations.find((a) => a.jobId === jobId);
    if (rec) rec.warnings = [...(rec.warnings ?? []), warning];
    this.touch(undefined, warning);
  }

  /** Release the allocation (and stop/capture the server first); idempotent, never cancelled. */
  async teardown(ended: AllocationEnd, reason: string | undefined): Promise<void> {
    await CancellationScope.nonCancellable(async () => {
      const a = this.lease.allocation;
      const dep = this.lease.dropServer();
      if (dep) {
        await this.captureLogs(dep, reason ?? ended);
        await this.act.stopServer({ ...this.plan, deployment: dep }).catch(() => undefined);
      }
      if (a) {
        const r = await this.releaseHeld(a);
        // Slurm's own terminal state (CANCELLED, NODE_FAIL, TIMEOUT, …) wins; a job we released
        // ourselves ended the way the caller says (released, insufficient-time, server-lost, …)
        recordAllocationEnd(this.state, a.jobName, r.ended !== 'released' ? r.ended : ended, reason ?? r.reason, now());
        if (r.state === 'COMPLETING' && r.reason) this.warn(a.jobId, r.reason);
        // forgotten only now that its release succeeded (a failed release keeps it, see releaseHeld)
        this.lease.allocation = undefined;
        this.state.allocation = undefined;
      }
    });
  }

  /**
   * Release a job the sweep holds; it is never forgotten. A release that keeps failing (its activity
   * out of retries: login node unreachable, scancel failing) waits for the operator, the job still
   * recorded, and retryNow tries again. An abort, a cancel of the workflow or no answer in time gets
   * one last try; if that fails too, the allocation ends `release-failed` with the job id in its
   * reason and the sweep fails with that message (RELEASE_FAILED), never silently.
   */
  private async releaseHeld(a: { jobId?: string; jobName: string }): Promise<ReleaseResult> {
    const release = () => this.act.release({ ...this.plan, jobId: a.jobId, jobName: a.jobName });
    // a request whose job id was never seen (a failed allocate) is released by name
    const clear = a.jobId ? `scancel ${a.jobId}` : `scancel --me --name=${a.jobName}`;
    const job = a.jobId ? `job ${a.jobId} (${a.jobName})` : `the jobs named ${a.jobName}`;
    for (;;) {
      let failed: string;
      try {
        return await release();
      } catch (err) {
        failed = `release of ${job} failed: ${messageOf(err)}`;
      }
      const retry = await this.waitForOperator(
        `${failed}; clear it by hand: ${clear}, then infersweep resume ${this.input.sweepId}`,
        'release',
      );
      if (retry) continue;
      try {
        return await release();
      } catch (err) {
        const reason = `${failed}; the last try failed too: ${messageOf(err)}. ${job.charAt(0).toUpperCase()}${job.slice(1)} may still hold its nodes: ${clear}`;
        recordAllocationEnd(this.state, a.jobName, 'release-failed', reason, now());
        // state.allocation keeps showing the job; this run stops trying (close() has nothing left to release)
        this.lease.allocation = undefined;
        throw ApplicationFailure.nonRetryable(reason, RELEASE_FAILED, {
          kind: 'fatal',
          input: false,
          jobId: a.jobId,
          jobName: a.jobName,
        });
      }
    }
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
    this.touch('awaiting-operator', `${reason} — ${choices}`);
    this.setStatus('awaiting-operator');
    this.operatorRetry = false;
    const timeout = this.input.operatorTimeout ?? '7 days';
    const over = on === 'points' ? () => nextPoint(s) === undefined : () => this.root.consideredCancelled;
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
    await this.teardown('released', undefined);
    const final = this.state.phase === 'cleaning-up' ? 'failed' : this.state.phase;
    this.touch(final);
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
    await CancellationScope.nonCancellable(async () => {
      try {
        const { sweepId, resultsDir } = this.input;
        const h = await this.act.recordHistory({ sweepId, resultsDir, failed: unmeasuredPoints(this.state) });
        this.regressions = h.regressions;
        this.unmeasured = h.unmeasured;
        upsertSearchAttributes([{ key: searchAttributeKeys.regression, value: h.label }]);
        this.touch(undefined, `regressions: ${h.label} (history in ${h.store})`);
      } catch (err) {
        this.touch(undefined, `history not recorded: ${messageOf(err)}`);
      }
    });
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
      // what `status` and `report` show of a closed sweep with no worker to answer a query
      ...(s.search ? { search: s.search } : {}),
      ...(s.message ? { message: s.message } : {}),
    };
  }
}
