import {
  CancellationScope,
  ChildWorkflowFailure,
  ParentClosePolicy,
  executeChild,
  isCancellation,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import {
  searchAttributeKeys,
  sweepSearchAttributes,
  type ChildSweepOutcome,
  type SweepAllInput,
  type SweepInput,
  type SweepResult,
  verdictLabel,
} from '@infersweep/sweep';
import { childSweepId, ResultsLayout } from '@infersweep/core';
import { messageOf } from './failures';
import { sweepWorkflow } from './sweep';

/**
 * `--orientation all`: one child sweep per orientation, one after another by default or up to
 * `maxConcurrentSweeps` at once. Every orientation runs: one that fails does not stop the others,
 * and the result has each child's outcome. Cancelling the parent cancels the children (whose
 * cleanup runs) and ends the parent cancelled once every child has ended.
 */
export async function sweepAllWorkflow(input: SweepAllInput): Promise<ChildSweepOutcome[]> {
  const results: ChildSweepOutcome[] = new Array(input.sweeps.length);
  let cancelled: unknown;
  // schedules: one frozen input, a fresh sweep id and results folder per run (see SweepAllInput.perRun)
  const forRun = (s: SweepInput): SweepInput => {
    if (!input.perRun) return s;
    const sweepId = childSweepId(workflowInfo().workflowId, s.orientation);
    return { ...s, sweepId, resultsDir: ResultsLayout.of(input.perRun.resultsRoot, sweepId).resultsDir };
  };
  let next = 0;
  const lane = async () => {
    while (next < input.sweeps.length) {
      const i = next++;
      const sweep = forRun(input.sweeps[i]!);
      const base = { orientation: sweep.orientation, sweepId: sweep.sweepId, resultsDir: sweep.resultsDir };
      if (cancelled) {
        results[i] = { ...base, status: 'cancelled', error: 'parent cancelled before this orientation started' };
        continue;
      }
      try {
        const result = await executeChild(sweepWorkflow, {
          workflowId: sweep.sweepId,
          args: [sweep],
          parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
          // children are sweeps in their own right: the Web UI filters them by these
          typedSearchAttributes: sweepSearchAttributes(sweep),
        });
        results[i] = { ...base, status: result.status, result };
      } catch (err) {
        // the parent itself cancelled (not a child cancelled on its own): end cancelled once all have ended
        if (isCancellation(err) && CancellationScope.current().consideredCancelled) cancelled ??= err;
        // the child's own failure (an activity's failure unwrapped: not "Activity task failed")
        const cause = err instanceof ChildWorkflowFailure && err.cause ? err.cause : err;
        results[i] = { ...base, status: isCancellation(err) ? 'cancelled' : 'failed', error: messageOf(cause) };
      }
    }
  };
  const lanes = Math.max(1, Math.min(input.maxConcurrentSweeps, input.sweeps.length));
  await Promise.all(Array.from({ length: lanes }, lane));
  if (cancelled) throw cancelled;
  // a scheduled run's verdict (the Web UI lists the runs): the findings of all its sweeps, failed ones included
  const judged = results.flatMap((r) => (r.result?.regressions === undefined ? [] : [r.result]));
  const failed = results.filter((r) => r.status === 'failed').length;
  if (judged.length > 0 || failed > 0) {
    const sum = (f: (r: SweepResult) => number | undefined) => judged.reduce((a, r) => a + (f(r) ?? 0), 0);
    const value = verdictLabel({
      regressions: sum((r) => r.regressions),
      unmeasured: sum((r) => r.unmeasured),
      failed,
    });
    upsertSearchAttributes([{ key: searchAttributeKeys.regression, value }]);
  }
  return results;
}
