/** What `infersweep snapshot run|schedule|retry` runs (its options are in ../commands/snapshot.ts). */
import { join } from 'node:path';
import { ScheduleAlreadyRunning } from '@temporalio/client';
import { parseSnapshotConfig } from '@infersweep/topology';
import {
  buildSweepInput,
  dataDir,
  defaultLabel,
  readConfigText,
  startSnapshot,
  SweepAlreadyRunningError,
} from '@infersweep/orchestrator';
import { planSnapshotCells, retryCellUpdate, type SnapshotInput, type SnapshotProgress } from '@infersweep/sweep';
import { SNAPSHOT_WORKFLOW_TYPE, taskQueueFor } from '@infersweep/core';
import { plansToStart } from '../ops/plans';
import { out, EXIT, ExitWith, UsageError } from '../ops/cli';
import { activePollers, withSession } from '../ops/temporal';
import { snapshotLines } from '../ops/render';
import { checkCron, SCHEDULE_PREFIX, scheduleIdOf } from './schedule';

/** Every cell of the snapshot file planned now (each row's config read and planned per cluster). */
function planSnapshot(file: string, label: string): SnapshotInput {
  const { text, shown } = readConfigText(file, 'snapshot file');
  const cfg = parseSnapshotConfig(text, shown);
  const cells = planSnapshotCells(cfg, (r, cluster) => {
    const row = cfg.matrix[r]!;
    const orientations = row.orientations === 'all' ? ['all'] : row.orientations;
    return orientations.flatMap((orientation) => {
      const points = row.points ? { points: row.points.join(',') } : {};
      const { plans, configHash } = plansToStart({ orientation, config: row.config, cluster, ...points });
      return plans.map((p) => ({
        configName: p.sweep,
        sweep: buildSweepInput(p, {
          configName: p.sweep,
          configHash,
          label,
          operatorTimeout: `${cfg.unavailableAfterSeconds} seconds`,
        }),
        resultsRoot: p.resultsRoot ?? join(dataDir, 'results'),
      }));
    });
  });
  return {
    name: cfg.name,
    windowSeconds: cfg.windowSeconds,
    retryEverySeconds: cfg.retryEverySeconds,
    maxCellAttempts: cfg.maxCellAttempts,
    cellsPerCluster: cfg.cellsPerCluster,
    cells,
  };
}

const clustersOf = (input: SnapshotInput) => [...new Set(input.cells.map((c) => c.cluster))];

export interface RunOpts {
  label?: string;
  taskQueue?: string;
  wait?: boolean;
  json?: boolean;
}

export async function run(file: string, opts: RunOpts): Promise<number> {
  if (opts.label !== undefined && !/^[A-Za-z0-9._-]+$/.test(opts.label))
    throw new UsageError(`--label ${JSON.stringify(opts.label)}: use letters, digits, '.', '_' and '-' only`);
  const label = opts.label ?? defaultLabel();
  const input = planSnapshot(file, label);
  const workflowId = `snapshot-${input.name}-${label}`;
  const clusters = clustersOf(input);
  return withSession(async (s) => {
    let started;
    try {
      started = await startSnapshot(
        s.client,
        s.target,
        input,
        workflowId,
        opts.taskQueue ?? taskQueueFor(clusters[0]!),
      );
    } catch (e) {
      if (e instanceof SweepAlreadyRunningError) throw new ExitWith(EXIT.failure, e.message);
      throw e;
    }
    if (!opts.json) {
      out(`snapshot ${workflowId}: ${input.cells.length} cells on ${clusters.join(', ')}`);
      out(`Web UI   ${started.uiLink}`);
      for (const c of clusters) {
        const pollers = await activePollers(s.client, s.target.namespace, c).catch(() => 1);
        if (pollers === 0)
          out(
            `note: no worker polls ${taskQueueFor(c)}: ${c}'s cells wait (within the window) until one does: \`npx nx run worker:serve -- --cluster ${c}\``,
          );
      }
    }
    if (!opts.wait) {
      if (opts.json) out(JSON.stringify({ snapshotId: workflowId, uiLink: started.uiLink, cells: input.cells.length }));
      else out(`follow it: infersweep status ${workflowId}`);
      return EXIT.ok;
    }
    const p = (await started.handle.result()) as SnapshotProgress;
    if (opts.json) out(JSON.stringify({ snapshotId: workflowId, ...p }));
    else for (const l of snapshotLines(p)) out(l);
    return p.headline.valid === p.headline.planned ? EXIT.ok : EXIT.sweepFailed;
  });
}

export async function schedule(file: string, opts: { cron: string; timezone: string; name?: string }): Promise<void> {
  const cron = checkCron(opts.cron);
  const input = planSnapshot(file, 'scheduled');
  const name = `snapshot-${opts.name ?? input.name}`;
  const scheduleId = scheduleIdOf(name);
  const clusters = clustersOf(input);
  await withSession(async (s) => {
    try {
      await s.client.schedule.create({
        scheduleId,
        spec: { cronExpressions: [cron], timezone: opts.timezone },
        action: {
          type: 'startWorkflow',
          workflowType: SNAPSHOT_WORKFLOW_TYPE,
          taskQueue: taskQueueFor(clusters[0]!),
          // Temporal appends the run's time: every run's cells get their own sweep ids and results
          workflowId: `${SCHEDULE_PREFIX}${name}`,
          args: [input],
        },
        // a snapshot still in its window makes the next one skip
        policies: { overlap: 'SKIP', catchupWindow: '1 hour', pauseOnFailure: true },
        state: { note: `created by infersweep from ${file}; plan frozen at creation` },
      });
    } catch (e) {
      if (e instanceof ScheduleAlreadyRunning)
        throw new ExitWith(
          EXIT.failure,
          `schedule ${scheduleId} already exists; \`infersweep schedule delete ${name}\` first`,
        );
      throw e;
    }
    out(
      `schedule ${scheduleId} created: "${cron}" (${opts.timezone}) → ${input.cells.length} cells on ${clusters.join(', ')}`,
    );
    out(`  every run: one snapshot, window ${input.windowSeconds} s; see \`infersweep schedule describe ${name}\``);
  });
}

export async function retry(id: string, cellId: string): Promise<void> {
  await withSession(async (s) => {
    const p = await s.client.workflow.getHandle(id).executeUpdate(retryCellUpdate, { args: [{ cellId }] });
    out(`cell ${cellId} tries again (operator actions: ${p.operatorActions})`);
  });
}
