import { z } from 'zod';
import { FAMILIES, type EngineFamily } from './families';
import { maxMetric, sumMetric, type Sample } from './prometheus';

export const serverMetricsSchema = z
  .object({
    present: z.boolean(),
    adapter: z.string(),
    sources: z.array(z.string()),
    metric_count: z.number().int(),
    cache: z
      .object({
        prefix_hits: z.number().nullable(),
        prefix_queries: z.number().nullable(),
        /** hits / queries over the profiling window (counter deltas, tokens). */
        overall_cache_hit_rate: z.number().nullable(),
        gpu_cache_hit_rate: z.number().nullable(),
      })
      .strict(),
    kv_cache: z.object({ gpu_usage_pct: z.number().nullable(), samples: z.number().int() }).strict(),
    tokens: z.object({ prompt: z.number().nullable(), generation: z.number().nullable() }).strict(),
    warnings: z.array(z.string()),
  })
  .strict();
export type ServerMetrics = z.infer<typeof serverMetricsSchema>;

export interface EndpointSnapshot {
  endpoint: string;
  samples: Sample[] | null;
  error?: string;
}

/**
 * Server metrics over the profiling window (pure): counter deltas between the snapshot taken at profile
 * start and the one at profile end, summed over endpoints; KV usage = max over the samples taken during
 * the window. A counter absent on any endpoint gives null plus a warning — never a silent 0.
 */
export function serverMetricsWindow(
  start: EndpointSnapshot[],
  end: EndpointSnapshot[],
  during: EndpointSnapshot[][],
  family: EngineFamily = 'vllm',
): ServerMetrics {
  const spec = FAMILIES[family];
  const warnings: string[] = [];
  const sources = end.map((e) => e.endpoint);
  const names = new Set<string>();
  for (const e of end) for (const s of e.samples ?? []) names.add(s.name);

  const delta = (metric: string | null): number | null => {
    if (metric === null) return null;
    let sum = 0;
    for (const e of end) {
      const s = start.find((x) => x.endpoint === e.endpoint);
      if (!e.samples || !s?.samples) {
        warnings.push(`${metric}: no snapshot for ${e.endpoint} (${e.error ?? s?.error ?? 'missing'})`);
        return null;
      }
      const a = sumMetric(s.samples, metric);
      const b = sumMetric(e.samples, metric);
      if (a === null || b === null) {
        warnings.push(`${metric} absent on ${e.endpoint}`);
        return null;
      }
      if (b < a) {
        warnings.push(`${metric} went backwards on ${e.endpoint} (server restarted?)`);
        return null;
      }
      sum += b - a;
    }
    return sum;
  };

  const hits = delta(spec.prefixHits);
  const queries = delta(spec.prefixQueries);
  const prompt = delta(spec.promptTokens);
  const generation = delta(spec.generationTokens);
  let kvMax: number | null = null;
  let kvSamples = 0;
  if (spec.kvUsage)
    for (const poll of [start, ...during, end])
      for (const e of poll) {
        const v = e.samples ? maxMetric(e.samples, spec.kvUsage) : null;
        if (v !== null) {
          kvSamples++;
          kvMax = kvMax === null ? v : Math.max(kvMax, v);
        }
      }
  if (spec.kvUsage && kvSamples === 0) warnings.push(`${spec.kvUsage} absent`);
  const rate = hits !== null && queries !== null && queries > 0 ? hits / queries : null;
  return {
    present: end.some((e) => e.samples !== null && e.samples.length > 0),
    adapter: family,
    sources,
    metric_count: names.size,
    cache: { prefix_hits: hits, prefix_queries: queries, overall_cache_hit_rate: rate, gpu_cache_hit_rate: rate },
    kv_cache: { gpu_usage_pct: kvMax === null ? null : kvMax * spec.kvUsageToPct, samples: kvSamples },
    tokens: { prompt, generation },
    warnings,
  };
}
