/**
 * The durable sweep: one orientation of a config on one cluster.
 *
 * Deterministic and short: all work happens in activities. The cursor is derived from the point
 * states (libs/sweep), so a lost allocation is cleaned up, replaced, and the sweep resumes at the
 * first unfinished point; completed points are never run again.
 */
import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  condition,
  isCancellation,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  upsertMemo,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import {
  LOSS_ERROR_TYPES,
  NON_RETRYABLE_ERROR_TYPES,
  abortUpdate,
  allocationJobName,
  applyCompleted,
  failPoint,
  failedAllocationAttempts,
  finishPoint,
  initialProgress,
  nextPoint,
  progressQuery,
  recordAllocationEnd,
  requeuePoint,
  retryNowUpdate,
  searchAttributeKeys,
  skipPoint,
  skipPointUpdate,
  startPoint,
  summaryLine,
  validateSkip,
  type AllocationEnd,
  type SweepInput,
  type SweepPhase,
  type SweepProgress,
  type SweepResult,
} from '@infersweep/sweep';
import type { Allocation, Deployment, SweepActivities } from '../activities/types';

const nonRetryableErrorTypes = [...NON_RETRYABLE_ERROR_TYPES, ...LOSS_ERROR_TYPES];

/** Build the activity proxies from the sweep's budgets (explicit timeouts and retries everywhere). */
function activitiesFor(input: SweepInput) {
  const quick = proxyActivities<SweepActivities>({
    startToCloseTimeout: '2 minutes',
    retry: { maximumAttempts: 5, initialInterval: '1 second', maximumInterval: '10 seconds', nonRetryableErrorTypes },
  });
  const cleanup = proxyActivities<SweepActivities>({
    startToCloseTimeout: '2 minutes',
    scheduleToCloseTimeout: '10 minutes',
    retry: { maximumAttempts: 10, initialInterval: '1 second', maximumInterval: '10 seconds' },
  });
  const image = proxyActivities<SweepActivities>({
    startToCloseTimeout: '2 hours',
    heartbeatTimeout: '1 minute',
    retry: { maximumAttempts: 3, initialInterval: '30 seconds', maximumInterval: '5 minutes', nonRetryableErrorTypes },
  });
  const allocation = proxyActivities<SweepActivities>({
    startToCloseTimeout: '30 minutes',
    heartbeatTimeout: '1 minute',
    retry: { maximumAttempts: 5, initialInterval: '5 seconds', maximumInterval: '2 minutes', nonRetryableErrorTypes },
  });
  const ready = proxyActivities<SweepActivities>({
    startToCloseTimeout: `${Math.ceil(input.startupBudgetSeconds + 120)} seconds`,
    heartbeatTimeout: '30 seconds',
    retry: { maximumAttempts: 2, initialInterval: '5 seconds', nonRetryableErrorTypes },
  });
  const point = proxyActivities<SweepActivities>({
    startToCloseTimeout: `${Math.ceil(input.pointBudgetSeconds * 2 + 180)} seconds`,
    heartbeatTimeout: '20 seconds',
    retry: { maximumAttempts: 3, initialInterval: '2 seconds', maximumInterval: '1 minute', nonRetryableErrorTypes },
  });
  return { quick, cleanup, image, allocation, ready, point };
}

function failureType(err: unknown): string | undefined {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  return cause instanceof ApplicationFailure ? (cause.type ?? undefined) : undefined;
}

function failureMessage(err: unknown): string {
  const cause = err instanceof ActivityFailure && err.cause ? err.cause : err;
  return cause instanceof Error ? cause.message : String(cause);
}

/** The Slurm state a loss carried (details[0].state), mapped to how the allocation ended. */
function lossEnd(err: unknown): AllocationEnd {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  const type = failureType(err);
  if (type === 'InsufficientTimeError') return 'insufficient-time';
  if (type === 'ServerLostError') return 'server-lost';
  const d = cause instanceof ApplicationFailure ? (cause.details?.[0] as { state?: string } | undefined) : undefined;
  const s = d?.state;
  return s === 'TIMEOUT' || s === 'NODE_FAIL' || s === 'CANCELLED' || s === 'PREEMPTED' || s === 'FAILED' || s === 'GONE' ? s : 'GONE';
}

