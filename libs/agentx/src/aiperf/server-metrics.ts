import { z } from 'zod';
import { FAMILIES, prefixHitRate, type EngineFamily } from '../server/families';
import type { EngineWindow, ServerMetrics } from '../server/window';

/**
 * The server metrics of an aiperf point from aiperf's own `server_metrics_export.json` (pure): its
 * `metrics` block covers the profiling phase only (warmup is in `warmup_metrics`), which is what
 * InferenceX aggregates (InferenceX utils/agentic/aggregation/backends/vllm.py and aggregation_common.py
 * @ 843c6254f: counters = Σ over series of stats.total, KV usage = max over series of stats.max, per-engine
 * values from the `engine` label). Counter names are the Prometheus family names without `_total`.
 * Null when the export has no metrics block.
 */
const seriesSchema = z
  .object({
    endpoint_url: z.string().optional(),
    labels: z.record(z.string(), z.unknown()).default({}),
    stats: z.record(z.string(), z.unknown()).default({}),
  })
  .passthrough();
export const aiperfServerMetricsSchema = z
  .object({
    metrics: z.record(z.string(), z.object({ series: z.array(seriesSchema).default([]) }).passthrough()).optional(),
  })
  .passthrough();
export type AiperfSeries = z.infer<typeof seriesSchema>;
type Series = AiperfSeries;

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
/** InferenceX's `series_stat` preference: total, sum, max, avg. */
export const counterOf = (s: Series): number | null =>
  num(s.stats.total) ?? num(s.stats.sum) ?? num(s.stats.max) ?? num(s.stats.avg);
export const gaugeMaxOf = (s: Series): number | null => num(s.stats.max) ?? num(s.stats.avg) ?? num(s.stats.total);
const bare = (name: string | null) => (name === null ? null : name.replace(/_total$/, ''));

/** Σ of a labelled counter per value of its label (InferenceX `sum_by_label`); null when the export lacks it. */
function bySource(
  series: (name: string | null) => Series[],
  spec: { metric: string; label: string } | null,
): Record<string, number> | null {
  if (spec === null) return null;
  const out: Record<string, number> = {};
  for (const s of series(spec.metric)) {
    const key = s.labels[spec.label];
    const v = counterOf(s);
    if (typeof key === 'string' && v !== null) out[key] = (out[key] ?? 0) + v;
  }
  return Object.keys(out).length === 0 ? null : out;
}

export function serverMetricsFromAiperf(
  json: unknown,
  family: EngineFamily,
  poolTokens: number | null,
): ServerMetrics | null {
  const metrics = aiperfServerMetricsSchema.parse(json).metrics;
  if (metrics === undefined) return null;
  const spec = FAMILIES[family];
  const series = (name: string | null): Series[] => (name === null ? [] : (metrics[bare(name)!]?.series ?? []));
  const sum = (name: string | null, filter: (s: Series) => boolean = () => true): number | null => {
    let total = 0;
    let found = false;
    for (const s of series(name).filter(filter)) {
      const v = counterOf(s);
      if (v === null) continue;
      total += v;
      found = true;
    }
    return found ? total : null;
  };
  const gaugeMax = (name: string | null, filter: (s: Series) => boolean = () => true): number | null => {
    const vs = series(name)
      .filter(filter)
      .map(gaugeMaxOf)
      .filter((v): v is number => v !== null);
    return vs.length === 0 ? null : Math.max(...vs);
  };
  const hits = sum(spec.prefixHits);
  const queries = sum(spec.prefixQueries);
  const kv = gaugeMax(spec.kvUsage);
  const rate = prefixHitRate(hits, queries);
  const bySourceTokens = bySource(series, spec.promptTokensBySource);
  const label = spec.engineLabel;
  const engines = new Set<string>();
  if (label !== null)
    for (const m of Object.values(metrics))
      for (const s of m.series) if (typeof s.labels[label] === 'string') engines.add(s.labels[label] as string);
  const perEngine: Record<string, EngineWindow> = {};
  for (const id of [...engines].sort((a, b) => Number(a) - Number(b) || a.localeCompare(b))) {
    const of = (s: Series) => s.labels[label!] === id;
    const k = gaugeMax(spec.kvUsage, of);
    perEngine[id] = {
      requests: sum(spec.requestSuccess, of),
      prompt_tokens: sum(spec.promptTokens, of),
      generation_tokens: sum(spec.generationTokens, of),
      prefix_hits: sum(spec.prefixHits, of),
      prefix_queries: sum(spec.prefixQueries, of),
      kv_usage_pct_max: k === null ? null : k * spec.kvUsageToPct,
    };
  }
  const sources = [
    ...new Set(
      Object.values(metrics).flatMap((m) => m.series.map((s) => s.endpoint_url).filter((u): u is string => !!u)),
    ),
  ];
  return {
    present: Object.keys(metrics).length > 0,
    adapter: family,
    sources,
    metric_count: Object.keys(metrics).length,
    cache: { prefix_hits: hits, prefix_queries: queries, overall_cache_hit_rate: rate, gpu_cache_hit_rate: rate },
    kv_cache: {
      gpu_usage_pct: kv === null ? null : kv * spec.kvUsageToPct,
      samples: series(spec.kvUsage).length,
      gpu_total_tokens: poolTokens,
    },
    tokens: {
      prompt: sum(spec.promptTokens),
      generation: sum(spec.generationTokens),
      ...(bySourceTokens === null ? {} : { prompt_by_source: bySourceTokens }),
    },
    per_engine: perEngine,
    warnings: [
      "server metrics: aiperf's server_metrics_export.json, profiling phase (the /metrics KV pool from infersweep's snapshot)",
    ],
  };
}
