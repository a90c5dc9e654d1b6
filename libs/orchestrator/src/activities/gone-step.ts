/**
 * Why a server step is gone, from one read of its log (libs/slurm/src/steps.ts goneStepLog): a program that never ran
 * (not found on the node) is a SetupError no retry mends; anything else is a lost server with the log's tail. The
 * deployment watch (./context.ts) and runPoint's server check (./point.ts) ask this before calling a server lost.
 */
import type { SetupError, SlurmCluster } from '@infersweep/slurm';
import { ServerLostError } from './errors';
import type { StepRef } from './types';

export async function goneStepError(
  slurm: SlurmCluster,
  s: StepRef,
  message: string,
  ctx: { jobId: string; node: string; step: string },
): Promise<SetupError | ServerLostError> {
  const { logTail, setup } = await slurm.goneStepLog(s, ctx);
  return setup ?? new ServerLostError(message, { ...ctx, logTail });
}
