import http from 'node:http';
import { BODY_LIMITS } from './body';
import {
  pendingOutcome,
  settleOutcome,
  ChatStream,
  classifyHttpError,
  type ChatEnding,
  type ChatOutcome,
} from './chat-stream';

export { classifyHttpError, classifyStreamError, tokenCount, type ChatOutcome, type UsageChunk } from './chat-stream';

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

export interface StreamChatOptions {
  pool: EndpointPool;
  baseUrl: string;
  path?: string;
  body: Buffer[];
  bodyLength: number;
  headers?: Record<string, string>;
  timeoutMs: number;
  signal?: AbortSignal;
}

/**
 * Streaming /v1/chat/completions over node:http with a sized keep-alive pool (one Agent per endpoint).
 * The body is written as the shared block Buffers (cork/uncork → one writev), never concatenated.
 * Timestamps: performance.now() (monotonic, sub-ms). TTFT = first non-empty content delta − request
 * start (request start is taken before the socket is acquired, so client-side queueing is not hidden).
 * Token counts come only from the final `usage` chunk. A token's time is the arrival of the socket read
 * that carried it (one clock read per read, not per event: events parsed later from the same read arrived
 * together); plain content chunks skip JSON.parse (client/content-chunk.ts).
 */
export function streamChat(opts: StreamChatOptions): Promise<ChatOutcome> {
  const url = new URL((opts.path ?? '/v1/chat/completions').replace(/^\/?/, '/'), opts.baseUrl);
  const out = pendingOutcome(performance.now());
  return new Promise<ChatOutcome>((resolve) => {
    let settled = false;
    const finish = (...ending: ChatEnding): void => {
      if (settled) return;
      settled = true;
      out.endMs = performance.now();
      opts.signal?.removeEventListener('abort', onAbort);
      resolve(settleOutcome(out, ending));
    };
    const req = http.request(
      {
        protocol: url.protocol,
        hostname: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        method: 'POST',
        agent: opts.pool.agent(url.origin),
        headers: {
          'content-type': 'application/json',
          accept: 'text/event-stream',
          'content-length': opts.bodyLength,
          ...opts.headers,
        },
        timeout: opts.timeoutMs,
      },
      (res) => onResponse(res, out, finish, () => req.destroy()),
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
    req.on('timeout', () =>
      req.destroy(Object.assign(new Error(`request timed out after ${opts.timeoutMs} ms`), { code: 'ETIMEDOUT' })),
    );
    req.on('error', (e) => finish(classifyNetworkError(e), e.message));
    req.cork();
    for (const b of opts.body) req.write(b);
    req.uncork();
    req.end();
  });
}

/** Read one response into `out`: an error body (first 4 KiB) or the SSE stream, then `finish` once. */
function onResponse(
  res: http.IncomingMessage,
  out: ChatOutcome,
  finish: (...ending: ChatEnding) => void,
  cancel: () => void,
): void {
  out.status = res.statusCode ?? null;
  res.setEncoding('utf8');
  res.on('error', (e) => finish(classifyNetworkError(e), e.message));
  if (res.statusCode !== 200) {
    let body = '';
    res.on('data', (d: string) => {
      if (body.length < 4096) body += d;
    });
    res.on('end', () =>
      finish(classifyHttpError(res.statusCode ?? 0, body), `HTTP ${res.statusCode}: ${body.slice(0, 300)}`),
    );
    return;
  }
  const stream = new ChatStream(out);
  res.on('data', (d: string) => {
    if (stream.read(d, performance.now())) return;
    finish('oversized_event', `an SSE event exceeds ${BODY_LIMITS.sseEvent} bytes without ending; stream cancelled`);
    cancel();
  });
  res.on('end', () => finish(...stream.end()));
  res.on('aborted', () => finish('connection_reset', 'response aborted'));
}
