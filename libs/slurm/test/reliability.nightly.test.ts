/**
 * The queue at production timescale, nightly (./queue-wait.ts): a request waits behind a job holding
 * every node past the window the allocation used to give up at (`salloc --immediate=300`); a retry
 * adopts the queued job by name; a cancel while queued leaves nothing granted later.
 */
import { afterAll, describe, it } from 'vitest';
import { sshCluster } from './helpers';
import { expectQueueWait } from './queue-wait';

const OLD_GRANT_WINDOW_SECONDS = 300;

describe('the queue at production timescale', () => {
  const { exec, cluster } = sshCluster();
  const created = new Set<string>();
  const names = new Set<string>();

  afterAll(async () => {
    for (const id of created) await cluster.release(id).catch(() => undefined);
    for (const n of names) await cluster.withdraw(n).catch(() => undefined);
    await exec.close();
  });

  it('queue: a request waits behind a job holding every node past the old 5-minute window; a retry adopts the queued job by name; a cancel withdraws its pending job and nothing is granted later', async () => {
    await expectQueueWait({ exec, cluster, created, names }, OLD_GRANT_WINDOW_SECONDS + 10);
  }, 480_000);
});
