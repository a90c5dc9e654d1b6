/**
 * The orchestrator's own typed errors (the libs' errors live with the libs). Each has one `kind`
 * (libs/core/src/errors.ts); the activity interceptor (./interceptor.ts) maps it to a Temporal failure.
 */
import { InfersweepError, InputError, type ErrorContext } from '@infersweep/core';

/** The stored plan does not validate, or is not the plan the sweep was started with. */
export class InvalidPlanError extends InputError {}

/**
 * The stored plan cannot be read right now (EIO/ESTALE on shared storage, a folder not yet visible
 * to this worker): transient, the activity is retried. Only prepareSweep, which writes the plan,
 * fails on the input itself.
 */
export class PlanUnreadableError extends InfersweepError {
  constructor(message: string, context: ErrorContext) {
    super(message, { kind: 'transient', context });
  }
}

/** The server step exited or stopped answering while the allocation is still alive. */
export class ServerLostError extends InfersweepError {
  constructor(message: string, context: ErrorContext) {
    super(message, { kind: 'loss', context: { ...context, end: 'server-lost' } });
  }
}

/** The time guard: the next point cannot finish before the allocation ends. */
export class InsufficientTimeError extends InfersweepError {
  constructor(message: string, context: ErrorContext) {
    super(message, { kind: 'loss', context: { ...context, end: 'insufficient-time' } });
  }
}
