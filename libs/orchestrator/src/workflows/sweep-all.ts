import {
  CancellationScope,
  ChildWorkflowFailure,
  ParentClosePolicy,
  executeChild,
  isCancellation,
  log,
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
import { historyActivities } from './activities';
import { messageOf } from './failures';
import { confirmRegression } from './judge';
import { sweepWorkflow } from './sweep';

/**
 * `--orientation all`: one child sweep per orientation, one after another by default or up to
 * `maxConcurrentSweeps` at once. Every orientation runs: one that fails does not stop the others,
 * and the result has each child's outcome. Cancelling the parent cancels the children (whose
 * cleanup runs) and ends the parent cancelled once every child has ended.
 */
export async function sweepAllWorkflow(input: SweepAllInput): Promise<ChildSweepOutcome[]> {
  const results: ChildSweepOutcome[] = new Array(input.sweeps.length);
  const inputs: SweepInput[] = new Array(input.sweeps.length);
  let cancelled: unknown;
  // schedules: one frozen input, a fresh sweep id and results folder per run (see SweepAllInput.perRun)
  // a schedule's run is a night: its sweeps store their points and the run judges them as one family
  const forRun = (s: SweepInput): SweepInput => {
    const night = input.schedule ? { night: { schedule: input.schedule, runId: workflowInfo().workflowId } } : {};
    if (!input.perRun) return { ...s, ...night };
    const sweepId = childSweepId(workflowInfo().workflowId, s.orientation);
    return { ...s, ...night, sweepId, resultsDir: ResultsLayout.of(input.perRun.resultsRoot, sweepId).resultsDir };
  };
  let next = 0;
  const lane = async () => {
    while (next < input.sweeps.length) {
      const i = next++;
      const sweep = forRun(input.sweeps[i]!);
      inputs[i] = sweep;
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
  const unjudged = input.schedule ? await judgeNight(results, inputs) : 0;
  // a scheduled run's verdict (the Web UI lists the runs): the findings of all its sweeps, failed ones included
  const judged = results.flatMap((r) => (r.result?.regressions === undefined ? [] : [r.result]));
  const failed = results.filter((r) => r.status === 'failed').length + unjudged;
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

/**
 * A scheduled run's end (docs/history.md "A scheduled night is one family"): its completed sweeps'
 * stored runs judged as one family, each sweep's result given its verdict, then each flagged one
 * confirmed by its paired A/B. Returns the completed sweeps left without a verdict (their points not
 * stored, or the night not judged): they count as failed, never as `none`.
 */
async function judgeNight(results: ChildSweepOutcome[], inputs: readonly SweepInput[]): Promise<number> {
  const done = results.flatMap((r, i) => (r.status === 'completed' && r.result ? [i] : []));
  if (done.length === 0) return 0;
  const act = historyActivities();
  const night = await CancellationScope.nonCancellable(() =>
    act.judgeNight({
      night: workflowInfo().workflowId,
      runs: done.map((i) => ({ sweepId: results[i]!.sweepId, resultsDir: results[i]!.resultsDir })),
    }),
  ).catch((err: unknown) => {
    log.warn(`the night was not judged: ${messageOf(err)}`);
    return undefined;
  });
  if (!night) return done.length;
  for (const v of night.runs) {
    const i = done.find((j) => results[j]!.sweepId === v.sweepId)!;
    const r = results[i]!;
    r.result = { ...r.result!, regressions: v.regressions, ...(v.unmeasured ? { unmeasured: v.unmeasured } : {}) };
    if (!v.confirm) continue;
    const confirmation = await confirmRegression(
      inputs[i]!,
      v.confirm,
      act.notifyConfirmation,
      (m) => log.info(`${v.sweepId}: ${m}`),
      () => CancellationScope.current().consideredCancelled,
    );
    r.result = { ...r.result, confirmation };
  }
  return night.missing.length;
}
