import { z } from 'zod';
import { FAMILIES, prefixHitRate, type EngineFamily } from './families';
import { servedPerEngine } from './idle-ranks';
import { maxMetric, sumMetric, type Sample } from './prometheus';
import { specDecodeWindow, specDecodeWindowSchema } from './spec-decode';

/** One DP engine's share of the profiling window (counter deltas; KV usage = max over the window's samples). */
export const engineWindowSchema = z
  .object({
    requests: z.number().nullable(),
    prompt_tokens: z.number().nullable(),
    generation_tokens: z.number().nullable(),
    prefix_hits: z.number().nullable(),
    prefix_queries: z.number().nullable(),
    kv_usage_pct_max: z.number().nullable(),
  })
  .strict();
export type EngineWindow = z.infer<typeof engineWindowSchema>;

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
    kv_cache: z
      .object({
        gpu_usage_pct: z.number().nullable(),
        samples: z.number().int(),
        /** KV-cache pool of the whole deployment, tokens: Σ over engines of vLLM's own count (vllm:cache_config_info; kvPoolTokens). */
        gpu_total_tokens: z.number().nullable().optional(),
      })
      .strict(),
    tokens: z
      .object({
        prompt: z.number().nullable(),
        generation: z.number().nullable(),
        /**
         * Prompt tokens per source over the window (vLLM's `vllm:prompt_tokens_by_source`: `local_compute`,
         * `local_cache_hit`, `external_kv_transfer`), summed over endpoints and engines; null or absent when the
         * server does not export it. InferenceX reads it first for its cache hit rates (export/inferencex.ts).
         */
        prompt_by_source: z.record(z.string(), z.number()).nullable().optional(),
      })
      .strict(),
    /**
     * Per DP engine (the family's engine label, e.g. vLLM's `engine="i"`), from the profile's start to the
     * end of its last request (runPoint: the in-flight requests included): requests served (finished, not
     * aborted), tokens, prefix-cache hits/queries, peak KV usage. Empty when the server exposes no engine
     * label (the simulator, SGLang).
     */
    per_engine: z.record(z.string(), engineWindowSchema).default({}),
    /** Speculative decoding over the window (./spec-decode.ts); absent when the server exports no spec-decode counters. */
    spec_decode: specDecodeWindowSchema.optional(),
    warnings: z.array(z.string()),
  })
  .strict();
export type ServerMetrics = z.infer<typeof serverMetricsSchema>;

export interface EndpointSnapshot {
  endpoint: string;
  samples: Sample[] | null;
  error?: string;
  /** Names of samples dropped because their value was not finite (see snapshot in point.ts). */
  dropped?: string[];
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
      let a = sumMetric(s.samples, metric);
      const b = sumMetric(e.samples, metric);
      if (a === null && b !== null) {
        // a labelled counter appears with its first increment (the simulator's token counters on a fresh
        // server, before an aiperf run's own warmup): absent at the start means 0 then
        warnings.push(`${metric} absent at window start on ${e.endpoint}, present at the end: counted from 0`);
        a = 0;
      }
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
  const perEngine = engineWindows(start, end, during, family);
  const poolTokens = kvPoolTokens(end, spec.cacheConfigInfo);
  const rate = prefixHitRate(hits, queries);
  const bySource = promptBySourceWindow(start, end, family);
  const drafting = family === 'vllm' ? specDecodeWindow(start, end) : null;
  return {
    present: end.some((e) => e.samples !== null && e.samples.length > 0),
    adapter: family,
    sources,
    metric_count: names.size,
    cache: { prefix_hits: hits, prefix_queries: queries, overall_cache_hit_rate: rate, gpu_cache_hit_rate: rate },
    kv_cache: {
      gpu_usage_pct: kvMax === null ? null : kvMax * spec.kvUsageToPct,
      samples: kvSamples,
      gpu_total_tokens: poolTokens,
    },
    tokens: { prompt, generation, ...(bySource === null ? {} : { prompt_by_source: bySource }) },
    per_engine: perEngine,
    ...(drafting === null ? {} : { spec_decode: drafting }),
    warnings,
  };
}

/**
 * The window's prompt tokens per source (counter deltas summed over endpoints and engines), or null when
 * the family has no such counter, an endpoint has no snapshot, or the end snapshot lacks the counter.
 */
export function promptBySourceWindow(
  start: readonly EndpointSnapshot[],
  end: readonly EndpointSnapshot[],
  family: EngineFamily = 'vllm',
): Record<string, number> | null {
  const spec = FAMILIES[family].promptTokensBySource;
  if (spec === null || start.some((e) => e.samples === null) || end.some((e) => e.samples === null)) return null;
  const a = perEngineSum(start, spec.metric, spec.label);
  const b = perEngineSum(end, spec.metric, spec.label);
  if (Object.keys(b).length === 0) return null;
  const out: Record<string, number> = {};
  for (const [source, v] of Object.entries(b)) out[source] = v - (a[source] ?? 0);
  return Object.values(out).some((v) => v < 0) ? null : out;
}

