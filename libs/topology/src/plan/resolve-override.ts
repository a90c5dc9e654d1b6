import type { AgentxSettings } from '../config/agentx';
import type { SimulatorOverride, VllmCpuOverride } from '../config/schema';
import type { Topology } from '../topology/validate';
import type { PlanDraft } from './draft';

/** The cluster's engine override, split by kind, and the context length the server will serve. */
export interface EngineOverrideView {
  /** The simulator on node 0 (stand-ins on the other nodes). */
  sim: SimulatorOverride | undefined;
  /** The real vLLM on CPU nodes. */
  cpu: VllmCpuOverride | undefined;
  /** The simulator's context, else engine.maxModelLen, else the model default. */
  servedContext: number | undefined;
}

/**
 * Resolve the engine override and check what it needs: the simulator needs a context length and
 * serves from node 0 only; synthetic traces must fit the served context.
 */
export function resolveOverride(d: PlanDraft, topology: Topology, agentx: AgentxSettings): EngineOverrideView {
  const { issues } = d;
  const override = d.cluster.engineOverride;
  const sim = override?.kind === 'simulator' ? override : undefined;
  const cpu = override?.kind === 'vllm-cpu' ? override : undefined;
  const servedContext = sim?.maxModelLen ?? d.config.engine.maxModelLen ?? d.modelDefaultContext;
  if (sim !== undefined && servedContext === undefined) {
    issues.add(
      ['clusters', d.opts.cluster, 'engineOverride', 'maxModelLen'],
      undefined,
      'the simulator needs a context length: set it, engine.maxModelLen or model.defaultContextTokens',
    );
  }
  if (sim !== undefined && topology.endpoints !== 'single') {
    issues.add(
      [...d.tPath, 'lbMode'],
      topology.lbMode,
      `the simulator override runs one server on node 0 only; lbMode ${topology.lbMode} needs per-node servers. Use a real engine or lbMode: internal`,
    );
  }
  if (
    agentx.traces.kind === 'synthetic' &&
    servedContext !== undefined &&
    agentx.traces.maxContextTokens > servedContext
  ) {
    issues.add(
      ['agentx', 'traces', 'maxContextTokens'],
      agentx.traces.maxContextTokens,
      `exceeds the served context window ${servedContext} tokens; lower it or raise the context length`,
    );
  }
  return { sim, cpu, servedContext };
}
