/**
 * The one activity interceptor every worker installs. It is where an activity's outcome becomes a
 * Temporal outcome, for every activity alike:
 *  - liveness by timer: the activity heartbeats its latest progress every few seconds for its whole
 *    life (./liveness.ts), so a long wait with nothing new to report never looks like a dead worker;
 *  - a worker shutdown (SIGTERM on deploy, Ctrl-C detach of the CLI's embedded worker) is not a
 *    failure: whatever the activity threw while the worker stopped, the attempt ends as a retryable
 *    `WorkerShutdown` failure, so the server runs it again on the next worker; the workflow sees
 *    nothing (no point attempt counted, the allocation kept). A cancel the workflow requested stays
 *    a cancellation;
 *  - typed errors → ApplicationFailure: type = class name, nonRetryable unless the error's kind is
 *    `transient`, details[0] = {@link FailureDetails} (kind, input, and the error's job/node/step/log
 *    tail context), which the workflow classifies (../workflows/failures.ts).
 */
import { ApplicationFailure, type Context } from '@temporalio/activity';
import type {
  ActivityExecuteInput,
  ActivityInboundCallsInterceptor,
  ActivityInterceptorsFactory,
  Next,
} from '@temporalio/worker';
import { InfersweepError, InputError, classifyAttempt, type FailureDetails } from '@infersweep/core';
import { keepAlive } from './liveness';

export const WORKER_SHUTDOWN_FAILURE = 'WorkerShutdown';

/**
 * True when this activity's context was cancelled by its worker shutting down (not by the workflow).
 * The SDK aborts the same signal for both; the cancellation details (and the abort reason, which the
 * SDK sets to WORKER_SHUTDOWN for a shutdown) tell them apart.
 */
export function cancelledByShutdown(ctx: Context): boolean {
  if (!ctx.cancellationSignal.aborted) return false;
  if (ctx.cancellationDetails?.workerShutdown) return true;
  const reason: unknown = ctx.cancellationSignal.reason;
  return reason instanceof Error && reason.message === 'WORKER_SHUTDOWN';
}

/**
 * True when the workflow asked for this activity to be cancelled (a cancelled or aborted sweep):
 * only then is queued or running work given up. A worker shutdown, a timeout, a pause or a reset
 * is not a request to give up: the next attempt carries on with what this one left.
 */
export function cancelRequestedByWorkflow(ctx: Context): boolean {
  if (!ctx.cancellationSignal.aborted || cancelledByShutdown(ctx)) return false;
  if (ctx.cancellationDetails?.cancelRequested) return true;
  // the SDK names the reason after core's ActivityCancelReason (CANCELLED, TIMED_OUT, NOT_FOUND, …)
  const reason: unknown = ctx.cancellationSignal.reason;
  return reason instanceof Error && reason.message === 'CANCELLED';
}

/**
 * Map a thrown error to what Temporal records (ApplicationFailures and non-infersweep errors pass
 * through). What broke is classified here, where the log tail is (libs/core/src/attempt-class.ts):
 * the class travels in the failure's details, so the workflow decides from recorded data.
 */
export function toFailure(err: unknown, activity?: string): unknown {
  if (err instanceof ApplicationFailure || !(err instanceof InfersweepError)) return err;
  const attempt = classifyAttempt({
    jobState: typeof err.context.state === 'string' ? err.context.state : undefined,
    jobReason: typeof err.context.reason === 'string' ? err.context.reason : undefined,
    errorType: err.name,
    activity,
    message: err.message,
    logTail: err.logTail,
    node: err.node,
  });
  const details: FailureDetails = { ...err.context, kind: err.kind, input: err instanceof InputError, attempt };
  return ApplicationFailure.create({
    message: err.message,
    type: err.name,
    nonRetryable: err.kind !== 'transient',
    details: [details],
    cause: err,
  });
}

class SweepActivityInbound implements ActivityInboundCallsInterceptor {
  constructor(
    private readonly ctx: Context,
    private readonly heartbeatMs: number,
  ) {}

  async execute(input: ActivityExecuteInput, next: Next<ActivityInboundCallsInterceptor, 'execute'>): Promise<unknown> {
    try {
      return await keepAlive(this.ctx, this.heartbeatMs, () => next(input));
    } catch (err) {
      if (cancelledByShutdown(this.ctx)) {
        throw ApplicationFailure.create({
          message: `the worker shut down during ${this.ctx.info.activityType} (deploy or detach): retried on the next worker`,
          type: WORKER_SHUTDOWN_FAILURE,
          nonRetryable: false,
        });
      }
      // a cancel the workflow requested ends as a cancellation (the SDK reports the activity
      // cancelled), whatever the activity threw while it withdrew (CommandAbortedError, …)
      if (cancelRequestedByWorkflow(this.ctx)) throw this.ctx.cancellationSignal.reason;
      throw toFailure(err, this.ctx.info.activityType);
    }
  }
}

/** The factory for WorkerOptions.interceptors.activity. */
export function sweepActivityInterceptors(opts: { heartbeatMs: number }): ActivityInterceptorsFactory {
  return (ctx) => ({ inbound: new SweepActivityInbound(ctx, opts.heartbeatMs) });
}
