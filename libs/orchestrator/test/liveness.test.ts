/**
 * The progress watchdog (../src/activities/liveness.ts): an activity whose reported progress has not
 * changed within its phase's bound fails, retryable and named, although its timer heartbeats go on;
 * an activity whose progress keeps changing is never stopped by it.
 */
import { Context } from '@temporalio/activity';
import { MockActivityEnvironment } from '@temporalio/testing';
import { describe, expect, it } from 'vitest';
import { InfersweepError } from '@infersweep/core';
import { ProgressStalledError, keepAlive, progress } from '../src/activities/liveness';
import { toFailure } from '../src/activities/interceptor';

const bounds = (phase: string) => (phase === 'allocating' ? 150 : 10_000);
const forever = new Promise<never>(() => undefined);

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
          { stallBoundMs: bounds },
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
    const env = new MockActivityEnvironment();
    const r = await env.run(() =>
      keepAlive(
        Context.current(),
        20,
        async () => {
          for (let polls = 0; polls < 20; polls++) {
            progress({ phase: 'allocating', polls });
            await new Promise((res) => setTimeout(res, 30));
          }
          return 'granted';
        },
        { stallBoundMs: bounds },
      ),
    );
    expect(r).toBe('granted');
  });

  it('an activity can give its own bound for a phase that reports nothing for long', async () => {
    const env = new MockActivityEnvironment();
    const r = await env.run(() =>
      keepAlive(
        Context.current(),
        20,
        async () => {
          progress({ phase: 'allocating' }, { stallSeconds: 60 });
          await new Promise((res) => setTimeout(res, 400));
          return 'imported';
        },
        { stallBoundMs: bounds },
      ),
    );
    expect(r).toBe('imported');
  });
});
