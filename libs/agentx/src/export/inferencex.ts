import type { SweepPlan } from '@infersweep/topology';
import { contentHash } from '@infersweep/core';
import type { PointResult, RequestRecord } from '../result';
import { ixRequestAccounting, ixRequestMetrics } from './inferencex-requests';
import { inferencexAggSchema, type InferencexAgg, type IxServerMetrics } from './inferencex-schema';
import { kvPoolTokensFromServerLogs } from './server-log';
import { inferencexPowerFields } from '../server/energy';
import { prefixHitRate } from '../server/families';
import { inferencexSidecar, sidecarWarnings } from './comparable';
import { aiperfServerMetricsSchema, counterOf, gaugeMaxOf, type AiperfSeries } from '../aiperf/server-metrics';

export * from './inferencex-schema';
export { ixRequestAccounting, ixRequestMetrics } from './inferencex-requests';
export { kvPoolTokensFromServerLog, kvPoolTokensFromServerLogs } from './server-log';
export * from './comparable';

/**
 * Export a point as InferenceX's aggregated agentic result (pure): the JSON InferenceX's
 * `process_agentic_result.py` `build_agg` writes per concurrency point (docs/inferencex.md). The request
 * metrics are recomputed from the point's per-request records with InferenceX's semantics
 * (inferencex-requests.ts); the KV pool comes from the server logs as InferenceX reads them
 * (server-log.ts). Floats are rounded to 5 decimals, as its `round_floats` does.
 */

/** What the export needs beyond the record: the plan's identity, topology and recipe. */
export interface InferencexContext {
  /** InferenceX `hw` (its runner type): here the cluster's GPU model, lower-case (`h200`). */
  hw: string;
  /** The cluster name (stands for InferenceX's runner name in the file name). */
  cluster: string;
  model: string;
  modelPrefix: string;
  precision: string;
  framework: string;
  image: string;
  topology: { tp: number; pp: number; dp: number; ep: number; expertParallel: boolean; nodes: number; gpus: number };
  /** `mtp` when the engine runs speculative decoding (InferenceX's matrix label for every method), else `none`. */
  specDecoding: string;
  /** contentHash of the recipe: image, each node's engine argv and env, topology. */
  recipeFingerprint: string;
  /** A disaggregated point (the plan's `disaggregation`): each role's workers and worker topology, the router, the KV transfer. */
  disagg?: InferencexDisagg;
}

type RoleTopology = Pick<InferencexContext['topology'], 'tp' | 'pp' | 'dp' | 'ep' | 'expertParallel'>;

export interface InferencexDisagg {
  prefill: { workers: number; topology: RoleTopology };
  decode: { workers: number; topology: RoleTopology };
  /** InferenceX `KV_P2P_TRANSFER`: `nixl` (NixlConnector) or `nccl` (P2pNcclConnector). */
  kvP2pTransfer: string;
  /** InferenceX `ROUTER_METADATA` (it requires both name and version; absent without a configured version). */
  router?: { name: string; version: string };
}

type PlanForExport = Pick<SweepPlan, 'slurm' | 'cluster' | 'model' | 'image' | 'topology' | 'engine' | 'nodes'> &
  Partial<Pick<SweepPlan, 'disaggregation'>>;

/** The P/D part of the context: InferenceX's names for the connector and the router. */
function disaggOf(pd: NonNullable<SweepPlan['disaggregation']>): InferencexDisagg {
  const role = (name: 'prefill' | 'decode') => {
    const r = pd.roles.find((x) => x.role === name)!;
    return { workers: r.workers, topology: r.topology };
  };
  return {
    prefill: role('prefill'),
    decode: role('decode'),
    kvP2pTransfer: pd.connector.kind === 'NixlConnector' ? 'nixl' : 'nccl',
    ...(pd.router.version === undefined ? {} : { router: { name: pd.router.kind, version: pd.router.version } }),
  };
}

/** The recipe a result stands for, hashed with the repo's content hash (stable across key order). */
export function recipeFingerprint(plan: Pick<SweepPlan, 'image' | 'topology' | 'nodes'>): string {
  return contentHash({
    image: plan.image,
    nodes: plan.nodes.map((n) => ({ argv: n.argv, env: n.env })),
    topology: plan.topology,
  });
}

