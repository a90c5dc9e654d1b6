import { z } from 'zod';
import type { SweepPlan } from '@infersweep/topology';
import { stats, type Stats } from '../metrics/stats';
import { requestAccountingSchema, type PointResult, type RequestRecord } from '../result';

/**
 * Export a point record as InferenceX's aggregated agentic result (pure): the JSON
 * `utils/agentic/aggregation/process_agentic_result.py` `build_agg` writes as `<RESULT_FILENAME>_conc<N>.json`
 * (docs/inferencex.md). Every field that can be known from the plan and the record is filled; what
 * infersweep never runs (disaggregation, speculative decoding, KV offload) is stated as InferenceX's
 * "off" value. Floats are rounded to 5 decimals, as InferenceX's `round_floats` does.
 */

/** InferenceX's nested statistics: mean, p50, p75, p90, p95, std (an empty object when there are no values). */
const ixStats = z
  .object({ mean: z.number(), p50: z.number(), p75: z.number(), p90: z.number(), p95: z.number(), std: z.number() })
  .partial()
  .strict();
const tps = z.object({ tokens_per_second: z.number() }).strict();
const nullableNum = z.number().nullable();

export const inferencexAggSchema = z
  .object({
    hw: z.string(),
    conc: z.number().int().positive(),
    image: z.string(),
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
    dp_attention: z.enum(['true', 'false']),
    kv_offloading: z.string(),
    kv_offload_backend: z.string(),
    allocated_cpu_dram_gb: z.number().int(),
    num_requests_total: z.number().int(),
    num_requests_successful: z.number().int(),
    // the record's accounting without infersweep's two extra counters
    request_accounting: requestAccountingSchema.omit({ context_overflow_count: true, grace_cancelled: true }),
    // multinode worker shape (aggregated: decode num-worker 0 and its parallelism zeroed)
    prefill_num_workers: z.number().int().optional(),
    prefill_tp: z.number().int().optional(),
    prefill_pp: z.number().int().optional(),
    prefill_dcp_size: z.number().int().optional(),
    prefill_pcp_size: z.number().int().optional(),
    prefill_ep: z.number().int().optional(),
    prefill_dp_attention: z.enum(['true', 'false']).optional(),
    num_prefill_gpu: z.number().int().optional(),
    decode_num_workers: z.number().int().optional(),
    decode_tp: z.number().int().optional(),
    decode_pp: z.number().int().optional(),
    decode_dcp_size: z.number().int().optional(),
    decode_pcp_size: z.number().int().optional(),
    decode_ep: z.number().int().optional(),
    decode_dp_attention: z.enum(['true', 'false']).optional(),
    num_decode_gpu: z.number().int().optional(),
    // single-node shape
    pp: z.number().int().optional(),
    dcp_size: z.number().int().optional(),
    pcp_size: z.number().int().optional(),
    dataset: z.record(z.string(), z.unknown()).optional(),
    request_metrics: z
      .object({
        qps: z.object({ window_seconds: z.number(), samples: z.number().int() }).merge(ixStats).strict(),
        latency: z
          .object({
            ttft: ixStats,
            e2el: ixStats,
            itl: ixStats,
            tpot: ixStats,
            intvty: ixStats,
            e2e_norm_intvty: ixStats,
            full_response_itl: ixStats,
            full_response_intvty: ixStats,
          })
          .strict(),
        tokens: z.object({ input: ixStats, output_actual: ixStats, output_expected: ixStats }).strict(),
        throughput: z
          .object({
            input: tps,
            output: tps,
            total: tps,
            full_response_output_token_throughput_per_user: ixStats,
            duration_seconds: z.number(),
            per_gpu: z.object({ total_tput_tps: z.number(), output_tput_tps: z.number(), input_tput_tps: z.number() }).strict(),
          })
          .strict(),
        cache: z.object({ theoretical_cache_hit_rate: nullableNum }).strict(),
      })
      .strict(),
    server_metrics: z
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
          })
          .strict(),
        kv_cache: z.object({ gpu_usage_pct: nullableNum, cpu_usage_pct: nullableNum, gpu_total_tokens: nullableNum }).strict(),
        tokens: z.object({ prompt_total: nullableNum, generation_total: nullableNum }).strict(),
        sources: z.array(z.record(z.string(), z.unknown())),
      })
      .strict(),
    kv_cache_pool_tokens: nullableNum,
    warnings: z.array(z.string()).optional(),
  })
  .strict();
export type InferencexAgg = z.infer<typeof inferencexAggSchema>;

