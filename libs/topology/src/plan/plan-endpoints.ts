import type { NodeCommand } from '../topology/commands';
import { HEAD_ADDR, nodeAddrOf, PORT } from '../topology/placeholders';
import type { Topology } from '../topology/validate';
import type { PlanDraft } from './draft';
import type { EngineOverrideView } from './resolve-override';
import type { EngineIds } from './schema';

/**
 * The endpoints the client sends to (rule 13: one per serving node under hybrid/external LB, else
 * the head node) and the DP engine ids each /metrics endpoint must report (none under the
 * simulator, which has no per-engine labels). Adds the notes a reader of the plan needs.
 */
export function planEndpoints(
  d: PlanDraft,
  topology: Topology,
  commands: readonly NodeCommand[],
  { sim, cpu }: EngineOverrideView,
): { endpoints: string[]; engineIds: EngineIds } {
  const serving = commands.filter((c) => c.serves);
  const endpoints = serving.map(
    (c) => `http://${topology.endpoints === 'single' ? HEAD_ADDR : nodeAddrOf(c.rank)}:${PORT}`,
  );
  const engineIds: EngineIds =
    sim !== undefined
      ? {
          labelled: false,
          reason: `the simulator (${sim.binary}) stands in for all ${topology.dp} DP engine(s) and exposes no per-engine labels; readiness and idle-rank checks cannot verify DP ranks`,
        }
      : {
          labelled: true,
          perMetricsEndpoint: serving.map((c) =>
            topology.lbMode === 'internal'
              ? Array.from({ length: topology.dp }, (_, i) => String(i))
              : c.dpRanks.map(String),
          ),
        };
  if (sim !== undefined) {
    d.notes.push(
      `engine override: node 0 runs ${sim.binary} in place of vLLM; nodes 1..${topology.nodes - 1} run stand-ins that print the vLLM argv they replace`,
    );
  }
  if (cpu !== undefined) {
    d.notes.push(
      `engine override vllm-cpu: every node runs the planner's vllm serve argv on the CPU build, changed only as launchDifferences lists`,
    );
  }
  if (topology.nodes > 1)
    d.notes.push(
      'inter-node firewalls must allow all TCP between the nodes: vLLM opens ZMQ connections on ephemeral ports (rule 16)',
    );
  if (topology.endpoints !== 'single')
    d.notes.push(`${topology.lbMode} LB: the client must spread requests over all ${endpoints.length} endpoints`);
  return { endpoints, engineIds };
}