export function inferencexContext(plan: PlanForExport): InferencexContext {
  return {
    hw: plan.slurm.gpu.toLowerCase(),
    cluster: plan.cluster,
    model: plan.model.tokenizer,
    modelPrefix: plan.model.prefix ?? '',
    precision: plan.model.precision ?? '',
    framework: plan.engine.kind,
    image: plan.image,
    topology: plan.topology,
    specDecoding: plan.nodes.some((n) =>
      n.argv.some((a) => a === '--speculative-config' || a.startsWith('--speculative-config=')),
    )
      ? 'mtp'
      : 'none',
    recipeFingerprint: recipeFingerprint(plan),
    ...(plan.disaggregation === undefined ? {} : { disagg: disaggOf(plan.disaggregation) }),
  };
}

export interface InferencexShape {
  /** Multinode: one worker per DP replica (InferenceX `num-worker: DP, tp: TP`). */
  numWorkers: number;
  tp: number;
  pp: number;
  ep: number;
  dpAttention: 'true' | 'false';
}

/**
 * InferenceX's worker encoding of one aggregated deployment (its H200 Kimi K3 configs:
 * `num-worker: 2, tp: 16` for TP16×DP2 and `num-worker: 4, tp: 8` for TP8×DP4, decode num-worker 0;
 * InferenceX configs/nvidia-master.yaml @ 843c6254f). DP attention = DP > 1 with expert parallelism.
 * Single-node results have no worker fields: there `tp` spans the DP group (GPUs = tp × pp).
 */
/**
 * One role of a disaggregated point in InferenceX's worker encoding: `num-worker` = workers × DP and `tp` = TP,
 * so that InferenceX's `num_<role>_gpu` = num-worker × tp × pp is the role's real GPU count.
 */
export function inferencexRoleShape(workers: number, t: RoleTopology): InferencexShape {
  return {
    numWorkers: workers * t.dp,
    tp: t.tp,
    pp: t.pp,
    ep: t.expertParallel ? t.ep : 1,
    dpAttention: t.dp > 1 && t.expertParallel ? 'true' : 'false',
  };
}

export function inferencexShape(t: InferencexContext['topology']): InferencexShape {
  const dpAttention = t.dp > 1 && t.expertParallel;
  const multinode = t.nodes > 1;
  return {
    numWorkers: multinode ? t.dp : 1,
    tp: multinode ? t.tp : t.tp * t.dp,
    pp: t.pp,
    ep: t.expertParallel ? t.ep : 1,
    dpAttention: dpAttention ? 'true' : 'false',
  };
}

/**
 * InferenceX's multinode file name (InferenceX .github/workflows/benchmark-multinode-tmpl.yml
 * RESULT_FILENAME and utils/matrix_logic/generate_sweep_configs.py `multinode_agentic_exp_name` @ 843c6254f),
 * one concurrency per allocation, then `_conc<N>.json` per point; the cluster stands for the runner name.
 */
export function inferencexFileName(ctx: InferencexContext, conc: number): string {
  const { prefill: p, decode: d } = roleShapes(ctx);
  const tag = (role: 'p' | 'd', s: InferencexShape) =>
    `${role}${s.numWorkers}x${s.tp}${s.ep !== 1 ? `ep${s.ep}` : ''}${s.dpAttention === 'true' ? 'dpa' : ''}`;
  const exp = `${ctx.modelPrefix || 'model'}_${tag('p', p)}_${tag('d', d)}_conc${conc}`;
  const worker = (role: string, s: InferencexShape) =>
    `${role}-tp${s.tp}-pp${s.pp}-dcp1-pcp1-ep${s.ep}-dp${s.dpAttention}-nw${s.numWorkers}`;
  const raw =
    `${exp}_${ctx.precision || 'unknown'}_${ctx.framework}_${worker('prefill', p)}_${worker('decode', d)}` +
    `_disagg-${ctx.disagg !== undefined}_spec-${ctx.specDecoding}_conc${conc}_${ctx.cluster}_recipe-${ctx.recipeFingerprint.slice(0, 16)}_conc${conc}.json`;
  return raw.replace(/[^A-Za-z0-9._-]+/g, '-');
}

