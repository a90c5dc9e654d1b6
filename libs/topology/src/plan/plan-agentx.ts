import { agentxSettingsSchema, type AgentxSettings } from '../config/agentx';
import { ConfigError } from '../config/errors';
import { zodIssuesToConfigIssues, type ConfigSource } from '../config/parse';
import type { Budgets, ClusterProfile, SweepConfig } from '../config/schema';
import type { PlanDraft } from './draft';

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Deep merge of plain objects (arrays and scalars from `over` replace). */
export function deepMerge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const b = out[k];
    out[k] = isPlainObject(b) && isPlainObject(v) ? deepMerge(b, v) : v;
  }
  return out;
}

/** Resolve the cluster's AgentX settings: top-level block deep-merged with the cluster's override. */
export function resolveAgentx(config: SweepConfig, clusterName: string, source?: ConfigSource): AgentxSettings {
  const cluster = config.clusters[clusterName];
  const merged = deepMerge(config.agentx, cluster?.agentx ?? {});
  const r = agentxSettingsSchema.safeParse(merged);
  if (r.success) return r.data;
  const issues = zodIssuesToConfigIssues(r.error.issues, merged, source, agentxSettingsSchema).map((i) => {
    const overridden = cluster?.agentx !== undefined && i.path.split(/[.[]/)[0]! in cluster.agentx;
    const path = overridden ? `clusters.${clusterName}.agentx.${i.path}` : `agentx.${i.path}`;
    return { ...i, path, line: source?.lines[path] ?? i.line };
  });
  throw new ConfigError(source?.file ?? '(config)', issues);
}

export function resolveBudgets(config: SweepConfig, cluster: ClusterProfile): Budgets {
  return { ...config.budgets, ...(cluster.budgets ?? {}) } as Budgets;
}

/**
 * This cluster's AgentX settings and budgets. A profile shorter than the canonical minimum is
 * refused by the settings schema unless the run is marked non-canonical; then it is a warning
 * (not submission-valid).
 */
export function planAgentx(d: PlanDraft): { agentx: AgentxSettings; budgets: Budgets } {
  const agentx = resolveAgentx(d.config, d.opts.cluster, d.opts.source);
  if (agentx.nonCanonical) {
    d.warnings.push(
      `non-canonical run: profileDurationSeconds ${agentx.profileDurationSeconds} s (canonical ≥ ${agentx.canonicalMinDurationSeconds} s); results are not submission-valid`,
    );
  }
  return { agentx, budgets: resolveBudgets(d.config, d.cluster) };
}
