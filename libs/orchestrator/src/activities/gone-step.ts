/**
 * Why a server step is gone, read from its log once: a program that never ran (not found on the node) is a
 * SetupError no retry mends (libs/slurm/src/steps.ts, setupErrorIn); anything else is a lost server with the log's
 * tail. Slurm lists such a step for a moment before its execve fails, so a launch can return its handle first; the
 * deployment watch (./context.ts) and runPoint's server check (./point.ts) ask this before calling a server lost.
 */
import { setupErrorIn, type SetupError, type SlurmCluster } from '@infersweep/slurm';
import { ServerLostError } from './errors';
import type { StepRef } from './types';

export async function goneStepError(
  slurm: SlurmCluster,
  s: StepRef,
  message: string,
  ctx: { jobId: string; node: string; step: string },
): Promise<SetupError | ServerLostError> {
  const logs = await slurm.fetchLogs([s], { tailLines: 30 }).catch(() => undefined);
  const logTail = logs?.[0]?.tail ?? '';
  return (logTail && setupErrorIn(logTail, s, ctx)) || new ServerLostError(message, { ...ctx, logTail });
}
