import { describe, expect, it } from 'vitest';
import { IdleCappedTimers } from '../src/client/idle-capped-timers';

/** Wall time of `p` to settle, ms. */
async function timed(p: Promise<void>): Promise<number> {
  const t0 = performance.now();
  await p;
  return performance.now() - t0;
}

describe('IdleCappedTimers', () => {
  it('with nothing in flight, a long sleep wakes within the idle cap (all sleepers shift by the same amount)', async () => {
    const timers = new IdleCappedTimers(50);
    const order: string[] = [];
    const a = timers.sleep(60_000).then(() => order.push('a'));
    const b = timers.sleep(60_200).then(() => order.push('b'));
    const ms = await timed(Promise.all([a, b]).then(() => undefined));
    expect(ms).toBeLessThan(5_000);
    expect(order).toEqual(['a', 'b']);
  });

  it('a request in flight holds the cap off until it ends', async () => {
    const timers = new IdleCappedTimers(50);
    const order: string[] = [];
    timers.started();
    const long = timers.sleep(60_000).then(() => order.push('long'));
    await new Promise<void>((r) => setImmediate(r)); // the deferred idle check of the long sleeper has run
    // in flight: nothing is shifted, so the 300 ms sleeper wakes first (a cap ignoring the request would wake the long one at ~50 ms)
    await timers.sleep(300).then(() => order.push('short'));
    expect(order).toEqual(['short']);
    timers.ended();
    expect(await timed(long.then(() => undefined))).toBeLessThan(5_000);
    expect(order).toEqual(['short', 'long']);
  });

  it('wakeAll releases every sleeper at once', async () => {
    const timers = new IdleCappedTimers(50);
    timers.started();
    const s = timers.sleep(60_000);
    timers.wakeAll();
    expect(await timed(s)).toBeLessThan(1_000);
  });

  it('closed timers do not sleep', async () => {
    const timers = new IdleCappedTimers(50);
    timers.wakeAll(true);
    expect(await timed(timers.sleep(60_000))).toBeLessThan(1_000);
  });
});
