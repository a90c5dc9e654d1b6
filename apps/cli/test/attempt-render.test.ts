import { describe, expect, it } from 'vitest';
import {
  emptyLedger,
  ledgerClosed,
  ledgerGranted,
  ledgerPointEnded,
  ledgerStart,
  type AllocationRecord,
  type PointState,
  type SweepProgress,
} from '@infersweep/sweep';
import { allocationLine, attemptText, pointLine, progressLines } from '../src/ops/render';

const failed: PointState = {
  concurrency: 8,
  status: 'pending',
  attempts: 0,
  lastError: 'allocation 12 is NODE_FAIL',
  failures: [
    {
      class: 'node-health',
      rule: 'slurm-node-fail',
      evidence: 'NODE_FAIL',
      nodes: ['node2'],
      quarantined: ['node2'],
      action: 're-place',
      why: 'the node failed: re-placed on other nodes',
      jobId: '12',
      at: '2026-12-05T07:00:00Z',
    },
  ],
};

const alloc = (extra: Partial<AllocationRecord>): AllocationRecord => ({
  attempt: 1,
  jobName: 'infersweep-x-a1',
  jobId: '12',
  nodes: ['node1', 'node2'],
  requestedAt: 't',
  grantedAt: 't',
  ...extra,
});

describe('status shows the class of every failed attempt and the GPU time', () => {
  it("a point's failed attempts: class → action, the nodes quarantined for it", () => {
    expect(attemptText(failed.failures![0]!)).toBe('node-health → re-place (quarantined node2)');
    expect(pointLine(failed)).toContain('failed attempts: node-health → re-place (quarantined node2)');
    expect(pointLine({ ...failed, failures: undefined })).not.toContain('failed attempts');
  });

  it("an allocation's class and the nodes it excluded", () => {
    const line = allocationLine(alloc({ ended: 'NODE_FAIL', failureClass: 'node-health' }));
    expect(line).toContain('ended NODE_FAIL');
    expect(line).toContain('[node-health]');
    expect(allocationLine(alloc({ nodes: ['node1', 'node3'], excluded: ['node2'] }))).toContain(
      'excluded node2 (quarantine)',
    );
  });

  it("the ledger's line beside the plan's worst case, and a set-up failure", () => {
    const l = { ...emptyLedger(), worstCaseGpuSeconds: 3600 };
    ledgerGranted(l, '12', 16, 20);
    ledgerStart(l, '12', 'point', 0);
    ledgerPointEnded(l, '12', 8, 30_000, { ok: true });
    ledgerClosed(l, '12', 45, 45_000);
    const p = {
      sweepId: 's',
      orientation: 'latency',
      model: 'm',
      cluster: 'local',
      configName: 'c',
      planHash: 'p',
      resultsDir: '/r',
      phase: 'running-point',
      points: [failed],
      allocations: [],
      ledger: l,
      setupFailures: [{ ...failed.failures![0]!, class: 'image', action: 'wait-operator', quarantined: undefined }],
    } as unknown as SweepProgress;
    const lines = progressLines(p, { live: [] });
    expect(lines).toContain(
      "  GPU time     0.20 GPU-h held (plan's worst case 1.00 GPU-h): measurement 67 %, idle 33 %; queue wait 20 s",
    );
    expect(lines).toContain('    setup failed: image → wait-operator');
  });
});