/** What the export needs beyond the record: the plan's identity and topology. */
export interface InferencexContext {
  /** InferenceX `hw` (its runner type): here the cluster's GPU model, lower-case (`h200`). */
  hw: string;
  model: string;
  modelPrefix: string;
  precision: string;
  framework: string;
  image: string;
  topology: { tp: number; pp: number; dp: number; ep: number; expertParallel: boolean; nodes: number; gpus: number };
  /** The orientation name (part of the file name). */
  orientation: string;
}

export function inferencexContext(
  plan: Pick<SweepPlan, 'slurm' | 'model' | 'image' | 'topology' | 'orientation' | 'engine'>,
): InferencexContext {
  return {
    hw: plan.slurm.gpu.toLowerCase(),
    model: plan.model.tokenizer,
    modelPrefix: plan.model.prefix ?? '',
    precision: plan.model.precision ?? '',
    framework: plan.engine.kind,
    image: plan.image,
    topology: plan.topology,
    orientation: plan.orientation,
  };
}

/**
 * InferenceX's worker encoding of one aggregated deployment: with DP attention (DP > 1 with expert
 * parallelism) `tp` counts the whole attention-DP group (TP × DP), so its GPU formula
 * Σ workers · tp · pp gives the deployment's GPUs; decode has num-worker 0.
 */
export function inferencexShape(t: InferencexContext['topology']): { tp: number; ep: number; pp: number; dpAttention: 'true' | 'false' } {
  const dpAttention = t.dp > 1 && t.expertParallel;
  const tp = dpAttention ? t.tp * t.dp : t.tp;
  return { tp, ep: t.expertParallel ? t.ep : 1, pp: t.pp, dpAttention: dpAttention ? 'true' : 'false' };
}

/** `<prefix>_p1x<tp>[ep<ep>][dpa]_d0x0_<orientation>_<precision>_<framework>_disagg-false_spec-none_conc<N>.json` */
export function inferencexFileName(ctx: InferencexContext, conc: number): string {
  const s = inferencexShape(ctx.topology);
  const exp = `${ctx.modelPrefix || 'model'}_p1x${s.tp}${s.pp > 1 ? `pp${s.pp}` : ''}${s.ep > 1 ? `ep${s.ep}` : ''}${s.dpAttention === 'true' ? 'dpa' : ''}_d0x0`;
  const raw = `${exp}_${ctx.orientation}_${ctx.precision || 'unknown'}_${ctx.framework}_disagg-false_spec-none_conc${conc}.json`;
  return raw.replace(/[^A-Za-z0-9._-]+/g, '-');
}

const round5 = (x: number) => Math.round(x * 1e5) / 1e5;

function roundFloats<T>(v: T): T {
  if (typeof v === 'number') return (Number.isInteger(v) ? v : round5(v)) as T;
  if (Array.isArray(v)) return v.map(roundFloats) as T;
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, roundFloats(x)])) as T;
  return v;
}

function pick(s: Stats): z.infer<typeof ixStats> {
  if (s.count === 0) return {};
  const out: z.infer<typeof ixStats> = {};
  for (const k of ['mean', 'p50', 'p75', 'p90', 'p95', 'std'] as const) {
    const v = s[k];
    if (v !== null) out[k] = v;
  }
  // InferenceX: population std of a single value is 0.0 (statistics.pstdev), never absent
  if (out.std === undefined) out.std = 0;
  return out;
}

const orZero = (x: number | null) => x ?? 0;

/**
 * Build the InferenceX aggregate for one point. `requests` (the point's requests.jsonl) adds the
 * per-request full-response throughput per user (OSL / E2EL); without it that block is empty.
 */