/** The prefill and decode worker shapes: a P/D point's roles, or an aggregated point as InferenceX's prefill with decode num-worker 0. */
function roleShapes(ctx: InferencexContext): { prefill: InferencexShape; decode: InferencexShape } {
  if (ctx.disagg !== undefined)
    return {
      prefill: inferencexRoleShape(ctx.disagg.prefill.workers, ctx.disagg.prefill.topology),
      decode: inferencexRoleShape(ctx.disagg.decode.workers, ctx.disagg.decode.topology),
    };
  const s = inferencexShape(ctx.topology);
  return { prefill: s, decode: { ...s, numWorkers: 0 } };
}

/**
 * InferenceX's multinode worker fields as its `_gpu_shape` (process_agentic_result.py @ 843c6254f) writes them:
 * `num_<role>_gpu` = num-worker × tp × pp; an aggregated point (decode num-worker 0) has decode tp/ep 0, pp 1 and
 * dp-attn copied; top-level tp = prefill tp + decode tp, ep = the larger, dp_attention when either role has it.
 */
function multinodeFields(ctx: InferencexContext): {
  fields: Partial<InferencexAgg>;
  gpus: number;
  tp: number;
  ep: number;
  dpAttention: 'true' | 'false';
} {
  const { prefill: p, decode: d } = roleShapes(ctx);
  const prefillGpus = p.numWorkers * p.tp * p.pp;
  const decodeGpus = d.numWorkers * d.tp * d.pp;
  const dec = decodeGpus > 0 ? d : { ...d, tp: 0, ep: 0, pp: 1 };
  return {
    fields: {
      prefill_num_workers: p.numWorkers,
      prefill_tp: p.tp,
      prefill_pp: p.pp,
      prefill_dcp_size: 1,
      prefill_pcp_size: 1,
      prefill_ep: p.ep,
      prefill_dp_attention: p.dpAttention,
      num_prefill_gpu: prefillGpus,
      decode_num_workers: dec.numWorkers,
      decode_tp: dec.tp,
      decode_pp: dec.pp,
      decode_dcp_size: 1,
      decode_pcp_size: 1,
      decode_ep: dec.ep,
      decode_dp_attention: dec.dpAttention,
      num_decode_gpu: decodeGpus,
    },
    gpus: prefillGpus + decodeGpus,
    tp: p.tp + dec.tp,
    ep: Math.max(p.ep, dec.ep),
    dpAttention: p.dpAttention === 'true' || dec.dpAttention === 'true' ? 'true' : 'false',
  };
}

const round5 = (x: number) => Math.round(x * 1e5) / 1e5;

function roundFloats<T>(v: T): T {
  if (typeof v === 'number') return (Number.isInteger(v) ? v : round5(v)) as T;
  if (Array.isArray(v)) return v.map(roundFloats) as T;
  if (v !== null && typeof v === 'object')
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, roundFloats(x)])) as T;
  return v;
}

