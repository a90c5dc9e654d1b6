/**
 * A cancel at each phase of a sweep's life leaves no Slurm job behind and is recorded, on the real
 * stack (Temporal dev server, local Slurm over the loopback sshd, the simulator per allocation).
 * Cancel while queued is ./reliability.int.test.ts, cancel mid-point (client running) is
 * ./sweep-recovery.int.test.ts #6; here: while the server launches, while it comes up, while the point
 * profiles, and while the finished sweep releases its allocation. Each phase is detected from the
 * progress query (and, inside a point, from the point activity's heartbeat).
 */
import { describe, expect, it } from 'vitest';
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { progressQuery, type SweepProgress } from '@infersweep/sweep';
import { allocationJobName } from '@infersweep/core';
import { currentDeploymentTag } from '@infersweep/orchestrator';
import {
  allowingNodeBinaries,
  liveJobsOf,
  localSlurm,
  notSaturationGated,
  pointRunning,
  profileSeconds,
  realStackSuite,
  startOnNewWorker,
  testInput,
  testPlan,
  waitHeartbeat,
  waitProgress,
} from '@infersweep/testkit/sweep-harness';

const slurm = localSlurm();
const suite = realStackSuite(slurm);

/** The simulator starts listening only after this long, so `waiting-ready` lasts at least as long. */
const SLOW_START_SECONDS = 8;

interface Phase {
  name: string;
  /** resolves once the sweep is in this phase */
  reached(h: WorkflowHandle): Promise<unknown>;
  /** how the sweep ends: cancelled, or (a cancel during the final release) completed as it was completing */
  outcome: { closed: string; phase: string; points: [number, string][] };
}

const CANCELLED = { closed: 'CANCELLED', phase: 'cancelled', points: [[1, 'pending']] as [number, string][] };

const phases: Phase[] = [
  {
    name: 'launching',
    outcome: CANCELLED,
    reached: (h) => waitProgress(h, (p) => p.phase === 'launching', 240_000, 'launching'),
  },
  {
    name: 'waiting-ready',
    outcome: CANCELLED,
    reached: (h) => waitProgress(h, (p) => p.phase === 'waiting-ready', 240_000, 'waiting-ready'),
  },
  {
    name: 'profiling',
    // the point's state stays as the cancel found it (running): the progress of a cancelled sweep
    // does not close its running point (the sweep's phase and status say cancelled)
    outcome: { ...CANCELLED, points: [[1, 'running']] },
    reached: async (h) => {
      await waitProgress(h, pointRunning(1), 240_000, 'point c=1 running');
      return waitHeartbeat(h, (d) => d.concurrency === 1 && d.phase === 'profiling', 120_000, 'point c=1 profiling');
    },
  },
  {
    // every point is done and the run is closing: the final phase is published before the release
    name: 'cleaning-up',
    outcome: { closed: 'COMPLETED', phase: 'completed', points: [[1, 'done']] },
    reached: async (h) => {
      await waitProgress(
        h,
        (p) => p.phase === 'completed' && p.allocation !== undefined,
        300_000,
        'closing with the allocation held',
      );
      expect((await h.describe()).status.name).toBe('RUNNING');
    },
  },
];

describe('cancel at each phase', () => {
  it.each(phases)(
    'a cancel while $name leaves no live Slurm job and is recorded',
    async (phase) => {
      const plan = testPlan('latency', [1], (p) => {
        notSaturationGated(p);
        profileSeconds(5)(p);
        // a server that takes a while to listen: the readiness wait is long enough to be caught
        for (const n of p.nodes)
          n.launchArgv = ['bash', '-c', `sleep ${SLOW_START_SECONDS}; exec "$@"`, '_', ...n.launchArgv];
      });
      const input = testInput(plan, `cancel-${phase.name}`);
      // the wrapper runs under bash: this worker lists it among the binaries it launches on the nodes
      const { worker, h } = await startOnNewWorker(suite.client(), input, allowingNodeBinaries('local', 'bash'));
      const t0 = Date.now();
      const { progress, result } = await worker.runUntil(async () => {
        await phase.reached(h);
        await h.cancel();
        const result = await h.result().then(
          (r: unknown) => r,
          (e: unknown) => e,
        );
        return { progress: await h.query(progressQuery), result };
      });
      const seconds = (Date.now() - t0) / 1000;
      // zero live jobs under any allocation name this sweep could have used
      const names = [1, 2, 3].map((a) => allocationJobName(input.sweepId, a, currentDeploymentTag()));
      expect(await liveJobsOf(slurm, names)).toEqual([]);
      expect(progress.allocations.map((a) => [a.jobName, a.ended])).toEqual([[names[0], 'released']]);
      const history = (await h.fetchHistory()).events ?? [];
      expect(history.filter((e) => e.workflowExecutionCancelRequestedEventAttributes).length).toBe(1);
      expect({
        closed: (await h.describe()).status.name,
        phase: progress.phase,
        points: pointStatuses(progress),
      }).toEqual(phase.outcome);
      // a cancelled sweep's result is a WorkflowFailedError (its cause the cancellation); a completed one its SweepResult
      expect(result instanceof WorkflowFailedError).toBe(phase.outcome.closed === 'CANCELLED');
      console.log(`[measure] cancel while ${phase.name}: sweep closed ${seconds.toFixed(1)} s after start`);
    },
    420_000,
  );
});

const pointStatuses = (p: SweepProgress) => p.points.map((x) => [x.concurrency, x.status]);
