import { createParser, type EventSourceParser } from 'eventsource-parser';
import { BODY_LIMITS } from './body';
import { isPlainContentChunk } from './content-chunk';

/** What one chat request measured: times in performance.now() ms, token counts from `usage` only. */
export interface ChatOutcome {
  ok: boolean;
  status: number | null;
  startMs: number;
  firstTokenMs: number | null;
  lastTokenMs: number | null;
  endMs: number;
  contentChunks: number;
  promptTokens: number | null;
  completionTokens: number | null;
  cachedTokens: number | null;
  finishReason: string | null;
  errorCategory: string | null;
  error: string | null;
  /** Values the server sent that are not usable numbers (dropped, counted as missing). */
  warnings?: string[];
}

export interface UsageChunk {
  usage?: {
    prompt_tokens?: unknown;
    completion_tokens?: unknown;
    prompt_tokens_details?: { cached_tokens?: unknown } | null;
  } | null;
  choices?: Array<{
    delta?: { content?: string | null; reasoning_content?: string | null };
    finish_reason?: string | null;
  }>;
  error?: { message?: string; type?: string; code?: number | string } | string;
}

/** How a request ended: an error category and message, or `[null, null]` for a complete answer. */
export type ChatEnding = [category: string | null, message: string | null];

/** A token count from `usage`: a finite non-negative integer, else null plus a warning (pure). */
export function tokenCount(value: unknown, field: string, warnings: string[]): number | null {
  if (value === undefined || value === null) return null;
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0) return value;
  warnings.push(`usage.${field} is not a token count: ${JSON.stringify(value)?.slice(0, 40)} (dropped)`);
  return null;
}

/** Classify an HTTP error response (pure). */
export function classifyHttpError(status: number, body: string): string {
  if (status === 400 && /maximum context length|context length|too long|exceeds.*(context|model)/i.test(body))
    return 'context_overflow';
  if (status === 429) return 'rate_limit';
  if (status === 404) return 'not_found';
  if (status === 413) return 'payload_too_large';
  if (status >= 500) return 'server_error';
  if (status >= 400) return 'client_error';
  return 'http_error';
}

/**
 * Classify an error the server sent inside the stream after answering 200 (pure): vLLM and the
 * simulator send `{"error": {"message", "type", "code"}}` with the HTTP status they would have
 * answered as `code` (e.g. 429 for a full waiting queue, 400 for a context overflow). Without a
 * numeric code it is a plain `stream_error`.
 */
export function classifyStreamError(error: UsageChunk['error']): { kind: string; message: string } {
  if (typeof error === 'string') return { kind: 'stream_error', message: error };
  const message = error?.message ?? 'stream error';
  const code = Number(error?.code);
  return { kind: Number.isInteger(code) && code >= 400 ? classifyHttpError(code, message) : 'stream_error', message };
}

/**
 * The SSE body of one chat-completions response answered 200, parsed into its `ChatOutcome` as it
 * arrives (pure: the caller passes each socket read with its arrival time). A token's time is the
 * arrival of the read that carried it; plain content chunks skip JSON.parse (content-chunk.ts); token
 * counts come only from the `usage` chunk.
 */
export class ChatStream {
  private done = false;
  private streamError: { kind: string; message: string } | null = null;
  private readMs = 0;
  // bytes fed since the last complete event: what the parser may be holding (a server that
  // never ends a line would otherwise grow it without bound)
  private pending = 0;
  private readonly parser: EventSourceParser = createParser({ onEvent: (ev) => this.event(ev.data) });

  constructor(private readonly out: ChatOutcome) {}

  /** Feed one read that arrived at `atMs`; false once an event grew past the SSE bound without ending. */
  read(text: string, atMs: number): boolean {
    this.readMs = atMs;
    this.pending += text.length;
    this.parser.feed(text);
    return this.pending <= BODY_LIMITS.sseEvent;
  }

  /** How the stream ended when the response closed. */
  end(): ChatEnding {
    if (this.streamError) return [this.streamError.kind, this.streamError.message];
    if (!this.done) return ['truncated_stream', 'stream closed before [DONE]'];
    return [null, null];
  }

  private token(): void {
    if (this.out.firstTokenMs === null) this.out.firstTokenMs = this.readMs;
    this.out.lastTokenMs = this.readMs;
    this.out.contentChunks++;
  }

  private event(data: string): void {
    this.pending = 0;
    if (isPlainContentChunk(data)) return this.token();
    if (data === '[DONE]') {
      this.done = true;
      return;
    }
    let chunk: UsageChunk;
    try {
      chunk = JSON.parse(data) as UsageChunk;
    } catch {
      this.streamError = { kind: 'stream_error', message: `unparseable SSE data: ${data.slice(0, 120)}` };
      return;
    }
    if (chunk.error !== undefined) {
      this.streamError = classifyStreamError(chunk.error);
      return;
    }
    const c = chunk.choices?.[0];
    if (c) {
      if (c.delta?.content ?? c.delta?.reasoning_content) this.token();
      if (c.finish_reason) this.out.finishReason = c.finish_reason;
    }
    if (chunk.usage) this.usage(chunk.usage);
  }

  private usage(usage: NonNullable<UsageChunk['usage']>): void {
    const w = (this.out.warnings ??= []);
    this.out.promptTokens = tokenCount(usage.prompt_tokens, 'prompt_tokens', w);
    this.out.completionTokens = tokenCount(usage.completion_tokens, 'completion_tokens', w);
    this.out.cachedTokens = tokenCount(
      usage.prompt_tokens_details?.cached_tokens,
      'prompt_tokens_details.cached_tokens',
      w,
    );
    if (w.length === 0) delete this.out.warnings;
  }
}

/** A request that started at `startMs` and has not ended yet. */
export function pendingOutcome(startMs: number): ChatOutcome {
  return {
    ok: false,
    status: null,
    startMs,
    firstTokenMs: null,
    lastTokenMs: null,
    endMs: startMs,
    contentChunks: 0,
    promptTokens: null,
    completionTokens: null,
    cachedTokens: null,
    finishReason: null,
    errorCategory: null,
    error: null,
  };
}

/**
 * Settle an outcome with how it ended (pure). A stream that completed without a usable
 * `completion_tokens` is `missing_usage`: token counts come only from usage.
 */
export function settleOutcome(out: ChatOutcome, [category, message]: ChatEnding): ChatOutcome {
  if (category === null && out.completionTokens === null) {
    category = 'missing_usage';
    message = out.warnings?.length
      ? `usage without a usable completion_tokens: ${out.warnings.join('; ')}`
      : 'stream ended without a usage chunk (token counts come only from usage)';
  }
  out.ok = category === null;
  out.errorCategory = category;
  out.error = message;
  return out;
}
