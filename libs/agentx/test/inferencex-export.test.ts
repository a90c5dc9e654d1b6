import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { agentxSettingsSchema, parseSweepConfig, planSweep } from '@infersweep/topology';
import {
  accounting,
  aiperfToRecords,
  inferencexAggSchema,
  inferencexContext,
  inferencexFileName,
  inferencexShape,
  kvPoolTokens,
  parseAiperfJsonl,
  parsePrometheus,
  pointResultSchema,
  requestMetrics,
  serverMetricsWindow,
  toInferencex,
  type PointResult,
} from '@infersweep/agentx';

const data = (f: string) => readFileSync(new URL(`./data/${f}`, import.meta.url), 'utf8');
/** An InferenceX aggregate (`build_agg`, docs/inferencex.md) for Kimi K3 on 4×8 H200, TP8×DP4/EP32, c=8. */
const FIXTURE = JSON.parse(data('inferencex-agg-kimik3-h200-conc8.json')) as Record<string, unknown>;
const shipped = readFileSync(new URL('../../../configs/kimik3-fp4-h200.yaml', import.meta.url), 'utf8');
const { config } = parseSweepConfig(shipped, { file: 'configs/kimik3-fp4-h200.yaml', env: { INFERSWEEP_STACK: '/stack' } });
const plan = (o: string) => planSweep(config, { orientation: o, cluster: 'h200' });

/** A record built from real exports: aiperf 0.13.0 per-request rows and a vLLM DP2 /metrics scrape. */
function realRecord(conc: number, gpus: number): PointResult {
  const records = aiperfToRecords(parseAiperfJsonl(data('aiperf-profile-export.jsonl')), 'http://h:8000');
  const samples = parsePrometheus(data('vllm-dp2-metrics.txt')).samples;
  const startSamples = samples.map((s) => (s.name.endsWith('_total') ? { ...s, value: 0 } : s));
  const server = serverMetricsWindow(
    [{ endpoint: 'http://h:8000/metrics', samples: startSamples }],
    [{ endpoint: 'http://h:8000/metrics', samples }],
    [],
    'vllm',
  );
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
    dataset: { source_type: 'public', loader: 'semianalysis_cc_traces_weka_062126', path: null, seed: null, entry_count: 393 },
    num_requests_total: records.length,
    num_requests_successful: records.filter((r) => r.phase === 'profiling' && r.ok).length,
    request_accounting: accounting(records),
    request_metrics: requestMetrics(records, gpus),
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
    submission_valid: true,
    submission_invalid_reasons: [],
    artifacts: { record: null, requests_jsonl: null, command: null, raw_dir: null },
  });
}

/** The shape of a JSON value: objects by key (recursively), arrays by their first element, scalars by type. */
function shape(v: unknown): unknown {
  if (Array.isArray(v)) return v.length ? [shape(v[0])] : [];
  if (v !== null && typeof v === 'object')
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, shape((v as Record<string, unknown>)[k])]),
    );
  return v === null ? 'number|null' : typeof v === 'number' ? 'number|null' : typeof v;
}

