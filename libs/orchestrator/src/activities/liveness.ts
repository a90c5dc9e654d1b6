/**
 * Liveness by timer: while an activity runs, its latest progress is heartbeated every few seconds,
 * whether or not anything happened (a drain gate polling every 10 s, a c=1 request streaming for
 * minutes, salloc waiting in the queue, a model loading for an hour). Activities only say what their
 * progress is ({@link progress}); {@link keepAlive} (run by ./interceptor.ts around every activity)
 * does the sending.
 *
 * Because the timer keeps a hung activity looking alive, {@link keepAlive} is also a progress
 * watchdog: when the reported progress has not changed within its phase's bound
 * ({@link STALL_BOUND_SECONDS}, or the bound the activity gave with its progress), the attempt fails
 * with a retryable {@link ProgressStalledError} naming the phase, instead of waiting for the
 * start-to-close timeout (up to 12 h). Before it reports the failure it stops the attempt's work:
 * it aborts {@link attemptSignal} (a point's client process and its aiperf step listen to it) and
 * waits up to {@link STALL_ABORT_GRACE_MS} for the work to end, so the retry does not load a server
 * the stalled attempt still loads.
 */
import { Context } from '@temporalio/activity';
import { InfersweepError } from '@infersweep/core';

/**
 * How long each phase may report the same progress, seconds. The loops of these phases report
 * something new at every poll (waited seconds, poll count, requests completed, rank launched), so
 * an unchanged progress means the loop itself is stuck. Other phases: {@link DEFAULT_STALL_SECONDS}.
 */
export const STALL_BOUND_SECONDS: Readonly<Record<string, number>> = {
  allocating: 10 * 60,
  'waiting-ready': 10 * 60,
  launching: 10 * 60,
  releasing: 15 * 60,
  checking: 10 * 60,
};
/** Phases without their own bound (a drain gate, a point's requests, a log copy). */
export const DEFAULT_STALL_SECONDS = 30 * 60;
/**
 * How long a stalled attempt's aborted work may take to end before the stall is reported anyway (a
 * wedged await never ends), ms: longer than the client process's own kill grace
 * (libs/agentx/src/client-process.ts) and an aiperf step's scancel.
 */
export const STALL_ABORT_GRACE_MS = 60_000;

/** The activity's reported progress has not changed within its phase's bound: retried (another attempt, maybe another worker). */
export class ProgressStalledError extends InfersweepError {
  override readonly name = 'ProgressStalledError';
  constructor(message: string, phase: string) {
    super(message, { kind: 'transient', context: { step: phase } });
  }
}

interface Latest {
  details: Record<string, unknown>;
  /** the bound the activity gave for this progress, seconds */
  stallSeconds?: number;
}
const latest = new WeakMap<Context, Latest>();
/** Per attempt: aborted by the watchdog when it fails the attempt. */
const stops = new WeakMap<Context, AbortController>();

/**
 * The signal the current attempt's work stops on: the activity's cancellation (a cancelled sweep, a
 * timeout, a worker shutdown) or the progress watchdog failing the attempt ({@link keepAlive}).
 */
export function attemptSignal(): AbortSignal {
  const ctx = Context.current();
  const stop = stops.get(ctx);
  return stop ? AbortSignal.any([ctx.cancellationSignal, stop.signal]) : ctx.cancellationSignal;
}

/**
 * Record the current activity's progress and heartbeat it now (the SDK throttles the sends).
 * `stallSeconds`: how long this progress may stay unchanged (a phase that legitimately reports
 * nothing for long, e.g. an image import bounded by its own budget); default: the phase's bound.
 */
export function progress(details: Record<string, unknown>, opts: { stallSeconds?: number } = {}): void {
  const ctx = Context.current();
  latest.set(ctx, { details, ...(opts.stallSeconds === undefined ? {} : { stallSeconds: opts.stallSeconds }) });
  ctx.heartbeat(details);
}

export interface KeepAliveOptions {
  /** The bound of a phase, ms (tests shorten it). */
  stallBoundMs?: (phase: string) => number;
  now?: () => number;
  /** How long aborted work may take to end before the stall is reported anyway, ms (default {@link STALL_ABORT_GRACE_MS}). */
  abortGraceMs?: number;
}

const phaseOf = (l: Latest | undefined, ctx: Context): string =>
  typeof l?.details.phase === 'string' ? l.details.phase : ctx.info.activityType;

/**
 * Run `fn`, heartbeating the latest progress of `ctx` every `everyMs` until it settles; fail with
 * {@link ProgressStalledError} when that progress stays unchanged longer than its phase's bound.
 * The stall first aborts {@link attemptSignal} and waits for `fn` to end (at most the abort grace;
 * a wedged await is then abandoned); whatever `fn` returns or throws after the abort, the attempt
 * fails with the stall, and its retry starts from the activity's idempotent beginning.
 */
export async function keepAlive<T>(
  ctx: Context,
  everyMs: number,
  fn: () => Promise<T>,
  opts: KeepAliveOptions = {},
): Promise<T> {
  const now = opts.now ?? Date.now;
  const boundMs = (l: Latest | undefined): number =>
    l?.stallSeconds !== undefined
      ? l.stallSeconds * 1000
      : (opts.stallBoundMs?.(phaseOf(l, ctx)) ??
        (STALL_BOUND_SECONDS[phaseOf(l, ctx)] ?? DEFAULT_STALL_SECONDS) * 1000);
  const stop = new AbortController();
  stops.set(ctx, stop);
  let seen = JSON.stringify(latest.get(ctx)?.details ?? null);
  let changedAt = now();
  let stall: ProgressStalledError | undefined;
  let grace: NodeJS.Timeout | undefined;
  let giveUp: (err: ProgressStalledError) => void = () => undefined;
  const watchdog = new Promise<never>((_, reject) => (giveUp = reject));
  const beat = () => {
    const l = latest.get(ctx);
    ctx.heartbeat(l?.details ?? { phase: ctx.info.activityType });
    if (stall) return; // stopping: the heartbeats go on while the work ends
    const text = JSON.stringify(l?.details ?? null);
    if (text !== seen) {
      seen = text;
      changedAt = now();
      return;
    }
    const bound = boundMs(l);
    const still = now() - changedAt;
    if (still > bound) {
      const phase = phaseOf(l, ctx);
      const err = new ProgressStalledError(
        `${ctx.info.activityType}: no progress in phase ${phase} for ${Math.round(still / 1000)} s (bound ${Math.round(bound / 1000)} s); last progress ${text}`,
        phase,
      );
      stall = err;
      stop.abort(err);
      grace = setTimeout(() => giveUp(err), opts.abortGraceMs ?? STALL_ABORT_GRACE_MS);
    }
  };
  beat();
  const timer = setInterval(beat, everyMs);
  const work = fn().then(
    (v) => {
      if (stall) throw stall;
      return v;
    },
    (err: unknown) => {
      throw stall ?? err;
    },
  );
  try {
    return await Promise.race([work, watchdog]);
  } finally {
    clearInterval(timer);
    clearTimeout(grace);
  }
}
