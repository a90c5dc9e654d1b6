import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  CLUSTER_UNAVAILABLE,
  ClusterUnavailableError,
  InfersweepError,
  ResultsLayout,
  allocationEndOf,
  allocationJobName,
  childSweepId,
  deploymentTag,
  endOnRelease,
  parseStackEnv,
  remoteRankLogFile,
  remoteServerLogDir,
  sweepWorkflowId,
  tail,
  taskQueueFor,
} from '../src';

describe('names', () => {
  it('derives a Temporal-safe workflow id from config, orientation, cluster and label', () => {
    expect(sweepWorkflowId('kimik3 fp4', 'balanced', 'local', 'nightly/2026-12-02')).toBe(
      'sweep-kimik3-fp4-balanced-local-nightly-2026-12-02',
    );
  });

  it('job names are unique per sweep and attempt, Slurm-safe, and carry the janitor prefix', () => {
    const tag = deploymentTag('default', 'unit');
    fc.assert(
      fc.property(fc.string(), fc.string(), fc.integer({ min: 1, max: 99 }), (a, b, n) => {
        const x = allocationJobName(a, n, tag);
        expect(x).toMatch(/^infersweep-unit\.[0-9a-f]{6}-[A-Za-z0-9-]*-[0-9a-f]{8}-a\d+$/);
        // two sweep ids that differ after sanitising never share a name
        expect(
          x === allocationJobName(b, n, tag) && a.replace(/[^A-Za-z0-9-]+/g, '-') !== b.replace(/[^A-Za-z0-9-]+/g, '-'),
        ).toBe(false);
        expect(allocationJobName(a, n, tag)).not.toBe(allocationJobName(a, n + 1, tag));
      }),
    );
  });

  it('task queue per cluster; child sweep ids of scheduled runs are Temporal-safe', () => {
    expect(taskQueueFor('h200')).toBe('infersweep-h200');
    expect(childSweepId('nightly-2026-12-02T02:00:00Z', 'tp8 ep')).toBe('nightly-2026-12-02T02-00-00Z-tp8-ep');
  });
});

describe('ResultsLayout', () => {
  it('spells every path of a sweep under its results folder', () => {
    const l = ResultsLayout.of('/shared/results/', 'sweep-x');
    expect(l.resultsDir).toBe('/shared/results/sweep-x');
    expect(l.planFile).toBe('/shared/results/sweep-x/plan.json');
    expect(l.pointDir(16)).toBe('/shared/results/sweep-x/points/c16');
    expect(l.pointRecord(16)).toBe('/shared/results/sweep-x/points/c16/result.json');
    expect(l.pointRequests(16)).toBe('/shared/results/sweep-x/points/c16/requests.jsonl');
    expect(l.serverLogsDir(2)).toBe('/shared/results/sweep-x/logs/server-2');
    expect(l.progressSnapshot).toBe('/shared/results/sweep-x/progress.json');
    expect(l.reportFile).toBe('/shared/results/sweep-x/report.html');
  });

  it('places live server logs on the cluster under a safe sweep folder', () => {
    const dir = remoteServerLogDir('/lustre/team', 'sweep a/b', 3);
    expect(dir).toBe('/lustre/team/infersweep/sweep-a-b/server-3');
    expect(remoteRankLogFile(dir, 1, 'node2')).toBe('/lustre/team/infersweep/sweep-a-b/server-3/rank1-node2.log');
  });
});

describe('allocation ends', () => {
  it("keeps Slurm's terminal states and calls everything else GONE", () => {
    for (const s of ['TIMEOUT', 'NODE_FAIL', 'CANCELLED', 'PREEMPTED', 'FAILED'] as const)
      expect(allocationEndOf(s)).toBe(s);
    expect(allocationEndOf('COMPLETED')).toBe('GONE');
    expect(allocationEndOf(undefined)).toBe('GONE');
  });

  it('a job alive when released was released by us; an ended one reports how Slurm ended it', () => {
    expect(endOnRelease('RUNNING')).toBe('released');
    expect(endOnRelease('PENDING')).toBe('released');
    expect(endOnRelease('NODE_FAIL')).toBe('NODE_FAIL');
    expect(endOnRelease('BOOT_FAIL')).toBe('GONE');
  });
});

describe('errors', () => {
  class Lost extends InfersweepError {
    constructor() {
      super('allocation 42 ended: NODE_FAIL', {
        kind: 'loss',
        context: { jobId: '42', node: 'node3', step: 'point:c=8', logTail: 'x' },
      });
    }
  }

  it('carry one kind, the class name and the job/node/step/log tail context', () => {
    const e = new Lost();
    expect(e.name).toBe('Lost');
    expect(e.kind).toBe('loss');
    expect([e.jobId, e.node, e.step, e.logTail]).toEqual(['42', 'node3', 'point:c=8', 'x']);
    expect(e.toJSON()).toMatchObject({ name: 'Lost', kind: 'loss', context: { jobId: '42' } });
  });

  it('ClusterUnavailableError: transient unless told, and its failure type is the name workflows decide on', () => {
    const e = new ClusterUnavailableError('login host unreachable', { context: { step: 'allocate' } });
    expect(e.name).toBe(CLUSTER_UNAVAILABLE);
    expect(e.kind).toBe('transient');
    expect(new ClusterUnavailableError('x', { kind: 'fatal' }).kind).toBe('fatal');
  });

  it('tail keeps the last lines without trailing blanks', () => {
    expect(tail('a\nb\nc\n\n', 2)).toBe('b\nc');
  });
});

describe('parseStackEnv', () => {
  it('reads KEY=value lines, drops `export `, keeps "=" inside values, ignores the rest', () => {
    expect(parseStackEnv('export A=1\nB=x=y\n# comment\n\nC=\n')).toEqual({ A: '1', B: 'x=y', C: '' });
  });
});
