import { describe, expect, it } from 'vitest';
import { planSweep } from '@infersweep/topology';
import { loadSweepConfig } from '../src/config-file';
import { nodeRolesOf } from '../src/activities/point';

/**
 * A P/D point's GPU energy is split by the role of the node whose DCGM exporter reported each GPU
 * (libs/agentx/src/server/energy.ts dcgmPointEnergy): the roles come from the plan's worker node ranks.
 */
describe("nodeRolesOf: a P/D plan's role of each allocation node", () => {
  const loaded = loadSweepConfig({ clusters: ['h200'], env: { ...process.env, INFERSWEEP_STACK: '/stack' } });
  const plan = planSweep(loaded.config, { orientation: 'pd-1p1d', cluster: 'h200', source: loaded.source });
  const pd = plan.disaggregation!;
  const nodes = plan.nodes.map((_, i) => `gpu${i + 1}`);
  const own = Object.fromEntries(nodes.map((n, i) => [n, `10.0.0.${i + 1}`]));

  it("the plan's prefill workers' nodes first, then the decode workers', each its own exporter", () => {
    const roles = nodeRolesOf(pd, nodes, own);
    const expected = Object.fromEntries(
      pd.roles.flatMap((r) => r.workerNodes.flat().map((rank) => [nodes[rank]!, r.role])),
    );
    expect(roles).toEqual(expected);
    expect(new Set(Object.values(roles))).toEqual(new Set(['prefill', 'decode']));
    expect(Object.keys(roles)).toHaveLength(nodes.length);
  });

  it('nodes of both roles behind one address get no role; nodes of one role sharing one keep it', () => {
    const prefill = pd.roles.find((r) => r.role === 'prefill')!.workerNodes.flat();
    const decode = pd.roles.find((r) => r.role === 'decode')!.workerNodes.flat();
    const [p, d] = [nodes[prefill[0]!]!, nodes[decode[0]!]!];
    const mixed = nodeRolesOf(pd, nodes, { ...own, [d]: own[p]! });
    expect(p in mixed || d in mixed).toBe(false);
    expect(Object.keys(mixed)).toHaveLength(nodes.length - 2);
    // pd-1p1d's decode worker spans two nodes (TP8 × PP2 on 8-GPU nodes)
    const d2 = nodes[decode[1]!]!;
    expect(nodeRolesOf(pd, nodes, { ...own, [d2]: own[d]! })[d2]).toBe('decode');
  });
});
