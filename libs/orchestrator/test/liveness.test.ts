/**
 * The progress watchdog (../src/activities/liveness.ts): an activity whose reported progress has not
 * changed within its phase's bound fails, retryable and named, although its timer heartbeats go on;
 * an activity whose progress keeps changing is never stopped by it.
 */
import { Context } from '@temporalio/activity';
import { MockActivityEnvironment } from '@temporalio/testing';
import { describe, expect, it } from 'vitest';
import { InfersweepError } from '@infersweep/core';
import { ProgressStalledError, attemptSignal, keepAlive, progress } from '../src/activities/liveness';
import { toFailure } from '../src/activities/interceptor';

const bounds = (phase: string) => (phase === 'allocating' ? 150 : 10_000);
const forever = new Promise<never>(() => undefined);
const sleep = (ms: number) => new Promise((res) => setTimeout(res, ms));
/** `fn` run as an activity under the watchdog (20 ms heartbeat timer, the short bounds above). */
const watched = <T>(fn: () => Promise<T>): Promise<T> =>
  new MockActivityEnvironment().run(() =>
    keepAlive(Context.current(), 20, fn, { stallBoundMs: bounds, abortGraceMs: 1000 }),
  );

describe('progress watchdog', () => {
  it('a phase whose progress stays the same past its bound fails with a retryable ProgressStalledError naming the phase', async () => {
    const env = new MockActivityEnvironment();
    const beats: unknown[] = [];
    env.on('heartbeat', (d: unknown) => beats.push(d));
    const started = Date.now();
    const err = await env
      .run(() =>
        keepAlive(
          Context.current(),
          20,
          async () => {
            progress({ phase: 'allocating', waitedSeconds: 3 });
            return forever; // a waiter that never resolves, with a live event loop
          },
          { stallBoundMs: bounds, abortGraceMs: 100 },
        ),
      )
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProgressStalledError);
    expect((err as InfersweepError).kind).toBe('transient');
    expect((err as Error).message).toMatch(/no progress in phase allocating for \d+ s/);
    expect(Date.now() - started).toBeGreaterThanOrEqual(150);
    expect(beats.length).toBeGreaterThan(3); // the timer kept heartbeating: without the watchdog it would look alive
    const failure = toFailure(err) as { type: string; nonRetryable: boolean };
    expect(failure).toMatchObject({ type: 'ProgressStalledError', nonRetryable: false });
  });

  it('progress that keeps changing (a poll counter) is never stalled, however long', async () => {
    const r = await watched(async () => {
      for (let polls = 0; polls < 20; polls++) {
        progress({ phase: 'allocating', polls });
        await sleep(30);
      }
      return 'granted';
    });
    expect(r).toBe('granted');
  });

  it('an activity can give its own bound for a phase that reports nothing for long', async () => {
    const r = await watched(async () => {
      progress({ phase: 'allocating' }, { stallSeconds: 60 });
      await sleep(400);
      return 'imported';
    });
    expect(r).toBe('imported');
  });

  it('a stalled attempt is stopped before its failure is reported: the signal of its work aborts and the work ends first', async () => {
    const events: string[] = [];
    let reason: unknown;
    const err = await watched(async () => {
      const signal = attemptSignal();
      progress({ phase: 'allocating', polls: 1 });
      // the work of a point: a client (or an aiperf step) that stops on the signal and takes a while to end
      await new Promise<void>((resolve) =>
        signal.addEventListener('abort', () => {
          reason = signal.reason;
          events.push('aborted');
          setTimeout(() => {
            events.push('work ended');
            resolve();
          }, 100);
        }),
      );
      return 'an invalid record (what runPoint returns for an aborted client)';
    }).catch((e: unknown) => {
      events.push('failure reported');
      return e;
    });
    expect(err).toBeInstanceOf(ProgressStalledError);
    expect(reason).toBe(err);
    expect(events).toEqual(['aborted', 'work ended', 'failure reported']);
  });

  it('work that ignores the abort is abandoned after the grace, and the stall is still reported', async () => {
    let aborted = false;
    const err = await new MockActivityEnvironment()
      .run(() =>
        keepAlive(
          Context.current(),
          20,
          async () => {
            attemptSignal().addEventListener('abort', () => (aborted = true));
            progress({ phase: 'allocating' });
            return forever;
          },
          { stallBoundMs: bounds, abortGraceMs: 100 },
        ),
      )
      .catch((e: unknown) => e);
    expect(aborted).toBe(true);
    expect(err).toBeInstanceOf(ProgressStalledError);
  });

  it('a cancelled activity aborts the attempt signal too', async () => {
    const env = new MockActivityEnvironment();
    const seen = env.run(() =>
      keepAlive(
        Context.current(),
        20,
        () =>
          new Promise<unknown>((resolve) => {
            const signal = attemptSignal();
            progress({ phase: 'allocating', polls: 1 });
            signal.addEventListener('abort', () => resolve(signal.reason));
          }),
        { stallBoundMs: () => 10_000 },
      ),
    );
    env.cancel('CANCELLED');
    await expect(seen).resolves.toBeDefined();
  });
});
