import { defaultPublicDataset, type AgentxSettings } from '../config/agentx';
import type { Topology } from '../topology/validate';
import type { PlanDraft } from './draft';
import { resolveEngineSettings, type EngineSettings } from './engine';

/**
 * The engine settings derived for this orientation and its points (engine.ts), and the AgentX
 * defaults that follow from them: the public dataset named after the model, and cached tokens
 * required exactly when prefix caching is on. Fills those defaults into `agentx`.
 */
export function deriveEngineSettings(
  d: PlanDraft,
  topology: Topology,
  points: readonly number[],
  agentx: AgentxSettings,
): EngineSettings {
  const derived = resolveEngineSettings({
    orientation: d.oName,
    engine: d.config.engine,
    override: d.orientation.engine,
    dp: topology.dp,
    pp: topology.pp,
    points,
  });
  d.warnings.push(...derived.warnings);
  d.notes.push(...derived.notes);
  if (agentx.aiperf.publicDataset === undefined)
    agentx.aiperf.publicDataset = defaultPublicDataset(d.config.model.prefix);
  if (agentx.requireCachedTokens === undefined) agentx.requireCachedTokens = derived.settings.prefixCaching;
  if (agentx.client === 'aiperf' && agentx.aiperf.runOn === 'head-node') checkAiperfOnHeadNode(d);
  return derived.settings;
}

/**
 * aiperf on the head node under pyxis writes its artifacts under `sharedDir` from inside the container, and
 * the worker reads them back by the same path outside: a mount must show `sharedDir` at the same path.
 */
function checkAiperfOnHeadNode(d: PlanDraft): void {
  const { cluster } = d;
  if (cluster.containerRuntime !== 'pyxis') return;
  const under = (dir: string, root: string) => dir === root || dir.startsWith(`${root.replace(/\/+$/, '')}/`);
  const same = cluster.mounts.some((m) => {
    const [src, dst] = m.split(':');
    return src !== undefined && src === dst && under(cluster.sharedDir, src);
  });
  if (same) return;
  d.issues.add(
    ['clusters', d.opts.cluster, 'mounts'],
    cluster.mounts,
    `agentx.aiperf.runOn: head-node runs aiperf inside the container and it writes under sharedDir ${cluster.sharedDir}: mount it at the same path (e.g. ${cluster.sharedDir}:${cluster.sharedDir})`,
  );
  d.issues.throwIfAny();
}