/** The point's server metrics in InferenceX's vLLM-adapter shape; what infersweep does not measure is null. */
function serverMetrics(
  r: PointResult,
  requests: readonly RequestRecord[],
  poolTokens: number | null,
  aiperfExport: unknown,
): IxServerMetrics {
  const sm = r.server_metrics;
  const kept = requests.filter((q) => q.phase === 'profiling' && q.ok);
  const sumOf = (f: (q: RequestRecord) => number | null) =>
    kept.some((q) => f(q) !== null) ? kept.reduce((a, q) => a + (f(q) ?? 0), 0) : null;
  const endpoint = sm.sources.length === 1 ? `|${sm.sources[0]}` : '';
  const rates = cacheRates(sm);
  return {
    present: sm.present,
    adapter: sm.present ? sm.adapter : 'none',
    metric_count: sm.metric_count,
    cache: {
      gpu_cache_hit_rate: rates.gpu,
      cpu_cache_hit_rate: rates.external,
      external_cache_hit_rate: rates.external,
      overall_cache_hit_rate: rates.overall,
      prefix_cache_hits: sm.cache.prefix_hits,
      prefix_cache_queries: sm.cache.prefix_queries,
      external_prefix_cache_hits: null,
      external_prefix_cache_queries: null,
      cached_tokens_by_source: {},
      frontend_cache_hit_rate: null,
      router_kv_hit_rate: null,
      router_shared_cache_hit_rate: null,
      frontend_cached_tokens: null,
      frontend_input_tokens: null,
    },
    // the record keeps percent; InferenceX a 0–1 fraction
    kv_cache: {
      gpu_usage_pct: sm.kv_cache.gpu_usage_pct === null ? null : sm.kv_cache.gpu_usage_pct / 100,
      gpu_total_tokens: poolTokens,
      cpu_usage_pct: null,
      cpu_used_tokens: null,
      cpu_total_tokens: null,
    },
    kv_offload: {
      bytes_gpu_to_cpu: null,
      bytes_cpu_to_gpu: null,
      time_gpu_to_cpu: null,
      time_cpu_to_gpu: null,
      bandwidth_gpu_to_cpu_bytes_per_second: null,
      bandwidth_cpu_to_gpu_bytes_per_second: null,
    },
    tokens: {
      // server counters over the window; InferenceX falls back to the records' token sums
      prompt_total: sm.tokens.prompt ?? sumOf((q) => q.isl),
      generation_total: sm.tokens.generation ?? sumOf((q) => q.osl),
      requests_completed: kept.length,
      prompt_by_source: rates.promptBySource,
    },
    sources:
      aiperfExport !== undefined
        ? sourcesFromAiperf(aiperfExport)
        : Object.keys(sm.per_engine).length === 0
          ? endpointSources(sm)
          : Object.entries(sm.per_engine).map(([engine, e]) => ({
              id: `combined${endpoint}|engine=${engine}`,
              role: 'combined',
              prompt_tokens: e.prompt_tokens,
              generation_tokens: e.generation_tokens,
              prefix_cache_hit_rate: prefixHitRate(e.prefix_hits, e.prefix_queries),
              gpu_kv_cache_usage_pct: e.kv_usage_pct_max === null ? null : e.kv_usage_pct_max / 100,
            })),
  };
}

/**
 * The cache hit rates as InferenceX's vLLM adapter reads them (InferenceX
 * utils/agentic/aggregation/backends/vllm.py `populate` @ 843c6254f): hits / queries of the prefix-cache
 * counters, overridden by the prompt tokens per source when the server exports them (`local_cache_hit` /
 * all sources for the GPU rate, `external_kv_transfer` / all for the external one, both / all overall).
 * The two differ when a preempted request is rescheduled: the prefix-cache counters count its queries again.
 */
function cacheRates(sm: PointResult['server_metrics']): {
  gpu: number | null;
  external: number | null;
  overall: number | null;
  promptBySource: IxServerMetrics['tokens']['prompt_by_source'];
} {
  const bySource = sm.tokens.prompt_by_source ?? null;
  const gpu = sm.cache.gpu_cache_hit_rate;
  if (bySource === null || Object.keys(bySource).length === 0)
    return {
      gpu,
      external: null,
      overall: gpu,
      promptBySource: { gpu_cache_hit: null, cpu_or_external_cache_hit: null, computed: null, raw: {} },
    };
  const local = bySource.local_cache_hit ?? null;
  const external = bySource.external_kv_transfer ?? null;
  const total = Object.values(bySource).reduce((a, b) => a + b, 0);
  const share = (v: number | null) => (v === null || total <= 0 ? null : v / total);
  return {
    gpu: local !== null && total > 0 ? local / total : gpu,
    external: share(external),
    // by source but no prompt token yet: InferenceX leaves the overall rate unset (null)
    overall: total > 0 ? ((local ?? 0) + (external ?? 0)) / total : null,
    promptBySource: {
      gpu_cache_hit: local,
      cpu_or_external_cache_hit: external,
      computed: bySource.local_compute ?? null,
      raw: { ...bySource },
    },
  };
}

