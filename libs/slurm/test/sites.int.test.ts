/**
 * Site realities on the real local cluster, through the loopback sshd:
 *  - a login user whose shell is tcsh (scripts/stack.sh creates it) runs every operation;
 *  - a secret reaches the step's environment but no argv, `ps` line or log;
 *  - a job array and a het job of the same user never break the janitor's listing;
 *  - a granted job held CONFIGURING by a prolog (jobs named *-configuring-*, 8 s) is waited for;
 *  - a missing tool is a SetupError naming it, not an image or launch problem.
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SetupError, SlurmCluster, SshExecutor } from '../src/index';
import { allocRequest, PREFIX, shared, sshCluster, sshOptions, stackEnv, uniqueName } from './helpers';
import { until } from '@infersweep/testkit/wait';

const cshUser = (): string => {
  const u = stackEnv().INFERSWEEP_SSH_CSH_USER;
  if (!u)
    throw new Error(
      'the stack has no tcsh login user: install tcsh (scripts/setup-sites.sh) and run scripts/stack.sh up',
    );
  return u;
};

/** Local `ps` of every process (this host is the login node and every compute node). */
const psAll = (): string =>
  execFileSync('ps', ['-eo', 'pid,args', '--no-headers'], { encoding: 'utf8', maxBuffer: 16 << 20 });

describe('a tcsh login user and a secret the server needs', () => {
  const exec = new SshExecutor(sshOptions({ username: cshUser() }));
  const cluster = new SlurmCluster(exec, { pollIntervalMs: 250 });
  const jobs = new Set<string>();
  afterAll(async () => {
    for (const id of jobs) await cluster.release(id).catch(() => undefined);
    await exec.close();
  });

  it('the login shell really is tcsh, and commands still run under /bin/sh with POSIX quoting', async () => {
    expect(execFileSync('getent', ['passwd', cshUser()], { encoding: 'utf8' }).trim()).toMatch(/:\/usr\/bin\/tcsh$/);
    const r = await exec.run([
      '/bin/sh',
      '-c',
      'printf "%s|" "$@"; echo; readlink /proc/$$/exe',
      'x',
      "it's",
      'a\nb',
      '$HOME',
      '!1',
      '`id`',
    ]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`it's|a\nb|$HOME|!1|\`id\`|\n/usr/bin/dash\n`);
    // a per-command timeout finds the remote process group through the pid marker (not a file named "2")
    const t0 = Date.now();
    await expect(exec.run(['sleep', '30'], { timeoutMs: 1_000 })).rejects.toThrow(/timed out after 1000 ms/);
    expect(Date.now() - t0).toBeLessThan(10_000);
    await until('the remote sleep killed with its group', async () => !/\bsleep 30\b/.test(psAll()), 10_000);
  });

  it('allocate, launch a step with a secret, release — all as the tcsh user; the value is in the task environment only', async () => {
    const canary = `canary-${randomUUID()}`;
    const a = await cluster.allocate(allocRequest('csh'));
    jobs.add(a.jobId);
    const secs = String(3000 + Math.floor(Math.random() * 5000));
    const logFile = join(shared(), uniqueName('secret'), 'step.log');
    const h = await cluster.launchStep(
      a.jobId,
      a.headNode,
      ['sh', '-c', 'echo "has-secret=${#INFERSWEEP_CANARY}"; exec sleep "$0"', secs],
      { PLAIN: 'visible' },
      logFile,
      {
        secretEnv: { INFERSWEEP_CANARY: canary },
      },
    );
    const taskPid = await until(
      'the step task running',
      async () => {
        const line = psAll()
          .split('\n')
          .find((l) => new RegExp(`^\\s*\\d+ sleep ${secs}$`).test(l));
        return line?.trim().split(/\s+/)[0];
      },
      20_000,
    );
    const environ = readFileSync(`/proc/${taskPid}/environ`, 'utf8').split('\0');
    expect(environ).toContain(`INFERSWEEP_CANARY=${canary}`);
    expect(environ).toContain('PLAIN=visible');
    expect(psAll()).not.toContain(canary);
    const [log] = await until(
      'the step log',
      async () => {
        const l = await cluster.fetchLogs([h]);
        return l[0]!.tail.includes('has-secret=') && l;
      },
      20_000,
    );
    expect(log!.tail).toContain(`has-secret=${canary.length}`);
    expect(log!.tail).not.toContain(canary);
    await cluster.stopStep(h);
    await cluster.release(a.jobId);
  });
});

describe('jobs of a shared login account', () => {
  const { exec, cluster } = sshCluster();
  const foreign: string[] = [];
  afterAll(async () => {
    for (const id of foreign) await exec.run(['scancel', id]).catch(() => undefined);
    await exec.close();
  });

  it('a job array and a het job (named with our prefix, even) are skipped with a reason; our own job is listed', async () => {
    const arr = await exec.run([
      'sbatch',
      '--parsable',
      `--job-name=${PREFIX}array`,
      '--array=1-3',
      '--time=5',
      '--output=/dev/null',
      '--wrap',
      'sleep 300',
    ]);
    expect(arr.code, arr.stderr).toBe(0);
    foreign.push(arr.stdout.trim());
    const het = await exec.run(['salloc', '--no-shell', `--job-name=${PREFIX}het`, '--time=5', '-N1', ':', '-N1']);
    const hetId = /job allocation (\d+)/.exec(het.stderr)?.[1];
    expect(hetId, het.stderr).toBeDefined();
    foreign.push(hetId!);
    const own = await cluster.allocate(allocRequest('own'));
    foreign.push(own.jobId);
    const squeue = await exec.run(['squeue', '--me', '-h', '-o', '%i']);
    expect(squeue.stdout).toMatch(new RegExp(`${arr.stdout.trim()}_`));
    expect(squeue.stdout).toContain(`${hetId}+0`);
    const skipped: string[] = [];
    const found = await cluster.findOrphans(PREFIX, (line, why) => skipped.push(`${line} (${why})`));
    expect(found.map((j) => j.jobId)).toEqual([own.jobId]);
    expect(skipped.some((s) => s.startsWith(`${arr.stdout.trim()}_`) && s.includes('job-array or het-job'))).toBe(true);
    expect(skipped.some((s) => s.startsWith(`${hetId}+0`))).toBe(true);
    await cluster.release(own.jobId);
  });
});

