import { describe, expect, it } from 'vitest';
import { planAgentx } from '../../src/plan/plan-agentx';
import { resolveOverride } from '../../src/plan/resolve-override';
import { resolveTopology } from '../../src/plan/resolve-topology';
import { edit } from '../helpers';
import { draftOf } from './fixture';

function resolved(orientation: string, cluster: string, text?: string) {
  const d = draftOf(orientation, cluster, text);
  return { d, view: resolveOverride(d, resolveTopology(d), planAgentx(d).agentx) };
}

describe('resolveOverride', () => {
  it('the simulator serves its own context length; a real engine has no override', () => {
    expect(resolved('latency', 'local').view).toMatchObject({
      sim: { kind: 'simulator' },
      cpu: undefined,
      servedContext: 8192,
    });
    expect(resolved('latency', 'h200').view).toMatchObject({ sim: undefined, cpu: undefined, servedContext: 1048576 });
  });

  it('the simulator cannot serve per-node endpoints', () => {
    const text = edit(
      'topology: { tp: 1, pp: 2, dp: 16, ep: 16, nodes: 4 }',
      'topology: { tp: 1, pp: 2, dp: 16, ep: 16, nodes: 4, lbMode: hybrid }',
    );
    const { d } = resolved('throughput', 'local', text);
    expect(d.issues.list.map((i) => i.path)).toContain('orientations.throughput.topology.lbMode');
  });

  it('synthetic traces longer than the served context are refused', () => {
    const text = edit('maxContextTokens: 4096 }', 'maxContextTokens: 9000 }');
    const { d } = resolved('latency', 'local', text);
    expect(d.issues.list.map((i) => i.path)).toEqual(['agentx.traces.maxContextTokens']);
    expect(d.issues.list[0]!.message).toContain('served context window 8192 tokens');
  });
});
