/**
 * Timing error that is not the server's: against the bench's own loopback SSE server (bench/tick-server.ts,
 * every token carries its send time, CLOCK_MONOTONIC µs), receive − send per event for
 *   - infersweep's AgentX client (runPoint): the events its TTFT and ITL are computed from — first and
 *     last token of every profiled request — as it recorded them (requests.jsonl), joined with the
 *     server's send log;
 *   - aiperf (PyPI 0.13, `--export-level raw`): from its per-response receive timestamps;
 *   - the bare reader (Node http + SSE framing, bench/reader-child.ts): the floor.
 * Compared on the same events for all three (first and last token of every response); aiperf and the bare
 * reader also over every event.
 * At rising event rates into one client process (c streams, ITL = c / rate). Goal (README): p99 ≤ 1 ms
 * up to 20k events/s per core.
 *   npm run bench -- timing [--rates 2000,5000,10000,20000,40000] [--conc 64] [--osl 64] [--duration 8]
 *                           [--aiperf-rates 5000,20000] [--no-aiperf]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stats, type Stats } from '@infersweep/agentx';
import { fmt, loadLine, numList, options, pointInput, repoDir, runClient, runReader, uniformCorpus } from './common';
import { clientEventTimes, joinErrors, type SendLogEntry } from './lib/timing';
import { aiperfTimingErrors, aiperfAvailable } from './aiperf-timing';

export interface TimingRow {
  reader: 'client' | 'aiperf' | 'bare';
  targetRate: number;
  eventsPerSecond: number;
  cpuFraction: number | null;
  /** receive − send of the first and last token of every response (what TTFT and ITL are computed from). */
  errors: Stats;
  /** every event (bare reader and aiperf only: the client records first and last token times only). */
  allEvents: Stats | null;
  unmatched: number;
}

interface TickServer {
  url: string;
  proc: ChildProcess;
  stop(): Promise<void>;
  log(): Promise<SendLogEntry[]>;
}

async function startTickServer(itlMs: number): Promise<TickServer> {
  const proc = spawn(
    process.execPath,
    [
      join(repoDir, 'node_modules', 'tsx', 'dist', 'cli.mjs'),
      join(__dirname, 'tick-server.ts'),
      JSON.stringify({ port: 0, ttftMs: 0, itlMs }),
    ],
    {
      cwd: repoDir,
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    const t = setTimeout(() => reject(new Error('tick server did not start within 60 s')), 60_000);
    proc.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening (\d+)/.exec(out);
      if (m) {
        clearTimeout(t);
        resolve(Number(m[1]));
      }
    });
    proc.once('exit', (code) => reject(new Error(`tick server exited ${code}`)));
  });
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    proc,
    log: async () => (await (await fetch(`${url}/bench/log`)).json()) as SendLogEntry[],
    stop: () =>
      new Promise<void>((resolve) => {
        if (proc.exitCode !== null) return resolve();
        proc.once('exit', () => resolve());
        proc.kill('SIGTERM');
        setTimeout(() => proc.kill('SIGKILL'), 3000).unref();
      }),
  };
}

const line = (r: TimingRow): string =>
  `| ${r.targetRate} | ${r.reader} | ${fmt(r.eventsPerSecond)} | ${r.cpuFraction === null ? 'n/a' : fmt(100 * r.cpuFraction)} | ${r.errors.count} | ${fmt(r.errors.p50, 3)} | ${fmt(r.errors.p99, 3)} | ${fmt(r.errors.max, 2)} | ${fmt(r.allEvents?.p50, 3)} | ${fmt(r.allEvents?.p99, 3)} |${r.unmatched ? ` ${r.unmatched} unmatched` : ''}`;

