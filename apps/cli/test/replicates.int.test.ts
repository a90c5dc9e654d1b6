/**
 * Replicates across allocations on the real stack: the production worker in this process, the
 * simulator launched per allocation at a seeded per-allocation speed (engineOverride.allocationSpeed),
 * the CLI as a subprocess. One point replicated min 3 must end measured on 3 distinct allocations
 * (job ids differ; each allocation excludes the last one's nodes: 4 nodes, 2 per job), survive a
 * scancel in the middle of its third replicate without measuring a settled replicate again, and
 * show its error bars in the report and its CI in `status`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { Client } from '@temporalio/client';
import { progressQuery, type SweepProgress } from '@infersweep/sweep';
import { taskQueueFor } from '@infersweep/core';
import { cli, testCluster } from '@infersweep/testkit/cli';
import {
  cleanupStarted,
  client as temporalClient,
  liveJobsOf,
  localSlurm,
  notSaturationGated,
  runningWorker,
  start,
  testInput,
  testPlan,
  waitProgress,
} from '@infersweep/testkit/sweep-harness';
import { stackEnv } from '@infersweep/testkit/stack';

const slurm = localSlurm();
const identityOf = (resultPath: string): { jobId: string; nodes: string[] } =>
  (JSON.parse(readFileSync(resultPath, 'utf8')) as { identity: { jobId: string; nodes: string[] } }).identity;

let client: Client;
beforeAll(async () => {
  client = await temporalClient();
});
afterAll(async () => {
  await client?.connection.close();
});

describe('replicates across allocations on the local stack', () => {
  const plan = testPlan(
    'latency',
    [2],
    (p) => {
      notSaturationGated(p);
      p.agentx.profileDurationSeconds = 5; // four allocations: keep each point short
    },
    (cfg) => {
      const sim = cfg.clusters.local!.engineOverride;
      if (sim?.kind !== 'simulator') throw new Error('the local cluster profile runs the simulator');
      sim.allocationSpeed = { seed: 31, sd: 0.1 };
      cfg.orientations.latency!.replicates = { points: 'all', min: 3, independentAllocations: true };
    },
  );
  const input = testInput(plan, 'replicates');
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

  it('3 distinct allocations; a scancel mid-replicate measures no settled replicate again', async () => {
    expect(input.replicates).toMatchObject({ min: 3, max: 3, independentAllocations: true });
    const h = await start(client, input, taskQueue);
    const during = await waitProgress(
      h,
      (p) => {
        // the third replicate under way on its own allocation (not the second's, being released)
        const rp = p.replicates?.points[0];
        return (
          rp?.replicates.length === 2 &&
          rp.current?.status === 'running' &&
          p.allocation !== undefined &&
          !rp.replicates.some((x) => x.jobId === p.allocation!.jobId)
        );
      },
      420_000,
      'the third replicate running',
    );
    const settled = during.replicates!.points[0]!.replicates.map((x) => ({ ...x }));
    const cut = during.allocation!.jobId;
    execFileSync('scancel', [cut], { env: { ...process.env, SLURM_CONF: stackEnv().SLURM_CONF } });
    await h.result();
    final = await h.query(progressQuery);

    expect(final.phase).toBe('completed');
    const rp = final.replicates!.points[0]!;
    expect([rp.concurrency, rp.status, rp.replicates.length]).toEqual([2, 'fixed-n', 3]);
    // the settled replicates are the ones measured before the scancel, their records untouched
    expect(rp.replicates.slice(0, 2)).toEqual(settled);
    for (const x of rp.replicates) expect(identityOf(x.resultPath)).toMatchObject({ jobId: x.jobId, nodes: x.nodes });
    const jobs = rp.replicates.map((x) => x.jobId);
    expect(new Set(jobs).size).toBe(3);
    expect(jobs).not.toContain(cut);
    // each allocation excluded the last one's nodes (4 nodes, 2 per job): replicate 2 ran on other nodes than replicate 1
    expect(rp.replicates[1]!.nodes.filter((n) => rp.replicates[0]!.nodes.includes(n))).toEqual([]);
    const granted = final.allocations.filter((a) => a.jobId !== undefined);
    for (let k = 1; k < granted.length; k++) expect(granted[k]!.excluded).toEqual(granted[k - 1]!.nodes);
    expect(final.allocations.find((a) => a.jobId === cut)!.ended).toBe('CANCELLED');
    // every server ran at its allocation's known speed
    for (const a of final.allocations.filter((x) => x.jobId !== undefined))
      expect(a.speedMultiplier, a.jobId).toBeGreaterThan(0);
    // runPoint ran once per replicate, plus the one the scancel cut
    const history = await h.fetchHistory();
    const runs = (history.events ?? []).filter(
      (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'runPoint',
    ).length;
    expect(runs).toBe(4);
    expect(
      await liveJobsOf(
        slurm,
        final.allocations.map((a) => a.jobName),
      ),
    ).toEqual([]);
  }, 900_000);

  it('status shows the CI and n; the report draws the error bars and the table', async () => {
    const s = await cli(['status', input.sweepId]);
    expect(s.code, s.stderr).toBe(0);
    expect(s.stdout).toMatch(/replicates +1 point\(s\) replicated, none pending/);
    expect(s.stdout).toMatch(/c=2 totalThroughputPerGpu [\d.]+ ± [\d.]+ %.*\(n 3, fixed-n\)/);
    const r = await cli(['report', input.sweepId]);
    expect(r.code, r.stderr).toBe(0);
    const path = /report: (.+\.html)/.exec(r.stdout)?.[1];
    expect(path, r.stdout).toBeDefined();
    const html = readFileSync(path!, 'utf8');
    expect(html).toContain('class="error-bar" data-axis="y"');
    expect(html).toMatch(/<tr data-concurrency="2"><td class="num">2<\/td><td class="num">3<\/td>/);
  });
});
