/**
 * The activities of one worker, built once from its deps and grouped by concern: results store
 * (./results-store.ts), allocation (./allocation.ts), server (./server.ts), point (./point.ts),
 * history (./history.ts), the confirmation's arms (./confirm.ts).
 * Errors become Temporal failures in one place, the worker's activity interceptor (./interceptor.ts),
 * which also keeps every activity alive by timer (./liveness.ts).
 */
import { ActivityContext, defaultDeps, type ActivityDeps } from './context';
import { allocationActivities } from './allocation';
import { pointActivities } from './point';
import { resultsActivities } from './results-store';
import { serverActivities } from './server';
import { historyActivities } from './history';
import { quarantineActivities } from './quarantine';
import { confirmActivities } from './confirm';
import type { SweepActivities } from './types';

export type { ActivityDeps } from './context';
export { sweepActivityInterceptors } from './interceptor';
export { InsufficientTimeError, ServerLostError } from './errors';

export function createActivities(overrides: Partial<ActivityDeps> = {}): SweepActivities {
  const ctx = new ActivityContext(defaultDeps(overrides));
  return {
    ...resultsActivities(ctx),
    ...allocationActivities(ctx),
    ...serverActivities(ctx),
    ...pointActivities(ctx),
    ...historyActivities(),
    ...quarantineActivities(ctx),
    ...confirmActivities(ctx),
  };
}
