/**
 * A snapshot on the real stack (used by snapshot.int.test.ts per commit and snapshot.nightly.test.ts):
 * configs/two-clusters-local.yaml on both local "clusters" (partitions east and west of the local
 * Slurm), each served by the production worker of its cluster on its own task queue (infersweep-east,
 * infersweep-west), the simulator launched per allocation. West's partition is set DOWN before the
 * snapshot starts, so its cells' allocations wait in Slurm's queue (PartitionDown) while east's cells
 * run; it is restored once every east cell is valid and the outage has lasted `outageMs`. The
 * snapshot must complete with every cell valid, west's granted only after the restore.
 *
 * A cluster that stays down past a sweep's allocation attempts (the snapshot's retry timer and the
 * window's end) is the workflow unit test's (./snapshot-workflow.test.ts): on this stack one
 * allocation attempt waits the plan's grant wait (a minute at the least) times the activity's retries.
 */
import { afterAll, beforeAll, expect } from 'vitest';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Worker } from '@temporalio/worker';
import type { Client } from '@temporalio/client';
import { planSweep } from '@infersweep/topology';
import {
  cellIdOf,
  snapshotQuery,
  type SnapshotCellInput,
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
  noSubagents,
  notSaturationGated,
  target,
  track,
  workflowBundle,
} from '@infersweep/testkit/sweep-harness';
import { repoRoot, stackEnv } from '@infersweep/testkit/stack';
import { recordHistory } from '@infersweep/testkit/history-fixtures';

const CONFIG = join(repoRoot, 'configs', 'two-clusters-local.yaml');
const CLUSTERS = ['east', 'west'] as const;
const scontrol = (...args: string[]) =>
  execFileSync('scontrol', args, { env: { ...process.env, SLURM_CONF: stackEnv().SLURM_CONF } });

/** The production worker of east and of west on their own task queues, for the file's tests; west's partition UP after. */
export function twoClusterWorkers(): void {
  const workers: { worker: Worker; running: Promise<void> }[] = [];
  beforeAll(async () => {
    for (const cluster of CLUSTERS) {
      const { worker } = await createSweepWorker({
        cluster,
        target,
        taskQueue: taskQueueFor(cluster),
        workflowBundle: workflowBundle(),
        // the site profiles east and west are the two-cluster config's (a deployed worker's INFERSWEEP_WORKER_CONFIG)
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
}

/**
 * The cells: every orientation in `orientations` at c=2 on both clusters, once per config name in
 * `configs` (the same file under several names: more cells of the same size).
 */
function cellsOf(configs: string[], orientations: string[], label: string): SnapshotCellInput[] {
  const loaded = loadSweepConfig({ config: CONFIG, clusters: [...CLUSTERS] });
  return CLUSTERS.flatMap((cluster) =>
    configs.flatMap((config) =>
      orientations.map((orientation) => {
        const plan = planSweep(loaded.config, { orientation, cluster, points: [2], source: loaded.source });
        notSaturationGated(plan);
        noSubagents(plan);
        const meta = { configName: config, configHash: 'test', label, operatorTimeout: '30 seconds' };
        return {
          cellId: cellIdOf(config, orientation, cluster),
          config,
          orientation,
          cluster,
          policy: 'retry-later' as const,
          sweep: buildSweepInput(plan, meta),
          // a root (and so a default history store) per snapshot: cells are not judged against other tests' sweeps
          resultsRoot: join(stackEnv().INFERSWEEP_STACK, '..', 'test-results', 'sweeps', `snapshot-${label}`),
        };
      }),
    ),
  );
}

/** Run the snapshot with west down for at least `outageMs` and until east is done; check it completes, every cell valid. */
export async function expectSnapshotWithWestDown(
  client: Client,
  opts: { configs: string[]; orientations: string[]; outageMs: number; timeoutMs: number; scenario?: string },
): Promise<SnapshotProgress> {
  const label = `snap-${randomUUID().slice(0, 6)}`;
  const cells = cellsOf(opts.configs, opts.orientations, label);
  const id = `snapshot-int-${label}`;
  const input = {
    name: 'int',
    windowSeconds: 3600,
    retryEverySeconds: 10,
    maxCellAttempts: 2,
    cellsPerCluster: 1,
    cells,
  };
  scontrol('update', 'PartitionName=west', 'State=DOWN');
  const downSince = Date.now();
  const handle = await client.workflow.start(SNAPSHOT_WORKFLOW_TYPE, {
    taskQueue: taskQueueFor('east'),
    workflowId: id,
    args: [input],
  });
  track(handle, ...cells.map((c) => `${id}-${c.cellId}`));

  // east's cells complete while west's first cell waits for its allocation
  const during = await until(
    `every east cell valid and west down for ${opts.outageMs} ms`,
    async () => {
      const p = await handle.query(snapshotQuery);
      const east = p.cells.filter((c) => c.cluster === 'east');
      return east.every((c) => c.status === 'valid') && Date.now() - downSince > opts.outageMs ? p : undefined;
    },
    opts.timeoutMs,
    1000,
  );
  const west = during.cells.filter((c) => c.cluster === 'west');
  expect(west.map((c) => c.status)).toEqual(['running', ...Array(west.length - 1).fill('pending')]);
  const restoredAt = Date.now();
  scontrol('update', 'PartitionName=west', 'State=UP');

  const r = (await handle.result()) as SnapshotProgress;
  // the snapshot's history: a replay fixture when INFERSWEEP_RECORD_HISTORIES=1 (libs/testkit/src/history-fixtures.ts)
  if (opts.scenario) await recordHistory(handle, opts.scenario);
  expect(r.phase).toBe('completed');
  expect(r.headline).toMatchObject({
    planned: cells.length,
    valid: cells.length,
    notRun: 0,
    failed: 0,
    invalid: 0,
    operatorActions: 0,
  });
  expect(r.headline.totalGpuSeconds).toBeGreaterThan(0);
  for (const c of r.cells.filter((x) => x.cluster === 'west')) {
    const sweep = (await client.workflow.getHandle(c.sweepId!).result()) as SweepResult;
    const granted = sweep.allocations.filter((a) => a.grantedAt).map((a) => Date.parse(a.grantedAt!));
    expect(granted.length, c.cellId).toBeGreaterThan(0);
    for (const t of granted) expect(t, c.cellId).toBeGreaterThanOrEqual(restoredAt);
  }
  return r;
}

/** What the per-commit outage outlasts: the allocate activity's heartbeat timeout, plus a margin. */
export const ALLOCATE_HEARTBEAT_MS = (HEARTBEAT_TIMEOUT_SECONDS.allocate + 5) * 1000;