describe('InferenceX export (build_agg shape)', () => {
  it("the schema accepts InferenceX's documented aggregate, and rejects a field it does not know", () => {
    expect(() => inferencexAggSchema.parse(FIXTURE)).not.toThrow();
    expect(() => inferencexAggSchema.parse({ ...FIXTURE, identity: {} })).toThrow(/identity/);
    expect(() => inferencexAggSchema.parse({ ...FIXTURE, dp_attention: true })).toThrow();
  });

  it("an exported record has the fixture's shape, key for key (dataset and server sources aside)", () => {
    const p = plan('ix-balanced');
    const records = aiperfToRecords(parseAiperfJsonl(data('aiperf-profile-export.jsonl')), 'http://h:8000');
    const agg = toInferencex(realRecord(8, 32), inferencexContext(p), records);
    const strip = (o: Record<string, unknown>) => {
      const { dataset: _d, warnings: _w, ...rest } = o;
      const sm = rest.server_metrics as Record<string, unknown>;
      const acc = rest.request_accounting as Record<string, unknown>;
      // error categories are data (keys vary by run), not shape
      return { ...rest, request_accounting: { ...acc, error_categories: {} }, server_metrics: { ...sm, sources: [] } };
    };
    expect(shape(strip(agg as unknown as Record<string, unknown>))).toEqual(shape(strip(FIXTURE)));
    // identity and topology fields from the plan
    expect(agg).toMatchObject({
      hw: 'h200',
      conc: 8,
      image: 'vllm/vllm-openai:kimi-k3',
      model: 'moonshotai/Kimi-K3',
      infmax_model_prefix: 'kimik3',
      framework: 'vllm',
      precision: 'fp4',
    });
    expect(agg).toMatchObject({
      is_multinode: true,
      tp: 32,
      ep: 32,
      dp_attention: 'true',
      num_prefill_gpu: 32,
      decode_num_workers: 0,
      spec_decoding: 'none',
      disagg: false,
    });
    expect(agg.request_metrics.qps.window_seconds).toBe(1);
    expect(agg.request_metrics.latency.full_response_itl).toEqual(agg.request_metrics.latency.itl);
    expect(agg.request_metrics.throughput.full_response_output_token_throughput_per_user.p50).toBeGreaterThan(0);
    // kv_cache_pool_tokens from the real scrape's vllm:cache_config_info: 2 engines × 31836 blocks × 16 tokens
    expect(agg.kv_cache_pool_tokens).toBe(2 * 31836 * 16);
    expect(agg.server_metrics.kv_cache.gpu_total_tokens).toBe(agg.kv_cache_pool_tokens);
    // usage: percent in the record, a fraction in InferenceX
    expect(agg.server_metrics.kv_cache.gpu_usage_pct).toBeCloseTo(0.4125, 5);
  });

  it("InferenceX's GPU formula (Σ workers · tp · pp) gives each orientation's GPUs", () => {
    for (const o of ['latency', 'balanced', 'throughput', 'ix-latency', 'ix-balanced']) {
      const p = plan(o);
      const s = inferencexShape(p.topology);
      expect(s.tp * s.pp, o).toBe(p.topology.gpus);
      expect(s.dpAttention, o).toBe(p.topology.dp > 1 && p.topology.expertParallel ? 'true' : 'false');
    }
    expect(inferencexShape(plan('latency').topology)).toEqual({ tp: 8, ep: 1, pp: 2, dpAttention: 'false' });
    expect(inferencexShape(plan('throughput').topology)).toEqual({ tp: 16, ep: 16, pp: 2, dpAttention: 'true' });
  });

  it('file names end in _conc<N>.json and are safe; a single-node record carries pp/dcp/pcp instead of the worker fields', () => {
    const ctx = inferencexContext(plan('ix-balanced'));
    expect(inferencexFileName(ctx, 16)).toBe('kimik3_p1x32ep32dpa_d0x0_ix-balanced_fp4_vllm_disagg-false_spec-none_conc16.json');
    expect(inferencexFileName({ ...ctx, orientation: 'a b/c' }, 1)).toMatch(/^[A-Za-z0-9._-]+_conc1\.json$/);
    const single = toInferencex(realRecord(4, 8), {
      ...ctx,
      topology: { tp: 8, pp: 1, dp: 1, ep: 1, expertParallel: false, nodes: 1, gpus: 8 },
    });
    expect(single).toMatchObject({ is_multinode: false, tp: 8, ep: 1, dp_attention: 'false', pp: 1, dcp_size: 1, pcp_size: 1 });
    expect('prefill_tp' in single).toBe(false);
    // without requests.jsonl the full-response throughput block is empty, as InferenceX writes it for no data
    expect(single.request_metrics.throughput.full_response_output_token_throughput_per_user).toEqual({});
  });

  it('floats are rounded to 5 decimals', () => {
    const agg = toInferencex(realRecord(8, 32), inferencexContext(plan('ix-balanced')));
    const floats: number[] = [];
    const walk = (v: unknown) => {
      if (typeof v === 'number') floats.push(v);
      else if (v && typeof v === 'object') Object.values(v).forEach(walk);
    };
    walk(agg);
    expect(floats.length).toBeGreaterThan(20);
    for (const f of floats) expect(Math.abs(f * 1e5 - Math.round(f * 1e5))).toBeLessThan(1e-6 * Math.max(1, Math.abs(f * 1e5)));
  });

  it('kvPoolTokens sums engines once each and is null when the gauge is absent', () => {
    const s = (engine: string, blocks: string) => ({
      name: 'vllm:cache_config_info',
      labels: { engine, block_size: '16', num_gpu_blocks: blocks },
      value: 1,
    });
    expect(kvPoolTokens([{ endpoint: 'a', samples: [s('0', '100'), s('1', '200'), s('1', '200')] }], 'vllm:cache_config_info')).toBe(4800);
    expect(kvPoolTokens([{ endpoint: 'a', samples: [] }], 'vllm:cache_config_info')).toBeNull();
    expect(kvPoolTokens([{ endpoint: 'a', samples: [s('0', 'x')] }], 'vllm:cache_config_info')).toBeNull();
    expect(kvPoolTokens([{ endpoint: 'a', samples: [s('0', '1')] }], null)).toBeNull();
  });
});
