/**
 * The sweep's activities, one verb each, with explicit timeouts and retries. Retry decisions come
 * from the failures themselves (nonRetryable set by the activity interceptor from the error's
 * kind), so no list of error types is repeated here. A worker shutdown during a long activity spends
 * one attempt of its retry budget (and no point attempt): the long activities allow a few.
 */
import { ActivityCancellationType, proxyActivities } from '@temporalio/workflow';
import type { SweepInput } from '@infersweep/sweep';
import type { AllocationActivities, PointActivities, ResultsActivities, ServerActivities } from '../activities/types';

export function activitiesFor(input: Pick<SweepInput, 'startupBudgetSeconds' | 'pointBudgetSeconds'> & { grantWaitMinutes?: number }) {
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
    heartbeatTimeout: '20 seconds',
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    retry: { maximumAttempts: 5, initialInterval: '5 seconds', maximumInterval: '2 minutes' },
  });
  const { launchServer } = proxyActivities<ServerActivities>({ ...quick, heartbeatTimeout: '1 minute' });
  const { waitReady } = proxyActivities<ServerActivities>({
    startToCloseTimeout: `${Math.ceil(input.startupBudgetSeconds + 120)} seconds`,
    heartbeatTimeout: '30 seconds',
    retry: { maximumAttempts: 4, initialInterval: '5 seconds' },
  });
  const { runPoint } = proxyActivities<PointActivities>({
    startToCloseTimeout: `${Math.ceil(input.pointBudgetSeconds * 2 + 180)} seconds`,
    heartbeatTimeout: '20 seconds',
    retry: { maximumAttempts: 5, initialInterval: '2 seconds', maximumInterval: '1 minute' },
  });
  const { captureLogs, stopServer } = proxyActivities<ServerActivities>(cleanup);
  const { release } = proxyActivities<AllocationActivities>(cleanup);
  return { prepareSweep, importImage, allocate, launchServer, waitReady, runPoint, captureLogs, stopServer, release };
}

export type SweepVerbs = ReturnType<typeof activitiesFor>;