export async function timingBench(args: string[]): Promise<{ rows: TimingRow[] }> {
  const opt = options(args);
  const rates = numList(opt('--rates') ?? '2000,5000,10000,20000,40000', '--rates');
  const c = Number(opt('--conc') ?? 64);
  const osl = Number(opt('--osl') ?? 64);
  const duration = Number(opt('--duration') ?? 8);
  const withAiperf = !args.includes('--no-aiperf') && aiperfAvailable();
  const aiperfRates = new Set(numList(opt('--aiperf-rates') ?? '5000,20000', '--aiperf-rates'));
  const corpus = uniformCorpus({ traces: 32, turns: 200, isl: 16, osl });
  const out = mkdtempSync(join(tmpdir(), 'agentx-bench-timing-'));
  console.log(
    `\n# Timing error not the server's — bench tick server (send time in every token), ${c} streams × ${osl} tokens, TTFT 0; receive − send, ms`,
  );
  console.log(
    `first + last token of every profiled response (the events TTFT and ITL are computed from), for every reader; all events too for aiperf and the bare reader (the client records first and last only); aiperf's CPU is not one core's (several processes). ${loadLine()}`,
  );
  console.log(
    '| target events/s | reader | events/s measured | CPU % core | first+last samples | p50 | p99 | max | all events p50 | all events p99 |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  const rows: TimingRow[] = [];
  for (const rate of rates) {
    const itlMs = (1000 * c) / rate;
    const server = await startTickServer(itlMs);
    try {
      // infersweep client
      const a = await runClient(
        pointInput({
          concurrency: c,
          url: server.url,
          model: 'tick',
          metrics: false,
          settings: {
            traces: { kind: 'file', path: corpus },
            profileDurationSeconds: duration,
            nonCanonical: true,
            warmupRequestsPerLane: 1,
            minMetricCoverage: 0,
          },
          outDir: join(out, `client-r${rate}`),
        }),
      );
      const log = await server.log();
      const recs = readFileSync(join(out, `client-r${rate}`, 'requests.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map(
          (l) =>
            JSON.parse(l) as {
              phase: string;
              ok: boolean;
              cached_tokens: number | null;
              start_ms: number;
              ttft_ms: number | null;
              itl_ms: number | null;
              osl: number | null;
            },
        )
        .filter((r) => r.ok && r.phase === 'profiling');
      const times = recs.map((r) => clientEventTimes(r, a.hrOffsetMs)).filter((x) => x !== null);
      const j = joinErrors(log, times);
      const row = (r: TimingRow): void => {
        rows.push(r);
        console.log(line(r));
      };
      row({
        reader: 'client',
        targetRate: rate,
        eventsPerSecond: a.windowTokens / (a.windowWallSeconds ?? NaN),
        cpuFraction:
          a.windowCpuSeconds !== null && a.windowWallSeconds ? a.windowCpuSeconds / a.windowWallSeconds : null,
        errors: stats(j.errorsMs),
        allEvents: null,
        unmatched: j.unmatched,
      });
      if (withAiperf && aiperfRates.has(rate)) {
        const b = await aiperfTimingErrors({
          url: server.url,
          concurrency: c,
          osl,
          durationSeconds: duration,
          outDir: join(out, `aiperf-r${rate}`),
        });
        row({
          reader: 'aiperf',
          targetRate: rate,
          eventsPerSecond: b.eventsPerSecond,
          cpuFraction: null,
          errors: stats(b.firstLastMs),
          allEvents: stats(b.errorsMs),
          unmatched: 0,
        });
      }
      const bare = await runReader({
        kind: 'bare',
        url: server.url,
        concurrency: c,
        durationSeconds: duration,
        body: JSON.stringify({ model: 'tick', max_tokens: osl, stream: true }),
        maxTokens: osl,
        timing: true,
      });
      row({
        reader: 'bare',
        targetRate: rate,
        eventsPerSecond: bare.tokens / bare.wallSeconds,
        cpuFraction: bare.cpuSeconds / bare.wallSeconds,
        errors: stats(bare.firstLastMs ?? []),
        allEvents: stats(bare.errorsMs ?? []),
        unmatched: 0,
      });
      await server.log(); // drop the bare reader's log
    } finally {
      await server.stop();
    }
  }
  return { rows };
}
