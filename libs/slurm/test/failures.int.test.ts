import { afterAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { AllocationLostError, fitsInTime, jobTimeLeft, type JobInfo } from '../src/index';
import { allocRequest, PREFIX, repoRoot, shared, sshCluster, stackDir, uniqueName } from './helpers';
import { until } from '@infersweep/testkit/wait';

const run = promisify(execFile);

/**
 * The slow failure modes, run concurrently (each on its own allocation; node-down and
 * slurmd-kill take --exclusive nodes so no other job is hit).
 */
describe('allocation loss is detected and typed', () => {
  const { exec, cluster } = sshCluster();
  const created = new Set<string>();
  const downed = new Set<string>();
  let killedSlurmd = false;

  // one line per partition the node is in (local, east or west): the node's state is that of the local partition
  const nodeState = async (node: string): Promise<string> =>
    (await exec.run(['sinfo', '-h', '-N', '-p', 'local', '-n', node, '-o', '%T'])).stdout.trim();

  afterAll(async () => {
    for (const node of downed) await exec.run(['scontrol', 'update', `nodename=${node}`, 'state=resume']);
    if (killedSlurmd) await run('bash', [join(repoRoot, 'scripts/stack.sh'), 'up'], { timeout: 120_000 });
    for (const node of downed)
      await until(`${node} back`, async () => /^(idle|mixed|allocated)$/.test(await nodeState(node)), 60_000);
    for (const id of created) await cluster.release(id).catch(() => undefined);
    await until(
      'no infersweep-test-slurm- job left',
      async () => (await cluster.findOrphans(PREFIX)).length === 0,
      60_000,
    );
    await exec.close();
  });

  const expectLost = async (jobId: string, state: string): Promise<void> => {
    const err = await cluster.assertAlive(jobId, 'test').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AllocationLostError);
    expect(err).toMatchObject({ state, kind: 'loss', context: { jobId, step: 'test' } });
  };

  it.concurrent('the time limit expiring yields TIMEOUT', async () => {
    const a = await cluster.allocate(allocRequest('timeout', { timeLimitMinutes: 1 }));
    created.add(a.jobId);
    const granted = Date.now();
    const h = await cluster.launchStep(
      a.jobId,
      a.headNode,
      ['sleep', '600'],
      {},
      join(shared(), uniqueName('timeout'), `${a.headNode}.log`),
    );
    expect(fitsInTime(jobTimeLeft(await cluster.describe(a.jobId)), 120, 0)).toBe(false);
    await cluster.assertAlive(a.jobId, 'test');
    const info: JobInfo = await cluster.waitFor(
      a.jobId,
      (j) => j.state !== 'RUNNING' && j.state !== 'COMPLETING',
      150_000,
    );
    console.log(
      `[measure] TIMEOUT seen ${Date.now() - granted} ms after grant (limit 60 s): ${info.state}/${info.reason}`,
    );
    expect(info.state).toBe('TIMEOUT');
    await expectLost(a.jobId, 'TIMEOUT');
    expect(await cluster.stepStatus(h)).toBe('exited');
    expect((await cluster.fetchLogs([h]))[0]!.tail).toMatch(/DUE TO TIME LIMIT/);
    expect(jobTimeLeft(await cluster.describe(a.jobId))).toBe(0);
  });

  it.concurrent('an allocated node set down yields NODE_FAIL', async () => {
    const a = await cluster.allocate(allocRequest('nodedown', { exclusive: true, grantTimeoutSeconds: 120 }));
    created.add(a.jobId);
    const node = a.headNode;
    downed.add(node);
    const t0 = Date.now();
    const r = await exec.run(['scontrol', 'update', `nodename=${node}`, 'state=down', `reason=${PREFIX}test`]);
    expect(r.code).toBe(0);
    const info = await cluster.waitFor(a.jobId, (j) => j.state === 'NODE_FAIL', 30_000);
    console.log(`[measure] NODE_FAIL after state=down: ${Date.now() - t0} ms (${info.reason})`);
    expect(info.state).toBe('NODE_FAIL');
    await expectLost(a.jobId, 'NODE_FAIL');
    await exec.run(['scontrol', 'update', `nodename=${node}`, 'state=resume']);
    await until(`${node} resumed`, async () => /^(idle|mixed|allocated)$/.test(await nodeState(node)), 60_000);
    downed.delete(node);
  });

  it.concurrent(
    'a slurmd killed by pid is noticed (NODE_FAIL after SlurmdTimeout); restart cleans the orphaned step',
    async () => {
      const a = await cluster.allocate(allocRequest('slurmdkill', { exclusive: true, grantTimeoutSeconds: 120 }));
      created.add(a.jobId);
      const node = a.headNode;
      const token = uniqueName('orphan');
      const h = await cluster.launchStep(
        a.jobId,
        node,
        ['bash', '-c', 'while :; do sleep 1; done', token],
        {},
        join(shared(), token, `${node}.log`),
      );
      const taskAlive = async (): Promise<boolean> =>
        (
          await exec.run([
            'bash',
            '-c',
            'for p in /proc/[0-9]*; do [ "$p" = "/proc/$$" ] && continue; tr "\\0" "\\n" < $p/cmdline 2>/dev/null | grep -qxF -- "$1" && exit 0; done; exit 1',
            'x',
            token,
          ])
        ).code === 0;
      await until('step task running', taskAlive, 20_000);
      const pid = readFileSync(join(stackDir(), 'pids', `slurmd-${node}.pid`), 'utf8').trim();
      expect(pid).toMatch(/^\d+$/);
      const t0 = Date.now();
      killedSlurmd = true;
      downed.add(node);
      expect((await exec.run(['kill', '-KILL', pid])).code).toBe(0);
      const info = await cluster.waitFor(a.jobId, (j) => j.state === 'NODE_FAIL', 120_000);
      console.log(`[measure] NODE_FAIL after kill -9 slurmd: ${Date.now() - t0} ms (${info.reason})`);
      expect(info.state).toBe('NODE_FAIL');
      await expectLost(a.jobId, 'NODE_FAIL');
      expect(await cluster.stepStatus(h)).toBe('exited');
      // restart the slurmd (idempotent bring-up), which kills the orphaned step; node returns
      await run('bash', [join(repoRoot, 'scripts/stack.sh'), 'up'], { timeout: 120_000 });
      await until('orphaned step task gone', async () => !(await taskAlive()), 60_000);
      await until(`${node} back`, async () => /^(idle|mixed|allocated)$/.test(await nodeState(node)), 60_000);
      downed.delete(node);
    },
  );
});
