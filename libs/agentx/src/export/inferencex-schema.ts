import { z } from 'zod';
import { requestAccountingSchema } from '../result';

/**
 * InferenceX's aggregated agentic result (one JSON per concurrency point), key for key. Every key set
 * below is the one InferenceX's own stable-schema test asserts with `==`
 * (InferenceX utils/agentic/aggregation/test_process_agentic_result.py @ 843c6254f: AGG_TOP_LEVEL_KEYS,
 * REQUEST_ACCOUNTING_KEYS, REQUEST_*_KEYS, SERVER_*_KEYS) and that `build_agg` writes
 * (process_agentic_result.py, request_metrics.py, backends/base.py `empty_server_metrics`,
 * backends/vllm.py @ 843c6254f). docs/inferencex.md lists them with their meanings.
 */

/** mean, p50, p75, p90, p95, std; InferenceX writes `{}` when there are no values. */
export const ixStatsSchema = z
  .object({ mean: z.number(), p50: z.number(), p75: z.number(), p90: z.number(), p95: z.number(), std: z.number() })
  .partial()
  .strict();
export type IxStats = z.infer<typeof ixStatsSchema>;

const tps = z.object({ tokens_per_second: z.number() }).strict();
const nullableNum = z.number().nullable();
const trueFalse = z.enum(['true', 'false']);

/**
 * The record's accounting keys without infersweep's two extra counters. InferenceX's meanings differ from
 * the record's: `records_profiled` counts successful profiled rows only, `records_error_dropped` and
 * `error_categories` count errors of every phase (inferencex-requests.ts computes them so).
 */
export const ixRequestAccountingSchema = requestAccountingSchema.omit({
  context_overflow_count: true,
  grace_cancelled: true,
});
export type IxRequestAccounting = z.infer<typeof ixRequestAccountingSchema>;

export const ixRequestMetricsSchema = z
  .object({
    /** 1-s windows from the first to the last completion, complete windows only; `{}` with < 2 completions. */
    qps: z.object({ window_seconds: z.number(), samples: z.number().int() }).merge(ixStatsSchema).partial().strict(),
    latency: z
      .object({
        ttft: ixStatsSchema,
        e2el: ixStatsSchema,
        itl: ixStatsSchema,
        tpot: ixStatsSchema,
        intvty: ixStatsSchema,
        e2e_norm_intvty: ixStatsSchema,
        full_response_itl: ixStatsSchema,
        full_response_intvty: ixStatsSchema,
      })
      .strict(),
    tokens: z.object({ input: ixStatsSchema, output_actual: ixStatsSchema, output_expected: ixStatsSchema }).strict(),
    throughput: z
      .object({
        input: tps,
        output: tps,
        total: tps,
        duration_seconds: z.number(),
        per_gpu: z
          .object({ total_tput_tps: z.number(), output_tput_tps: z.number(), input_tput_tps: z.number() })
          .partial()
          .strict(),
      })
      .strict(),
    cache: z.object({ theoretical_cache_hit_rate: nullableNum }).strict(),
  })
  .strict();
export type IxRequestMetrics = z.infer<typeof ixRequestMetricsSchema>;

export const ixServerSourceSchema = z
  .object({
    id: z.string(),
    role: z.string(),
    prompt_tokens: nullableNum,
    generation_tokens: nullableNum,
    prefix_cache_hit_rate: nullableNum,
    gpu_kv_cache_usage_pct: nullableNum,
  })
  .strict();

export const ixServerMetricsSchema = z
  .object({
    present: z.boolean(),
    adapter: z.string(),
    metric_count: z.number().int(),
    cache: z
      .object({
        gpu_cache_hit_rate: nullableNum,
        cpu_cache_hit_rate: nullableNum,
        external_cache_hit_rate: nullableNum,
        overall_cache_hit_rate: nullableNum,
        prefix_cache_hits: nullableNum,
        prefix_cache_queries: nullableNum,
        external_prefix_cache_hits: nullableNum,
        external_prefix_cache_queries: nullableNum,
        cached_tokens_by_source: z.record(z.string(), z.number()),
        frontend_cache_hit_rate: nullableNum,
        router_kv_hit_rate: nullableNum,
        router_shared_cache_hit_rate: nullableNum,
        frontend_cached_tokens: nullableNum,
        frontend_input_tokens: nullableNum,
      })
      .strict(),
    kv_cache: z
      .object({
        /** 0–1 fraction (peak over the window). */
        gpu_usage_pct: nullableNum,
        /** The KV pool summed from the server logs' "GPU KV cache size: N tokens" lines. */
        gpu_total_tokens: nullableNum,
        cpu_usage_pct: nullableNum,
        cpu_used_tokens: nullableNum,
        cpu_total_tokens: nullableNum,
      })
      .strict(),
    kv_offload: z
      .object({
        bytes_gpu_to_cpu: nullableNum,
        bytes_cpu_to_gpu: nullableNum,
        time_gpu_to_cpu: nullableNum,
        time_cpu_to_gpu: nullableNum,
        bandwidth_gpu_to_cpu_bytes_per_second: nullableNum,
        bandwidth_cpu_to_gpu_bytes_per_second: nullableNum,
      })
      .strict(),
    tokens: z
      .object({
        prompt_total: nullableNum,
        generation_total: nullableNum,
        /** Successful profiled requests. */
        requests_completed: nullableNum,
        prompt_by_source: z
          .object({
            gpu_cache_hit: nullableNum,
            cpu_or_external_cache_hit: nullableNum,
            computed: nullableNum,
            raw: z.record(z.string(), z.number()),
          })
          .strict(),
      })
      .strict(),
    sources: z.array(ixServerSourceSchema),
  })
  .strict();
