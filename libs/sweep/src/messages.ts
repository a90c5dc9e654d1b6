import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { SweepProgress } from './contract';
import { ABORT_UPDATE, PROGRESS_QUERY, RETRY_NOW_UPDATE, SKIP_POINT_UPDATE } from './contract';

/** Query: the whole sweep state (points, allocations, phase). Costs no history events. */
export const progressQuery = defineQuery<SweepProgress>(PROGRESS_QUERY);
/** Update: skip a pending or failed point. Returns the new state. */
export const skipPointUpdate = defineUpdate<SweepProgress, [{ concurrency: number; reason?: string }]>(SKIP_POINT_UPDATE);
/** Update: resume a sweep waiting for an operator (allocation attempts reset). */
export const retryNowUpdate = defineUpdate<SweepProgress, [{ reason?: string }?]>(RETRY_NOW_UPDATE);
/** Update: graceful abort — cleanup runs, then the sweep ends as aborted. */
export const abortUpdate = defineUpdate<SweepProgress, [{ reason?: string }?]>(ABORT_UPDATE);