export function toInferencex(r: PointResult, ctx: InferencexContext, requests?: readonly RequestRecord[]): InferencexAgg {
  const s = inferencexShape(ctx.topology);
  const multinode = ctx.topology.nodes > 1;
  const m = r.request_metrics;
  const acc = r.request_accounting;
  const sm = r.server_metrics;
  const profiledOk = (requests ?? []).filter(
    (q) => q.phase === 'profiling' && q.ok && q.e2el_ms !== null && q.e2el_ms > 0 && q.osl !== null,
  );
  const fullTpsPerUser = profiledOk.map((q) => q.osl! / (q.e2el_ms! / 1000));
  const qpsSamples = m.qps.count;
  const agg: InferencexAgg = {
    hw: ctx.hw,
    conc: r.conc,
    image: ctx.image,
    model: ctx.model,
    infmax_model_prefix: ctx.modelPrefix,
    framework: ctx.framework,
    precision: ctx.precision,
    spec_decoding: 'none',
    disagg: false,
    scenario_type: 'agentic-coding',
    is_multinode: multinode,
    tp: s.tp,
    ep: s.ep,
    dp_attention: s.dpAttention,
    kv_offloading: 'none',
    kv_offload_backend: '',
    allocated_cpu_dram_gb: 0,
    num_requests_total: acc.records_total,
    num_requests_successful: r.num_requests_successful,
    request_accounting: {
      records_total: acc.records_total,
      records_profiled: acc.records_profiled,
      records_dropped_total: acc.records_dropped_total,
      records_warmup_dropped: acc.records_warmup_dropped,
      records_error_dropped: acc.records_error_dropped,
      error_categories: acc.error_categories,
    },
    ...(multinode
      ? {
          prefill_num_workers: 1,
          prefill_tp: s.tp,
          prefill_pp: s.pp,
          prefill_dcp_size: 1,
          prefill_pcp_size: 1,
          prefill_ep: s.ep,
          prefill_dp_attention: s.dpAttention,
          num_prefill_gpu: ctx.topology.gpus,
          decode_num_workers: 0,
          decode_tp: 0,
          decode_pp: 1,
          decode_dcp_size: 1,
          decode_pcp_size: 1,
          decode_ep: 0,
          decode_dp_attention: 'false' as const,
          num_decode_gpu: 0,
        }
      : { pp: s.pp, dcp_size: 1, pcp_size: 1 }),
    dataset: { ...r.dataset },
    request_metrics: {
      qps: { window_seconds: 1, samples: qpsSamples, ...pick(m.qps) },
      latency: {
        ttft: pick(m.latency.ttft),
        e2el: pick(m.latency.e2el),
        itl: pick(m.latency.itl),
        tpot: pick(m.latency.tpot),
        intvty: pick(m.latency.intvty),
        e2e_norm_intvty: pick(m.latency.e2e_norm_intvty),
        // infersweep's ITL already spans every streamed token (reasoning and tool calls included)
        full_response_itl: pick(m.latency.itl),
        full_response_intvty: pick(m.latency.intvty),
      },
      tokens: { input: pick(m.tokens.input), output_actual: pick(m.tokens.output_actual), output_expected: pick(m.tokens.output_expected) },
      throughput: {
        input: { tokens_per_second: orZero(m.throughput.input.tokens_per_second) },
        output: { tokens_per_second: orZero(m.throughput.output.tokens_per_second) },
        total: { tokens_per_second: orZero(m.throughput.total.tokens_per_second) },
        full_response_output_token_throughput_per_user: pick(stats(fullTpsPerUser)),
        duration_seconds: orZero(m.throughput.duration_seconds),
        per_gpu: {
          total_tput_tps: orZero(m.throughput.per_gpu.total_tput_tps),
          output_tput_tps: orZero(m.throughput.per_gpu.output_tput_tps),
          input_tput_tps: orZero(m.throughput.per_gpu.input_tput_tps),
        },
      },
      cache: { theoretical_cache_hit_rate: m.cache.theoretical_cache_hit_rate },
    },
    server_metrics: {
      present: sm.present,
      adapter: sm.adapter,
      metric_count: sm.metric_count,
      cache: {
        gpu_cache_hit_rate: sm.cache.gpu_cache_hit_rate,
        cpu_cache_hit_rate: null,
        external_cache_hit_rate: null,
        overall_cache_hit_rate: sm.cache.overall_cache_hit_rate,
        prefix_cache_hits: sm.cache.prefix_hits,
        prefix_cache_queries: sm.cache.prefix_queries,
        external_prefix_cache_hits: null,
        external_prefix_cache_queries: null,
      },
      // InferenceX stores usage as a 0–1 fraction; the record keeps percent
      kv_cache: {
        gpu_usage_pct: sm.kv_cache.gpu_usage_pct === null ? null : sm.kv_cache.gpu_usage_pct / 100,
        cpu_usage_pct: null,
        gpu_total_tokens: sm.kv_cache.gpu_total_tokens ?? null,
      },
      tokens: { prompt_total: sm.tokens.prompt, generation_total: sm.tokens.generation },
      sources: sm.sources.map((id) => ({ id, role: 'combined' })),
    },
    kv_cache_pool_tokens: sm.kv_cache.gpu_total_tokens ?? null,
    ...(sm.warnings.length > 0 ? { warnings: [...sm.warnings] } : {}),
  };
  return inferencexAggSchema.parse(roundFloats(agg));
}