/** Sum of `metric` per engine label value over the snapshot's endpoints (absent metric → no entry). */
function perEngineSum(snap: readonly EndpointSnapshot[], metric: string | null, label: string): Record<string, number> {
  const out: Record<string, number> = {};
  if (metric === null) return out;
  for (const e of snap)
    for (const s of e.samples ?? []) {
      const id = s.labels[label];
      if (s.name === metric && id !== undefined) out[id] = (out[id] ?? 0) + s.value;
    }
  return out;
}

/** Per-engine deltas and KV peaks over the window (pure); {} when the family has no engine label. */
export function engineWindows(
  start: readonly EndpointSnapshot[],
  end: readonly EndpointSnapshot[],
  during: readonly (readonly EndpointSnapshot[])[],
  family: EngineFamily = 'vllm',
): Record<string, EngineWindow> {
  const spec = FAMILIES[family];
  const label = spec.engineLabel;
  if (label === null || start.some((e) => e.samples === null) || end.some((e) => e.samples === null)) return {};
  const samplesOf = (snap: readonly EndpointSnapshot[]) => snap.flatMap((e) => e.samples ?? []);
  const served0 = servedPerEngine(samplesOf(start), family);
  const served1 = servedPerEngine(samplesOf(end), family);
  const counters = (m: string | null) => ({ a: perEngineSum(start, m, label), b: perEngineSum(end, m, label) });
  const prompt = counters(spec.promptTokens);
  const gen = counters(spec.generationTokens);
  const hits = counters(spec.prefixHits);
  const queries = counters(spec.prefixQueries);
  const kv: Record<string, number> = {};
  for (const poll of [start, ...during, end])
    for (const [id, v] of Object.entries(perEngineSum(poll, spec.kvUsage, label)))
      kv[id] = Math.max(kv[id] ?? 0, v * spec.kvUsageToPct);
  const ids = new Set([...Object.keys(served1), ...Object.keys(prompt.b), ...Object.keys(gen.b)]);
  const d = (c: { a: Record<string, number>; b: Record<string, number> }, id: string): number | null =>
    c.b[id] === undefined ? null : c.b[id]! - (c.a[id] ?? 0);
  const out: Record<string, EngineWindow> = {};
  for (const id of [...ids].sort((x, y) => Number(x) - Number(y) || x.localeCompare(y))) {
    out[id] = {
      requests: served1[id] === undefined ? null : served1[id]! - (served0[id] ?? 0),
      prompt_tokens: d(prompt, id),
      generation_tokens: d(gen, id),
      prefix_hits: d(hits, id),
      prefix_queries: d(queries, id),
      kv_usage_pct_max: kv[id] ?? null,
    };
  }
  return out;
}

/**
 * The KV-cache pool in tokens from the engines' cache-config info gauge (one series per engine), summed over
 * engines and endpoints: what InferenceX stores as `kv_cache_pool_tokens` (it parses "GPU KV cache size" log
 * lines per engine and sums them). Per engine, vLLM's own count (label `kv_cache_size_tokens`, the figure
 * its log line prints) where the engine exports it, else `num_gpu_blocks × block_size`, which over-counts a
 * model with several KV-cache groups: the real DP=2 capture (libs/agentx/test/data/vllm-dp2-metrics.txt)
 * has 8192 blocks of 128 = 1,048,576 where vLLM says 524,288 tokens. Null when absent.
 */
export function kvPoolTokens(snapshots: readonly EndpointSnapshot[], metric: string | null): number | null {
  if (metric === null) return null;
  let total = 0;
  let found = false;
  for (const e of snapshots) {
    const seen = new Set<string>();
    for (const s of e.samples ?? []) {
      if (s.name !== metric) continue;
      const tokens = enginePoolTokens(s.labels);
      const key = JSON.stringify(s.labels);
      if (tokens === null || seen.has(key)) continue;
      seen.add(key);
      total += tokens;
      found = true;
    }
  }
  return found ? total : null;
}

/** One engine's pool from its cache-config labels: vLLM's `kv_cache_size_tokens`, else blocks × block size. */
function enginePoolTokens(labels: Record<string, string>): number | null {
  const own = Number(labels.kv_cache_size_tokens);
  if (labels.kv_cache_size_tokens !== undefined && Number.isFinite(own) && own > 0) return own;
  const blocks = Number(labels.num_gpu_blocks);
  const size = Number(labels.block_size);
  return Number.isFinite(blocks) && Number.isFinite(size) && blocks > 0 && size > 0 ? blocks * size : null;
}
