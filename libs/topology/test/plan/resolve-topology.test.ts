import { describe, expect, it } from 'vitest';
import { resolveTopology } from '../../src/plan/resolve-topology';
import { edit } from '../helpers';
import { configErrorOf, draftOf } from './fixture';

describe('resolveTopology', () => {
  it('derives the node count from TP×PP×DP and the GPUs per node', () => {
    const t = resolveTopology(draftOf('throughput'));
    expect(t).toMatchObject({ tp: 1, pp: 2, dp: 16, ep: 16, nodes: 4 });
  });

  it('a given node count that disagrees is refused with the derived one', () => {
    const text = edit('topology: { tp: 8, pp: 2, nodes: 2 }', 'topology: { tp: 8, pp: 2, nodes: 3 }');
    const e = configErrorOf(() => resolveTopology(draftOf('latency', 'h200', text)));
    expect(e.issues).toHaveLength(1);
    expect(e.issues[0]!.path).toBe('orientations.latency.topology.nodes');
    expect(e.issues[0]!.message).toContain('need 2 nodes');
  });

  it('GPUs that do not tile whole nodes are refused at topology.dp', () => {
    const text = edit('topology: { tp: 8, pp: 2, nodes: 2 }', 'topology: { tp: 4, pp: 1 }');
    const e = configErrorOf(() => resolveTopology(draftOf('latency', 'h200', text)));
    expect(e.issues[0]!.path).toBe('orientations.latency.topology.dp');
    expect(e.issues[0]!.message).toContain('do not tile nodes of 8 GPUs');
  });

  it("the topology's warnings and experimental notes become warnings on the draft", () => {
    const d = draftOf('ix-latency');
    const t = resolveTopology(d);
    expect(t.warnings).toHaveLength(1);
    expect(t.experimental).toHaveLength(1);
    expect(d.warnings).toEqual([t.warnings[0], `experimental: ${t.experimental[0]}`]);
  });
});
