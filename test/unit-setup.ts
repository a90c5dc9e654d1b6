import { afterEach } from 'vitest';

/**
 * The unit project's setup file (vitest.config.ts): after every test, one round trip on vitest's own RPC channel.
 *
 * vitest's worker reports test progress to its main process over an RPC whose reply it must read within 60 s of the
 * call (birpc's fixed timeout; vitest has no setting for it). Between the tests of a file the runner awaits only
 * microtasks, so in a file of synchronous tests the call is not even written to the channel until the file ends, and
 * when the loop turns, the timer phase runs before the reply is read. The seeded simulations of
 * libs/history/test/nightly.sim.test.ts held the loop 14 s in one stretch on a quiet host (its tests 2–5 s each);
 * niced beside four integration lanes on 2 cores that stretch passed 60 s, and vitest failed the unit run with
 * "Timeout calling onTaskUpdate" with every test passed. A single setImmediate is not enough: it writes the call,
 * and the next test's stretch starts before the reply comes (two 35 s tests failed so). Awaiting a reply of our
 * own on the same channel lets the earlier replies in, so the window is one test's stretch
 * (./unit-setup.test.ts). `__vitest_worker__` is vitest's worker state (vitest 3.2); without it, one setImmediate.
 */
interface WorkerState {
  rpc?: { getCountOfFailedTests?: () => Promise<number> };
}

afterEach(async () => {
  const rpc = (globalThis as { __vitest_worker__?: WorkerState }).__vitest_worker__?.rpc;
  if (rpc?.getCountOfFailedTests) await rpc.getCountOfFailedTests();
  else await new Promise<void>((resolve) => setImmediate(resolve));
});
