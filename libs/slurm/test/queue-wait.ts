/**
 * The queue on the real cluster over SSH: a request waits behind a job holding every node for
 * `holdSeconds`; a retry adopts the queued job by name and keeps its age; a cancel while queued
 * withdraws its pending job and nothing is granted later. Run by reliability.int.test.ts (a hold of
 * many pending polls, per commit) and reliability.nightly.test.ts (past the old 5-minute window).
 */
import { expect } from 'vitest';
import { join } from 'node:path';
import { CommandAbortedError, SlurmCluster, type AllocationProgress, type SshExecutor } from '../src/index';
import { allocRequest, shared, uniqueName } from './helpers';
import { until } from '@infersweep/testkit/wait';

export interface QueueWaitContext {
  exec: SshExecutor;
  cluster: SlurmCluster;
  /** jobs and names the caller releases after the test */
  created: Set<string>;
  names: Set<string>;
}

export async function expectQueueWait(
  { exec, cluster, created, names }: QueueWaitContext,
  holdSeconds: number,
): Promise<void> {
  const blocker = await cluster.allocate(
    allocRequest('blocker', { nodes: 4, exclusive: true, timeLimitMinutes: 15, grantTimeoutSeconds: 120 }),
  );
  created.add(blocker.jobId);
  const slow = new SlurmCluster(exec, { pollIntervalMs: 250, pendingPollMs: 2_000 });
  const req = (tag: string) => {
    const jobName = uniqueName(tag);
    names.add(jobName);
    return {
      jobName,
      nodes: 1,
      gres: false,
      exclusive: false,
      timeLimitMinutes: 5,
      grantTimeoutSeconds: 3600,
      logFile: join(shared(), `${jobName}.salloc.log`),
    };
  };

  // 1) cancel while salloc waits: the pending job is withdrawn, and stays gone once the nodes are free
  const cancelled = req('cancel');
  const ctl = new AbortController();
  let pendingSeen: AllocationProgress | undefined;
  const p1 = slow
    .allocate(cancelled, {
      signal: ctl.signal,
      onProgress: (p) => (p.state === 'PENDING' ? (pendingSeen = p) : undefined),
    })
    .catch((e: unknown) => e);
  await until('the request to be PENDING', async () => pendingSeen, 60_000);
  expect(pendingSeen!.reason).toMatch(/Resources|Priority/);
  const tCancel = Date.now();
  ctl.abort();
  const err = await p1;
  const cancelToZeroMs = Date.now() - tCancel;
  expect(err).toBeInstanceOf(CommandAbortedError);
  expect(
    (await cluster.jobsNamed(cancelled.jobName)).filter((j) => j.state === 'PENDING' || j.state === 'RUNNING'),
  ).toEqual([]);
  console.log(`[measure] cancel while queued → zero live jobs of the name: ${cancelToZeroMs} ms`);

  // 2) a long wait; the first waiter dies (its heartbeat throws), a retry adopts the same queued job
  const long = req('longwait');
  const t0 = Date.now();
  let firstJob: string | undefined;
  const died = await slow
    .allocate(long, {
      onProgress: (p) => {
        if (p.state === 'PENDING') {
          firstJob = p.jobId;
          throw new Error('worker died');
        }
      },
    })
    .catch((e: unknown) => e);
  expect((died as Error).message).toBe('worker died');
  expect(firstJob).toMatch(/^\d+$/);
  const progress: AllocationProgress[] = [];
  // the retry is told how long the first attempt had waited (its last heartbeat): the wait keeps its age
  const before = Math.round((Date.now() - t0) / 1000) + 100;
  const p2 = slow.allocate(long, { onProgress: (p) => progress.push(p), waitedSecondsBefore: before });
  await until('the retry to report', async () => progress.length > 0, 30_000);
  expect(progress[0]).toMatchObject({ adoptedPending: true, jobId: firstJob, state: 'PENDING' });
  expect(progress[0]!.waitedSeconds).toBeGreaterThanOrEqual(before);
  // hold the nodes for holdSeconds (many pending polls; nightly: past the old 300 s window of salloc --immediate=300)
  await until(
    `the ${holdSeconds} s hold to pass`,
    async () => Date.now() - t0 > holdSeconds * 1000,
    holdSeconds * 1000 + 20_000,
    1_000,
  );
  expect((await cluster.describe(firstJob!)).state).toBe('PENDING');
  await cluster.release(blocker.jobId);
  const a = await p2;
  created.add(a.jobId);
  console.log(
    `[measure] queued ${Math.round((Date.now() - t0) / 1000)} s behind a job holding every node; granted job ${a.jobId} (same job as before the retry), ${progress.length} progress reports`,
  );
  expect(a.jobId).toBe(firstJob);
  expect(a.adopted).toBe(true);
  expect((await cluster.describe(a.jobId)).state).toBe('RUNNING');
  // the cancelled request never came back once the nodes were free
  expect(
    (await cluster.jobsNamed(cancelled.jobName)).filter((j) => j.state === 'PENDING' || j.state === 'RUNNING'),
  ).toEqual([]);
  await cluster.release(a.jobId);
}
