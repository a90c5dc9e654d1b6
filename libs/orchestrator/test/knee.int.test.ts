/**
 * The knee on the real stack (docs/search.md "The knee"): the simulator runs at most 4 sequences
 * at once (llm-d-inference-sim --max-num-seqs 4, a capacity the KV cache of a real engine sets) and
 * queues the rest without refusing them, so its throughput grows with concurrency up to 4 and stays
 * flat after: a corner. The frontier search over c = 2, 4, 8 must find it at 4 with its candidate
 * set, and add no point chasing it (resolution 4: both intervals beside it are already resolved).
 * The smooth curve ("no knee") and the refinement bound are unit tests (libs/sweep/test/knee.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { progressQuery } from '@infersweep/sweep';
import {
  cleanupStarted,
  client as temporalClient,
  localSlurm,
  noSubagents,
  notSaturationGated,
  runningWorker,
  start,
  testInput,
  testPlan,
} from '@infersweep/testkit/sweep-harness';

const CAPACITY = 4;
const slurm = localSlurm();

let client: Client;
let worker: { stop(): Promise<void> } | undefined;
const taskQueue = `knee-${randomUUID().slice(0, 8)}`;

beforeAll(async () => {
  client = await temporalClient();
  worker = await runningWorker(taskQueue);
});
afterAll(async () => {
  await cleanupStarted(slurm);
  await worker?.stop();
  await client?.connection.close();
});

describe('the knee of a simulator with a capacity cliff', () => {
  it('is found at the capacity, with its candidate set, and no point is added chasing it', async () => {
    const plan = testPlan(
      'latency',
      [2, 4, 8],
      (p) => {
        notSaturationGated(p);
        noSubagents(p);
        // a window of several request lifetimes (a request streams up to ~5 s here): with the shipped 10 s
        // a point's throughput counts a handful of request starts, and CI saw c=2, 4, 8 at 335, 432, 498
        // tokens/s/GPU (no fall of 0.5) where the capacity makes c=4 and c=8 equal
        p.agentx.profileDurationSeconds = 30;
      },
      (cfg) => {
        const sim = cfg.clusters.local!.engineOverride;
        if (sim?.kind !== 'simulator') throw new Error('the local cluster profile runs the simulator');
        sim.maxNumSeqs = CAPACITY;
        // every request beyond the capacity waits, none is refused: the points stay valid
        sim.extraArgs = [...sim.extraArgs, '--max-waiting-queue-length', '64'];
        const o = cfg.orientations.latency!;
        o.concurrency = [2, 4, 8];
        o.search = {
          goal: ['frontier'],
          minConcurrency: 1,
          maxConcurrency: 8,
          maxPoints: 2,
          resolution: { absolute: 4 },
        };
      },
    );
    const input = testInput(plan, 'knee');
    const h = await start(client, input, taskQueue);
    await h.result();
    const p = await h.query(progressQuery);
    const throughput = p.points.map((x) => [x.concurrency, x.summary?.totalThroughputPerGpu?.toFixed(1)]);
    expect(
      p.points.every((x) => x.status === 'done'),
      JSON.stringify(p.points.map((x) => [x.concurrency, x.status, x.lastError])),
    ).toBe(true);
    expect(p.search?.knee, JSON.stringify(throughput)).toMatchObject({
      concurrency: CAPACITY,
      status: 'found',
      candidates: [CAPACITY],
      ci: { lower: CAPACITY, upper: CAPACITY },
    });
    expect(p.points.filter((x) => x.origin === 'search')).toEqual([]);
  }, 300_000);
});
