/**
 * Recovery of the durable sweep on the real stack: losses (scancel, a node set down), a killed worker, a restarted
 * Temporal server, a cancel, the time guard and the operator wait. Each test is about recovery, not
 * measurement: the points are not gated on client saturation (a point invalidated by a loaded test machine's event
 * loop would hide them), so this file runs in a lane beside the saturation-gated ones (test/lanes.ts, lane D).
 * The measuring sweeps are in ./sweep.int.test.ts.
 */
import { defaultWorkerSettings } from '@infersweep/orchestrator';
import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { WorkflowFailedError } from '@temporalio/client';
import { abortUpdate, retryNowUpdate, skipPointUpdate, type SweepProgress, type SweepResult } from '@infersweep/sweep';
import { repoRoot, stackEnv } from '@infersweep/testkit/stack';
import {
  keepHistory,
  expectNoLeak as expectNoLeakOf,
  localSlurm,
  newWorker,
  notSaturationGated,
  pointRunning,
  readPoint,
  realStackSuite,
  signalGroup,
  spawnWorker,
  start,
  startOnNewWorker,
  testInput,
  testPlan,
  waitHeartbeat,
  waitProgress,
} from '@infersweep/testkit/sweep-harness';

const slurm = localSlurm();
const suite = realStackSuite(slurm);

const expectNoLeak = (p: Pick<SweepProgress, 'allocations'>) => expectNoLeakOf(slurm, p);

