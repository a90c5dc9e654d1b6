/**
 * The worker trusts no sweep input, on the real stack with the production worker as its own process
 * (apps/worker/src/main.ts): a sweep input that names a secret, an executable (aiperf on the worker,
 * the engine on the nodes), a tokenizer, a login host or host key, or a results folder the worker's
 * settings do not allow is refused at
 * prepareSweep, before any allocation, with an error naming the field, the value and the worker
 * setting; nothing of a worker-side file or secret reaches the history, the progress query or the
 * worker's log. One sweep cannot touch another: a second sweep aimed at a running sweep's folder or
 * job is refused, and the running sweep completes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chmodSync, closeSync, existsSync, mkdtempSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { describe, expect, it } from 'vitest';
import { allocationJobName, ResultsLayout } from '@infersweep/core';
import { progressQuery, type SweepInput, type SweepResult } from '@infersweep/sweep';
import type { SweepPlan } from '@infersweep/topology';
import { repoRoot, stackEnv } from '@infersweep/testkit/stack';
import {
  historyText,
  localSlurm,
  notSaturationGated,
  profileSeconds,
  realStackSuite,
  signalGroup,
  start,
  testInput,
  testPlan,
  track,
  waitProgress,
} from '@infersweep/testkit/sweep-harness';

const slurm = localSlurm();
const suite = realStackSuite(slurm);

/** The production worker of `local` on `taskQueue` as its own process, its output in `log`. */
function workerWith(taskQueue: string, env: Record<string, string>, log = '/dev/null'): ChildProcess {
  const fd = openSync(log, 'a');
  try {
    return spawn(
      join(repoRoot, 'node_modules', '.bin', 'tsx'),
      [join(repoRoot, 'apps/worker/src/main.ts'), '--cluster', 'local', '--task-queue', taskQueue],
      { cwd: repoRoot, stdio: ['ignore', fd, fd], detached: true, env: { ...process.env, ...env } },
    );
  } finally {
    closeSync(fd);
  }
}

/** The activities a sweep's history scheduled, and each failed attempt's `type: message`. */
async function activitiesOf(
  h: WorkflowHandle,
): Promise<{ scheduled: (string | null | undefined)[]; failures: string[] }> {
  const events = (await h.fetchHistory()).events ?? [];
  const scheduled = events.flatMap((e) =>
    e.activityTaskScheduledEventAttributes ? [e.activityTaskScheduledEventAttributes.activityType?.name] : [],
  );
  const failures = events.flatMap((e) => {
    const f = e.activityTaskFailedEventAttributes?.failure;
    return f ? [`${f.applicationFailureInfo?.type ?? ''}: ${f.message ?? ''}`] : [];
  });
  return { scheduled, failures };
}

/**
 * Run a sweep of `plan` on a worker with `env`; its failure message, history text, progress query
 * answer, worker log and the activities scheduled. Started as a raw sweep input: straight through
 * the Temporal client, not the CLI's planner.
 */
async function refusedRun(plan: SweepPlan, tag: string, env: Record<string, string>, resultsDir?: string) {
  const input = testInput(plan, tag);
  if (resultsDir) input.resultsDir = resultsDir;
  const tq = `t-${randomUUID()}`;
  const log = join(mkdtempSync(join(tmpdir(), 'worker-log-')), 'worker.log');
  const worker = workerWith(tq, env, log);
  try {
    const h = await start(suite.client(), input, tq);
    const err = await h.result().then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(err).toBeInstanceOf(Error);
    // the worker still runs: a closed sweep's progress query is answered from its history
    const progress = JSON.stringify(await h.query(progressQuery));
    return {
      input,
      ...(await activitiesOf(h)),
      history: historyText(historyToJSON(await h.fetchHistory())),
      progress,
      log: () => readFileSync(log, 'utf8'),
    };
  } finally {
    signalGroup(worker, 'SIGTERM');
  }
}

