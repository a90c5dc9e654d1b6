import { describe, expect, it } from 'vitest';
import {
  applyCompleted,
  clusterUnavailable,
  failPoint,
  failedAllocationAttempts,
  finishPoint,
  initialProgress,
  nextPoint,
  recordAllocationEnd,
  requeuePoint,
  skipPoint,
  startPoint,
  summaryLine,
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
