import http from 'node:http';
import { createParser } from 'eventsource-parser';
import { isPlainContentChunk } from './content-chunk';
import { BODY_LIMITS } from './body';

/**
 * Streaming /v1/chat/completions over node:http with a sized keep-alive pool (one Agent per endpoint).
 * The body is written as the shared block Buffers (cork/uncork → one writev), never concatenated.
 * Timestamps: performance.now() (monotonic, sub-ms). TTFT = first non-empty content delta − request
 * start (request start is taken before the socket is acquired, so client-side queueing is not hidden).
 * Token counts come only from the final `usage` chunk. A token's time is the arrival of the socket read
 * that carried it (one clock read per read, not per event: events parsed later from the same read arrived
 * together); plain content chunks skip JSON.parse (client/content-chunk.ts).
 */
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

/** A token count from `usage`: a finite non-negative integer, else null plus a warning (pure). */
export function tokenCount(value: unknown, field: string, warnings: string[]): number | null {
  if (value === undefined || value === null) return null;
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0) return value;
  warnings.push(`usage.${field} is not a token count: ${JSON.stringify(value)?.slice(0, 40)} (dropped)`);
  return null;
}

export class EndpointPool {
  private readonly agents = new Map<string, http.Agent>();
  constructor(private readonly socketsPerEndpoint: number) {}
  agent(origin: string): http.Agent {
    let a = this.agents.get(origin);
    if (!a) {
      a = new http.Agent({
        keepAlive: true,
        keepAliveMsecs: 30_000,
        maxSockets: this.socketsPerEndpoint,
        maxFreeSockets: this.socketsPerEndpoint,
        scheduling: 'lifo',
      });
      this.agents.set(origin, a);
    }
    return a;
  }
  destroy(): void {
    for (const a of this.agents.values()) a.destroy();
    this.agents.clear();
  }
}

