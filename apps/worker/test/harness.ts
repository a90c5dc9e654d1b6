/** Test harness for sweeps on the real stack: plans from the shipped config, workers, observation. */
import { Client, type WorkflowHandle } from '@temporalio/client';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { defaultPayloadConverter } from '@temporalio/common';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { planSweep, type SweepPlan } from '@infersweep/topology';
import { LocalExecutor, SlurmCluster } from '@infersweep/slurm';
import { pointResultSchema, type PointResult } from '@infersweep/agentx';
import { allocationJobName, progressQuery, type SweepInput, type SweepProgress } from '@infersweep/sweep';
import { buildSweepInput, connectClient, createSweepWorker, temporalTarget } from '@infersweep/worker';
import { loadSweepConfig } from '../../cli/src/config-file';
import { stackEnv } from '../../../test/stack-env';

export const target = temporalTarget();

// keep test output readable: the SDK's INFO lines (worker state changes, activity failures the
// tests provoke on purpose) are noise here
try {
  Runtime.install({ logger: new DefaultLogger('WARN') });
} catch {
  // already installed in this process
}

export function localSlurm(): SlurmCluster {
  process.env.SLURM_CONF = stackEnv().SLURM_CONF;
  return new SlurmCluster(new LocalExecutor());
}

export function testPlan(orientation: string, points: number[], mutate?: (p: SweepPlan) => void): SweepPlan {
  const loaded = loadSweepConfig({ clusters: ['local'] });
  const plan = planSweep(loaded.config, { orientation, cluster: 'local', points, source: loaded.source });
  mutate?.(plan);
  return plan;
}

export function testInput(plan: SweepPlan, tag: string): SweepInput {
  const label = `${tag}-${randomUUID().slice(0, 8)}`;
  return buildSweepInput(plan, {
    configName: 'kimik3-test',
    configHash: 'test',
    label,
    resultsRoot: join(stackEnv().INFERSWEEP_STACK, '..', 'test-results', 'sweeps'),
    operatorTimeout: '10 minutes',
  });
}

export async function client(): Promise<Client> {
  return connectClient(target);
}

export async function newWorker(taskQueue: string): Promise<Worker> {
  const { worker } = await createSweepWorker({ cluster: 'local', target, taskQueue });
  return worker;
}

const started: { handle: WorkflowHandle; sweepId: string }[] = [];

/** Start the sweep workflow on a test task queue (same workflow and activities as production). */
export async function start(c: Client, input: SweepInput, taskQueue: string): Promise<WorkflowHandle> {
  const handle = await c.workflow.start('sweepWorkflow', { taskQueue, workflowId: input.sweepId, args: [input], workflowIdConflictPolicy: 'FAIL' });
  started.push({ handle, sweepId: input.sweepId });
  return handle;
}

/**
 * After a failed test: a sweep left running without its worker would hold its allocation until the
 * time limit. Terminate it and release every job it could have created (names are derived).
 */
export async function cleanupStarted(slurm: SlurmCluster): Promise<void> {
  for (const { handle, sweepId } of started.splice(0)) {
    const d = await handle.describe().catch(() => undefined);
    if (d?.status.name === 'RUNNING') await handle.terminate('test cleanup').catch(() => undefined);
    for (let attempt = 1; attempt <= 10; attempt++) {
      for (const j of await slurm.jobsNamed(allocationJobName(sweepId, attempt))) await slurm.release(j.jobId);
    }
  }
}

/** Poll the progress query until `pred` holds (no fixed sleeps). */
export async function waitProgress(h: WorkflowHandle, pred: (p: SweepProgress) => boolean, timeoutMs: number, what: string): Promise<SweepProgress> {
  const deadline = Date.now() + timeoutMs;
  let last: SweepProgress | undefined;
  for (;;) {
    try {
      last = await h.query(progressQuery);
      if (pred(last)) return last;
    } catch {
      // the first workflow task may not have run yet
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last progress: ${JSON.stringify(last?.points ?? null)} phase=${last?.phase}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Poll the running activity's last heartbeat until `pred` holds (e.g. the point is profiling). */
export async function waitHeartbeat(h: WorkflowHandle, pred: (details: Record<string, unknown>) => boolean, timeoutMs: number, what: string): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    const d = await h.describe();
    for (const a of d.raw.pendingActivities ?? []) {
      const payload = a.heartbeatDetails?.payloads?.[0];
      if (!payload) continue;
      last = defaultPayloadConverter.fromPayload(payload);
      if (last && typeof last === 'object' && pred(last as Record<string, unknown>)) return last as Record<string, unknown>;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last heartbeat ${JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

export function pointRunning(c: number) {
  return (p: SweepProgress) => p.phase === 'running-point' && p.currentPoint === c;
}

export function readPoint(resultsDir: string, c: number): PointResult {
  return pointResultSchema.parse(JSON.parse(readFileSync(join(resultsDir, 'points', `c${c}`, 'result.json'), 'utf8')));
}

/** No live job of this sweep is left in squeue. */
export async function liveJobsOf(slurm: SlurmCluster, sweepJobNames: string[]): Promise<string[]> {
  const rows = (await Promise.all(sweepJobNames.map((n) => slurm.jobsNamed(n)))).flat();
  return rows.filter((r) => ['RUNNING', 'PENDING', 'COMPLETING', 'CONFIGURING'].includes(r.state)).map((r) => `${r.jobId}:${r.state}`);
}

/** Keep the history of a finished sweep as a replay fixture (checked by replay.test.ts). */
export async function keepHistory(h: WorkflowHandle, name: string): Promise<void> {
  const history = await h.fetchHistory();
  const dir = join(__dirname, 'fixtures', 'histories');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${name}.json`);
  if (process.env.INFERSWEEP_RECORD_HISTORIES === '1') writeFileSync(file, historyToJSON(history));
  // replay the fresh history right away with the current workflow code
  const { bundlerOptions, workflowsPath } = await import('../src/bundle');
  await Worker.runReplayHistory({ workflowsPath, bundlerOptions }, history, h.workflowId);
}
