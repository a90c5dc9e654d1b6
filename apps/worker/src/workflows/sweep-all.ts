import { ParentClosePolicy, executeChild, workflowInfo } from '@temporalio/workflow';
import { sweepSearchAttributes, type SweepAllInput, type SweepInput, type SweepResult } from '@infersweep/sweep';
import { sweepWorkflow } from './sweep';

/**
 * `--orientation all`: one child sweep per orientation, one after another by default or up to
 * `maxConcurrentSweeps` at once. Cancelling the parent cancels the children, whose cleanup runs.
 */
export async function sweepAllWorkflow(input: SweepAllInput): Promise<SweepResult[]> {
  const results: SweepResult[] = new Array(input.sweeps.length);
  // schedules: one frozen input, a fresh sweep id and results folder per run (see SweepAllInput.perRun)
  const forRun = (s: SweepInput): SweepInput => {
    if (!input.perRun) return s;
    const sweepId = `${workflowInfo().workflowId}-${s.orientation}`.replace(/[^A-Za-z0-9._-]+/g, '-');
    return { ...s, sweepId, resultsDir: `${input.perRun.resultsRoot.replace(/\/+$/, '')}/${sweepId}` };
  };
  let next = 0;
  const lane = async () => {
    while (next < input.sweeps.length) {
      const i = next++;
      const sweep = forRun(input.sweeps[i]!);
      results[i] = await executeChild(sweepWorkflow, {
        workflowId: sweep.sweepId,
        args: [sweep],
        parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
        // children are sweeps in their own right: the Web UI filters them by these
        typedSearchAttributes: sweepSearchAttributes(sweep),
      });
    }
  };
  const lanes = Math.max(1, Math.min(input.maxConcurrentSweeps, input.sweeps.length));
  await Promise.all(Array.from({ length: lanes }, lane));
  return results;
}

