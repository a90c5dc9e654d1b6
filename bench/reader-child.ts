/**
 * The reference readers of the client-ceiling and timing benches, each in its own process so its CPU is
 * its own (argv[2] = JSON ReaderInput; prints one JSON ReaderSummary line):
 *   bare  Node `http` keep-alive agent + SSE framing only (bench/lib/sse.ts SseFramer), no JSON, no metrics;
 *   raw   one `net` socket per lane, hand-written HTTP/1.1 request, counts `data:` frames in the bytes
 *         (NeedleCounter) and starts the next request at `data: [DONE]`: the physical bound.
 * Closed loop: `concurrency` lanes each send the same request (`max_tokens` with ignore_eos, so every
 * response carries exactly maxTokens tokens) until `durationSeconds` has passed; requests in flight then
 * finish. CPU (process.cpuUsage: user + system, all threads) spans first send → last response.
 */
import http from 'node:http';
import net from 'node:net';
import { NeedleCounter, SseFramer } from './lib/sse';
import { firstAndLast, parseSendUs } from './lib/timing';

export interface ReaderInput {
  kind: 'bare' | 'raw';
  url: string;
  concurrency: number;
  durationSeconds: number;
  body: string;
  maxTokens: number;
  /** bare only: record receive − send of every event (tick server payloads). */
  timing?: boolean;
}

export interface ReaderSummary {
  kind: string;
  responses: number;
  errors: number;
  tokens: number;
  frames: number;
  wallSeconds: number;
  cpuSeconds: number;
  maxRssBytes: number;
  /** timing: receive − send per event, ms (bare only). */
  errorsMs?: number[];
  /** timing: the same for the first and last token of every response. */
  firstLastMs?: number[];
}

const nowUs = (): number => Number(process.hrtime.bigint() / 1000n);

async function bare(i: ReaderInput, deadline: number, out: ReaderSummary): Promise<void> {
  const url = new URL('/v1/chat/completions', i.url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: i.concurrency, maxFreeSockets: i.concurrency });
  const body = Buffer.from(i.body);
  const errorsMs: number[] | undefined = i.timing ? [] : undefined;
  const firstLastMs: number[] = [];
  const one = (): Promise<void> =>
    new Promise((resolve) => {
      const req = http.request(
        {
          hostname: url.hostname,
          port: url.port,
          path: url.pathname,
          method: 'POST',
          agent,
          headers: { 'content-type': 'application/json', accept: 'text/event-stream', 'content-length': body.length },
        },
        (res) => {
          if (res.statusCode !== 200) {
            out.errors++;
            res.resume();
            res.on('end', resolve);
            return;
          }
          res.setEncoding('utf8');
          let done = false;
          const mine: number[] = [];
          const framer = new SseFramer((data) => {
            out.frames++;
            if (data === '[DONE]') done = true;
            else if (errorsMs) {
              const k = data.indexOf('"content":"@');
              if (k >= 0) {
                const send = parseSendUs(data.slice(k + 11, data.indexOf('"', k + 12)));
                if (send !== null) mine.push((nowUs() - send) / 1000);
              }
            }
          });
          res.on('data', (d: string) => framer.feed(d));
          res.on('end', () => {
            if (errorsMs) {
              errorsMs.push(...mine);
              firstLastMs.push(...firstAndLast(mine));
            }
            if (done) {
              out.responses++;
              out.tokens += i.maxTokens;
            } else out.errors++;
            resolve();
          });
          res.on('error', () => resolve());
        },
      );
      req.on('error', () => {
        out.errors++;
        resolve();
      });
      req.end(body);
    });
  await Promise.all(
    Array.from({ length: i.concurrency }, async () => {
      while (performance.now() < deadline) await one();
    }),
  );
  agent.destroy();
  if (errorsMs) {
    out.errorsMs = errorsMs;
    out.firstLastMs = firstLastMs;
  }
}

async function raw(i: ReaderInput, deadline: number, out: ReaderSummary): Promise<void> {
  const url = new URL('/v1/chat/completions', i.url);
  const body = Buffer.from(i.body);
  const request = Buffer.concat([
    Buffer.from(
      `POST ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\nAccept: text/event-stream\r\nContent-Length: ${body.length}\r\n\r\n`,
    ),
    body,
  ]);
  await Promise.all(
    Array.from(
      { length: i.concurrency },
      () =>
        new Promise<void>((resolve) => {
          const frames = new NeedleCounter('data:');
          const dones = new NeedleCounter('data: [DONE]');
          const oks = new NeedleCounter('HTTP/1.1 200 ');
          const sock = net.connect({ host: url.hostname, port: Number(url.port), noDelay: true });
          let settled = false;
          const finish = (): void => {
            if (settled) return;
            settled = true;
            out.frames += frames.count;
            out.errors += Math.max(0, dones.count - oks.count); // responses that were not 200
            sock.destroy();
            resolve();
          };
          sock.on('connect', () => sock.write(request));
          sock.on('data', (buf: Buffer) => {
            frames.feed(buf);
            oks.feed(buf);
            const d = dones.feed(buf);
            if (d === 0) return;
            out.responses += d;
            out.tokens += d * i.maxTokens;
            if (performance.now() < deadline) sock.write(request);
            else finish();
          });
          sock.on('error', () => {
            out.errors++;
            finish();
          });
          sock.on('close', finish);
        }),
    ),
  );
}

async function main(): Promise<void> {
  const i = JSON.parse(process.argv[2]!) as ReaderInput;
  const out: ReaderSummary = {
    kind: i.kind,
    responses: 0,
    errors: 0,
    tokens: 0,
    frames: 0,
    wallSeconds: 0,
    cpuSeconds: 0,
    maxRssBytes: 0,
  };
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const deadline = t0 + i.durationSeconds * 1000;
  await (i.kind === 'bare' ? bare(i, deadline, out) : raw(i, deadline, out));
  const cpu = process.cpuUsage(cpu0);
  out.wallSeconds = (performance.now() - t0) / 1000;
  out.cpuSeconds = (cpu.user + cpu.system) / 1e6;
  out.maxRssBytes = process.resourceUsage().maxRSS * 1024;
  console.log(JSON.stringify(out));
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
