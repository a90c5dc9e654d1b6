import { describe, expect, it } from 'vitest';
import {
  applyCompleted,
  clusterUnavailable,
  failPoint,
  failedAllocationAttempts,
  finishPoint,
  initialProgress,
  nextPoint,
  emptyLedger,
  ledgerTotal,
  recordAllocationEnd,
  recordAllocationGranted,
  recordAllocationReleased,
  requeuePoint,
  skipPoint,
  startPoint,
  summaryLine,
  sweepResultOf,
  validateSkip,
  type SweepInput,
} from '../src';

const input = (points: number[]): SweepInput => ({
  sweepId: 'sweep-kimik3-balanced-local-t1',
  label: 't1',
  configName: 'kimik3',
  configHash: 'c0ffee',
  deploymentTag: 'unit.0a1b2c',
  planHash: 'abc123',
  orientation: 'balanced',
  cluster: 'local',
  model: 'kimi-k3',
  image: 'vllm/vllm-openai:kimi-k3',
  plan: {} as SweepInput['plan'], // the state functions never read the plan
  points,
  policy: 'shared-server',
  pointBudgetSeconds: 60,
  startupBudgetSeconds: 60,
  timeLimitMinutes: 30,
  maxAllocationAttempts: 3,
  maxPointAttempts: 2,
  resultsDir: '/shared/results/x',
  importImage: false,
});

const summary = (concurrency: number, valid = true) => ({
  concurrency,
  valid,
  reasons: valid ? [] : ['error rate 0.5 > 0.1'],
  resultPath: `/r/c${concurrency}.json`,
  reused: false,
});

describe('point state machine', () => {
  it('walks the points in order and ends with none left', () => {
    const p = initialProgress(input([4, 8, 16]), 't0');
    const seen: number[] = [];
    for (let pt = nextPoint(p); pt; pt = nextPoint(p)) {
      seen.push(pt.concurrency);
      startPoint(pt, '7', 't');
      finishPoint(pt, summary(pt.concurrency), 't');
    }
    expect(seen).toEqual([4, 8, 16]);
    expect(p.points.map((x) => x.status)).toEqual(['done', 'done', 'done']);
  });

  it('resumes at the first unfinished point after an allocation loss, without charging the attempt', () => {
    const p = initialProgress(input([4, 8, 16]), 't0');
    const a = nextPoint(p)!;
    startPoint(a, '1', 't');
    finishPoint(a, summary(4), 't');
    const b = nextPoint(p)!;
    startPoint(b, '1', 't');
    requeuePoint(b, 'allocation 1 lost: NODE_FAIL');
    expect(nextPoint(p)?.concurrency).toBe(8);
    expect(b.attempts).toBe(0);
    expect(p.points[0]!.status).toBe('done');
  });

  it('marks a point invalid with its reasons and moves on', () => {
    const p = initialProgress(input([4, 8]), 't0');
    const a = nextPoint(p)!;
    startPoint(a, '1', 't');
    finishPoint(a, summary(4, false), 't');
    expect(a.status).toBe('invalid');
    expect(a.lastError).toContain('error rate');
    expect(nextPoint(p)?.concurrency).toBe(8);
  });

  it('retries a failing point until its attempts run out, then marks it failed', () => {
    const p = initialProgress(input([4]), 't0');
    const a = nextPoint(p)!;
    startPoint(a, '1', 't');
    failPoint(a, 'boom', 2, 't');
    expect(a.status).toBe('pending');
    startPoint(a, '1', 't');
    failPoint(a, 'boom', 2, 't');
    expect(a.status).toBe('failed');
    expect(nextPoint(p)).toBeUndefined();
  });

  it('takes completed points found on disk and never reruns them', () => {
    const p = initialProgress(input([4, 8, 16]), 't0');
    applyCompleted(p, [{ ...summary(4), reused: true }, summary(16, false)]);
    expect(p.points.map((x) => x.status)).toEqual(['done', 'pending', 'invalid']);
    expect(nextPoint(p)?.concurrency).toBe(8);
  });

  it('validates skips: unknown points and finished points are refused with the reason', () => {
    const p = initialProgress(input([4, 8]), 't0');
    expect(() => validateSkip(p, 5)).toThrow(/no concurrency point 5; this sweep has 4, 8/);
    const a = nextPoint(p)!;
    startPoint(a, '1', 't');
    finishPoint(a, summary(4), 't');
    expect(() => validateSkip(p, 4)).toThrow(/is done/);
    validateSkip(p, 8);
    skipPoint(p, 8, 'operator');
    expect(nextPoint(p)).toBeUndefined();
    expect(summaryLine(p)).toBe('balanced on local: 2 points (1 done, 1 skipped), 0 allocation(s)');
  });

  it('counts only allocations that ended badly against the attempt budget', () => {
    const p = initialProgress(input([4]), 't0');
    p.allocations.push(
      { attempt: 1, jobName: 'a1', nodes: [], requestedAt: 't' },
      { attempt: 2, jobName: 'a2', nodes: [], requestedAt: 't' },
    );
    recordAllocationEnd(p, 'a1', 'NODE_FAIL', 'node2 down', 't');
    recordAllocationEnd(p, 'a2', 'released', undefined, 't');
    recordAllocationEnd(p, 'a2', 'TIMEOUT', 'late', 't'); // first end wins
    expect(failedAllocationAttempts(p)).toBe(1);
    expect(p.allocations[1]!.ended).toBe('released');
  });

  it('the cluster is unavailable only when every failed allocation attempt since the budget base found it so', () => {
    const p = initialProgress(input([4]), 't0');
    expect(clusterUnavailable(p)).toBe(false); // no failed attempt: nothing says so
    p.allocations.push(
      { attempt: 1, jobName: 'a1', nodes: [], requestedAt: 't' },
      { attempt: 2, jobName: 'a2', nodes: [], requestedAt: 't', clusterUnavailable: true },
      { attempt: 3, jobName: 'a3', nodes: [], requestedAt: 't', clusterUnavailable: true },
    );
    recordAllocationEnd(p, 'a1', 'allocation-failed', 'request can never start', 't');
    recordAllocationEnd(p, 'a2', 'allocation-failed', 'login host unreachable', 't');
    expect(clusterUnavailable(p)).toBe(false); // a1 failed for another reason
    expect(clusterUnavailable(p, 1)).toBe(true); // an operator retry after a1: only a2 counts
    recordAllocationEnd(p, 'a3', 'allocation-failed', 'partition down', 't');
    expect(clusterUnavailable(p, 1)).toBe(true);
    p.allocations[2]!.clusterUnavailable = undefined;
    expect(clusterUnavailable(p, 1)).toBe(false);
  });
});

