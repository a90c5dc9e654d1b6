import { z } from 'zod';
import type { RequestRecord } from '../result';

/**
 * aiperf exports → our per-request records (pure). `profile_export.jsonl` rows carry `metadata`
 * (phase, request_start_ns/end_ns, conversation/turn, context_overflow_skip) and `metrics` ({value, unit}
 * in ms/tokens); errored rows carry `error`. Token counts come from the `usage_*` metrics
 * (--use-server-token-count), falling back to aiperf's ISL/OSL when usage is absent.
 */
const metricVal = z
  .object({ value: z.union([z.number(), z.array(z.number())]).nullable(), unit: z.string().optional() })
  .passthrough();
export const aiperfRecordSchema = z
  .object({
    metadata: z
      .object({
        session_num: z.number().optional(),
        x_request_id: z.string().optional(),
        conversation_id: z.string().optional(),
        turn_index: z.number().optional(),
        source_kind: z.string().optional(),
        agent_depth: z.number().optional(),
        request_start_ns: z.number(),
        request_end_ns: z.number().optional(),
        benchmark_phase: z.string(),
        was_cancelled: z.boolean().optional(),
        context_overflow_skip: z.boolean().optional(),
      })
      .passthrough(),
    metrics: z.record(z.string(), metricVal).default({}),
    error: z
      .object({
        code: z.number().nullable().optional(),
        type: z.string().nullable().optional(),
        message: z.string().nullable().optional(),
      })
      .passthrough()
      .nullable()
      .optional(),
  })
  .passthrough();
export type AiperfRecord = z.infer<typeof aiperfRecordSchema>;

export function parseAiperfJsonl(text: string): AiperfRecord[] {
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => aiperfRecordSchema.parse(JSON.parse(l)));
}

/** Error category from aiperf's error object (first token of type/message, as InferenceX does). */
export function aiperfErrorCategory(r: AiperfRecord): string | null {
  if (r.metadata.context_overflow_skip) return 'context_overflow';
  if (!r.error) return r.metadata.was_cancelled ? 'cancelled' : null;
  const msg = `${r.error.type ?? ''} ${r.error.message ?? ''}`;
  if (/maximum context length|context length/i.test(msg)) return 'context_overflow';
  const first = (r.error.type ?? r.error.message ?? 'error').trim().split(/[\s:]+/)[0] ?? 'error';
  return first.toLowerCase() || 'error';
}

/** InferenceX's category of an errored aiperf row (InferenceX request_metrics.py `_error_category` @ 843c6254f). */
export function inferencexErrorCategory(error: unknown): string {
  let message: unknown = error;
  if (error !== null && typeof error === 'object') {
    const e = error as Record<string, unknown>;
    for (const k of ['type', 'error_type', 'code', 'class', 'status']) {
      const v = e[k];
      if (v !== null && v !== undefined && v !== '') return String(v);
    }
    message = e.message || e.error;
  }
  if (!message) return 'unknown';
  const first = String(message).trim().split('\n')[0]!;
  return (first.split(':', 1)[0] || 'unknown').slice(0, 120);
}

/** The records' clock origin: the first request's request_start_ns (epoch ns); 0 for no rows. */
export function aiperfOriginNs(rows: readonly AiperfRecord[]): number {
  return rows.length === 0 ? 0 : Math.min(...rows.map((r) => r.metadata.request_start_ns));
}

export function aiperfToRecords(rows: readonly AiperfRecord[], endpoint: string): RequestRecord[] {
  if (rows.length === 0) return [];
  const origin = aiperfOriginNs(rows);
  const m = (r: AiperfRecord, k: string): number | null => {
    const v = r.metrics[k]?.value;
    return typeof v === 'number' ? v : null;
  };
  return rows.map((r, i) => {
    const cat = aiperfErrorCategory(r);
    const ok = cat === null;
    const start = (r.metadata.request_start_ns - origin) / 1e6;
    const e2el = m(r, 'request_latency');
    const end =
      r.metadata.request_end_ns !== undefined ? (r.metadata.request_end_ns - origin) / 1e6 : start + (e2el ?? 0);
    const isl = m(r, 'usage_prompt_tokens') ?? m(r, 'input_sequence_length');
    const osl = m(r, 'usage_completion_tokens') ?? m(r, 'output_sequence_length');
    const phase = r.metadata.benchmark_phase === 'profiling' ? 'profiling' : 'warmup';
    return {
      id: r.metadata.x_request_id ?? `aiperf-${i}`,
      lane: r.metadata.session_num ?? -1,
      trace_id: r.metadata.conversation_id ?? '',
      play: -1,
      turn: r.metadata.turn_index ?? -1,
      kind: (r.metadata.agent_depth ?? 0) > 0 ? 'subagent' : 'root',
      agent_id: null,
      phase,
      endpoint,
      start_ms: start,
      // aiperf's request_end_ns when present (InferenceX's qps windows and throughput duration use it)
      end_ms: r.metadata.request_end_ns === undefined && ok && e2el !== null ? start + e2el : end,
      ttft_ms: ok ? m(r, 'time_to_first_token') : null,
      itl_ms: ok && osl !== null && osl > 1 ? m(r, 'inter_token_latency') : null,
      full_response_itl_ms: ok ? m(r, 'full_response_inter_token_latency') : null,
      e2el_ms: ok ? e2el : null,
      isl: isl === null ? null : Math.round(isl),
      osl: osl === null ? null : Math.round(osl),
      cached_tokens: m(r, 'usage_prompt_cache_read_tokens'),
      expected_isl: isl === null ? 0 : Math.round(isl),
      expected_osl: osl === null ? 0 : Math.round(osl),
      max_tokens: osl === null ? 0 : Math.round(osl),
      theoretical_cache_hit_tokens: 0,
      content_chunks: Math.round(m(r, 'http_req_chunks_received') ?? 0),
      status: r.error?.code ?? (ok ? 200 : null),
      ok,
      error_category: cat,
      error_type: r.error ? inferencexErrorCategory(r.error) : null,
      error: r.error?.message ?? null,
    } satisfies RequestRecord;
  });
}

/** The aggregate's scenario verdict and aiperf-side numbers we keep. */
export const aiperfAggregateSchema = z
  .object({
    aiperf_version: z.string().optional(),
    start_time: z.string().optional(),
    end_time: z.string().optional(),
    was_cancelled: z.boolean().optional(),
    theoretical_prefix_cache_hit: z.object({ avg: z.number().nullable().optional() }).passthrough().optional(),
    effective_concurrency: z
      .object({ avg: z.number().nullable().optional(), max: z.number().nullable().optional() })
      .passthrough()
      .optional(),
    metadata: z
      .object({ submission_valid: z.boolean().optional(), submission_invalid_reasons: z.array(z.string()).optional() })
      .passthrough()
      .optional(),
  })
  .passthrough();
export type AiperfAggregate = z.infer<typeof aiperfAggregateSchema>;
