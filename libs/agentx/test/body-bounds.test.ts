/**
 * Bounded memory where a remote server controls the size (../src/client/body.ts, ../src/client/http.ts):
 * a /metrics body, a /v1/models body and one SSE event each cost at most their bound; past it the
 * read is cancelled (the server sees its connection closed long before it could send everything).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BODY_LIMITS, EndpointPool, checkReadiness, scrapeText, streamChat } from '../src';
import { ScrapeError } from '../src/errors';
import { readBodyPrefix } from '../src/client/body';

/** What the server could send at most (far beyond every bound), and what it did send before the client hung up. */
const ENDLESS = 256 << 20;
let sent = 0;

function endless(res: http.ServerResponse, piece: Buffer): void {
  sent = 0;
  const more = (): void => {
    while (sent < ENDLESS) {
      sent += piece.length;
      if (!res.write(piece)) return void res.once('drain', more);
    }
    res.end();
  };
  more();
}

const server = http.createServer((req, res) => {
  if (req.url === '/metrics') {
    res.writeHead(200, { 'content-type': 'text/plain' });
    return endless(res, Buffer.from('vllm:num_requests_running{engine="0"} 0\n'.repeat(1600)));
  }
  if (req.url === '/health') return void res.writeHead(200).end();
  if (req.url === '/v1/models') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"data":[{"id":"');
    return endless(res, Buffer.alloc(64 << 10, 'm'));
  }
  if (req.url === '/v1/chat/completions') {
    req.resume();
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('data: {"choices":[{"delta":{"content":"a"}}]}\n\n');
    res.write('data: ');
    return endless(res, Buffer.alloc(64 << 10, 'x')); // one line that never ends
  }
  if (req.url === '/error') {
    res.writeHead(500);
    return endless(res, Buffer.alloc(64 << 10, 'e'));
  }
  res.writeHead(404).end();
});
let base = '';
beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe('bodies a remote server controls are bounded', () => {
  it('/metrics: an endless body fails the scrape (retryable ScrapeError) after the bound, not after the body', async () => {
    const err = await scrapeText(base, 30).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ScrapeError);
    expect((err as Error).message).toContain(`exceeds ${BODY_LIMITS.metrics} bytes`);
    expect(sent).toBeLessThan(ENDLESS / 2);
  });

  it('/v1/models: an endless body makes the server not ready, naming the bound', async () => {
    const r = await checkReadiness(base, 'm', null, { probe: false, timeoutSeconds: 30 });
    expect(r.ready).toBe(false);
    expect(r.detail).toContain(`/v1/models failed: /v1/models: the response exceeds ${BODY_LIMITS.small} bytes`);
    expect(sent).toBeLessThan(ENDLESS / 2);
  });

  it('SSE: an event that never ends fails the request as oversized_event and closes the stream', async () => {
    const body = Buffer.from('{}');
    const pool = new EndpointPool(1);
    try {
      const out = await streamChat({ pool, baseUrl: base, body: [body], bodyLength: body.length, timeoutMs: 30_000 });
      expect(out.ok).toBe(false);
      expect(out.errorCategory).toBe('oversized_event');
      expect(out.contentChunks).toBe(1); // the events before it still counted
    } finally {
      pool.destroy();
    }
    expect(sent).toBeLessThan(ENDLESS / 2);
  });

  it('an error body keeps only its prefix', async () => {
    const res = await fetch(`${base}/error`);
    expect(await readBodyPrefix(res, 100)).toBe('e'.repeat(100));
    expect(sent).toBeLessThan(ENDLESS / 2);
  });
});