describe('site states and missing tools', () => {
  const { exec, cluster } = sshCluster();
  const jobs = new Set<string>();
  afterAll(async () => {
    for (const id of jobs) await cluster.release(id).catch(() => undefined);
    await exec.close();
  });

  it('a granted job CONFIGURING for 8 s (prolog) is waited for and becomes the allocation, not cancelled', async () => {
    const name = uniqueName('configuring');
    const seen: string[] = [];
    const watcher = (async () => {
      for (let i = 0; i < 40; i++) {
        const r = await exec.run(['squeue', '--me', `--name=${name}`, '-h', '-o', '%T']);
        if (r.stdout.trim()) seen.push(r.stdout.trim());
        if (r.stdout.includes('RUNNING')) return;
        await new Promise((res) => setTimeout(res, 250));
      }
    })();
    const t0 = Date.now();
    const a = await cluster.allocate({ ...allocRequest('watched'), jobName: name });
    jobs.add(a.jobId);
    await watcher;
    expect(seen).toContain('CONFIGURING');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(7_000);
    expect((await cluster.describe(a.jobId)).state).toBe('RUNNING');
    // the job salloc submitted is found by name once RUNNING and taken over as the allocation
    expect(a.adopted).toBe(true);
    // exactly one job of that name ever existed: nothing was cancelled as a duplicate
    const all = await exec.run(['squeue', '--me', `--name=${name}`, '-t', 'all', '-h', '-o', '%i %T']);
    expect(all.stdout.trim().split('\n')).toEqual([`${a.jobId} RUNNING`]);
    await cluster.release(a.jobId);
  });

  it('a step whose program does not exist is a SetupError naming it: at launch, or once the step is seen gone', async () => {
    const a = await cluster.allocate(allocRequest('missing'));
    jobs.add(a.jobId);
    // Slurm lists the step for a moment before its execve fails: under load the launch can return the handle first,
    // and the watcher that then sees the step gone reads goneStepLog (libs/orchestrator activities/gone-step.ts)
    const err = await cluster
      .launchStep(
        a.jobId,
        a.headNode,
        ['infersweep-no-such-engine', '--port', '1'],
        {},
        join(shared(), uniqueName('missing'), 'step.log'),
      )
      .then(async (h) => {
        await until('the missing program’s step gone', async () => (await cluster.stepStatus(h)) === 'exited', 30_000);
        return (await cluster.goneStepLog(h, { jobId: h.jobId, node: h.node, step: 'readiness' })).setup;
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SetupError);
    expect((err as SetupError).tool).toBe('infersweep-no-such-engine');
    expect((err as SetupError).kind).toBe('fatal');
    expect((err as SetupError).message).toContain('`infersweep-no-such-engine` was not found on the cluster');
    await cluster.release(a.jobId);
  });

  it('a started step whose launcher script runs a missing engine: the launch returns, the gone step is a SetupError naming it', async () => {
    const a = await cluster.allocate(allocRequest('missing-later'));
    jobs.add(a.jobId);
    // listed and running for 2 s before the missing program is asked for: the launch cannot see it, the watcher must
    const h = await cluster.launchStep(
      a.jobId,
      a.headNode,
      ['bash', '-c', 'sleep 2; infersweep-no-such-engine --port 1'],
      {},
      join(shared(), uniqueName('missing-later'), 'step.log'),
    );
    expect((await cluster.goneStepLog(h, { jobId: h.jobId, node: h.node, step: 'readiness' })).setup).toBeUndefined();
    await until('the step gone', async () => (await cluster.stepStatus(h)) === 'exited', 30_000);
    const { setup: err, logTail } = await cluster.goneStepLog(h, { jobId: h.jobId, node: h.node, step: 'readiness' });
    expect(logTail).toContain('infersweep-no-such-engine');
    expect(err).toBeInstanceOf(SetupError);
    expect(err?.tool).toBe('infersweep-no-such-engine');
    expect(err?.context.step).toBe('readiness');
    await cluster.release(a.jobId);
  });

  it('"enroot: command not found" during an image import is a SetupError, not "image not found"', async () => {
    const err = await cluster
      .importImage({
        image: 'docker.io/x/y:z',
        squashDir: join(shared(), uniqueName('squash')),
        lockTimeoutSeconds: 5,
        importCommand: ['infersweep-no-enroot', 'import', '-o', '{out}', 'docker://{image}'],
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SetupError);
    expect((err as SetupError).tool).toBe('infersweep-no-enroot');
  });
});
