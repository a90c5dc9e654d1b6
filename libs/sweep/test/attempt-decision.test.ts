import { describe, expect, it } from 'vitest';
import { ATTEMPT_CLASSES, type AttemptClass } from '@infersweep/core';
import { decideAttempt, quarantineBlocks, quarantinedBy, STRIKES_TO_QUARANTINE } from '../src';

const point = (c: AttemptClass, attempts = 1, max = 2) =>
  decideAttempt({ class: c, during: 'point', pointAttempts: attempts, maxPointAttempts: max });
const setup = (c: AttemptClass) => decideAttempt({ class: c, during: 'setup', pointAttempts: 0, maxPointAttempts: 2 });

describe('decideAttempt: the workflow decision follows from the class', () => {
  it('a node-health failure re-places the point and quarantines the node at once', () => {
    expect(point('node-health')).toMatchObject({ action: 're-place', quarantine: 'now' });
    expect(setup('node-health')).toMatchObject({ action: 're-place', quarantine: 'now' });
  });

  it('an NCCL failure re-places with a strike against the nodes (two strikes quarantine)', () => {
    expect(point('nccl')).toMatchObject({ action: 're-place', quarantine: 'strike' });
  });

  it('Slurm ending the job (time limit, preemption) re-places with no suspicion on a node', () => {
    expect(point('scheduler')).toMatchObject({ action: 're-place', quarantine: 'none' });
  });

  it('a CUDA OOM fails the point at once (deterministic at that concurrency), whatever attempts remain', () => {
    expect(point('cuda-oom', 1, 5)).toMatchObject({ action: 'fail-point', quarantine: 'none' });
    expect(point('host-oom', 1, 5)).toMatchObject({ action: 'fail-point' });
  });

  it('an OOM while loading the model, or an image that will not import, waits for an operator', () => {
    expect(setup('cuda-oom')).toMatchObject({ action: 'wait-operator' });
    expect(setup('image').why).toMatch(/cannot run as it is/);
  });

  it('an engine crash restarts the engine here while attempts remain, then fails the point', () => {
    expect(point('engine-crash', 1, 2)).toMatchObject({ action: 'retry-here', quarantine: 'strike' });
    const last = point('engine-crash', 2, 2);
    expect(last).toMatchObject({ action: 'fail-point', quarantine: 'strike' });
    expect(last.why).toMatch(/2 of 2 attempts used/);
  });

  it('client, network and unknown failures retry here, then fail the point', () => {
    for (const c of ['client', 'network', 'unknown'] as const) {
      expect(point(c, 1, 3).action).toBe('retry-here');
      expect(point(c, 3, 3).action).toBe('fail-point');
      expect(point(c).quarantine).toBe('none');
    }
  });

  it('a program missing on the cluster waits for an operator during set-up and fails the point under one', () => {
    expect(setup('setup')).toMatchObject({ action: 'wait-operator', quarantine: 'none' });
    expect(setup('setup').why).toBe('a program the plan runs is not on the cluster: the plan cannot run as it is');
    expect(point('setup', 1, 5)).toMatchObject({ action: 'fail-point', quarantine: 'none' });
  });

  it('a zero-output "success" fails the point (it is no measurement)', () => {
    expect(point('zero-output')).toMatchObject({ action: 'fail-point' });
  });

  it('every class has a decision with a reason, in both situations', () => {
    for (const c of ATTEMPT_CLASSES)
      for (const d of [point(c), setup(c)]) {
        expect(['retry-here', 're-place', 'fail-point', 'wait-operator']).toContain(d.action);
        expect(d.why.length).toBeGreaterThan(10);
      }
  });
});

describe('quarantine rules', () => {
  it(`a node-class failure quarantines at once; others after ${STRIKES_TO_QUARANTINE} strikes`, () => {
    expect(quarantinedBy('now', 1)).toBe(true);
    expect(quarantinedBy('strike', 1)).toBe(false);
    expect(quarantinedBy('strike', 2)).toBe(true);
    expect(quarantinedBy('none', 5)).toBe(false);
  });

  it('the topology fits while enough unquarantined nodes remain, else names what is left and the fix', () => {
    const nodes = ['node1', 'node2', 'node3', 'node4'];
    expect(
      quarantineBlocks({ partitionNodes: nodes, quarantined: ['node2'], needed: 2, partition: 'local' }),
    ).toBeUndefined();
    expect(
      quarantineBlocks({
        partitionNodes: nodes,
        quarantined: ['node1', 'node2', 'node9'],
        needed: 2,
        partition: 'local',
      }),
    ).toBeUndefined();
    const msg = quarantineBlocks({
      partitionNodes: nodes,
      quarantined: ['node1', 'node2', 'node3'],
      needed: 2,
      partition: 'local',
    });
    expect(msg).toBe(
      'the quarantine leaves 1 of 4 nodes of partition local (quarantined: node1, node2, node3); the topology needs 2: clear a node with infersweep nodes --clear NODE, then infersweep resume',
    );
  });

  it('never blocks when no quarantined node is in the partition: Slurm judges the request (a partition too small, or none)', () => {
    const q = { quarantined: ['node1'], needed: 2 };
    expect(quarantineBlocks({ ...q, partitionNodes: [], partition: 'no-such-partition' })).toBeUndefined();
    expect(quarantineBlocks({ ...q, partitionNodes: ['node3'], partition: 'small' })).toBeUndefined();
    expect(quarantineBlocks({ ...q, partitionNodes: ['node1', 'node3'], partition: 'small' })).toContain(
      'leaves 1 of 2 nodes',
    );
  });
});
