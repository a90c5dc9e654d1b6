/**
 * A tiny loopback SSE server for the timing bench (bench/timing.ts), in its own process:
 * OpenAI-style streaming POST /v1/chat/completions that sends `max_tokens` tokens, each as content
 * `@<send time in µs of CLOCK_MONOTONIC>` taken right before the socket write that carries it, first after
 * `ttftMs`, then one every `itlMs` (all tokens due at a 1 ms timer tick go out in that tick, as an engine's
 * decode step would); then a finish chunk, a usage chunk (its `prompt_tokens_details.cached_tokens`
 * carries the request's sequence number so client records join with the send log) and `[DONE]`.
 * Plain `net` sockets and hand-written HTTP/1.1 (keep-alive, chunked): node:http would cork each
 * response until the next tick and so add the server's own loop time to every measurement.
 * GET /bench/log returns (and clears) the per-request send log.
 *   tsx bench/tick-server.ts '{"port":0,"ttftMs":0,"itlMs":2}'   → prints `listening <port>`
 */
import net from 'node:net';
import type { SendLogEntry } from './lib/timing';

interface Stream {
  sock: net.Socket;
  seq: number;
  left: number;
  tokens: number;
  nextDueUs: number;
  firstSendUs: number;
}

const cfg = JSON.parse(process.argv[2] ?? '{}') as { port?: number; ttftMs?: number; itlMs?: number };
const itlUs = (cfg.itlMs ?? 2) * 1000;
const ttftUs = (cfg.ttftMs ?? 0) * 1000;
const nowUs = (): number => Number(process.hrtime.bigint() / 1000n);
const HEAD =
  'data: {"id":"tick","object":"chat.completion.chunk","created":0,"model":"tick","choices":[{"index":0,"delta":{"content":"@';
const TAIL = '"},"finish_reason":null}]}\n\n';
const chunk = (s: string): string => `${Buffer.byteLength(s).toString(16)}\r\n${s}\r\n`;

let seq = 0;
let log: SendLogEntry[] = [];
const active = new Set<Stream>();
let timer: NodeJS.Timeout | null = null;

function tick(): void {
  timer = null;
  for (const s of active) {
    let t = nowUs();
    while (s.left > 0 && s.nextDueUs <= t) {
      if (s.left === s.tokens) s.firstSendUs = t;
      s.sock.write(chunk(`${HEAD}${t}${TAIL}`));
      s.left--;
      s.nextDueUs += itlUs;
      if (s.left === 0) {
        log.push({ seq: s.seq, firstSendUs: s.firstSendUs, lastSendUs: t, tokens: s.tokens });
        const usage = {
          prompt_tokens: 1,
          completion_tokens: s.tokens,
          total_tokens: s.tokens + 1,
          prompt_tokens_details: { cached_tokens: s.seq },
        };
        s.sock.write(
          chunk(
            'data: {"id":"tick","object":"chat.completion.chunk","created":0,"model":"tick","choices":[{"index":0,"delta":{},"finish_reason":"length"}]}\n\n',
          ) +
            chunk(
              `data: {"id":"tick","object":"chat.completion.chunk","created":0,"model":"tick","choices":[],"usage":${JSON.stringify(usage)}}\n\n`,
            ) +
            chunk('data: [DONE]\n\n') +
            '0\r\n\r\n',
        );
        active.delete(s);
      }
      t = nowUs();
    }
  }
  schedule();
}

function schedule(): void {
  if (timer || active.size === 0) return;
  timer = setTimeout(tick, 1);
}

function respond(sock: net.Socket, status: string, type: string, body: string): void {
  sock.write(
    `HTTP/1.1 ${status}\r\nContent-Type: ${type}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: keep-alive\r\n\r\n${body}`,
  );
}

/** One request of a keep-alive connection: head (request line + headers) and its Content-Length body. */
function handle(sock: net.Socket, head: string, body: string): void {
  const [method, path] = head.split('\r\n', 1)[0]!.split(' ');
  if (method === 'GET' && path === '/bench/log') {
    const b = JSON.stringify(log);
    log = [];
    respond(sock, '200 OK', 'application/json', b);
  } else if (method === 'GET' && (path === '/health' || path === '/v1/models')) {
    respond(
      sock,
      '200 OK',
      'application/json',
      JSON.stringify({ object: 'list', data: [{ id: 'tick', object: 'model', max_model_len: 1 << 20 }] }),
    );
  } else if (method === 'POST' && path?.startsWith('/v1/chat/completions')) {
    let maxTokens: number;
    try {
      const b = JSON.parse(body) as { max_tokens?: number; max_completion_tokens?: number };
      maxTokens = Math.max(1, b.max_tokens ?? b.max_completion_tokens ?? 16);
    } catch {
      respond(sock, '400 Bad Request', 'text/plain', 'bad json');
      return;
    }
    sock.write(
      'HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nTransfer-Encoding: chunked\r\nConnection: keep-alive\r\n\r\n',
    );
    active.add({ sock, seq: ++seq, left: maxTokens, tokens: maxTokens, nextDueUs: nowUs() + ttftUs, firstSendUs: 0 });
    schedule();
  } else respond(sock, '404 Not Found', 'text/plain', '');
}

const server = net.createServer((sock) => {
  sock.setNoDelay(true);
  let buf: Buffer = Buffer.alloc(0);
  sock.on('data', (d: Buffer) => {
    buf = buf.length ? Buffer.concat([buf, d]) : d;
    for (;;) {
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = buf.subarray(0, end).toString('latin1');
      const m = /\r\ncontent-length:\s*(\d+)/i.exec(head);
      const len = m ? Number(m[1]) : 0;
      if (buf.length < end + 4 + len) return;
      const body = buf.subarray(end + 4, end + 4 + len).toString('utf8');
      buf = buf.subarray(end + 4 + len);
      handle(sock, head, body);
    }
  });
  sock.on('error', () => undefined);
  sock.on('close', () => {
    for (const s of active) if (s.sock === sock) active.delete(s);
  });
});
server.listen(cfg.port ?? 0, '127.0.0.1', () => {
  const a = server.address();
  console.log(`listening ${typeof a === 'object' && a ? a.port : 0}`);
});
process.on('SIGTERM', () => {
  server.close();
  process.exit(0);
});
