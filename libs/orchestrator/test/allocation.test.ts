import { describe, expect, it } from 'vitest';
import { MockActivityEnvironment } from '@temporalio/testing';
import { AllocationError, SlurmCluster, SshConnectionError } from '@infersweep/slurm';
import { ClusterUnavailableError } from '@infersweep/core';
import { completingPast, loginHostAnswers, waitedBefore } from '../src/activities/allocation';
import { FakeSlurm } from '@infersweep/testkit/fake-slurm';

describe('allocate: queue age across a retried attempt', () => {
  const jobName = 'infersweep-kimik3-latency-h200-abc-a1';

  it("reads the wait from the earlier attempt's last heartbeat for the same job name", () => {
    expect(
      waitedBefore({ phase: 'allocating', jobName, jobId: '42', state: 'PENDING', waitedSeconds: 5400 }, jobName),
    ).toBe(5400);
  });

  it('starts from zero without a heartbeat, for another job name, or for a value that is not a positive number', () => {
    expect(waitedBefore(undefined, jobName)).toBe(0);
    expect(waitedBefore(null, jobName)).toBe(0);
    expect(waitedBefore('5400', jobName)).toBe(0);
    expect(waitedBefore({ jobName: `${jobName.slice(0, -1)}2`, waitedSeconds: 5400 }, jobName)).toBe(0);
    expect(waitedBefore({ jobName, waitedSeconds: '5400' }, jobName)).toBe(0);
    expect(waitedBefore({ jobName, waitedSeconds: Number.NaN }, jobName)).toBe(0);
    expect(waitedBefore({ jobName, waitedSeconds: -3 }, jobName)).toBe(0);
  });
});

describe('allocate: a login host that does not answer', () => {
  const failing = (err: Error) =>
    loginHostAnswers(() => Promise.reject(err)).then(
      () => undefined,
      (e: unknown) => e,
    );

  it('is the cluster unavailable: typed, transient, with the SSH error as its cause and context', async () => {
    const ssh = new SshConnectionError('ssh west-login:22: connect ECONNREFUSED', { context: { node: 'west-login' } });
    const err = await failing(ssh);
    expect(err).toBeInstanceOf(ClusterUnavailableError);
    expect(err).toMatchObject({ kind: 'transient', name: 'ClusterUnavailableError', cause: ssh });
    expect((err as ClusterUnavailableError).context).toMatchObject({ node: 'west-login', step: 'allocate' });
    expect((err as Error).message).toBe('login host unreachable: ssh west-login:22: connect ECONNREFUSED');
  });

  it('any other failure passes through as it is, whatever its words', async () => {
    const other = new AllocationError('ssh: connect to host west-login port 22: Connection refused', { kind: 'fatal' });
    expect(await failing(other)).toBe(other);
    await expect(loginHostAnswers(async () => 'granted')).resolves.toBe('granted');
  });
});

describe('release: a job that stays COMPLETING after scancel', () => {
  const inActivity = <T>(fn: () => Promise<T>): Promise<T> =>
    new MockActivityEnvironment({ activityType: 'release' }).run(fn);

  it('past its patience: reported with the job and its nodes, for the record, instead of failing the release', async () => {
    const slurm = new FakeSlurm();
    const job = slurm.submit('infersweep-unit-stuck', 'COMPLETING', 'None');
    job.nodeList = 'node1,node2';
    const stuck = await inActivity(() => completingPast(new SlurmCluster(slurm, { pollIntervalMs: 1 }), job.jobId, 50));
    expect(stuck).toMatch(new RegExp(`^job ${job.jobId} still COMPLETING .* on node1,node2`));
  });

  it('a job that leaves COMPLETING within the patience is simply released', async () => {
    const slurm = new FakeSlurm();
    const job = slurm.submit('infersweep-unit-done', 'COMPLETING', 'None');
    let polls = 0;
    const cluster = new SlurmCluster(slurm, { pollIntervalMs: 1 });
    const describe = cluster.describe.bind(cluster);
    cluster.describe = async (id: string) => {
      if (++polls === 2) job.state = 'COMPLETED';
      return describe(id);
    };
    expect(await inActivity(() => completingPast(cluster, job.jobId, 60_000, Date.now(), 1))).toBeUndefined();
    expect(polls).toBe(2);
  });
});
