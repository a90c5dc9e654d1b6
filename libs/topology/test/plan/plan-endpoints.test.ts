import { describe, expect, it } from 'vitest';
import { buildNodes } from '../../src/plan/build-nodes';
import { deriveEngineSettings } from '../../src/plan/derive-engine-settings';
import { planAgentx } from '../../src/plan/plan-agentx';
import { planEndpoints } from '../../src/plan/plan-endpoints';
import { resolveOverride } from '../../src/plan/resolve-override';
import { resolveTopology } from '../../src/plan/resolve-topology';
import { selectPoints } from '../../src/plan/select-points';
import { HEAD_ADDR, nodeAddrOf, PORT } from '../../src/topology/placeholders';
import { edit, shippedText } from '../helpers';
import { draftOf } from './fixture';

function endpointsOf(orientation: string, cluster: string, text = shippedText) {
  const d = draftOf(orientation, cluster, text);
  const topology = resolveTopology(d);
  const { agentx } = planAgentx(d);
  const settings = deriveEngineSettings(d, topology, selectPoints(d), agentx);
  const override = resolveOverride(d, topology, agentx);
  const { commands } = buildNodes(d, topology, settings, override);
  return { d, ...planEndpoints(d, topology, commands, override) };
}

describe('planEndpoints (rule 13)', () => {
  it('internal LB: one endpoint on the head node that reports every DP engine id', () => {
    const { endpoints, engineIds } = endpointsOf('throughput', 'h200');
    expect(endpoints).toEqual([`http://${HEAD_ADDR}:${PORT}`]);
    expect(engineIds).toEqual({
      labelled: true,
      perMetricsEndpoint: [Array.from({ length: 16 }, (_, i) => String(i))],
    });
  });

  it('hybrid LB: one endpoint per serving node, each with its own DP ranks, and a note to balance', () => {
    const text = edit(
      'topology: { tp: 8, dp: 4, ep: 32, nodes: 4 }',
      'topology: { tp: 2, dp: 8, ep: 16, nodes: 2, lbMode: hybrid }',
    );
    const { d, endpoints, engineIds } = endpointsOf('ix-balanced', 'h200', text);
    expect(endpoints).toEqual([0, 1].map((r) => `http://${nodeAddrOf(r)}:${PORT}`));
    expect(engineIds).toEqual({
      labelled: true,
      perMetricsEndpoint: [
        ['0', '1', '2', '3'],
        ['4', '5', '6', '7'],
      ],
    });
    expect(d.notes).toContain('hybrid LB: the client must spread requests over all 2 endpoints');
  });

  it('the simulator has no per-engine labels: engine ids are not checked, and the plan says why', () => {
    const { d, engineIds } = endpointsOf('latency', 'local');
    expect(engineIds.labelled).toBe(false);
    expect(d.notes.join('\n')).toContain('node 0 runs llm-d-inference-sim in place of vLLM');
  });
});
