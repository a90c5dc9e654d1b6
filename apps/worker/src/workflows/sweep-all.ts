import { ParentClosePolicy, executeChild } from '@temporalio/workflow';
import { type SweepAllInput, type SweepResult } from '@infersweep/sweep';
import { sweepWorkflow } from './sweep';

/**
 * `--orientation all`: one child sweep per orientation, one after another by default or up to
 * `maxConcurrentSweeps` at once. Cancelling the parent cancels the children, whose cleanup runs.
 */
export async function sweepAllWorkflow(input: SweepAllInput): Promise<SweepResult[]> {
  const results: SweepResult[] = new Array(input.sweeps.length);
  let next = 0;
  const lane = async () => {
    while (next < input.sweeps.length) {
      const i = next++;
      const sweep = input.sweeps[i]!;
      results[i] = await executeChild(sweepWorkflow, {
        workflowId: sweep.sweepId,
        args: [sweep],
        parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
      });
    }
  };
  const lanes = Math.max(1, Math.min(input.maxConcurrentSweeps, input.sweeps.length));
  await Promise.all(Array.from({ length: lanes }, lane));
  return results;
}