describe('an allocation granted and released: its record, the held allocation and the GPU-hour ledger', () => {
  const granted = () => {
    const p = { ...initialProgress(input([4]), 't0'), ledger: emptyLedger() };
    p.allocations.push({ attempt: 1, jobName: 'j-a1', nodes: [], requestedAt: '2026-12-05T10:00:00.000Z' });
    recordAllocationGranted(
      p,
      1,
      {
        jobId: '77',
        nodes: ['n1', 'n2'],
        grantedAt: '2026-12-05T10:30:00.000Z',
        timeLimitMinutes: 240,
        excluded: ['n3'],
      },
      16,
    );
    return p;
  };

  it('granted: the record gets job, nodes, GPUs and exclusions; the sweep holds it; the queue wait is booked', () => {
    const p = granted();
    expect(p.allocations[0]).toMatchObject({ jobId: '77', nodes: ['n1', 'n2'], gpus: 16, excluded: ['n3'] });
    expect(p.allocation).toEqual({
      jobId: '77',
      nodes: ['n1', 'n2'],
      attempt: 1,
      grantedAt: '2026-12-05T10:30:00.000Z',
      timeLimitMinutes: 240,
    });
    // 30 minutes in the queue, for 16 GPUs
    expect([p.ledger.queueWaitSeconds, p.ledger.queueWaitGpuSeconds]).toEqual([1800, 1800 * 16]);
    expect(Object.keys(p.ledger.open)).toEqual(['77']);
  });

  it("released: Slurm's own terminal state wins over the caller's; held by Slurm's times, else granted to now", () => {
    const p = granted();
    const a = { jobId: '77', jobName: 'j-a1', grantedAt: '2026-12-05T10:30:00.000Z' };
    const at = '2026-12-05T11:30:00.000Z';
    recordAllocationReleased(
      p,
      a,
      { ended: 'NODE_FAIL', reason: 'NodeDown' },
      { ended: 'released', reason: undefined, at, atMs: Date.parse(at) },
    );
    expect(p.allocations[0]).toMatchObject({ ended: 'NODE_FAIL', reason: 'NodeDown', endedAt: at, heldSeconds: 3600 });
    // the ledger books the held time x GPUs and closes the allocation
    expect([p.ledger.heldGpuSeconds, ledgerTotal(p.ledger.sweep), p.ledger.open]).toEqual([3600 * 16, 3600 * 16, {}]);

    const q = granted();
    recordAllocationReleased(
      q,
      a,
      { ended: 'released', heldSeconds: 3500 },
      { ended: 'insufficient-time', reason: 'time guard', at, atMs: Date.parse(at) },
    );
    expect(q.allocations[0]).toMatchObject({ ended: 'insufficient-time', reason: 'time guard', heldSeconds: 3500 });
  });

  it("the sweep's result: points, allocations and what a closed sweep's status shows", () => {
    const p = granted();
    p.message = 'done';
    const r = sweepResultOf(p, { sweepId: 's', resultsDir: '/r' });
    expect(r).toEqual({
      sweepId: 's',
      status: 'completed',
      points: p.points,
      allocations: p.allocations,
      resultsDir: '/r',
      message: 'done',
      ledger: p.ledger,
    });
    expect(sweepResultOf({ ...p, phase: 'aborted' }, { sweepId: 's', resultsDir: '/r' }).status).toBe('aborted');
  });
});