export async function sweepWorkflow(input: SweepInput): Promise<SweepResult> {
  const acts = activitiesFor(input);
  const state: SweepProgress = initialProgress(input, new Date().toISOString());
  let operatorRetry = false;
  let allocationBudgetBase = 0; // allocation attempts before the last operator retry do not count
  let pointScope: CancellationScope | undefined;
  let alloc: Allocation | undefined;
  let deployment: Deployment | undefined;
  let serverIndex = 0;
  let serverUsed = false;
  let pointsOnAllocation = 0;

  const touch = (phase?: SweepPhase, message?: string) => {
    if (phase) state.phase = phase;
    if (message !== undefined) state.message = message;
    state.updatedAt = new Date().toISOString();
    const pt = state.currentPoint === undefined ? '' : ` · point c=${state.currentPoint}`;
    setCurrentDetails(`**${state.phase}**${pt}\n\n${summaryLine(state)}${state.message ? `\n\n${state.message}` : ''}`);
  };
  const setStatus = (status: string) => upsertSearchAttributes([{ key: searchAttributeKeys.status, value: status }]);

  setHandler(progressQuery, () => state);
  setHandler(
    skipPointUpdate,
    ({ concurrency, reason }) => {
      skipPoint(state, concurrency, reason ?? 'skipped by operator');
      touch(undefined);
      return state;
    },
    { validator: ({ concurrency }) => validateSkip(state, concurrency) },
  );
  setHandler(
    retryNowUpdate,
    () => {
      operatorRetry = true;
      return state;
    },
    {
      validator: (_arg) => {
        if (!state.awaitingOperator) throw new Error(`sweep is ${state.phase}, not waiting for an operator; nothing to retry`);
      },
    },
  );
  setHandler(abortUpdate, (arg) => {
    state.abortRequested = arg?.reason ?? 'aborted by operator';
    pointScope?.cancel();
    touch(undefined, `abort requested: ${state.abortRequested}`);
    return state;
  });

  /** Release the allocation (and stop/capture the server first); idempotent, never cancelled. */
  const teardown = async (ended: AllocationEnd, reason: string | undefined) => {
    await CancellationScope.nonCancellable(async () => {
      const dep = deployment;
      const a = alloc;
      deployment = undefined;
      alloc = undefined;
      serverUsed = false;
      if (dep) {
        await acts.cleanup
          .captureLogs({ plan: input.plan, deployment: dep, destDir: `${input.resultsDir}/logs/server-${dep.serverIndex}`, reason: reason ?? ended })
          .catch(() => undefined);
        await acts.cleanup.stopServer({ plan: input.plan, deployment: dep }).catch(() => undefined);
      }
      if (a) {
        const r = await acts.cleanup.release({ plan: input.plan, jobId: a.jobId, jobName: a.jobName });
        // Slurm's own terminal state (CANCELLED, NODE_FAIL, TIMEOUT, …) wins; a job we released
        // ourselves ended the way the caller says (released, insufficient-time, server-lost, …)
        recordAllocationEnd(state, a.jobName, r.ended !== 'released' ? r.ended : ended, reason ?? r.reason, new Date().toISOString());
      }
      state.allocation = undefined;
    });
  };

  const stopServer = async () => {
    const dep = deployment;
    deployment = undefined;
    serverUsed = false;
    if (!dep) return;
    await CancellationScope.nonCancellable(async () => {
      await acts.cleanup.captureLogs({ plan: input.plan, deployment: dep, destDir: `${input.resultsDir}/logs/server-${dep.serverIndex}`, reason: 'policy' });
      await acts.cleanup.stopServer({ plan: input.plan, deployment: dep });
    });
  };

  const ensureServer = async () => {
    if (!alloc) {
      const attempt = state.allocations.length + 1;
      const jobName = allocationJobName(input.sweepId, attempt);
      state.allocations.push({ attempt, jobName, nodes: [], requestedAt: new Date().toISOString() });
      touch('allocating', `allocation attempt ${attempt}`);
      try {
        alloc = await acts.allocation.allocate({ sweepId: input.sweepId, plan: input.plan, jobName, attempt });
      } catch (err) {
        if (isCancellation(err)) throw err;
        // never leak: whatever was granted under this name is released
        await CancellationScope.nonCancellable(() => acts.cleanup.release({ plan: input.plan, jobName }));
        recordAllocationEnd(state, jobName, 'allocation-failed', failureMessage(err), new Date().toISOString());
        throw err;
      }
      const rec = state.allocations[state.allocations.length - 1]!;
      rec.jobId = alloc.jobId;
      rec.nodes = alloc.nodes;
      rec.grantedAt = alloc.grantedAt;
      state.allocation = { jobId: alloc.jobId, nodes: alloc.nodes, attempt, grantedAt: alloc.grantedAt, timeLimitMinutes: alloc.timeLimitMinutes };
      pointsOnAllocation = 0;
    }
    if (!deployment) {
      serverIndex += 1;
      touch('launching', `server ${serverIndex} on job ${alloc.jobId} (${alloc.nodes.join(',')})`);
      deployment = await acts.quick.launchServer({ sweepId: input.sweepId, plan: input.plan, allocation: alloc, serverIndex, resultsDir: input.resultsDir });
      touch('waiting-ready');
      await acts.ready.waitReady({ plan: input.plan, deployment, startupBudgetSeconds: input.startupBudgetSeconds });
      serverUsed = false;
    }
  };

  const waitForOperator = async (reason: string) => {
    state.awaitingOperator = { reason, since: new Date().toISOString() };
    touch('awaiting-operator', `${reason} — resume (retryNow), skip points (skipPoint) or abort`);
    setStatus('awaiting-operator');
    operatorRetry = false;
    const answered = await condition(
      () => operatorRetry || !!state.abortRequested || nextPoint(state) === undefined,
      input.operatorTimeout ?? '7 days',
    );
    state.awaitingOperator = undefined;
    if (!answered) throw ApplicationFailure.nonRetryable(`no operator answer within ${input.operatorTimeout ?? '7 days'}: ${reason}`, 'OperatorTimeout');
    if (operatorRetry) allocationBudgetBase = state.allocations.length;
    setStatus('running');
  };

  try {
    setStatus('running');
    touch('starting');
    applyCompleted(
      state,
      await acts.quick.prepareSweep({ sweepId: input.sweepId, planHash: input.planHash, plan: input.plan, resultsDir: input.resultsDir, points: input.points }),
    );
    if (input.importImage) {
      touch('importing-image');
      await acts.image.importImage({ sweepId: input.sweepId, plan: input.plan });
    }

    while (!state.abortRequested) {
      const pt = nextPoint(state);
      if (!pt) break;
      if (failedAllocationAttempts(state, allocationBudgetBase) >= input.maxAllocationAttempts) {
        await waitForOperator(`${input.maxAllocationAttempts} allocation attempts failed`);
        continue;
      }
      try {
        await ensureServer();
        const a = alloc!;
        startPoint(pt, a.jobId, new Date().toISOString());
        state.currentPoint = pt.concurrency;
        touch('running-point');
        pointScope = new CancellationScope();
        const summary = await pointScope.run(() =>
          acts.point.runPoint({
            sweepId: input.sweepId,
            planHash: input.planHash,
            plan: input.plan,
            deployment: deployment!,
            concurrency: pt.concurrency,
            attempt: pt.attempts,
            allocationAttempt: state.allocation?.attempt ?? 0,
            policy: input.policy,
            pointBudgetSeconds: input.pointBudgetSeconds,
            resultsDir: input.resultsDir,
            serverUsed,
          }),
        );
        pointScope = undefined;
        finishPoint(pt, summary, new Date().toISOString());
        state.currentPoint = undefined;
        serverUsed = true;
        pointsOnAllocation += 1;
        touch(undefined, `c=${pt.concurrency} ${summary.valid ? 'valid' : `invalid: ${summary.reasons.join('; ')}`}`);
        if (input.policy === 'server-per-point') await stopServer();
        if (input.policy === 'allocation-per-point') await teardown('released', 'policy: fresh allocation per point');
      } catch (err) {
        pointScope = undefined;
        state.currentPoint = undefined;
        if (isCancellation(err) && state.abortRequested) {
          if (pt.status === 'running') requeuePoint(pt, `aborted: ${state.abortRequested}`);
          break;
        }
        if (isCancellation(err)) throw err;
        const type = failureType(err);
        const message = failureMessage(err);
        if (type && (LOSS_ERROR_TYPES as readonly string[]).includes(type)) {
          if (pt.status === 'running') requeuePoint(pt, message);
          let end = lossEnd(err);
          // the time guard replacing an allocation that never ran a point is a failed attempt
          if (end === 'insufficient-time' && pointsOnAllocation === 0) end = 'allocation-failed';
          touch('recovering', `${type}: ${message}`);
          await teardown(end, message);
          continue;
        }
        if (type && (NON_RETRYABLE_ERROR_TYPES as readonly string[]).includes(type)) throw err;
        if (pt.status === 'running') {
          // the point itself failed after its activity retries: the server may be the cause
          failPoint(pt, message, input.maxPointAttempts, new Date().toISOString());
          touch('recovering', `c=${pt.concurrency} failed: ${message}`);
          await stopServer().catch(() => undefined);
        } else {
          // allocation/launch/readiness failed after retries: count the attempt, start over
          touch('recovering', message);
          await teardown(type === 'AllocationError' || !alloc ? 'allocation-failed' : 'launch-failed', message);
        }
      }
    }
    state.phase = state.abortRequested ? 'aborted' : 'completed';
  } catch (err) {
    state.phase = isCancellation(err) ? 'cancelled' : 'failed';
    state.message = failureMessage(err);
    throw err;
  } finally {
    await teardown('released', undefined);
    const final = state.phase === 'cleaning-up' ? 'failed' : state.phase;
    touch(final);
    await CancellationScope.nonCancellable(async () => {
      setStatus(final);
      upsertMemo({ summary: summaryLine(state), resultsDir: input.resultsDir, planHash: input.planHash });
    });
  }
  return {
    sweepId: input.sweepId,
    status: state.phase === 'aborted' ? 'aborted' : 'completed',
    points: state.points,
    allocations: state.allocations,
    resultsDir: input.resultsDir,
  };
}
