/**
 * What every quarantine backend does (libs/orchestrator/src/quarantine.ts): the file in the data
 * folder (libs/orchestrator/test/quarantine.test.ts) and PostgreSQL (test/production/quarantine-store.prod.test.ts).
 * `make` gives a fresh, empty store with a 24-hour window for cluster `local`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { openQuarantine } from '@infersweep/orchestrator';

type QuarantineStore = ReturnType<typeof openQuarantine>;

const why = { class: 'nccl' as const, rule: 'nccl-warn', sweepId: 's1', jobId: '7' };
const t0 = new Date('2026-12-05T07:00:00Z');
const at = (h: number) => new Date(t0.getTime() + h * 3_600_000);

export function quarantineContract(make: () => Promise<QuarantineStore>): void {
  const opened: QuarantineStore[] = [];
  const fresh = async () => {
    const q = await make();
    opened.push(q);
    return q;
  };
  afterEach(async () => {
    for (const q of opened.splice(0)) await q.close();
  });

  describe('the quarantine contract', () => {
    it('a node-class failure quarantines at once, with its reason and an expiry', async () => {
      const q = await fresh();
      expect(
        await q.implicate({ ...why, class: 'node-health', rule: 'slurm-node-fail', nodes: ['node2'], step: 'now' }, t0),
      ).toEqual(['node2']);
      expect(await q.list(at(1))).toEqual([
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
      expect(await q.list(at(24.01))).toEqual([]); // expired
    });

    it('one strike is a suspicion, the second within the window quarantines; an old strike is forgotten', async () => {
      const q = await fresh();
      expect(await q.implicate({ ...why, nodes: ['node3'], step: 'strike' }, t0)).toEqual([]);
      expect(await q.list(at(1))).toEqual([]);
      expect(await q.implicate({ ...why, nodes: ['node3'], step: 'strike' }, at(2))).toEqual(['node3']);
      expect((await q.list(at(3))).map((n) => [n.node, n.strikes])).toEqual([['node3', 2]]);
      await q.implicate({ ...why, nodes: ['node4'], step: 'strike' }, t0);
      expect(await q.implicate({ ...why, nodes: ['node4'], step: 'strike' }, at(25))).toEqual([]);
    });

    it('a strike against a quarantined node keeps it quarantined and renews its expiry; none does nothing', async () => {
      const q = await fresh();
      await q.implicate({ ...why, nodes: ['node1'], step: 'now' }, t0);
      expect(await q.implicate({ ...why, nodes: ['node1'], step: 'strike' }, at(20))).toEqual(['node1']);
      expect((await q.list(at(30))).map((n) => n.node)).toEqual(['node1']);
      expect(await q.implicate({ ...why, nodes: ['node9'], step: 'none' }, t0)).toEqual([]);
    });

    it('clear takes named nodes (or all) out with their strikes', async () => {
      const q = await fresh();
      await q.implicate({ ...why, nodes: ['node1', 'node2'], step: 'now' }, t0);
      await q.implicate({ ...why, nodes: ['node3'], step: 'strike' }, t0);
      expect(await q.clear(['node1', 'node7'])).toEqual(['node1']);
      expect((await q.list(at(1))).map((n) => n.node)).toEqual(['node2']);
      expect(await q.clear('all')).toEqual(['node2', 'node3']);
      expect(await q.list(at(1))).toEqual([]);
    });

    it('concurrent implications lose none of each other: ten strikes at once against ten nodes', async () => {
      const q = await fresh();
      const nodes = Array.from({ length: 10 }, (_, i) => `n${i}`);
      await Promise.all(nodes.map((n) => q.implicate({ ...why, nodes: [n], step: 'now' }, t0)));
      expect((await q.list(at(1))).map((n) => n.node).sort()).toEqual(nodes.sort());
    });
  });
}
