import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AllocationError,
  AllocationLostError,
  fitsInTime,
  jobTimeLeft,
  SlurmCluster,
  SshExecutor,
  type StepHandle,
} from '../src/index';
import { allocRequest, PREFIX, shared, sshCluster, sshOptions, sshSessionPid, uniqueName } from './helpers';
import { until } from '@infersweep/testkit/wait';

const STEP = [
  'bash',
  '-c',
  'trap "echo got-term; exit 143" TERM; echo "start node=$SLURMD_NODENAME job=$SLURM_JOB_ID msg=$MSG"; while :; do echo tick; sleep 0.5; done',
];

describe('allocation lifecycle on the real cluster', () => {
  const { exec, cluster } = sshCluster();
  const created = new Set<string>();
  const track = <T extends { jobId: string }>(a: T): T => (created.add(a.jobId), a);

  afterAll(async () => {
    for (const id of created) await cluster.release(id).catch(() => undefined);
    // nothing of ours is left in squeue
    expect(await cluster.findOrphans(PREFIX)).toEqual([]);
    await exec.close();
  });

  for (const nodes of [2, 4]) {
    it(`allocate ${nodes} nodes, one step per named node writes its log, fetch/copy logs, release ends them`, async () => {
      const t0 = Date.now();
      const a = track(
        await cluster.allocate({
          jobName: uniqueName(`n${nodes}`),
          nodes,
          gpusPerNode: 1,
          gres: true,
          exclusive: false,
          timeLimitMinutes: 5,
          grantTimeoutSeconds: 60,
        }),
      );
      const allocMs = Date.now() - t0;
      expect(a.nodes).toHaveLength(nodes);
      expect(new Set(a.nodes).size).toBe(nodes);
      expect(a.headNode).toBe(a.nodes[0]);
      const info = await cluster.describe(a.jobId);
      expect(info.state).toBe('RUNNING');
      expect(info.nodes).toEqual(a.nodes);
      expect(info.timeLeftSeconds).toBeGreaterThan(240);
      // the point's time guard (libs/orchestrator/src/activities/point.ts timeGuard) on this read
      expect(fitsInTime(jobTimeLeft(info), 200, 30)).toBe(true);
      expect(fitsInTime(jobTimeLeft(info), 400, 30)).toBe(false);
      const addrs = await cluster.nodeAddresses(a.nodes);
      expect(Object.values(addrs).every((x) => x === '127.0.0.1')).toBe(true);

      const logDir = join(shared(), uniqueName('logs'));
      const t1 = Date.now();
      const handles: StepHandle[] = [];
      for (const node of a.nodes)
        handles.push(
          await cluster.launchStep(a.jobId, node, STEP, { MSG: `hi $(x) ${node}` }, join(logDir, `${node}.log`)),
        );
      const launchMs = Date.now() - t1;
      for (const h of handles) expect(await cluster.stepStatus(h)).toBe('running');
      const logs = await until(
        'every step logging',
        async () => {
          const l = await cluster.fetchLogs(handles, { tailLines: 200 });
          return l.every((x) => x.tail.includes('tick')) && l;
        },
        20_000,
      );
      for (const [i, l] of logs.entries()) {
        expect(l.tail).toContain(`start node=${a.nodes[i]} job=${a.jobId} msg=hi $(x) ${a.nodes[i]}`);
        expect(l.bytes).toBeGreaterThan(0);
      }
      const dest = mkdtempSync(join(tmpdir(), 'infersweep-results-'));
      const copied = await cluster.copyLogs(handles, dest);
      expect(readFileSync(copied[0]!.path, 'utf8')).toContain(`start node=${a.nodes[0]}`);

      // stopping one step leaves the allocation running
      await cluster.stopStep(handles[0]!);
      expect(await cluster.stepStatus(handles[0]!)).toBe('exited');
      expect((await cluster.describe(a.jobId)).state).toBe('RUNNING');
      await cluster.stopStep(handles[0]!); // already gone = success

      const t2 = Date.now();
      const rel = await cluster.release(a.jobId);
      const releaseMs = Date.now() - t2;
      expect(rel).toEqual({ state: 'CANCELLED', settled: true });
      for (const h of handles) expect(await cluster.stepStatus(h)).toBe('exited');
      const after = await cluster.fetchLogs(handles.slice(1), { tailLines: 5 });
      for (const l of after) expect(l.tail).toMatch(/CANCELLED|got-term|Terminated|exit code 143/);
      await expect(cluster.assertAlive(a.jobId, 'test')).rejects.toMatchObject({
        name: 'AllocationLostError',
        state: 'CANCELLED',
        kind: 'loss', // retried by the workflow's recovery, never by the activity
      });
      expect(await cluster.release(a.jobId)).toEqual({ state: 'CANCELLED', settled: true }); // idempotent
      console.log(
        `[measure] ${nodes} nodes: allocate ${allocMs} ms, launch ${nodes} steps ${launchMs} ms, release ${releaseMs} ms`,
      );
    });
  }

  it('allocate is idempotent by name: a second call adopts the live job instead of creating another', async () => {
    const name = uniqueName('idem');
    const req = {
      jobName: name,
      nodes: 1,
      gres: false,
      exclusive: false,
      timeLimitMinutes: 5,
      grantTimeoutSeconds: 30,
    };
    const a = track(await cluster.allocate(req));
    const b = track(await cluster.allocate(req));
    expect(b.jobId).toBe(a.jobId);
    expect(b.adopted).toBe(true);
    expect((await cluster.jobsNamed(name)).map((j) => j.jobId)).toEqual([a.jobId]);
    const orphans = await cluster.findOrphans(PREFIX);
    expect(orphans.map((o) => o.jobId)).toContain(a.jobId);
    await cluster.release(a.jobId);
    expect((await cluster.findOrphans(PREFIX)).map((o) => o.jobId)).not.toContain(a.jobId);
  });

  it('hostile job names and env values reach Slurm intact', async () => {
    const name = `${uniqueName('q')} $(touch /tmp/infersweep-pwn) \`id\`; "x" 'y' *`;
    const a = track(
      await cluster.allocate({
        jobName: name,
        nodes: 1,
        gres: false,
        exclusive: false,
        timeLimitMinutes: 5,
        grantTimeoutSeconds: 30,
      }),
    );
    expect((await cluster.describe(a.jobId)).name).toBe(name);
    const h = await cluster.launchStep(
      a.jobId,
      a.headNode,
      ['bash', '-c', 'printf "%s" "$V"'],
      { V: 'a\'b"c$(touch /tmp/infersweep-pwn)\nd' },
      join(shared(), uniqueName('q'), 'x y $(z).log'),
    );
    const l = await until(
      'step done',
      async () => (await cluster.stepStatus(h)) === 'exited' && (await cluster.fetchLogs([h]))[0],
      20_000,
    );
    expect(l.tail).toBe('a\'b"c$(touch /tmp/infersweep-pwn)\nd');
    expect((await exec.run(['test', '-e', '/tmp/infersweep-pwn'])).code).toBe(1);
    await cluster.release(a.jobId);
  });

  it('isolateEnv (what pyxis uses): the step sees only the listed env plus SLURM_*', async () => {
    const a = track(await cluster.allocate(allocRequest('iso', { grantTimeoutSeconds: 30 })));
    const h = await cluster.launchStep(
      a.jobId,
      a.headNode,
      ['/usr/bin/env'],
      { ONLY_THIS: '1' },
      join(shared(), uniqueName('iso'), 'env.log'),
      { isolateEnv: true },
    );
    const l = await until(
      'env step done',
      async () => (await cluster.stepStatus(h)) === 'exited' && (await cluster.fetchLogs([h], { tailLines: 500 }))[0],
      20_000,
    );
    const names = l.tail
      .split('\n')
      .filter(Boolean)
      .map((x) => x.split('=')[0]!);
    expect(names).toContain('ONLY_THIS');
    // INFERSWEEP_SHARED and PATH are in the login session (sshd SetEnv): they must not leak
    expect(names).not.toContain('INFERSWEEP_SHARED');
    expect(names).not.toContain('PATH');
    expect(
      names.filter(
        (n) =>
          n !== 'ONLY_THIS' &&
          !/^(SLURM|SLURMD)_/.test(n) &&
          ![
            'CUDA_VISIBLE_DEVICES',
            'GPU_DEVICE_ORDINAL',
            'ROCR_VISIBLE_DEVICES',
            'ZE_AFFINITY_MASK',
            'TMPDIR',
            'ENVIRONMENT',
            'HOSTNAME',
          ].includes(n),
      ),
    ).toEqual([]);
    await cluster.release(a.jobId);
  });

  it('an unsatisfiable request fails within the grant timeout (no salloc blocking forever) and leaves no job', async () => {
    const name = uniqueName('unsat');
    const t0 = Date.now();
    const err = await cluster
      .allocate({ jobName: name, nodes: 9, gres: false, exclusive: false, timeLimitMinutes: 5, grantTimeoutSeconds: 3 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AllocationError);
    expect(Date.now() - t0).toBeLessThan(40_000);
    expect((await cluster.jobsNamed(name)).filter((j) => ['PENDING', 'RUNNING'].includes(j.state))).toEqual([]);
    console.log(`[measure] unsatisfiable allocate rejected in ${Date.now() - t0} ms: ${(err as Error).message}`);
  });

  it('connection killed while salloc waits: allocate recovers the job by name, and a retried allocate adopts it (no duplicate)', async () => {
    const x = new SshExecutor(sshOptions());
    const c = new SlurmCluster(x, { pollIntervalMs: 250 });
    const name = uniqueName('drop');
    // --hold keeps the job PENDING until we release it: salloc is still waiting when the connection dies
    const req = {
      jobName: name,
      nodes: 1,
      gres: false,
      exclusive: false,
      timeLimitMinutes: 5,
      grantTimeoutSeconds: 90,
      extraArgs: ['--hold'],
    };
    const session = await sshSessionPid(x);
    const pending = c.allocate(req).catch((e: unknown) => e);
    const job = await until(
      'held job pending',
      async () => (await cluster.jobsNamed(name)).find((j) => j.state === 'PENDING'),
      20_000,
    );
    created.add(job.jobId);
    expect(x.connects).toBe(1);
    await exec.run(['kill', '-KILL', session]);
    await until('sshd session gone', async () => (await exec.run(['kill', '-0', session])).code !== 0, 10_000);
    // salloc survives the dropped connection on the login node (REPORT.md) and is still waiting
    expect((await cluster.describe(job.jobId)).state).toBe('PENDING');
    await exec.run(['scontrol', 'release', job.jobId]);
    const a = await pending;
    expect(a).toMatchObject({ jobId: job.jobId, adopted: true });
    expect(x.connects).toBe(2);
    const again = await c.allocate({ ...req, extraArgs: [] });
    expect(again.jobId).toBe(job.jobId);
    expect((await cluster.jobsNamed(name)).map((j) => j.jobId)).toEqual([job.jobId]);
    await c.release(job.jobId);
    await x.close();
  });

  it('assertAlive on a job id Slurm never had is GONE (typed, retryable)', async () => {
    const err = await cluster.assertAlive('99999999', 'probe').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AllocationLostError);
    expect((err as AllocationLostError).state).toBe('GONE');
    expect((err as AllocationLostError).context.jobId).toBe('99999999');
  });
});
