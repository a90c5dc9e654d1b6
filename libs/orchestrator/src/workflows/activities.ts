/**
 * The sweep's activities, one verb each, with explicit timeouts and retries. Retry decisions come
 * from the failures themselves (nonRetryable set by the activity interceptor from the error's
 * kind), so no list of error types is repeated here. A worker shutdown during a long activity spends
 * one attempt of its retry budget and no point attempt; when shutdowns alone have spent the budget,
 * the workflow schedules the activity again ({@link outlastingShutdowns}): a deploy never fails a point.
 */
import { ActivityCancellationType, ActivityFailure, ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type { SweepInput } from '@infersweep/sweep';
import type {
  AllocationActivities,
  PlanInput,
  PointActivities,
  QuarantineActivities,
  ResultsActivities,
  ServerActivities,
} from '../activities/types';
import type { HistoryActivities } from '../activities/history';

/**
 * Heartbeat timeouts, in seconds, of the activities that wait on the cluster: an attempt whose
 * heartbeats stop for this long has failed. The timing tests read them from here
 * (libs/testkit/src/sweep-harness.ts) and run longer than each.
 */
export const HEARTBEAT_TIMEOUT_SECONDS = { allocate: 20, waitReady: 30, runPoint: 20 } as const;

/** The history's activities (../activities/history.ts): a sweep's end, a night's end, a confirmation's notification. */
export const historyActivities = () =>
  proxyActivities<HistoryActivities>({
    startToCloseTimeout: '5 minutes',
    retry: { maximumAttempts: 3, initialInterval: '5 seconds', maximumInterval: '1 minute' },
  });

export function activitiesFor(
  input: Pick<SweepInput, 'startupBudgetSeconds' | 'pointBudgetSeconds'> & { grantWaitMinutes?: number },
) {
  const quick = {
    startToCloseTimeout: '2 minutes',
    retry: { maximumAttempts: 5, initialInterval: '1 second', maximumInterval: '10 seconds' },
  } as const;
  const cleanup = {
    startToCloseTimeout: '2 minutes',
    scheduleToCloseTimeout: '10 minutes',
    heartbeatTimeout: '1 minute',
    retry: { maximumAttempts: 10, initialInterval: '1 second', maximumInterval: '10 seconds' },
  } as const;
  const { prepareSweep } = proxyActivities<ResultsActivities>(quick);
  const { importImage } = proxyActivities<ServerActivities>({
    startToCloseTimeout: '2 hours',
    heartbeatTimeout: '1 minute',
    retry: { maximumAttempts: 3, initialInterval: '30 seconds', maximumInterval: '5 minutes' },
  });
  // A queue wait of hours is normal: the window covers the plan's grant wait (default 12 h); the
  // activity heartbeats every few seconds, so a cancel reaches it quickly, and the workflow waits for it
  // to withdraw the queued request (WAIT_CANCELLATION_COMPLETED) before it releases by name.
  const { allocate } = proxyActivities<AllocationActivities>({
    startToCloseTimeout: `${(input.grantWaitMinutes ?? 720) + 30} minutes`,
    heartbeatTimeout: `${HEARTBEAT_TIMEOUT_SECONDS.allocate} seconds`,
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    retry: { maximumAttempts: 5, initialInterval: '5 seconds', maximumInterval: '2 minutes' },
  });
  const { launchServer } = proxyActivities<ServerActivities>({ ...quick, heartbeatTimeout: '1 minute' });
  const { waitReady } = proxyActivities<ServerActivities>({
    startToCloseTimeout: `${Math.ceil(input.startupBudgetSeconds + 120)} seconds`,
    heartbeatTimeout: `${HEARTBEAT_TIMEOUT_SECONDS.waitReady} seconds`,
    retry: { maximumAttempts: 4, initialInterval: '5 seconds' },
  });
  const { runPoint } = proxyActivities<PointActivities>({
    startToCloseTimeout: `${Math.ceil(input.pointBudgetSeconds * 2 + 180)} seconds`,
    heartbeatTimeout: `${HEARTBEAT_TIMEOUT_SECONDS.runPoint} seconds`,
    retry: { maximumAttempts: 5, initialInterval: '2 seconds', maximumInterval: '1 minute' },
  });
  const { captureLogs, stopServer } = proxyActivities<ServerActivities>(cleanup);
  // no schedule-to-close: a worker outage during teardown only delays the release (it waits in the
  // task queue); the window covers a job's COMPLETING patience (../activities/allocation.ts)
  const { release } = proxyActivities<AllocationActivities>({
    startToCloseTimeout: '15 minutes',
    heartbeatTimeout: '1 minute',
    retry: cleanup.retry,
  });
  // the end of a completed sweep: its points into the history and its verdict (../activities/history.ts)
  const { recordHistory, storeHistory, notifyConfirmation } = historyActivities();
  // the worker's node quarantine (../activities/quarantine.ts): a failed attempt's suspects
  const { implicateNodes } = proxyActivities<QuarantineActivities>(quick);
  return {
    prepareSweep,
    importImage: outlastingShutdowns(importImage),
    allocate: outlastingShutdowns(allocate),
    launchServer: outlastingShutdowns(launchServer),
    waitReady: outlastingShutdowns(waitReady),
    runPoint: outlastingShutdowns(runPoint),
    captureLogs,
    stopServer,
    release,
    recordHistory,
    storeHistory,
    implicateNodes,
    notifyConfirmation,
  };
}

/** The failure type the activity interceptor gives an attempt that its worker's shutdown ended (../activities/interceptor.ts). */
const WORKER_SHUTDOWN = 'WorkerShutdown';

/** Did the activity's last attempt end because its worker shut down (a deploy, a detach)? */
export function endedByWorkerShutdown(err: unknown): boolean {
  return (
    err instanceof ActivityFailure && err.cause instanceof ApplicationFailure && err.cause.type === WORKER_SHUTDOWN
  );
}

/**
 * An activity whose retry budget only graceful worker stops spent is scheduled again: N deploys in a
 * row during one long activity (N past its maximumAttempts) keep the point and the allocation. Any
 * other last failure reaches the workflow as before.
 */
export function outlastingShutdowns<A extends unknown[], R>(
  call: (...args: A) => Promise<R>,
): (...args: A) => Promise<R> {
  return async (...args: A): Promise<R> => {
    for (;;) {
      try {
        return await call(...args);
      } catch (err) {
        if (!endedByWorkerShutdown(err)) throw err;
      }
    }
  };
}

export type SweepVerbs = ReturnType<typeof activitiesFor>;

/** The stored plan, by reference, that every activity reads (../activities/plans.ts). */
export function planOf(input: Pick<SweepInput, 'planHash' | 'resultsDir'>): PlanInput {
  return { planRef: { planHash: input.planHash, resultsDir: input.resultsDir } };
}
