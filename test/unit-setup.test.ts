import { describe, expect, it } from 'vitest';

/**
 * The unit project's setup file turns the event loop after every test (./unit-setup.ts): a macrotask queued by one
 * synchronous test has run before the next test starts. Without it, vitest goes from test to test on microtasks
 * alone and the second test finds the macrotask still queued.
 */
describe('the unit setup: one event-loop turn between tests', () => {
  let turned = false;

  it('queues a macrotask and returns synchronously', () => {
    setImmediate(() => {
      turned = true;
    });
    expect(turned).toBe(false);
  });

  it('finds it run', () => {
    expect(turned).toBe(true);
  });
});
