import { defaultPublicDataset, type AgentxSettings } from '../config/agentx';
import type { Topology } from '../topology/validate';
import type { PlanDraft } from './draft';
import { resolveEngineSettings, type EngineSettings } from './engine';

/**
 * The engine settings derived for this orientation and its points (engine.ts), and the AgentX
 * defaults that follow from them: the public dataset named after the model, and cached tokens
 * required exactly when prefix caching is on. Fills those defaults into `agentx`.
 */
export function deriveEngineSettings(d: PlanDraft, topology: Topology, points: readonly number[], agentx: AgentxSettings): EngineSettings {
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
  if (agentx.aiperf.publicDataset === undefined) agentx.aiperf.publicDataset = defaultPublicDataset(d.config.model.prefix);
  if (agentx.requireCachedTokens === undefined) agentx.requireCachedTokens = derived.settings.prefixCaching;
  return derived.settings;
}
