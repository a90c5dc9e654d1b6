/**
 * How the sweep workflow reads a failed activity: one classification, from the failure's `kind`
 * (set by the activity interceptor, ../activities/interceptor.ts, from the error class's kind in
 * libs/core/src/errors.ts). The workflow's recovery branches on this and nothing else.
 */
import { ActivityFailure, ApplicationFailure, isCancellation } from '@temporalio/workflow';
import { allocationEndOf, type AllocationEnd, type FailureDetails } from '@infersweep/core';

export type FailureClass =
  /** the workflow (or its parent) was cancelled */
  | 'cancelled'
  /** the allocation or the server went away: clean up, re-allocate, resume */
  | 'loss'
  /** the sweep's input is wrong: fail the sweep now */
  | 'input'
  /** anything else, after the activity's own retries: the point (or the allocation attempt) failed */
  | 'failed';

export interface ClassifiedFailure {
  class: FailureClass;
  type?: string;
  /** The activity that failed (e.g. `allocate`), when an activity failed. */
  activity?: string;
  message: string;
  details?: Partial<FailureDetails>;
}

export function classify(err: unknown): ClassifiedFailure {
  if (isCancellation(err)) return { class: 'cancelled', message: messageOf(err) };
  const cause = err instanceof ActivityFailure ? err.cause : err;
  const app = cause instanceof ApplicationFailure ? cause : undefined;
  const type = app?.type ?? undefined;
  const details = app?.details?.[0] as Partial<FailureDetails> | undefined;
  const message = messageOf(err);
  const base = { type, message, details, ...(err instanceof ActivityFailure ? { activity: err.activityType } : {}) };
  if (details?.kind === undefined) return { ...base, class: 'failed' };
  return { ...base, class: details.kind === 'loss' ? 'loss' : details.input ? 'input' : 'failed' };
}

export function messageOf(err: unknown): string {
  const cause = err instanceof ActivityFailure && err.cause ? err.cause : err;
  return cause instanceof Error ? cause.message : String(cause);
}

/** How a lost allocation ended: the end the failure carries (time guard, lost server), else the Slurm state it carried. */
export function lossEnd(f: ClassifiedFailure): AllocationEnd {
  return f.details?.end ?? allocationEndOf(typeof f.details?.state === 'string' ? f.details.state : undefined);
}
