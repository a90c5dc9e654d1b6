/**
 * One task queue, one deployment (../src/queue-check.ts), on the real dev server: while a worker of
 * deployment A polls a queue, a worker of deployment B refuses to start on it, naming A's worker; a
 * second worker of A starts beside the first.
 */
import { randomUUID } from 'node:crypto';
import { NativeConnection } from '@temporalio/worker';
import { afterAll, describe, expect, it } from 'vitest';
import { createSweepWorker } from '../src/worker';
import { TaskQueueSharedError, deploymentOfIdentity } from '../src/queue-check';
import { target, workflowBundle } from '@infersweep/testkit/sweep-harness';

const taskQueue = `queue-check-${randomUUID()}`;
const stops: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const s of stops.reverse()) await s();
});

async function running(deploymentTag: string) {
  const { worker, connection } = await createSweepWorker({
    cluster: 'local',
    target,
    taskQueue,
    deploymentTag,
    workflowBundle: workflowBundle(),
  });
  const run = worker.run();
  stops.push(async () => {
    if (worker.getState() === 'RUNNING') worker.shutdown();
    await run.catch(() => undefined);
    await connection.close();
  });
}

/** Until the server lists a poller of `tag` on the queue's activity side (the worker's first poll). */
async function polledBy(tag: string): Promise<void> {
  const c = await NativeConnection.connect({ address: target.address });
  try {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const res = await c.workflowService.describeTaskQueue({
        namespace: target.namespace,
        taskQueue: { name: taskQueue, kind: 1 },
        taskQueueType: 2,
      });
      if ((res.pollers ?? []).some((p) => deploymentOfIdentity(p.identity ?? '') === tag)) return;
      if (Date.now() > deadline) throw new Error(`no poller of ${tag} on ${taskQueue} within 60 s`);
      await new Promise((r) => setTimeout(r, 200));
    }
  } finally {
    await c.close();
  }
}

describe('a task queue serves one deployment', () => {
  it("another deployment's worker refuses to start on a polled queue, naming the poller; the same deployment's starts", async () => {
    await running('team-a.aaaaaa');
    await polledBy('team-a.aaaaaa');
    const refused = createSweepWorker({
      cluster: 'local',
      target,
      taskQueue,
      deploymentTag: 'team-b.bbbbbb',
      workflowBundle: workflowBundle(),
    });
    await expect(refused).rejects.toBeInstanceOf(TaskQueueSharedError);
    await expect(refused).rejects.toThrow(/infersweep-deployment=team-a\.aaaaaa \(deployment team-a\.aaaaaa\)/);
    await expect(refused).rejects.toThrow(`task queue ${taskQueue} on namespace ${target.namespace}`);
    await running('team-a.aaaaaa');
  }, 180_000);
});
