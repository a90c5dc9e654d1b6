/**
 * The durable sweep: one orientation of a config on one cluster, told as a story. First the
 * messages an operator can send (libs/sweep/src/messages.ts), each handled by the sweep's state
 * (SweepRun, ./run.ts); then the story: prepare, and per point (the first pass, then any replicates,
 * ./replicates.ts, each on an allocation its point has not run on) ensure a server, measure, apply the
 * deployment policy (the Lease, ./lease.ts, holds the allocation and server), or recover from a
 * failure classified once (./failures.ts); close. A failed sweep fails with its ledger in the
 * failure's details (a parent snapshot counts its GPU time). The activities are one verb each (./activities.ts).
 */
import { ContinueAsNew, isCancellation, setHandler } from '@temporalio/workflow';
import {
  abortUpdate,
  progressQuery,
  retryNowUpdate,
  skipPointUpdate,
  validateSkip,
  type SweepResult,
} from '@infersweep/sweep';
import { activitiesFor } from './activities';
import { classify } from './failures';
import { SweepRun, type SweepRunInput } from './run';

export async function sweepWorkflow(input: SweepRunInput): Promise<SweepResult> {
  const run = new SweepRun(input, activitiesFor({ ...input, grantWaitMinutes: input.plan.slurm.grantWaitMinutes }));
  const { lease } = run;
  //
  // Messages
  //
  setHandler(progressQuery, () => run.state);
  setHandler(skipPointUpdate, (arg) => run.skip(arg), { validator: (arg) => validateSkip(run.state, arg.concurrency) });
  setHandler(retryNowUpdate, () => run.operator.retryNow(), { validator: (_arg) => run.operator.assertAwaiting() });
  setHandler(abortUpdate, (arg) => run.abort(arg));
  //
  // The story
  //
  try {
    await run.prepare();
    for (let pt = run.next(); pt && !run.aborted; pt = run.next()) {
      if (run.historyFull()) await run.continueAsNew();
      if (run.outOfAllocationAttempts()) {
        await run.allocationAttemptsSpent();
        continue;
      }
      try {
        await run.freshAllocationFor(pt);
        await lease.ensureServer();
        await run.measure(pt);
        await lease.applyPolicy();
      } catch (err) {
        if ((await run.recover(pt, classify(err), err)) === 'stop') break;
      }
    }
    await run.close({ phase: run.aborted ? 'aborted' : 'completed' });
    return run.result();
  } catch (err) {
    if (err instanceof ContinueAsNew) throw err;
    await run.close({ phase: isCancellation(err) ? 'cancelled' : 'failed', error: err });
    throw run.failure(err);
  }
}
