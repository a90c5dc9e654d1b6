/**
 * How an allocation ended, and how Slurm's job state maps onto it. The workflow's allocation
 * history, the release activity and the report all use this one mapping.
 */

/** Slurm states in which a job is still alive (queued or holding nodes). */
export const LIVE_JOB_STATES = ['RUNNING', 'PENDING', 'COMPLETING', 'CONFIGURING', 'SUSPENDED'] as const;

/** Slurm's terminal job states infersweep reports as they are. */
export const TERMINAL_JOB_STATES = ['TIMEOUT', 'NODE_FAIL', 'CANCELLED', 'PREEMPTED', 'FAILED'] as const;
export type TerminalJobState = (typeof TERMINAL_JOB_STATES)[number];

/**
 * How an allocation ended (Slurm's terminal state, or why infersweep let it go). `release-failed`:
 * the sweep gave up releasing it (libs/orchestrator/src/workflows/lease.ts releaseHeld), the job may
 * still run; its reason names the job id.
 */
export type AllocationEnd =
  | 'released'
  | TerminalJobState
  | 'GONE'
  | 'insufficient-time'
  | 'server-lost'
  | 'launch-failed'
  | 'allocation-failed'
  | 'release-failed';

/**
 * How a job in Slurm state `state` ended: a terminal state as Slurm names it; any other state that
 * is not alive (COMPLETED, BOOT_FAIL, unknown to Slurm, …) is `GONE`. Callers decide what a live
 * job means (see {@link endOnRelease}).
 */
export function allocationEndOf(state: string | undefined): TerminalJobState | 'GONE' {
  return TERMINAL_JOB_STATES.find((s) => s === state) ?? 'GONE';
}

/** The end of a job we released: `released` if it was alive when we came, else how Slurm ended it. */
export function endOnRelease(stateBefore: string): AllocationEnd {
  return (LIVE_JOB_STATES as readonly string[]).includes(stateBefore) ? 'released' : allocationEndOf(stateBefore);
}
