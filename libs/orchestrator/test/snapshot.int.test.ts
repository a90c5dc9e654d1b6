/**
 * A snapshot on the real stack: configs/two-clusters-local.yaml on both local "clusters" (partitions
 * east and west of the local Slurm), each served by the production worker of its cluster on its own
 * task queue (infersweep-east, infersweep-west), the simulator launched per allocation. West's
 * partition is set DOWN before the snapshot starts, so its cells' allocations wait in Slurm's queue
 * (PartitionDown) while east's cells run; it is restored once every east cell is valid and west has
 * waited longer than the allocate activity's heartbeat timeout. The snapshot completes with every
 * cell valid, west's only after the restore.
 *
 * A cluster that stays down past a sweep's allocation attempts (the snapshot's retry timer and the
 * window's end) is the workflow unit test's (./snapshot-workflow.test.ts): on this stack an
 * allocation attempt waits the plan's grant wait (minutes at the least) times the activity's retries.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Worker } from '@temporalio/worker';
import { planSweep } from '@infersweep/topology';
import {
  cellIdOf,
  snapshotQuery,
  type SnapshotInput,
  type SnapshotProgress,
  type SweepResult,
} from '@infersweep/sweep';
import { SNAPSHOT_WORKFLOW_TYPE, taskQueueFor } from '@infersweep/core';
import {
  buildSweepInput,
  createSweepWorker,
  loadSweepConfig,
  loadWorkerSettings,
  WORKER_SITE_CONFIG_ENV,
} from '@infersweep/orchestrator';
import { until } from '@infersweep/testkit/wait';
import {
  HEARTBEAT_TIMEOUT_SECONDS,
  localSlurm,
  noSubagents,
  notSaturationGated,
  realStackSuite,
  target,
  track,
  workflowBundle,
} from '@infersweep/testkit/sweep-harness';
import { repoRoot, stackEnv } from '@infersweep/testkit/stack';

const CONFIG = join(repoRoot, 'configs', 'two-clusters-local.yaml');
const CLUSTERS = ['east', 'west'] as const;
const slurm = localSlurm();
const suite = realStackSuite(slurm);
const scontrol = (...args: string[]) =>
  execFileSync('scontrol', args, { env: { ...process.env, SLURM_CONF: stackEnv().SLURM_CONF } });

const workers: { worker: Worker; running: Promise<void> }[] = [];
beforeAll(async () => {
  for (const cluster of CLUSTERS) {
    const { worker } = await createSweepWorker({
      cluster,
      target,
      taskQueue: taskQueueFor(cluster),
      workflowBundle: workflowBundle(),
      // the site profiles east and west are the two-cluster config's (as a deployed worker's INFERSWEEP_WORKER_CONFIG)
      deps: { settings: loadWorkerSettings(cluster, { ...process.env, [WORKER_SITE_CONFIG_ENV]: CONFIG }) },
    });
    workers.push({ worker, running: worker.run() });
  }
}, 60_000);
afterAll(async () => {
  scontrol('update', 'PartitionName=west', 'State=UP');
  for (const w of workers) if (w.worker.getState() === 'RUNNING') w.worker.shutdown();
  await Promise.all(workers.map((w) => w.running.catch(() => undefined)));
});

/** The matrix: both orientations of the config at c=2 on both clusters (4 cells). */
function matrix(label: string): SnapshotInput {
  const loaded = loadSweepConfig({ config: CONFIG, clusters: [...CLUSTERS] });
  const cells = CLUSTERS.flatMap((cluster) =>
    ['single-node', 'two-node'].map((orientation) => {
      const plan = planSweep(loaded.config, { orientation, cluster, points: [2], source: loaded.source });
      notSaturationGated(plan);
      noSubagents(plan);
      const sweep = buildSweepInput(plan, {
        configName: 'two',
        configHash: 'test',
        label,
        operatorTimeout: '30 seconds',
      });
      return {
        cellId: cellIdOf('two', orientation, cluster),
        config: 'two',
        orientation,
        cluster,
        policy: 'retry-later' as const,
        sweep,
        resultsRoot: join(stackEnv().INFERSWEEP_STACK, '..', 'test-results', 'sweeps'),
      };
    }),
  );
  return { name: 'int', windowSeconds: 600, retryEverySeconds: 10, maxCellAttempts: 2, cellsPerCluster: 1, cells };
}

describe('a snapshot over two local clusters', () => {
  it('west down while east runs: west waits, runs when restored, and every cell is valid', async () => {
    const label = `snap-${randomUUID().slice(0, 6)}`;
    const input = matrix(label);
    const id = `snapshot-int-${label}`;
    scontrol('update', 'PartitionName=west', 'State=DOWN');
    const handle = await suite.client().workflow.start(SNAPSHOT_WORKFLOW_TYPE, {
      taskQueue: taskQueueFor('east'),
      workflowId: id,
      args: [input],
    });
    const downSince = Date.now();
    track(handle, ...input.cells.map((c) => `${id}-${c.cellId}`));

    // east's cells complete while west's first cell waits for its allocation
    const during = await until(
      'every east cell valid, west down for longer than the allocate heartbeat timeout',
      async () => {
        const p = await handle.query(snapshotQuery);
        const east = p.cells.filter((c) => c.cluster === 'east');
        const waited = Date.now() - downSince > (HEARTBEAT_TIMEOUT_SECONDS.allocate + 5) * 1000;
        return east.every((c) => c.status === 'valid') && waited ? p : undefined;
      },
      150_000,
      1000,
    );
    expect(during.cells.filter((c) => c.cluster === 'west').map((c) => c.status)).toEqual(['running', 'pending']);
    const restoredAt = Date.now();
    scontrol('update', 'PartitionName=west', 'State=UP');

    const r = (await handle.result()) as SnapshotProgress;
    expect(r.phase).toBe('completed');
    expect(r.headline).toMatchObject({ planned: 4, valid: 4, notRun: 0, failed: 0, invalid: 0, operatorActions: 0 });
    expect(r.headline.totalGpuSeconds).toBeGreaterThan(0);
    for (const c of r.cells.filter((x) => x.cluster === 'west')) {
      const sweep = (await suite.client().workflow.getHandle(c.sweepId!).result()) as SweepResult;
      const granted = sweep.allocations.filter((a) => a.grantedAt).map((a) => Date.parse(a.grantedAt!));
      expect(granted.length, c.cellId).toBeGreaterThan(0);
      for (const t of granted) expect(t, c.cellId).toBeGreaterThanOrEqual(restoredAt);
    }
  }, 300_000);
});
