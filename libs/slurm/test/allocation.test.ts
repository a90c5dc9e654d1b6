/**
 * allocate's decisions against a scripted Slurm (./fake-slurm.ts): what a pending reason means,
 * and what an abort does to the queued request. The real-stack tests (reliability.int.test.ts,
 * libs/orchestrator/test/*.int.test.ts) run the same code against Slurm.
 */
import { describe, expect, it } from 'vitest';
import { ClusterUnavailableError } from '@infersweep/core';
import {
  AllocationError,
  CommandAbortedError,
  SlurmCluster,
  type AllocateRequest,
  type AllocationProgress,
} from '../src/index';
import { FakeSlurm } from '@infersweep/testkit/fake-slurm';

const req = (over: Partial<AllocateRequest> = {}): AllocateRequest => ({
  jobName: 'infersweep-unit-alloc',
  nodes: 2,
  gres: false,
  exclusive: false,
  timeLimitMinutes: 5,
  grantTimeoutSeconds: 60,
  logFile: '/tmp/infersweep-unit-alloc.salloc.log',
  ...over,
});

const fast = (slurm: FakeSlurm): SlurmCluster =>
  new SlurmCluster(slurm, { pollIntervalMs: 1, pendingPollMs: 1, withdrawTimeoutMs: 1_000 });

describe('allocate: pending reasons', () => {
  it('PartitionNodeLimit while a node of the partition is drained keeps waiting, and the same job is granted', async () => {
    const slurm = new FakeSlurm();
    slurm.nodeStates = { node1: 'idle', node2: 'drain' };
    const seen: AllocationProgress[] = [];
    slurm.onPoll = (n) => {
      const job = slurm.jobs[0];
      if (job && n === 2) job.reason = 'PartitionNodeLimit';
      if (job && n === 6) slurm.grant(job);
    };
    const a = await fast(slurm).allocate(req(), { onProgress: (p) => seen.push(p) });
    expect(a.jobId).toBe('100');
    expect(seen.filter((p) => p.reason === 'PartitionNodeLimit').length).toBeGreaterThanOrEqual(3);
    expect(slurm.count(/^sinfo /)).toBeGreaterThanOrEqual(3);
    expect(slurm.count(/^scancel /)).toBe(0);
  });

  it('PartitionNodeLimit with every node available fails at once, non-retryable, and withdraws the job', async () => {
    const slurm = new FakeSlurm();
    slurm.onPoll = (n) => {
      if (n === 2) slurm.jobs[0]!.reason = 'PartitionNodeLimit';
    };
    const err = await fast(slurm)
      .allocate(req())
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(AllocationError);
    expect((err as AllocationError).kind).not.toBe('transient');
    expect((err as AllocationError).message).toMatch(/can never start \(pending reason PartitionNodeLimit\)/);
    expect(slurm.jobs[0]!.state).toBe('CANCELLED');
  });
});

describe('allocate: the grant wait ends', () => {
  const timedOut = async (reason: string) => {
    // a pending job of the name, adopted with the queue time an earlier attempt spent: the wait is over at once
    const slurm = new FakeSlurm();
    slurm.submit(req().jobName, 'PENDING', reason);
    const err = await fast(slurm)
      .allocate(req({ partition: 'west' }), { waitedSecondsBefore: 61 })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(slurm.jobs[0]!.state).toBe('CANCELLED');
    return err;
  };

  it('with the partition down all along: the cluster is unavailable (typed, transient), the request withdrawn', async () => {
    for (const reason of ['PartitionDown', 'PartitionInactive']) {
      const err = await timedOut(reason);
      expect(err, reason).toBeInstanceOf(ClusterUnavailableError);
      expect((err as ClusterUnavailableError).kind).toBe('transient');
      expect((err as ClusterUnavailableError).context.reason).toBe(reason);
      expect((err as Error).message).toMatch(/partition west is down/);
    }
  });

  it('waiting for resources: an allocation error, not the cluster', async () => {
    const err = await timedOut('Resources');
    expect(err).toBeInstanceOf(AllocationError);
    expect(err).not.toBeInstanceOf(ClusterUnavailableError);
    expect((err as Error).message).toMatch(/not granted within 60 s \(PENDING, Resources\)/);
  });
});

describe('allocate: an abort', () => {
  const abortWhilePending = async (keepQueued: boolean | undefined): Promise<{ slurm: FakeSlurm; err: unknown }> => {
    const slurm = new FakeSlurm();
    const ctl = new AbortController();
    slurm.onPoll = (n) => {
      if (n === 3) ctl.abort(new Error('stop'));
    };
    const hooks =
      keepQueued === undefined ? { signal: ctl.signal } : { signal: ctl.signal, keepQueued: () => keepQueued };
    const err = await fast(slurm)
      .allocate(req(), hooks)
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    return { slurm, err };
  };

  it('that is a cancel withdraws the queued request (launcher TERMed, job cancelled)', async () => {
    const { slurm, err } = await abortWhilePending(undefined);
    expect(err).toBeInstanceOf(CommandAbortedError);
    expect((err as Error).message).toMatch(/withdrawn/);
    expect(slurm.jobs[0]!.state).toBe('CANCELLED');
    expect(slurm.count(/infersweep-kill/)).toBeGreaterThanOrEqual(1);
  });

  it('while the caller only goes away (keepQueued) leaves the job queued; the next call adopts it with its age', async () => {
    const { slurm, err } = await abortWhilePending(true);
    expect(err).toBeInstanceOf(CommandAbortedError);
    expect((err as Error).message).toMatch(/left queued/);
    expect(slurm.jobs.map((j) => j.state)).toEqual(['PENDING']);
    expect(slurm.count(/infersweep-kill|^scancel /)).toBe(0);

    const seen: AllocationProgress[] = [];
    let polls = 0;
    slurm.onPoll = () => {
      if (++polls === 3) slurm.grant(slurm.jobs[0]!);
    };
    const launches = slurm.count(/infersweep-launch/);
    const a = await fast(slurm).allocate(req(), { waitedSecondsBefore: 30, onProgress: (p) => seen.push(p) });
    expect(a.jobId).toBe('100');
    expect(a.adopted).toBe(true);
    expect(slurm.count(/infersweep-launch/)).toBe(launches);
    expect(seen[0]).toMatchObject({ adoptedPending: true, jobId: '100' });
    expect(seen[0]!.waitedSeconds).toBeGreaterThanOrEqual(30);
  });
});