/** A 0600 file of the worker's user holding a canary, as a secrets file would. */
function canaryFile(): { path: string; canary: string } {
  const canary = `HF_TOKEN=hf_canary_${randomUUID().replace(/-/g, '')}`;
  const path = join(mkdtempSync(join(tmpdir(), 'worker-secret-')), 'secrets.env');
  writeFileSync(path, `${canary}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
  return { path, canary };
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

  it('a foreign engine binary (engineOverride.binary) is refused at prepareSweep; nothing runs on the nodes, no job is queued', async () => {
    // the binary a user's config names for the nodes: if srun ever ran it, it would leave a mark
    const dir = mkdtempSync(join(tmpdir(), 'foreign-engine-'));
    const ran = join(dir, 'RAN');
    const engine = join(dir, 'engine');
    writeFileSync(engine, `#!/bin/sh\necho ran > ${ran}\nexec sleep 600\n`, { mode: 0o755 });
    const plan = testPlan('latency', [1], undefined, (c) => {
      const o = c.clusters.local?.engineOverride;
      if (o?.kind !== 'simulator') throw new Error('the local profile runs the simulator');
      o.binary = engine;
    });
    const r = await refusedRun(plan, 'foreign-engine', {});
    expect(r.scheduled).toEqual(['prepareSweep']); // refused before any allocation
    expect(r.failures).toHaveLength(1); // not retried
    expect(r.failures[0]).toMatch(/^RefusedInputError: /);
    expect(r.failures[0]).toContain(
      `plan.nodes[0].launchArgv[0] = "${engine}" is not allowed by this worker (launched under srun on node rank 0, planned from clusters.local.engineOverride.binary): INFERSWEEP_WORKER_NODE_BINARIES allows "vllm", "llm-d-inference-sim", "pd-sidecar"`,
    );
    // no job of this sweep in squeue, in any state; the binary never ran
    const names = [1, 2, 3].map((a) => allocationJobName(r.input.sweepId, a, r.input.deploymentTag));
    expect((await Promise.all(names.map((n) => slurm.jobsNamed(n)))).flat()).toEqual([]);
    expect(existsSync(ran)).toBe(false);
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

  it('a pinned host key pointing at a 0600 file of the worker is refused at prepareSweep; nothing of the file reaches history, query or log', async () => {
    const { path, canary } = canaryFile();
    const plan = testPlan('latency', [1], (p) => {
      if ('local' in p.login) throw new Error('the local profile reaches its login node over SSH');
      p.login = { ...p.login, hostKey: path };
    });
    const r = await refusedRun(plan, 'host-key-file', {});
    expect(r.scheduled).toEqual(['prepareSweep']); // refused before any allocation or SSH connection
    expect(r.failures).toHaveLength(1);
    expect(r.failures[0]).toMatch(/^RefusedInputError: /);
    expect(r.failures[0]).toContain(
      `plan.login.hostKey = "${path}" is not allowed by this worker: INFERSWEEP_WORKER_CLUSTERS allows profile local: ${stackEnv().INFERSWEEP_STACK}/ssh/host_key.pub`,
    );
    const secret = canary.split('=')[1]!;
    expect(r.history).not.toContain(secret);
    expect(r.progress).not.toContain(secret);
    expect(r.log()).not.toContain(secret);
  });

  it('another login host is refused at prepareSweep: the worker connects only where its site profile says', async () => {
    const plan = testPlan('latency', [1], (p) => {
      if ('local' in p.login) throw new Error('the local profile reaches its login node over SSH');
      p.login = { ...p.login, host: '127.0.0.2' };
    });
    const r = await refusedRun(plan, 'other-login', {});
    expect(r.scheduled).toEqual(['prepareSweep']);
    expect(r.failures).toHaveLength(1);
    expect(r.failures[0]).toContain(
      'plan.login.host = "127.0.0.2" is not allowed by this worker: INFERSWEEP_WORKER_CLUSTERS allows profile local: 127.0.0.1',
    );
  });

  it('local execution, another partition or shared dir: each site field the plan overrides is refused, named', async () => {
    const plan = testPlan('latency', [1], (p) => {
      p.login = { local: true };
      p.slurm.partition = 'other';
      p.sharedDir = '/tmp';
    });
    const r = await refusedRun(plan, 'site-fields', {});
    expect(r.scheduled).toEqual(['prepareSweep']);
    expect(r.failures[0]).toContain('plan.login.local = "true" is not allowed by this worker');
    expect(r.failures[0]).toContain('plan.slurm.partition = "other" is not allowed by this worker');
    expect(r.failures[0]).toContain('plan.sharedDir = "/tmp" is not allowed by this worker');
  });

  it('a tokenizer directory with its own Python (auto_map) is refused at prepareSweep; its code never runs', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tokenizer-'));
    const ran = join(dir, 'RAN');
    writeFileSync(
      join(dir, 'tokenizer_config.json'),
      JSON.stringify({ tokenizer_class: 'Evil', auto_map: { AutoTokenizer: ['evil.Evil', null] } }),
    );
    writeFileSync(join(dir, 'evil.py'), `open(${JSON.stringify(ran)}, "w").write("ran")\n`);
    const plan = testPlan('latency', [1], (p) => {
      p.agentx.client = 'aiperf';
      p.agentx.aiperf = { ...p.agentx.aiperf, tokenizer: dir };
    });
    const r = await refusedRun(plan, 'remote-code', {});
    expect(r.scheduled).toEqual(['prepareSweep']);
    expect(r.failures).toHaveLength(1);
    expect(r.failures[0]).toContain(
      `plan.agentx.aiperf.tokenizer = "${dir}" is not allowed by this worker (the tokenizer maps classes to its own Python (auto_map)): INFERSWEEP_WORKER_TRUST_REMOTE_CODE_TOKENIZERS allows none`,
    );
    expect(existsSync(ran)).toBe(false);
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

describe('one sweep cannot touch another', () => {
  /** Start a raw sweep input under a workflow id of its own choosing (the CLI would use the sweep id). */
  async function startAs(workflowId: string, input: SweepInput, taskQueue: string): Promise<WorkflowHandle> {
    const h = await suite.client().workflow.start('sweepWorkflow', {
      taskQueue,
      workflowId,
      args: [input],
      workflowIdConflictPolicy: 'FAIL',
    });
    track(h, input.sweepId, workflowId);
    return h;
  }

  it("a second sweep aimed at a running sweep's results folder or allocation is refused at prepareSweep; the first completes unharmed", async () => {
    const planA = testPlan('latency', [1, 2], (p) => {
      notSaturationGated(p);
      profileSeconds(20)(p);
    });
    const a = testInput(planA, 'victim');
    const tq = `t-${randomUUID()}`;
    const worker = workerWith(tq, {});
    try {
      const ha = await start(suite.client(), a, tq);
      const running = await waitProgress(ha, (p) => p.phase === 'running-point', 180_000, 'the first sweep measures');
      const jobId = running.allocation!.jobId;

      // B names A's sweep id and deployment tag (so A's allocation name) and A's folder, under its own workflow id
      const planB = testPlan('latency', [4]);
      const b: SweepInput = { ...testInput(planB, 'intruder'), sweepId: a.sweepId, resultsDir: a.resultsDir };
      if (a.deploymentTag !== undefined) b.deploymentTag = a.deploymentTag;
      const hb = await startAs(`intruder-${randomUUID().slice(0, 8)}`, b, tq);
      await expect(hb.result()).rejects.toThrow();
      const rb = await activitiesOf(hb);
      expect(rb.scheduled).toEqual(['prepareSweep']);
      expect(rb.failures).toHaveLength(1);
      expect(rb.failures[0]).toContain(
        `RefusedInputError: sweepId = "${a.sweepId}" is not the id of the workflow asking ("${hb.workflowId}")`,
      );

      // C is a sweep of its own aimed at A's folder with another plan
      const c = { ...testInput(planB, 'folder-thief'), resultsDir: a.resultsDir };
      const hc = await start(suite.client(), c, tq);
      await expect(hc.result()).rejects.toThrow();
      const rc = await activitiesOf(hc);
      expect(rc.scheduled).toEqual(['prepareSweep']);
      expect(rc.failures).toHaveLength(1);
      expect(rc.failures[0]).toContain(
        `RefusedInputError: resultsDir = "${a.resultsDir}" belongs to sweep "${a.sweepId}"`,
      );

      // A: its plan and allocation untouched, every point measured once on its one allocation
      const layout = new ResultsLayout(a.resultsDir);
      expect((JSON.parse(readFileSync(layout.planFile, 'utf8')) as SweepPlan).planHash).toBe(a.planHash);
      const result = (await ha.result()) as SweepResult;
      expect(result.status).toBe('completed');
      expect(result.points.map((p) => [p.concurrency, p.status, p.attempts])).toEqual([
        [1, 'done', 1],
        [2, 'done', 1],
      ]);
      expect(result.allocations.map((x) => [x.jobId, x.jobName, x.ended])).toEqual([
        [jobId, allocationJobName(a.sweepId, 1, a.deploymentTag), 'released'],
      ]);
      expect(readFileSync(layout.ownerFile, 'utf8').trim()).toBe(a.sweepId);
    } finally {
      signalGroup(worker, 'SIGTERM');
    }
  });
});
