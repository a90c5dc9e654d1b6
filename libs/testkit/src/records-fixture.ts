/** A request record for unit tests: a successful profiled 1000-token request; override what a test is about. */
import type { PointResult, RequestRecord } from '@infersweep/agentx';

export const requestRecord = (p: Partial<RequestRecord> = {}): RequestRecord => ({
  id: 'x',
  lane: 0,
  trace_id: 't',
  play: 0,
  turn: 0,
  kind: 'root',
  agent_id: null,
  phase: 'profiling',
  endpoint: 'e',
  start_ms: 0,
  end_ms: 1000,
  ttft_ms: 100,
  itl_ms: 10,
  e2el_ms: 1000,
  isl: 1000,
  osl: 91,
  cached_tokens: 0,
  expected_isl: 1000,
  expected_osl: 91,
  max_tokens: 91,
  theoretical_cache_hit_tokens: 500,
  content_chunks: 91,
  status: 200,
  ok: true,
  error_category: null,
  error: null,
  ...p,
});

/**
 * The least of a point record `pointSummary` reads (libs/agentx/src/result.ts): a valid c=8 point with empty
 * metrics; override what a test is about. A cast: the summary never reads the rest.
 */
export const summaryRecord = (over: Record<string, unknown> = {}): PointResult =>
  ({
    conc: 8,
    submission_valid: true,
    submission_invalid_reasons: [],
    identity: { jobId: 'j', nodes: [], attempt: 1 },
    gpu_count: 1,
    request_accounting: { records_profiled: 1, records_error_dropped: 0 },
    artifacts: {},
    request_metrics: {
      latency: { ttft: {}, itl: {}, e2el: {}, intvty: {}, e2e_norm_intvty: {} },
      throughput: { per_gpu: {} },
    },
    timing: { warmup_seconds: null },
    ...over,
  }) as unknown as PointResult;