describe('durable sweep recovery on the real stack', () => {
  it('2. scancel during point 2: re-allocation, point 2 rerun, point 3 runs, point 1 not rerun', async () => {
    const plan = testPlan('latency', [1, 2, 4], notSaturationGated);
    const input = testInput(plan, 'scancel');
    const { worker, h } = await startOnNewWorker(suite.client(), input);
    const result = (await worker.runUntil(async () => {
      const during = await waitProgress(h, pointRunning(2), 120_000, 'point c=2 running');
      const first = during.allocation!.jobId;
      execFileSync('scancel', [first], { env: { ...process.env, SLURM_CONF: stackEnv().SLURM_CONF } });
      const later = await waitProgress(
        h,
        (p) => !!p.allocation && p.allocation.jobId !== first,
        120_000,
        'a second allocation',
      );
      expect(later.allocations[0]!.ended).toBe('CANCELLED');
      return h.result();
    })) as SweepResult;
    expect(result.status).toBe('completed');
    expect(result.allocations.length).toBeGreaterThanOrEqual(2);
    const [a1, a2] = result.allocations;
    expect(a2!.jobId).not.toBe(a1!.jobId);
    expect(result.points.every((p) => p.status === 'done')).toBe(true);
    expect(readPoint(input.resultsDir, 1).identity.jobId).toBe(a1!.jobId);
    expect(result.points[0]!.attempts).toBe(1);
    expect(readPoint(input.resultsDir, 2).identity.jobId).toBe(a2!.jobId);
    expect(readPoint(input.resultsDir, 4).identity.jobId).toBe(a2!.jobId);
    // point 1 ran exactly once: one runPoint activity for c=1 in the history
    const history = await h.fetchHistory();
    const scheduled = (history.events ?? []).filter(
      (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'runPoint',
    );
    expect(scheduled.length).toBe(4); // c=1, c=2 (lost), c=2 again, c=4
    await expectNoLeak(result);
    await keepHistory(h, 'scancel-mid-point');
  });

  it('3. a node set down mid-point: same recovery, the allocation ends NODE_FAIL', async () => {
    const plan = testPlan('latency', [1, 2, 4], notSaturationGated);
    const input = testInput(plan, 'nodedown');
    const { worker, h } = await startOnNewWorker(suite.client(), input);
    let downed: string | undefined;
    try {
      const result = (await worker.runUntil(async () => {
        const during = await waitProgress(h, pointRunning(2), 120_000, 'point c=2 running');
        downed = during.allocation!.nodes[1]!;
        execFileSync('scontrol', ['update', `nodename=${downed}`, 'state=down', 'reason=infersweep-test'], {
          env: { ...process.env, SLURM_CONF: stackEnv().SLURM_CONF },
        });
        return h.result();
      })) as SweepResult;
      expect(result.status).toBe('completed');
      expect(result.allocations[0]!.ended).toBe('NODE_FAIL');
      expect(result.points.every((p) => p.status === 'done')).toBe(true);
      expect(readPoint(input.resultsDir, 1).identity.jobId).toBe(result.allocations[0]!.jobId);
      expect(readPoint(input.resultsDir, 2).identity.jobId).toBe(result.allocations.at(-1)!.jobId);
      await expectNoLeak(result);
      await keepHistory(h, 'node-down-mid-point');
    } finally {
      if (downed)
        execFileSync('scontrol', ['update', `nodename=${downed}`, 'state=resume'], {
          env: { ...process.env, SLURM_CONF: stackEnv().SLURM_CONF },
        });
    }
  });

  it('4. SIGKILL the worker mid-point, start another: the sweep completes, no leaked job', async () => {
    const plan = testPlan('latency', [1, 2, 4], notSaturationGated);
    const input = testInput(plan, 'workerkill');
    const tq = `t-${randomUUID()}`;
    let w = spawnWorker(tq);
    const h = await start(suite.client(), input, tq);
    try {
      await waitProgress(h, pointRunning(2), 180_000, 'point c=2 running');
      signalGroup(w, 'SIGKILL');
      w = spawnWorker(tq);
      const result = (await h.result()) as SweepResult;
      expect(result.status).toBe('completed');
      expect(result.points.every((p) => p.status === 'done')).toBe(true);
      expect(readPoint(input.resultsDir, 1).identity.jobId).toBe(result.allocations[0]!.jobId);
      await expectNoLeak(result);
    } finally {
      signalGroup(w, 'SIGTERM');
    }
  });

  it('5. restart the Temporal dev server (same DB file) mid-sweep: the sweep completes', async () => {
    const plan = testPlan('latency', [1, 2], notSaturationGated);
    const input = testInput(plan, 'temporalrestart');
    const { worker, h } = await startOnNewWorker(suite.client(), input);
    const result = (await worker.runUntil(async () => {
      await waitProgress(h, pointRunning(1), 120_000, 'point c=1 running');
      const pidFile = join(stackEnv().INFERSWEEP_STACK, 'pids', 'temporal.pid');
      const pid = Number(readFileSync(pidFile, 'utf8'));
      execFileSync('bash', [join(repoRoot, 'scripts/stack.sh'), 'restart-temporal'], { stdio: 'ignore' });
      expect(Number(readFileSync(pidFile, 'utf8'))).not.toBe(pid);
      return h.result();
    })) as SweepResult;
    expect(result.status).toBe('completed');
    expect(result.points.every((p) => p.status === 'done')).toBe(true);
  });

  it('6. cancel the workflow mid-point: allocation released within 60 s, logs captured, status Cancelled', async () => {
    const plan = testPlan('latency', [1, 2, 4], notSaturationGated);
    const input = testInput(plan, 'cancel');
    const { worker, h } = await startOnNewWorker(suite.client(), input);
    const progress = await worker.runUntil(async () => {
      const during = await waitProgress(h, pointRunning(1), 120_000, 'point c=1 running');
      const jobId = during.allocation!.jobId;
      const t0 = Date.now();
      await h.cancel();
      await expect(h.result()).rejects.toBeInstanceOf(WorkflowFailedError);
      for (;;) {
        const info = await slurm.describe(jobId);
        if (!['RUNNING', 'COMPLETING', 'PENDING'].includes(info.state)) break;
        expect(Date.now() - t0).toBeLessThan(60_000);
        await new Promise((r) => setTimeout(r, 250));
      }
      expect(Date.now() - t0).toBeLessThan(60_000);
      return h.query<SweepProgress>('progress');
    });
    const d = await h.describe();
    expect(d.status.name).toBe('CANCELLED');
    const logs = join(input.resultsDir, 'logs', 'server-1');
    expect(existsSync(logs) && readdirSync(logs).length).toBe(2);
    expect(progress.phase).toBe('cancelled');
    expect(progress.allocations[0]!.ended).toBe('released');
    await expectNoLeak(progress);
  });

  it('7. time guard: an allocation with too little time left for the next point is replaced before the point starts', async () => {
    const plan = testPlan('latency', [1, 2, 4], notSaturationGated);
    const input = testInput(plan, 'timeguard');
    const { worker, h } = await startOnNewWorker(suite.client(), input);
    const budget = plan.pointBudgets[1]!.totalSeconds;
    const result = (await worker.runUntil(async () => {
      const during = await waitProgress(h, pointRunning(1), 120_000, 'point c=1 running');
      // past point 1's own time guard: its client is profiling
      await waitHeartbeat(h, (d) => d.concurrency === 1 && d.phase === 'profiling', 60_000, 'point c=1 profiling');
      const jobId = during.allocation!.jobId;
      // shrink the running allocation so that point 1 still finishes but point 2 cannot
      const info = await slurm.describe(jobId);
      const elapsed = plan.timeLimit.minutes * 60 - (info.timeLeftSeconds ?? 0);
      const minutes = Math.ceil((elapsed + 30) / 60);
      const left = minutes * 60 - elapsed;
      expect(left).toBeLessThan(budget + 30 + 60);
      execFileSync('scontrol', ['update', `jobid=${jobId}`, `TimeLimit=${minutes}`], {
        env: { ...process.env, SLURM_CONF: stackEnv().SLURM_CONF },
      });
      return h.result();
    })) as SweepResult;
    expect(result.status).toBe('completed');
    expect(result.allocations[0]!.ended).toBe('insufficient-time');
    expect(result.points.every((p) => p.status === 'done')).toBe(true);
    expect(result.points[0]!.attempts).toBe(1);
    // the point after the guard ran on the new allocation; nothing was killed mid-point
    expect(readPoint(input.resultsDir, 2).identity.jobId).toBe(result.allocations[1]!.jobId);
    expect(result.points.every((p) => !p.lastError)).toBe(true);
    await expectNoLeak(result);
    await keepHistory(h, 'time-guard');
  });

  it('8. past the allocation-attempt budget the sweep waits for an operator: retryNow retries, skip is validated, abort ends it', async () => {
    const plan = testPlan('latency', [1, 2], (p) => {
      p.slurm.partition = 'no-such-partition'; // salloc refuses at once: a permanent allocation error
    });
    const input = { ...testInput(plan, 'operator'), maxAllocationAttempts: 1 };
    const tq = `t-${randomUUID()}`;
    // the partition is the site profile's (the worker's setting): this worker's profile names the bad one
    const settings = defaultWorkerSettings('local');
    settings.clusters.local = { ...settings.clusters.local!, partition: 'no-such-partition' };
    const worker = await newWorker(tq, 'local', { settings });
    const h = await start(suite.client(), input, tq);
    const result = (await worker.runUntil(async () => {
      const waiting = await waitProgress(h, (p) => p.phase === 'awaiting-operator', 120_000, 'awaiting-operator');
      expect(waiting.awaitingOperator?.reason).toMatch(/1 allocation attempts failed/);
      expect(waiting.allocations).toHaveLength(1);
      expect(waiting.allocations[0]!.ended).toBe('allocation-failed');
      expect(waiting.allocations[0]!.reason).toMatch(/partition/i);
      // an unknown point is refused by the validator, with the points it has
      await expect(h.executeUpdate(skipPointUpdate, { args: [{ concurrency: 3 }] })).rejects.toMatchObject({
        cause: { message: expect.stringMatching(/no concurrency point 3; this sweep has 1, 2/) },
      });
      // retryNow: one more attempt (it fails the same way) and the sweep waits again
      await h.executeUpdate(retryNowUpdate, { args: [{ reason: 'test' }] });
      await waitProgress(
        h,
        (p) => p.phase === 'awaiting-operator' && p.allocations.length === 2,
        120_000,
        'second wait',
      );
      await h.executeUpdate(skipPointUpdate, { args: [{ concurrency: 1, reason: 'operator skip' }] });
      await h.executeUpdate(abortUpdate, { args: [{ reason: 'partition is gone' }] });
      return h.result();
    })) as SweepResult;
    expect(result.status).toBe('aborted');
    expect(result.points.map((p) => [p.concurrency, p.status])).toEqual([
      [1, 'skipped'],
      [2, 'pending'],
    ]);
    await expectNoLeak(result);
  });
});