export type IxServerMetrics = z.infer<typeof ixServerMetricsSchema>;

export const inferencexAggSchema = z
  .object({
    /** InferenceX: the runner type (RUNNER_TYPE); here the cluster profile's GPU model, lower-case. */
    hw: z.string(),
    conc: z.number().int().positive(),
    image: z.string(),
    /** A stable hash of the recipe (image, engine argv and env per node, topology). */
    recipe_fingerprint: z.string(),
    model: z.string(),
    infmax_model_prefix: z.string(),
    framework: z.string(),
    precision: z.string(),
    spec_decoding: z.string(),
    disagg: z.boolean(),
    scenario_type: z.literal('agentic-coding'),
    is_multinode: z.boolean(),
    tp: z.number().int(),
    ep: z.number().int(),
    dp_attention: trueFalse,
    kv_offloading: z.string(),
    /** `null` without offload, else `{name, version?}`. */
    kv_offload_backend: z.object({ name: z.string(), version: z.string().optional() }).strict().nullable(),
    allocated_cpu_dram_gb: z.number().int(),
    num_requests_total: z.number().int(),
    num_requests_successful: z.number().int(),
    request_accounting: ixRequestAccountingSchema,
    // multinode worker shape: num-worker = DP, tp = TP; aggregated ⇒ decode num-worker 0 with tp/ep zeroed
    prefill_num_workers: z.number().int().optional(),
    prefill_tp: z.number().int().optional(),
    prefill_pp: z.number().int().optional(),
    prefill_dcp_size: z.number().int().optional(),
    prefill_pcp_size: z.number().int().optional(),
    prefill_ep: z.number().int().optional(),
    prefill_dp_attention: trueFalse.optional(),
    num_prefill_gpu: z.number().int().optional(),
    decode_num_workers: z.number().int().optional(),
    decode_tp: z.number().int().optional(),
    decode_pp: z.number().int().optional(),
    decode_dcp_size: z.number().int().optional(),
    decode_pcp_size: z.number().int().optional(),
    decode_ep: z.number().int().optional(),
    decode_dp_attention: trueFalse.optional(),
    num_decode_gpu: z.number().int().optional(),
    /** A disaggregated point: the router (`ROUTER_METADATA`, name and version) and the KV transfer (`KV_P2P_TRANSFER`). */
    router: z
      .object({ name: z.string().min(1), version: z.string().min(1) })
      .strict()
      .optional(),
    kv_p2p_transfer: z.string().min(1).optional(),
    // single-node shape
    pp: z.number().int().optional(),
    dcp_size: z.number().int().optional(),
    pcp_size: z.number().int().optional(),
    /** aiperf's `metadata.dataset`, verbatim when known. */
    dataset: z.record(z.string(), z.unknown()).optional(),
    request_metrics: ixRequestMetricsSchema,
    server_metrics: ixServerMetricsSchema,
    /** InferenceX's power patch (utils/aggregate_power.py `_patch_power_result`): present when the point has an energy block. */
    power_metric_schema_version: z.number().int().optional(),
    power_valid: z.union([z.literal(0), z.literal(1)]).optional(),
    avg_power_w: z.number().optional(),
    avg_total_gpu_power_w: z.number().optional(),
    total_gpu_energy_j: z.number().optional(),
    joules_per_successful_query: z.number().optional(),
    joules_per_input_token: z.number().optional(),
    joules_per_output_token: z.number().optional(),
    joules_per_total_token: z.number().optional(),
    prefill_joules_per_input_token: z.number().optional(),
    decode_joules_per_output_token: z.number().optional(),
    /** = server_metrics.kv_cache.gpu_total_tokens. */
    kv_cache_pool_tokens: nullableNum,
    warnings: z.array(z.string()).optional(),
  })
  .strict();
export type InferencexAgg = z.infer<typeof inferencexAggSchema>;
