/**
 * Two clusters served at once: partitions east and west of the local Slurm, one deployed worker
 * each on its own task queue, `--orientation all` on both at the same time. Killing west's worker
 * stalls only west's sweeps; they resume when a west worker returns, with no point lost or run twice.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client, WorkflowHandle } from '@temporalio/client';
import {
  expectEachPointOnce,
  prodClient,
  runPointCounts,
  pendingHeartbeat,
  spawnWorker,
  startSweep,
  until,
  type WorkerProcess,
} from './harness';

// what the stall window must outlast: the runPoint heartbeat timeout (libs/orchestrator/src/workflows/sweep.ts
// options, 20 s) plus a margin; the test also waits until east has completed a point in it
const STALL_WINDOW_MS = 45_000;

let client: Client;
const workers: WorkerProcess[] = [];

beforeAll(async () => {
  client = await prodClient();
});
afterAll(async () => {
  for (const w of workers) w.kill('SIGTERM');
  await client?.connection.close();
});

type Started = Awaited<ReturnType<typeof startSweep>>;

/** Completed runPoint activities over all child sweeps of an `--orientation all` run. */
async function completedPoints(s: Started): Promise<number> {
  let n = 0;
  for (const o of s.orientations) {
    const counts = await runPointCounts(client.workflow.getHandle(o.sweepId)).catch(() => new Map());
    for (const v of counts.values()) n += v.completed;
  }
  return n;
}

async function profilingChild(s: Started): Promise<string | undefined> {
  for (const o of s.orientations) {
    const hb = await pendingHeartbeat(client.workflow.getHandle(o.sweepId)).catch(() => undefined);
    if (hb?.phase === 'profiling') return o.sweepId;
  }
  return undefined;
}

async function status(h: WorkflowHandle): Promise<string> {
  return (await h.describe()).status.name;
}

describe('two clusters, one worker each', () => {
  it('--orientation all on east and west runs concurrently; killing west stalls only west; west resumes when its worker returns', async () => {
    workers.push(spawnWorker('east'));
    let west = spawnWorker('west');
    workers.push(west);
    const label = `two-${randomUUID().slice(0, 6)}`;
    const [e, w] = await Promise.all([startSweep('east', 'all', label), startSweep('west', 'all', label)]);
    expect(e.sweepId).not.toBe(w.sweepId);

    // both clusters measure at the same moment
    await until(
      'east and west profiling at the same time',
      async () => ((await profilingChild(e)) && (await profilingChild(w)) ? true : undefined),
      300_000,
    );

    west.kill('SIGKILL');
    const westDone = await completedPoints(w);
    const eastDone = await completedPoints(e);
    const killedAt = Date.now();

    // hold the west worker away for longer than the heartbeat timeout, until east has completed a
    // point meanwhile: east progresses, west does not
    await until(
      'the stall window, east completing a point in it',
      async () => (Date.now() - killedAt > STALL_WINDOW_MS && (await completedPoints(e)) > eastDone ? true : undefined),
      600_000,
      1000,
    );
    expect(await completedPoints(w)).toBe(westDone);
    expect(await status(client.workflow.getHandle(w.sweepId))).toBe('RUNNING');

    // west's worker returns while east may still run: west resumes, and both complete
    west = spawnWorker('west');
    workers.push(west);
    const done = (h: WorkflowHandle) => async () => ((await status(h)) === 'COMPLETED' ? true : undefined);
    await Promise.all([
      until('east to complete', done(client.workflow.getHandle(e.sweepId)), 600_000, 2000),
      until('west to complete', done(client.workflow.getHandle(w.sweepId)), 600_000, 2000),
    ]);

    // every point of every orientation on both clusters: scheduled once, completed once, one result file
    for (const s of [e, w]) {
      for (const o of s.orientations) {
        const counts = await expectEachPointOnce(client.workflow.getHandle(o.sweepId), o.points);
        for (const [c, n] of counts)
          if (n.attempts > 1)
            console.log(
              `${o.sweepId} c=${c}: runPoint attempts ${n.attempts}${n.reused ? ', result reused' : ', measured again by the last attempt'}`,
            );
        for (const c of o.points)
          expect(existsSync(join(o.resultsDir, 'points', `c${c}`, 'result.json')), `${o.sweepId} c=${c}`).toBe(true);
      }
    }
  });
});
