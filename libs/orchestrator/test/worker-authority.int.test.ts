/**
 * The worker trusts no sweep input, on the real stack with the production worker as its own process
 * (apps/worker/src/main.ts): a sweep input that names a secret, an executable or a results folder the
 * worker's settings do not allow is refused at prepareSweep, before any allocation, with an error
 * naming the field, the value and the worker setting; a secret value of the worker's environment
 * never reaches the history.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { describe, expect, it } from 'vitest';
import type { SweepPlan } from '@infersweep/topology';
import { repoRoot } from '../../../test/stack-env';
import { localSlurm, realStackSuite, signalGroup, start, testInput, testPlan } from './harness';

const slurm = localSlurm();
const suite = realStackSuite(slurm);

function workerWith(taskQueue: string, env: Record<string, string>): ChildProcess {
  return spawn(
    join(repoRoot, 'node_modules', '.bin', 'tsx'),
    [join(repoRoot, 'apps/worker/src/main.ts'), '--cluster', 'local', '--task-queue', taskQueue],
    { cwd: repoRoot, stdio: 'ignore', detached: true, env: { ...process.env, ...env } },
  );
}

/** Run a sweep of `plan` on a worker with `env`; its failure message, history text and the activities scheduled. */
async function refusedRun(plan: SweepPlan, tag: string, env: Record<string, string>, resultsDir?: string) {
  const input = testInput(plan, tag);
  if (resultsDir) input.resultsDir = resultsDir;
  const tq = `t-${randomUUID()}`;
  const worker = workerWith(tq, env);
  try {
    const h = await start(suite.client(), input, tq);
    const err = await h.result().then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(err).toBeInstanceOf(Error);
    const events = (await h.fetchHistory()).events ?? [];
    const scheduled = events.flatMap((e) =>
      e.activityTaskScheduledEventAttributes ? [e.activityTaskScheduledEventAttributes.activityType?.name] : [],
    );
    const failures = events.flatMap((e) => {
      const f = e.activityTaskFailedEventAttributes?.failure;
      return f ? [`${f.applicationFailureInfo?.type ?? ''}: ${f.message ?? ''}`] : [];
    });
    return { scheduled, failures, history: JSON.stringify(historyToJSON(await h.fetchHistory())) };
  } finally {
    signalGroup(worker, 'SIGTERM');
  }
}

describe('a worker that trusts no sweep input', () => {
  it('a foreign secret name (one the worker holds) is refused at prepareSweep; its value never reaches history', async () => {
    const canary = `canary-${randomUUID()}`;
    const plan = testPlan('latency', [1], undefined, (c) => {
      c.engine.secretEnv = ['INFERSWEEP_WORKER_OWN_CREDENTIAL'];
    });
    const r = await refusedRun(plan, 'foreign-secret', { INFERSWEEP_WORKER_OWN_CREDENTIAL: canary });
    expect(r.scheduled).toEqual(['prepareSweep']); // refused before any allocation
    expect(r.failures).toHaveLength(1); // not retried
    expect(r.failures[0]).toMatch(/^RefusedInputError: /);
    expect(r.failures[0]).toContain('plan.secretEnv = "INFERSWEEP_WORKER_OWN_CREDENTIAL"');
    expect(r.failures[0]).toContain('INFERSWEEP_WORKER_SECRETS allows none');
    expect(r.history).not.toContain(canary);
  });

  it('a foreign aiperf binary is refused at prepareSweep naming the setting that would allow it', async () => {
    const plan = testPlan('latency', [1], (p) => {
      p.agentx.client = 'aiperf';
      p.agentx.aiperf = { ...p.agentx.aiperf, binary: '/usr/bin/touch' };
    });
    const r = await refusedRun(plan, 'foreign-binary', {});
    expect(r.scheduled).toEqual(['prepareSweep']);
    expect(r.failures).toHaveLength(1);
    expect(r.failures[0]).toContain(
      'plan.agentx.aiperf.binary = "/usr/bin/touch" is not allowed by this worker: INFERSWEEP_WORKER_AIPERF',
    );
  });

  it('a results folder outside the worker results roots is refused at prepareSweep; nothing is written there', async () => {
    const plan = testPlan('latency', [1]);
    const outside = join('/tmp', `infersweep-outside-${randomUUID().slice(0, 8)}`);
    const r = await refusedRun(plan, 'foreign-results', {}, outside);
    expect(r.scheduled).toEqual(['prepareSweep']);
    expect(r.failures[0]).toContain(
      `resultsDir = "${outside}" is not allowed by this worker: INFERSWEEP_WORKER_RESULTS_ROOTS`,
    );
    const { existsSync } = await import('node:fs');
    expect(existsSync(outside)).toBe(false);
  });

  it('an allowed secret the worker lacks fails at prepareSweep (before the queue wait), naming it', async () => {
    const plan = testPlan('latency', [1], undefined, (c) => {
      c.engine.secretEnv = ['INFERSWEEP_SECRET_NOBODY_SET'];
    });
    const r = await refusedRun(plan, 'missing-secret', { INFERSWEEP_WORKER_SECRETS: 'INFERSWEEP_SECRET_NOBODY_SET' });
    expect(r.scheduled).toEqual(['prepareSweep']);
    expect(r.failures).toHaveLength(1);
    expect(r.failures[0]).toContain('INFERSWEEP_SECRET_NOBODY_SET not found on the worker');
  });
});
