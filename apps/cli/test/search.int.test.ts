/**
 * Adaptive points on the real stack: the production worker (real activities) in this process, the
 * simulator launched per allocation with a known capacity, the CLI as a subprocess. The search
 * starts from one configured point and must find the largest concurrency the simulator serves
 * without refusing requests, survive a scancel of its allocation mid-search without running a
 * finished point again, and show the limit in `status` and the report.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import type { Client } from '@temporalio/client';
import { progressQuery, type SweepProgress } from '@infersweep/sweep';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ResultsLayout, taskQueueFor } from '@infersweep/core';
import { readRequestRecords } from '@infersweep/agentx';
import { cli, testCluster } from '@infersweep/testkit/cli';
import {
  cleanupStarted,
  keepHistory,
  client as temporalClient,
  liveJobsOf,
  localSlurm,
  noSubagents,
  notSaturationGated,
  readPoint,
  runningWorker,
  start,
  testInput,
  testPlan,
  waitProgress,
} from '@infersweep/testkit/sweep-harness';
import { repoRoot, stackEnv } from '@infersweep/testkit/stack';

const slurm = localSlurm();

/**
 * The simulator serves 4 requests at once and queues 2 more; beyond that it answers HTTP 429
 * "waiting requests queue is full" (llm-d-inference-sim --max-num-seqs, --max-waiting-queue-length).
 * A point whose lanes outnumber that capacity has refused requests (in warm-up: the point is
 * cancelled, invalid). So the SLO "at most 5 % failed requests" holds up to a concurrency between
 * max-num-seqs (every request runs) and max-num-seqs + queue (every request runs or waits); where
 * exactly depends on how often the traces' subagents add requests beyond the lanes.
 */
const SIM = { maxNumSeqs: 4, waiting: 2 };
const REFUSED = 'Failed to enqueue request, waiting requests queue is full';

let client: Client;
beforeAll(async () => {
  client = await temporalClient();
});
afterAll(async () => {
  await client?.connection.close();
});

