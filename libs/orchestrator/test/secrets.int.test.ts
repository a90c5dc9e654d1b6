/**
 * A secret the server needs, end to end on the real stack with the production
 * worker (apps/worker/src/main.ts) as its own process: the canary value lives only in the worker's
 * environment. The server (the simulator launched through srun) receives it in its environment;
 * the full workflow history (every event, every payload decoded), the results folder, the worker's
 * log and `ps` during the run never contain it.
 */
import { execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { closeSync, openSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { planSweep } from '@infersweep/topology';
import { loadSweepConfig } from '@infersweep/orchestrator';
import type { SweepResult } from '@infersweep/sweep';
import { repoRoot } from '@infersweep/testkit/stack';
import {
  historyText,
  localSlurm,
  pointRunning,
  realStackSuite,
  signalGroup,
  start,
  testInput,
  waitProgress,
} from '@infersweep/testkit/sweep-harness';

const slurm = localSlurm();
const suite = realStackSuite(slurm);
const NAME = 'INFERSWEEP_CANARY_SECRET';

type HistoryEvent = NonNullable<Awaited<ReturnType<WorkflowHandle['fetchHistory']>>['events']>[number];

/** Each activity the history scheduled: its type, the attempt it ended on, and its failure message if it failed. */
function activityAttempts(events: readonly HistoryEvent[]): { activity: string; attempt: number; failure?: string }[] {
  const out = new Map<string, { activity: string; attempt: number; failure?: string }>();
  for (const e of events) {
    const id = String(e.eventId);
    const scheduled = e.activityTaskScheduledEventAttributes;
    if (scheduled) out.set(id, { activity: scheduled.activityType?.name ?? '?', attempt: 0 });
    const started = e.activityTaskStartedEventAttributes;
    if (started) out.get(String(started.scheduledEventId))!.attempt = started.attempt ?? 0;
    const failed = e.activityTaskFailedEventAttributes;
    if (failed) out.get(String(failed.scheduledEventId))!.failure = failed.failure?.message ?? '';
  }
  return [...out.values()];
}

/** Every file below `dir`, recursively. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
}

/** Processes whose environment holds `needle`: [pid, comm]. */
function processesWithEnv(needle: string): [string, string][] {
  const out: [string, string][] = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      if (readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(needle))
        out.push([pid, readFileSync(`/proc/${pid}/comm`, 'utf8').trim()]);
    } catch {
      // gone, or not ours to read
    }
  }
  return out;
}

describe('a secret the server needs', () => {
  it('reaches the server step and nothing else: history, results, worker log, ps', async () => {
    const canary = `canary-${randomUUID()}`;
    const loaded = loadSweepConfig({ clusters: ['local'] });
    loaded.config.engine.secretEnv = [NAME];
    const plan = planSweep(loaded.config, {
      orientation: 'latency',
      cluster: 'local',
      points: [1],
      source: loaded.source,
    });
    expect(plan.secretEnv).toEqual([NAME]);
    const input = testInput(plan, 'secret');
    const tq = `t-${randomUUID()}`;
    const logFile = join(tmpdir(), `infersweep-secret-worker-${randomUUID().slice(0, 8)}.log`);
    const fd = openSync(logFile, 'w');
    const worker = spawn(
      join(repoRoot, 'node_modules', '.bin', 'tsx'),
      [join(repoRoot, 'apps/worker/src/main.ts'), '--cluster', 'local', '--task-queue', tq],
      {
        cwd: repoRoot,
        stdio: ['ignore', fd, fd],
        detached: true,
        env: { ...process.env, [NAME]: canary, INFERSWEEP_WORKER_SECRETS: NAME },
      },
    );
    closeSync(fd);
    const psSamples: string[] = [];
    try {
      const h = await start(suite.client(), input, tq);
      await waitProgress(h, pointRunning(1), 180_000, 'point 1 running');
      // the server got it: a simulator process holds NAME=canary in its environment
      const holders = processesWithEnv(`${NAME}=${canary}`).filter(([pid]) => Number(pid) !== worker.pid);
      expect(holders.map(([, comm]) => comm)).toContain('llm-d-inference');
      const sampler = setInterval(
        () =>
          psSamples.push(
            execFileSync('ps', ['-eo', 'pid,args', '--no-headers'], { encoding: 'utf8', maxBuffer: 16 << 20 }),
          ),
        500,
      );
      let result: SweepResult;
      try {
        result = (await h.result()) as SweepResult;
      } finally {
        clearInterval(sampler);
      }
      expect(result.status).toBe('completed');
      expect(psSamples.length).toBeGreaterThan(3);
      for (const s of psSamples) expect(s).not.toContain(canary);

      const history = historyText(historyToJSON(await h.fetchHistory()));
      expect(history).toContain(NAME); // the name is there (plan, input) …
      expect(history).not.toContain(canary); // … the value never
      const files = filesUnder(input.resultsDir);
      expect(files.some((f) => f.endsWith('plan.json'))).toBe(true);
      for (const f of files) expect(readFileSync(f, 'utf8'), f).not.toContain(canary);
    } finally {
      signalGroup(worker, 'SIGTERM');
    }
    const log = readFileSync(logFile, 'utf8');
    expect(log.length).toBeGreaterThan(0);
    expect(log).not.toContain(canary);
  });

  it('a secret the worker allows but does not have fails the sweep naming the variable (not retried)', async () => {
    const loaded = loadSweepConfig({ clusters: ['local'] });
    loaded.config.engine.secretEnv = ['INFERSWEEP_SECRET_NOBODY_SET'];
    const plan = planSweep(loaded.config, {
      orientation: 'latency',
      cluster: 'local',
      points: [1],
      source: loaded.source,
    });
    const input = testInput(plan, 'nosecret');
    const tq = `t-${randomUUID()}`;
    const worker = spawn(
      join(repoRoot, 'node_modules', '.bin', 'tsx'),
      [join(repoRoot, 'apps/worker/src/main.ts'), '--cluster', 'local', '--task-queue', tq],
      {
        cwd: repoRoot,
        stdio: 'ignore',
        detached: true,
        env: { ...process.env, INFERSWEEP_WORKER_SECRETS: 'INFERSWEEP_SECRET_NOBODY_SET' },
      },
    );
    try {
      const h = await start(suite.client(), input, tq);
      const err = await h.result().then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      const history = await h.fetchHistory();
      expect(err).toBeInstanceOf(WorkflowFailedError);
      expect((await h.describe()).status.name).toBe('FAILED');
      // the activity that resolves the secrets failed once, naming the variable, and was not retried;
      // nothing was allocated or launched
      const attempts = activityAttempts(history.events ?? []);
      expect(attempts).toEqual([
        {
          activity: 'prepareSweep',
          attempt: 1,
          failure: expect.stringContaining('INFERSWEEP_SECRET_NOBODY_SET not found on the worker'),
        },
      ]);
    } finally {
      signalGroup(worker, 'SIGTERM');
    }
  });
});