/**
 * Without an engine label InferenceX lists one source per metrics endpoint (`combined|<url>`); its values
 * are known here only when there is one endpoint (then they are the totals).
 */
function endpointSources(sm: PointResult['server_metrics']): IxServerMetrics['sources'] {
  const one = sm.sources.length === 1;
  const hitRate = prefixHitRate(sm.cache.prefix_hits, sm.cache.prefix_queries);
  return sm.sources.map((url) => ({
    id: `combined|${url}`,
    role: 'combined',
    prompt_tokens: one ? sm.tokens.prompt : null,
    generation_tokens: one ? sm.tokens.generation : null,
    prefix_cache_hit_rate: one ? hitRate : null,
    gpu_kv_cache_usage_pct: one && sm.kv_cache.gpu_usage_pct !== null ? sm.kv_cache.gpu_usage_pct / 100 : null,
  }));
}

/**
 * The sources as InferenceX's vLLM adapter lists them from aiperf's server-metrics export (pure; InferenceX
 * utils/agentic/aggregation/backends/vllm.py `_vllm_sources` and `_source_id` @ 843c6254f): one per distinct
 * `<role>|<endpoint_url>|worker_id=…|dp_rank=…|engine=…` (the role from a `component` label, else `combined`),
 * sorted; each with its counters summed, its hit rate and its largest KV usage as a 0–1 fraction.
 */
function sourcesFromAiperf(json: unknown): IxServerMetrics['sources'] {
  const metrics = aiperfServerMetricsSchema.parse(json).metrics ?? {};
  const series = (...names: string[]): AiperfSeries[] => names.flatMap((n) => metrics[n]?.series ?? []);
  const label = (s: AiperfSeries, k: string): string | null => {
    const v = s.labels[k];
    return v === null || v === undefined ? null : String(v);
  };
  const idOf = (s: AiperfSeries): string => {
    const component = label(s, 'dynamo_component') || label(s, 'component') || '';
    const role =
      component === 'prefill'
        ? 'prefill'
        : component === 'backend' || component === 'decode'
          ? 'decode'
          : component === 'frontend' || component === 'router'
            ? 'router'
            : 'combined';
    const parts = [role, ...(s.endpoint_url ? [s.endpoint_url] : [])];
    for (const k of ['worker_id', 'dp_rank', 'engine']) {
      const v = label(s, k);
      if (v !== null) parts.push(`${k}=${v}`);
    }
    return parts.join('|');
  };
  const named = [
    'vllm:prompt_tokens',
    'vllm:generation_tokens',
    'vllm:prefix_cache_hits',
    'vllm:prefix_cache_queries',
    'vllm:kv_cache_usage_perc',
    'vllm:prompt_tokens_by_source',
  ];
  const ids = [...new Set(series(...named).map(idOf))].filter((id) => id !== '').sort();
  return ids.map((id) => {
    const own = (...names: string[]) => series(...names).filter((s) => idOf(s) === id);
    const sum = (name: string): number | null => {
      const vs = own(name)
        .map(counterOf)
        .filter((v): v is number => v !== null);
      return vs.length === 0 ? null : vs.reduce((a, b) => a + b, 0);
    };
    const hits = sum('vllm:prefix_cache_hits');
    const queries = sum('vllm:prefix_cache_queries');
    const kvs = own('vllm:kv_cache_usage_perc', 'vllm:gpu_cache_usage_perc')
      .map(gaugeMaxOf)
      .filter((v): v is number => v !== null);
    const kv = kvs.length === 0 ? null : Math.max(...kvs);
    return {
      id,
      role: id.split('|', 1)[0]!,
      prompt_tokens: sum('vllm:prompt_tokens'),
      generation_tokens: sum('vllm:generation_tokens'),
      prefix_cache_hit_rate: prefixHitRate(hits, queries),
      // InferenceX's normalize_fraction: a gauge above 1.5 is a percentage
      gpu_kv_cache_usage_pct: kv === null ? null : kv > 1.5 ? kv / 100 : kv,
    };
  });
}

