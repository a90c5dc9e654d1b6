import { defineQuery, defineUpdate } from '@temporalio/workflow';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import type { SweepInput, SweepProgress } from './contract';
import { ABORT_UPDATE, PROGRESS_QUERY, RETRY_NOW_UPDATE, SEARCH_ATTRIBUTES, SKIP_POINT_UPDATE } from './contract';

/** Query: the whole sweep state (points, allocations, phase). Costs no history events. */
export const progressQuery = defineQuery<SweepProgress>(PROGRESS_QUERY);
/** Update: skip a pending or failed point. Returns the new state. */
export const skipPointUpdate = defineUpdate<SweepProgress, [{ concurrency: number; reason?: string }]>(
  SKIP_POINT_UPDATE,
);
/** Update: resume a sweep waiting for an operator (allocation attempts reset). */
export const retryNowUpdate = defineUpdate<SweepProgress, [{ reason?: string }]>(RETRY_NOW_UPDATE);
/** Update: graceful abort — cleanup runs, then the sweep ends as aborted. */
export const abortUpdate = defineUpdate<SweepProgress, [{ reason?: string }]>(ABORT_UPDATE);

/** Typed search-attribute keys (all Keyword), registered on the server by scripts/stack.sh. */
export const searchAttributeKeys = {
  orientation: defineSearchAttributeKey(SEARCH_ATTRIBUTES.orientation, SearchAttributeType.KEYWORD),
  model: defineSearchAttributeKey(SEARCH_ATTRIBUTES.model, SearchAttributeType.KEYWORD),
  cluster: defineSearchAttributeKey(SEARCH_ATTRIBUTES.cluster, SearchAttributeType.KEYWORD),
  config: defineSearchAttributeKey(SEARCH_ATTRIBUTES.config, SearchAttributeType.KEYWORD),
  status: defineSearchAttributeKey(SEARCH_ATTRIBUTES.status, SearchAttributeType.KEYWORD),
  regression: defineSearchAttributeKey(SEARCH_ATTRIBUTES.regression, SearchAttributeType.KEYWORD),
};

/** The search attributes a sweep starts with (the CLI's start and the parent workflow's children). */
export function sweepSearchAttributes(
  input: Pick<SweepInput, 'orientation' | 'model' | 'cluster' | 'configName'>,
  status = 'starting',
) {
  return [
    { key: searchAttributeKeys.orientation, value: input.orientation },
    { key: searchAttributeKeys.model, value: input.model },
    { key: searchAttributeKeys.cluster, value: input.cluster },
    { key: searchAttributeKeys.config, value: input.configName },
    { key: searchAttributeKeys.status, value: status },
  ];
}
