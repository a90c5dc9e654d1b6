import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { QuarantineStore, quarantineHours } from '../src/quarantine';

const dirs: string[] = [];
const store = (hours = 24) => {
  const d = mkdtempSync(join(tmpdir(), 'quarantine-'));
  dirs.push(d);
  return new QuarantineStore('local', d, hours);
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const why = { class: 'nccl' as const, rule: 'nccl-warn', sweepId: 's1', jobId: '7' };
const t0 = new Date('2026-12-05T07:00:00Z');
const at = (h: number) => new Date(t0.getTime() + h * 3_600_000);

describe('the worker quarantine', () => {
  it('a node-class failure quarantines at once, with its reason and an expiry', () => {
    const q = store(24);
    expect(
      q.implicate({ ...why, class: 'node-health', rule: 'slurm-node-fail', nodes: ['node2'], step: 'now' }, t0),
    ).toEqual(['node2']);
    expect(q.list(at(1))).toEqual([
      expect.objectContaining({
        node: 'node2',
        class: 'node-health',
        rule: 'slurm-node-fail',
        sweepId: 's1',
        jobId: '7',
        strikes: 1,
        until: '2026-12-06T07:00:00.000Z',
      }),
    ]);
    expect(q.list(at(24.01))).toEqual([]); // expired
  });

  it('one strike is a suspicion, the second within the window quarantines; an old strike is forgotten', () => {
    const q = store(24);
    expect(q.implicate({ ...why, nodes: ['node3'], step: 'strike' }, t0)).toEqual([]);
    expect(q.list(at(1))).toEqual([]);
    expect(q.implicate({ ...why, nodes: ['node3'], step: 'strike' }, at(2))).toEqual(['node3']);
    expect(q.list(at(3)).map((n) => [n.node, n.strikes])).toEqual([['node3', 2]]);
    const late = store(24);
    late.implicate({ ...why, nodes: ['node4'], step: 'strike' }, t0);
    expect(late.implicate({ ...why, nodes: ['node4'], step: 'strike' }, at(25))).toEqual([]);
  });

  it('a strike against a quarantined node keeps it quarantined and renews its expiry; none does nothing', () => {
    const q = store(10);
    q.implicate({ ...why, nodes: ['node1'], step: 'now' }, t0);
    expect(q.implicate({ ...why, nodes: ['node1'], step: 'strike' }, at(5))).toEqual(['node1']);
    expect(q.list(at(12)).map((n) => n.node)).toEqual(['node1']);
    expect(q.implicate({ ...why, nodes: ['node9'], step: 'none' }, t0)).toEqual([]);
  });

  it('clear takes named nodes (or all) out with their strikes; the file is valid JSON in the data folder', () => {
    const q = store();
    q.implicate({ ...why, nodes: ['node1', 'node2'], step: 'now' }, t0);
    q.implicate({ ...why, nodes: ['node3'], step: 'strike' }, t0);
    expect(q.clear(['node1', 'node7'])).toEqual(['node1']);
    expect(q.list(at(1)).map((n) => n.node)).toEqual(['node2']);
    expect(q.clear('all')).toEqual(['node2', 'node3']);
    expect(q.list(at(1))).toEqual([]);
    expect(JSON.parse(readFileSync(q.file, 'utf8'))).toEqual({ quarantined: {}, strikes: {} });
    expect(q.file.endsWith(join('quarantine', 'local.json'))).toBe(true);
  });

  it('refuses a cluster name that is not a file name and a bad expiry setting', () => {
    expect(() => new QuarantineStore('../x', '/tmp')).toThrow(/not a cluster name/);
    expect(quarantineHours({})).toBe(24);
    expect(quarantineHours({ INFERSWEEP_WORKER_QUARANTINE_HOURS: '6' })).toBe(6);
    expect(() => quarantineHours({ INFERSWEEP_WORKER_QUARANTINE_HOURS: '-1' })).toThrow(/positive number/);
  });
});
