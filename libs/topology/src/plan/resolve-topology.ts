import { checkTopology, deriveNodes, type Topology } from '../topology/validate';
import type { PlanDraft } from './draft';

/**
 * The orientation's validated topology on this cluster's nodes. Nodes are derived from TP×PP×DP and
 * the GPUs per node; a given `nodes` is only a check. Adds the topology's warnings to the draft.
 */
export function resolveTopology(d: PlanDraft): Topology {
  const { spec, tPath, issues } = d;
  const G = d.cluster.gpusPerNode;
  const derived = deriveNodes(spec.tp, spec.pp, spec.dp, G);
  const gpus = spec.tp * spec.pp * spec.dp;
  if (derived === null) {
    issues.add(
      [...tPath, 'dp'],
      spec.dp,
      `TP×PP×DP = ${gpus} GPUs do not tile nodes of ${G} GPUs (cluster ${d.opts.cluster}); make TP×PP×DP a multiple of ${G}`,
    );
  } else if (spec.nodes !== undefined && spec.nodes !== derived) {
    issues.add(
      [...tPath, 'nodes'],
      spec.nodes,
      `TP×PP×DP = ${gpus} GPUs on ${G}-GPU nodes (cluster ${d.opts.cluster}) need ${derived} nodes; fix nodes or omit it (it is derived)`,
    );
  }
  issues.throwIfAny();
  const result = checkTopology({ ...spec, nodes: derived ?? 1, gpusPerNode: G, moe: d.config.model.moe });
  if (!result.ok) {
    for (const v of result.violations)
      issues.add(
        v.field === 'gpusPerNode' ? ['clusters', d.opts.cluster, 'gpusPerNode'] : [...tPath, v.field],
        v.value,
        v.message,
      );
    issues.throwIfAny();
    throw new Error('unreachable');
  }
  d.warnings.push(...result.topology.warnings, ...result.topology.experimental.map((e) => `experimental: ${e}`));
  return result.topology;
}
