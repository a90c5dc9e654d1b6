/**
 * The durable sweep: one orientation of a config on one cluster, told as a story. The state and
 * the steps are in SweepRun (./run.ts); failures are classified once (./failures.ts); the
 * activities are one verb each (./activities.ts).
 */
import { ContinueAsNew, isCancellation } from '@temporalio/workflow';
import type { SweepResult } from '@infersweep/sweep';
import { activitiesFor } from './activities';
import { classify } from './failures';
import { SweepRun, type SweepRunInput } from './run';

export async function sweepWorkflow(input: SweepRunInput): Promise<SweepResult> {
  const run = new SweepRun(
    input,
    activitiesFor({
      ...input,
      grantWaitMinutes: input.plan.slurm.grantWaitMinutes,
    }),
  );
  run.listen();
  try {
    await run.prepare();
    for (let pt = run.next(); pt && !run.aborted; pt = run.next()) {
      if (run.historyFull()) await run.continueAsNew();
      if (run.outOfAllocationAttempts()) {
        await run.waitForOperator(`${input.maxAllocationAttempts} allocation attempts failed`);
        continue;
      }
      try {
        await run.ensureServer();
        await run.measure(pt);
        await run.applyPolicy();
      } catch (err) {
        if ((await run.recover(pt, classify(err), err)) === 'stop') break;
      }
    }
    await run.close({ phase: run.aborted ? 'aborted' : 'completed' });
    return run.result();
  } catch (err) {
    if (err instanceof ContinueAsNew) throw err;
    await run.close({ phase: isCancellation(err) ? 'cancelled' : 'failed', error: err });
    throw err;
  }
}