/** Classify an HTTP error response (pure). */
export function classifyHttpError(status: number, body: string): string {
  if (status === 400 && /maximum context length|context length|too long|exceeds.*(context|model)/i.test(body)) return 'context_overflow';
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

/** Classify a transport error (pure). */
export function classifyNetworkError(err: unknown): string {
  const code = (err as { code?: string }).code;
  const name = (err as { name?: string }).name;
  if (name === 'AbortError' || code === 'ABORT_ERR') return 'cancelled';
  if (code === 'ECONNREFUSED') return 'connection_refused';
  if (code === 'ECONNRESET' || code === 'EPIPE') return 'connection_reset';
  if (code === 'ETIMEDOUT' || code === 'ESOCKETTIMEDOUT' || name === 'TimeoutError') return 'timeout';
  return code ? code.toLowerCase() : 'network_error';
}

export interface UsageChunk {
  usage?: { prompt_tokens?: unknown; completion_tokens?: unknown; prompt_tokens_details?: { cached_tokens?: unknown } | null } | null;
  choices?: Array<{ delta?: { content?: string | null; reasoning_content?: string | null }; finish_reason?: string | null }>;
  error?: { message?: string; type?: string; code?: number | string } | string;
}

// eslint-disable-next-line max-lines-per-function -- 152 lines, over the 80-line budget until it is split (docs/conventions.md)
export function streamChat(opts: {
  pool: EndpointPool;
  baseUrl: string;
  path?: string;
  body: Buffer[];
  bodyLength: number;
  headers?: Record<string, string>;
  timeoutMs: number;
  signal?: AbortSignal;
}): Promise<ChatOutcome> {
  const url = new URL((opts.path ?? '/v1/chat/completions').replace(/^\/?/, '/'), opts.baseUrl);
  const startMs = performance.now();
  const out: ChatOutcome = {
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
  // eslint-disable-next-line max-lines-per-function -- 124 lines, over the 80-line budget until it is split (docs/conventions.md)
  return new Promise<ChatOutcome>((resolve) => {
    let settled = false;
    const finish = (category: string | null, message: string | null): void => {
      if (settled) return;
      settled = true;
      out.endMs = performance.now();
      opts.signal?.removeEventListener('abort', onAbort);
      if (category === null && out.completionTokens === null) {
        category = 'missing_usage';
        message = out.warnings?.length
          ? `usage without a usable completion_tokens: ${out.warnings.join('; ')}`
          : 'stream ended without a usage chunk (token counts come only from usage)';
      }
      out.ok = category === null;
      out.errorCategory = category;
      out.error = message;
      resolve(out);
    };
    const req = http.request(
      {
        protocol: url.protocol,
        hostname: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        method: 'POST',
        agent: opts.pool.agent(url.origin),
        headers: { 'content-type': 'application/json', accept: 'text/event-stream', 'content-length': opts.bodyLength, ...opts.headers },
        timeout: opts.timeoutMs,
      },
      (res) => {
        out.status = res.statusCode ?? null;
        res.setEncoding('utf8');
        if (res.statusCode !== 200) {
          let body = '';
          res.on('data', (d: string) => {
            if (body.length < 4096) body += d;
          });
          res.on('end', () => finish(classifyHttpError(res.statusCode ?? 0, body), `HTTP ${res.statusCode}: ${body.slice(0, 300)}`));
          res.on('error', (e) => finish(classifyNetworkError(e), e.message));
          return;
        }
        let done = false;
        let streamError: { kind: string; message: string } | null = null;
        let readMs = 0;
        // bytes fed since the last complete event: what the parser may be holding (a server that
        // never ends a line would otherwise grow it without bound)
        let pending = 0;
        const parser = createParser({
          onEvent: (ev) => {
            pending = 0;
            const data = ev.data;
            if (isPlainContentChunk(data)) {
              if (out.firstTokenMs === null) out.firstTokenMs = readMs;
              out.lastTokenMs = readMs;
              out.contentChunks++;
              return;
            }
            if (data === '[DONE]') {
              done = true;
              return;
            }
            let chunk: UsageChunk;
            try {
              chunk = JSON.parse(data) as UsageChunk;
            } catch {
              streamError = { kind: 'stream_error', message: `unparseable SSE data: ${data.slice(0, 120)}` };
              return;
            }
            if (chunk.error !== undefined) {
              streamError = classifyStreamError(chunk.error);
              return;
            }
            const c = chunk.choices?.[0];
            if (c) {
              const text = c.delta?.content ?? c.delta?.reasoning_content;
              if (text) {
                if (out.firstTokenMs === null) out.firstTokenMs = readMs;
                out.lastTokenMs = readMs;
                out.contentChunks++;
              }
              if (c.finish_reason) out.finishReason = c.finish_reason;
            }
            if (chunk.usage) {
              const w = (out.warnings ??= []);
              out.promptTokens = tokenCount(chunk.usage.prompt_tokens, 'prompt_tokens', w);
              out.completionTokens = tokenCount(chunk.usage.completion_tokens, 'completion_tokens', w);
              out.cachedTokens = tokenCount(chunk.usage.prompt_tokens_details?.cached_tokens, 'prompt_tokens_details.cached_tokens', w);
              if (w.length === 0) delete out.warnings;
            }
          },
        });
        res.on('data', (d: string) => {
          readMs = performance.now();
          pending += d.length;
          parser.feed(d);
          if (pending > BODY_LIMITS.sseEvent) {
            finish('oversized_event', `an SSE event exceeds ${BODY_LIMITS.sseEvent} bytes without ending; stream cancelled`);
            req.destroy();
          }
        });
        res.on('end', () => {
          if (streamError) finish(streamError.kind, streamError.message);
          else if (!done) finish('truncated_stream', 'stream closed before [DONE]');
          else finish(null, null);
        });
        res.on('error', (e) => finish(classifyNetworkError(e), e.message));
        res.on('aborted', () => finish('connection_reset', 'response aborted'));
      },
    );
    const onAbort = (): void => {
      req.destroy(Object.assign(new Error('aborted'), { name: 'AbortError' }));
    };
    if (opts.signal) {
      if (opts.signal.aborted) {
        finish('cancelled', 'aborted before send');
        return;
      }
      opts.signal.addEventListener('abort', onAbort, { once: true });
    }
    req.on('timeout', () => req.destroy(Object.assign(new Error(`request timed out after ${opts.timeoutMs} ms`), { code: 'ETIMEDOUT' })));
    req.on('error', (e) => finish(classifyNetworkError(e), e.message));
    req.cork();
    for (const b of opts.body) req.write(b);
    req.uncork();
    req.end();
  });
}