describe('adaptive points: the SLO limit of a simulator with a known capacity', () => {
  // traces without subagents: the simulator's capacity counts requests, and the limit is asserted in sessions
  const plan = testPlan(
    'balanced',
    [2],
    (p) => {
      notSaturationGated(p);
      noSubagents(p);
    },
    (cfg) => {
      const sim = cfg.clusters.local!.engineOverride;
      if (sim?.kind !== 'simulator') throw new Error('the local cluster profile runs the simulator');
      sim.maxNumSeqs = SIM.maxNumSeqs;
      sim.extraArgs = [...sim.extraArgs, '--max-waiting-queue-length', String(SIM.waiting)];
      const o = cfg.orientations.balanced!;
      o.concurrency = [2];
      o.search = {
        goal: ['slo-limit'],
        slo: { maxErrorRate: 0.05 },
        minConcurrency: 1,
        maxConcurrency: 16,
        maxPoints: 8,
        resolution: { absolute: 1 },
      };
    },
  );
  const input = testInput(plan, 'search');
  // a task queue of its own (the CLI finds the worker polling it by the queue's cluster name)
  const taskQueue = taskQueueFor(testCluster());
  let worker: { stop(): Promise<void> } | undefined;
  let final: SweepProgress;

  beforeAll(async () => {
    worker = await runningWorker(taskQueue);
  });
  afterAll(async () => {
    await cleanupStarted(slurm);
    await worker?.stop();
  });

  it('the plan states the search bounds and a time limit for the worst case', () => {
    expect(plan.search).toMatchObject({
      minConcurrency: 1,
      maxConcurrency: 16,
      maxAddedPoints: 8,
      sloLimitPointBound: 4 + 4,
    });
    expect(plan.timeLimit.derivation).toContain('9 × (warmup');
    expect(plan.nodes[0]!.launchArgv.join(' ')).toContain(`--max-num-seqs ${SIM.maxNumSeqs}`);
  });

  it('finds the limit, survives a scancel mid-search without re-running finished points', async () => {
    const h = await start(client, input, taskQueue);
    // scancel while the second point the search added runs
    const during = await waitProgress(
      h,
      (p) =>
        p.phase === 'running-point' &&
        p.points.filter((x) => x.origin === 'search').length >= 2 &&
        p.currentPoint === p.points.at(-1)!.concurrency,
      600_000,
      'the second added point running',
    );
    const first = during.allocation!.jobId;
    const cut = during.currentPoint!;
    const finishedBefore = during.points
      .filter((x) => x.status === 'done' || x.status === 'invalid')
      .map((x) => x.concurrency);
    expect(finishedBefore.length).toBeGreaterThanOrEqual(2);
    execFileSync('scancel', [first], { env: { ...process.env, SLURM_CONF: stackEnv().SLURM_CONF } });
    await h.result();
    final = await h.query(progressQuery);

    expect(final.phase).toBe('completed');
    expect(final.allocations[0]!.ended).toBe('CANCELLED');
    const limit = final.search!.limit!;
    expect(final.search!.stoppedBy).toBe('resolved');
    expect(limit.status).toBe('found');
    expect(limit.above).toBe(limit.below! + 1);
    expect(limit.below).toBeGreaterThanOrEqual(SIM.maxNumSeqs);
    expect(limit.below).toBeLessThanOrEqual(SIM.maxNumSeqs + SIM.waiting);
    // the evidence is the simulator's: the failing point's requests were refused by its full queue
    const refused = readRequestRecords(new ResultsLayout(input.resultsDir).pointRequests(limit.above!)).filter(
      (r) => r.error === REFUSED,
    );
    expect(refused.length).toBeGreaterThan(0);
    const below = readPoint(input.resultsDir, limit.below!);
    expect(
      below.request_accounting.records_error_dropped / below.request_accounting.records_profiled,
    ).toBeLessThanOrEqual(0.05);
    // within the stated bound; configured point first, every other one added by the search with its reason
    const added = final.points.filter((x) => x.origin === 'search');
    expect(added.length).toBeLessThanOrEqual(plan.search!.sloLimitPointBound!);
    expect(final.points[0]).toMatchObject({ concurrency: 2, status: 'done' });
    expect(final.points[0]!.origin).toBeUndefined();
    expect(added.every((x) => /^(bracket|bisect): /.test(x.searchReason ?? ''))).toBe(true);
    expect(limit.ci).toEqual({ lower: limit.below, upper: limit.below });
    // finished points ran once, on the first allocation; only the cut point ran again
    const history = await h.fetchHistory();
    const runs = (history.events ?? []).filter(
      (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'runPoint',
    ).length;
    // every point once, each re-measure once more, and the cut point again
    const windows = final.points.reduce((n, x) => n + (x.windows?.length ?? 0), 0);
    expect(runs).toBe(final.points.length + windows + 1);
    for (const c of finishedBefore) expect(readPoint(input.resultsDir, c).identity.jobId).toBe(first);
    expect(readPoint(input.resultsDir, cut).identity.jobId).not.toBe(first);
    expect(
      await liveJobsOf(
        slurm,
        final.allocations.map((a) => a.jobName),
      ),
    ).toEqual([]);
    // the search's decisions replay: the fresh history replays now, and is kept as a fixture (replay.test.ts)
    await keepHistory(h, 'adaptive-search-scancel');
  }, 1_200_000);

  it('status and the report show the added points and the limit with its bracketing points', async () => {
    const limit = final.search!.limit!;
    const s = await cli(['status', input.sweepId]);
    expect(s.code, s.stderr).toBe(0);
    const artifacts = join(repoRoot, 'test-results', 'search');
    mkdirSync(artifacts, { recursive: true });
    writeFileSync(join(artifacts, 'status.txt'), s.stdout);
    // the limit with its interval, the bracketing points with their probabilities and the binding bound
    expect(s.stdout).toMatch(
      new RegExp(
        `SLO limit ${limit.below}, 95 % CI \\[\\d+, \\d+\\] \\(c=${limit.below} meets the SLO, P [\\d.]+; c=${limit.above} fails, P [\\d.]+, (saturation|error rate); resolution 1\\)`,
      ),
    );
    expect(s.stdout).toMatch(/\(added by search\)/);
    const r = await cli(['report', input.sweepId]);
    expect(r.code, r.stderr).toBe(0);
    const path = /report: (.+\.html)/.exec(r.stdout)?.[1];
    expect(path, r.stdout).toBeDefined();
    const html = readFileSync(path!, 'utf8');
    expect(html).toContain(`<g class="mark slo-limit" data-concurrency="${limit.below}">`);
    expect(html).toContain(`between c=${limit.below} and c=${limit.above}`);
  });
});
