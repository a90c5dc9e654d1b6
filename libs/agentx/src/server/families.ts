/**
 * Engine families: which gauges say "busy", which counters carry tokens/cache/success. vLLM is measured
 * here; SGLang names follow InferenceX's SGLang recipes (docs/inferencex.md, "Server metric names"; not
 * exercised against a live SGLang).
 */
export type EngineFamily = 'vllm' | 'sglang';

export interface FamilySpec {
  /** Gauges summed (over all label sets) for the drain gate; every one is required on every engine endpoint. */
  busyGauges: string[];
  /** Frontend/router gauges added when present (never required). */
  optionalBusyGauges: string[];
  promptTokens: string | null;
  generationTokens: string | null;
  prefixHits: string | null;
  prefixQueries: string | null;
  /**
   * Prompt tokens per source (vLLM `vllm:prompt_tokens_by_source_total{source=local_compute|local_cache_hit|
   * external_kv_transfer}`), the counter InferenceX reads first for its cache hit rates; null: none.
   */
  promptTokensBySource: { metric: string; label: string } | null;
  kvUsage: string | null;
  /** Scale to turn kvUsage into percent (vLLM reports a 0–1 fraction). */
  kvUsageToPct: number;
  requestSuccess: string | null;
  /** The per-DP-engine label (null: the family exposes none). */
  engineLabel: string | null;
  /** Info gauge whose labels carry the KV pool (num_gpu_blocks, block_size); null: none. */
  cacheConfigInfo: string | null;
}

export const FAMILIES: Record<EngineFamily, FamilySpec> = {
  vllm: {
    busyGauges: ['vllm:num_requests_running', 'vllm:num_requests_waiting'],
    optionalBusyGauges: ['dynamo_frontend_active_requests'],
    promptTokens: 'vllm:prompt_tokens_total',
    generationTokens: 'vllm:generation_tokens_total',
    prefixHits: 'vllm:prefix_cache_hits_total',
    prefixQueries: 'vllm:prefix_cache_queries_total',
    promptTokensBySource: { metric: 'vllm:prompt_tokens_by_source_total', label: 'source' },
    kvUsage: 'vllm:kv_cache_usage_perc',
    kvUsageToPct: 100,
    requestSuccess: 'vllm:request_success_total',
    engineLabel: 'engine',
    cacheConfigInfo: 'vllm:cache_config_info',
  },
  sglang: {
    busyGauges: ['sglang:num_running_reqs', 'sglang:num_queue_reqs'],
    optionalBusyGauges: ['dynamo_frontend_active_requests'],
    promptTokens: 'sglang:prompt_tokens_total',
    generationTokens: 'sglang:generation_tokens_total',
    prefixHits: null,
    prefixQueries: null,
    promptTokensBySource: null,
    kvUsage: 'sglang:token_usage',
    kvUsageToPct: 100,
    requestSuccess: null,
    engineLabel: null,
    cacheConfigInfo: null,
  },
};

/** A prefix cache's hit rate over a window, hits / queries (in tokens); null when either is unknown or none was queried. */
export function prefixHitRate(hits: number | null, queries: number | null): number | null {
  return hits !== null && queries !== null && queries > 0 ? hits / queries : null;
}
