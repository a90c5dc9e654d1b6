import { InterceptingCall, Metadata, status, type InterceptingListener, type Interceptor } from '@grpc/grpc-js';
import { defaultGrpcRetryOptions, makeGrpcRetryInterceptor } from '@temporalio/client';

/** What grpc-js throws when a call is created on a closed channel (@grpc/grpc-js internal-channel.ts createCall). */
const CLOSED = 'Channel has been shut down';

/**
 * A call on a closed connection ends with status CANCELLED instead of throwing from a timer.
 *
 * The Temporal client's retry interceptor (@temporalio/client grpc-retry.ts) re-creates a failed call
 * from a `setTimeout`; when the connection is closed while such a retry is pending (a `watch` or a
 * test that closes its client while a query is backing off), grpc-js throws "Channel has been shut
 * down" synchronously inside that timer: an uncaught exception that kills the process (seen in CI:
 * libs/orchestrator/test/cancel-phases.int.test.ts, 2026-12-04). Placed below the retry interceptor,
 * this one turns the throw into a call that reports CANCELLED (not retryable) on the next turn of the
 * event loop, so the retry gives up and the caller's promise rejects; nothing else changes.
 */
export const closedChannelGuard: Interceptor = (options, nextCall) => {
  try {
    return new InterceptingCall(nextCall(options));
  } catch (e) {
    if (!(e instanceof Error) || e.message !== CLOSED) throw e;
    return new InterceptingCall(closedCall());
  }
};

/** The Temporal client's default retry, then the guard: the interceptors of every Connection we open. */
export function clientInterceptors(): Interceptor[] {
  return [makeGrpcRetryInterceptor(defaultGrpcRetryOptions()), closedChannelGuard];
}

/** the call interface InterceptingCall wraps (grpc-js does not export its name) */
type CallInterface = ConstructorParameters<typeof InterceptingCall>[0];

function closedCall(): CallInterface {
  return {
    start(_metadata, listener?: Partial<InterceptingListener>) {
      setImmediate(() => {
        try {
          listener?.onReceiveStatus?.({
            code: status.CANCELLED,
            details: 'the Temporal connection was closed',
            metadata: new Metadata(),
          });
        } catch {
          // the layers above may not expect a status without a message; the connection is closed and
          // nobody can use this call's result, so the call ends here either way
        }
      });
    },
    cancelWithStatus: () => undefined,
    getPeer: () => '',
    sendMessageWithContext: () => undefined,
    sendMessage: () => undefined,
    startRead: () => undefined,
    halfClose: () => undefined,
    getAuthContext: () => null,
  };
}
