import type { RequestPhase, RequestRecord } from '../result';
import type { ChatOutcome } from './chat-stream';

/** What one request was, apart from how it went (the inputs of toRequestRecord besides the outcome). */
export interface RequestContext {
  lane: number;
  play: { no: number; marker: string; traceId: string; endpoint: string };
  kind: 'root' | 'subagent';
  agentId: string | null;
  turn: number;
  phase: RequestPhase;
  maxTokens: number;
  expected: { isl: number; osl: number };
  theoreticalHitTokens: number;
  /** The request was cut by the end-of-profile grace period (not by an abort of the whole run). */
  graceCancelled: boolean;
}

/**
 * A request's id: its record's `id`, and the `X-Request-Id` header the client sends with it (as aiperf sends its
 * `x_request_id`), so an engine's per-request logs and traces join the request records.
 */
export function requestId(c: { play: { marker: string } } & Pick<RequestContext, 'kind' | 'agentId' | 'turn'>): string {
  return `${c.play.marker}:${c.kind === 'root' ? 'r' : c.agentId}:${c.turn}`;
}

/**
 * One request's outcome → its JSONL record (pure). ITL is the mean gap over the request's streamed
 * tokens ((last − first) / (osl − 1)), only for successful requests with more than one token.
 */
export function toRequestRecord(o: ChatOutcome, c: RequestContext): RequestRecord {
  let category = o.errorCategory;
  if (category === 'cancelled' && c.graceCancelled) category = 'grace_cancelled';
  const ttft = o.firstTokenMs !== null ? o.firstTokenMs - o.startMs : null;
  const osl = o.completionTokens;
  const itl =
    o.ok && osl !== null && osl > 1 && o.firstTokenMs !== null && o.lastTokenMs !== null
      ? (o.lastTokenMs - o.firstTokenMs) / (osl - 1)
      : null;
  return {
    id: requestId(c),
    lane: c.lane,
    trace_id: c.play.traceId,
    play: c.play.no,
    turn: c.turn,
    kind: c.kind,
    agent_id: c.agentId,
    phase: c.phase,
    endpoint: c.play.endpoint,
    start_ms: o.startMs,
    end_ms: o.endMs,
    ttft_ms: o.ok ? ttft : null,
    itl_ms: itl,
    full_response_itl_ms: itl,
    e2el_ms: o.ok ? o.endMs - o.startMs : null,
    isl: o.promptTokens,
    osl,
    cached_tokens: o.cachedTokens,
    expected_isl: c.expected.isl,
    expected_osl: c.expected.osl,
    max_tokens: c.maxTokens,
    theoretical_cache_hit_tokens: c.theoreticalHitTokens,
    content_chunks: o.contentChunks,
    status: o.status,
    ok: o.ok,
    error_category: o.ok ? null : category,
    error: o.error,
  };
}
