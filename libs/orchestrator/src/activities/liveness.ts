/**
 * Liveness by timer: while an activity runs, its latest progress is heartbeated every few seconds,
 * whether or not anything happened (a drain gate polling every 10 s, a c=1 request streaming for
 * minutes, salloc waiting in the queue, a model loading for an hour). Activities only say what their
 * progress is ({@link progress}); {@link keepAlive} (run by ./interceptor.ts around every activity)
 * does the sending. A hung activity is still bounded by its start-to-close timeout.
 */
import { Context } from '@temporalio/activity';

const latest = new WeakMap<Context, unknown>();

/** Record the current activity's progress and heartbeat it now (the SDK throttles the sends). */
export function progress(details: Record<string, unknown>): void {
  const ctx = Context.current();
  latest.set(ctx, details);
  ctx.heartbeat(details);
}

/** Run `fn`, heartbeating the latest progress of `ctx` every `everyMs` until it settles. */
export async function keepAlive<T>(ctx: Context, everyMs: number, fn: () => Promise<T>): Promise<T> {
  const beat = () => ctx.heartbeat(latest.get(ctx) ?? { phase: ctx.info.activityType });
  beat();
  const timer = setInterval(beat, everyMs);
  try {
    return await fn();
  } finally {
    clearInterval(timer);
  }
}