/** aiperf's `metadata.dataset` when the record kept it; else the record's provenance under InferenceX's key names. */
function dataset(r: PointResult): Record<string, unknown> {
  if (r.dataset.aiperf_metadata) return { ...r.dataset.aiperf_metadata };
  const source = r.dataset.source_type === 'public' ? 'public_dataset' : r.dataset.source_type;
  return { source_type: source, loader: r.dataset.loader, num_dataset_entries: r.dataset.entry_count };
}

export interface InferencexInputs {
  /** The point's per-request records (requests.jsonl): the request metrics are computed from these. */
  requests: readonly RequestRecord[];
  /** The texts of the serving deployment's log files (one per node); absent ⇒ the KV pool is null. */
  serverLogs?: readonly string[];
  /**
   * aiperf's `server_metrics_export.json` of the point (an aiperf point's aiperf_artifacts): the per-source
   * values are then InferenceX's, one source per metrics endpoint and engine. The record keeps only totals
   * and per-engine values (which merge the engines of several endpoints: P/D workers are each engine 0).
   */
  aiperfServerMetrics?: unknown;
}

/**
 * Build the InferenceX aggregate for one point. Throws when the point has no successful profiled request.
 * An invalid point or one of another workload gets `infersweep: …` lines first in `warnings` (./comparable.ts);
 * whether an invalid point is exported at all is the caller's choice (`results --include-invalid`).
 */
export function toInferencex(r: PointResult, ctx: InferencexContext, inputs: InferencexInputs): InferencexAgg {
  const s = inferencexShape(ctx.topology);
  const multinode = ctx.topology.nodes > 1;
  const mn = multinodeFields(ctx);
  const gpus = multinode ? mn.gpus : s.numWorkers * s.tp * s.pp;
  const accounting = ixRequestAccounting(inputs.requests);
  const poolTokens = inputs.serverLogs ? kvPoolTokensFromServerLogs(inputs.serverLogs) : null;
  const agg: InferencexAgg = {
    hw: ctx.hw,
    conc: r.conc,
    image: ctx.image,
    recipe_fingerprint: ctx.recipeFingerprint,
    model: ctx.model,
    infmax_model_prefix: ctx.modelPrefix,
    framework: ctx.framework,
    precision: ctx.precision,
    spec_decoding: ctx.specDecoding,
    disagg: ctx.disagg !== undefined,
    scenario_type: 'agentic-coding',
    is_multinode: multinode,
    tp: multinode ? mn.tp : s.tp,
    ep: multinode ? mn.ep : s.ep,
    dp_attention: multinode ? mn.dpAttention : s.dpAttention,
    kv_offloading: 'none',
    kv_offload_backend: null,
    allocated_cpu_dram_gb: 0,
    num_requests_total: accounting.records_total,
    num_requests_successful: accounting.records_profiled,
    request_accounting: accounting,
    ...(multinode ? mn.fields : { pp: s.pp, dcp_size: 1, pcp_size: 1 }),
    ...(ctx.disagg?.router === undefined ? {} : { router: ctx.disagg.router }),
    ...(ctx.disagg === undefined ? {} : { kv_p2p_transfer: ctx.disagg.kvP2pTransfer }),
    dataset: dataset(r),
    request_metrics: ixRequestMetrics(inputs.requests, {
      gpus,
      theoreticalCacheHitRate: r.request_metrics.cache.theoretical_cache_hit_rate,
      expectedOutput: r.client.name === 'infersweep',
    }),
    server_metrics: serverMetrics(r, inputs.requests, poolTokens, inputs.aiperfServerMetrics),
    kv_cache_pool_tokens: poolTokens,
  };
  if (r.energy !== undefined) Object.assign(agg, inferencexPowerFields(r.energy));
  // what InferenceX's schema cannot say otherwise: an invalid point, another workload (./comparable.ts)
  const warnings = [...sidecarWarnings(inferencexSidecar(r, ctx.modelPrefix)), ...r.server_metrics.warnings];
  if (warnings.length > 0) agg.warnings = warnings;
  return inferencexAggSchema.parse(roundFloats(agg));
}
