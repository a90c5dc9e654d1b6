import { describe, expect, it } from 'vitest';
import { buildNodes, standInArgv } from '../../src/plan/build-nodes';
import { deriveEngineSettings } from '../../src/plan/derive-engine-settings';
import { planAgentx } from '../../src/plan/plan-agentx';
import { resolveOverride } from '../../src/plan/resolve-override';
import { resolveTopology } from '../../src/plan/resolve-topology';
import { selectPoints } from '../../src/plan/select-points';
import { NODE_ADDR, PORT } from '../../src/topology/placeholders';
import { edit, shippedText } from '../helpers';
import { draftOf } from './fixture';

function built(orientation: string, cluster: string, text = shippedText) {
  const d = draftOf(orientation, cluster, text);
  const topology = resolveTopology(d);
  const { agentx } = planAgentx(d);
  const settings = deriveEngineSettings(d, topology, selectPoints(d), agentx);
  return { d, ...buildNodes(d, topology, settings, resolveOverride(d, topology, agentx)) };
}

describe('buildNodes', () => {
  it('one node per Slurm node, launching its own vllm serve argv, with the per-node env the planner derives', () => {
    const { nodes } = built('latency', 'h200');
    expect(nodes.map((n) => n.rank)).toEqual([0, 1]);
    for (const n of nodes) {
      expect(n.launchArgv).toEqual(n.argv);
      expect(n.env).toMatchObject({
        VLLM_HOST_IP: NODE_ADDR,
        CUDA_VISIBLE_DEVICES: '0,1,2,3,4,5,6,7',
        NCCL_SOCKET_IFNAME: 'enp90s0f0np0',
      });
      // PP > 1: the execute-model timeout is raised
      expect(n.env.VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS).toBe('1800');
    }
  });

  it('under the simulator, node 0 runs the simulator and the others stand-ins that print the argv they replace', () => {
    const { nodes } = built('latency', 'local');
    expect(nodes[0]!.launchArgv.slice(0, 3)).toEqual(['llm-d-inference-sim', '--port', PORT]);
    expect(nodes[0]!.launchArgv).toContain('--enable-kvcache');
    expect(nodes[0]!.env.POD_IP).toBe(NODE_ADDR);
    expect(nodes[1]!.launchArgv).toEqual(standInArgv(1, nodes[1]!.argv));
  });

  it('multi-node without a data interface warns (rule 17)', () => {
    const { d } = built('latency', 'h200', edit('    dataInterface: enp90s0f0np0\n', ''));
    expect(d.warnings.join('\n')).toContain('clusters.h200.dataInterface is not set');
  });
});
