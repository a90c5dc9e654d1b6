/**
 * Client ceiling: infersweep's AgentX client against the limit, in one run, against the same simulator at
 * the same concurrency: a bare streaming reader (Node `http` + SSE framing only) and, as the physical bound,
 * a raw-socket reader that only counts `data:` frames (bench/reader-child.ts). Every reader sends the same
 * shape of request (`--isl` prompt tokens, `--osl` output tokens, ignore_eos, zero think time) in a closed
 * loop for `--duration` s; each runs in its own process and its CPU covers its profiled requests only.
 * The simulator streams at `--itl` (default 0: as fast as it can) so the reader, not the server, is the
 * bottleneck. Prints streamed tokens per CPU-second and the client's fraction of each reference.
 * Goal (README): the client ≥ 80 % of the bare reader.
 *   npm run bench -- ceiling [--conc 16,64,256,1024] [--duration 6] [--reps 1] [--sequential] [--isl 128] [--osl 256] [--itl 0]
 */
import { join } from 'node:path';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { startSim, type Sim } from '@infersweep/testkit/sim';
import type { ReaderSummary } from './reader-child';
import { fixedBody, fmt, loadLine, numList, options, pointInput, runClient, runReader, uniformCorpus } from './common';

export interface CeilingRow {
  concurrency: number;
  reader: 'client' | 'bare' | 'raw';
  tokens: number;
  cpuSeconds: number;
  wallSeconds: number;
  errors: number;
  tokPerCpuSecond: number;
}

export async function ceilingBench(
  args: string[],
): Promise<{ rows: CeilingRow[]; ratios: Array<{ concurrency: number; ofBare: number; ofRaw: number }> }> {
  const opt = options(args);
  const concs = numList(opt('--conc') ?? '16,64,256,1024', '--conc');
  const duration = Number(opt('--duration') ?? 6);
  const isl = Number(opt('--isl') ?? 128);
  const osl = Number(opt('--osl') ?? 256);
  const itl = opt('--itl') ?? '0';
  const reps = Number(opt('--reps') ?? 1);
  const concurrent = !args.includes('--sequential');
  const corpus = uniformCorpus({ traces: 64, turns: 40, isl, osl });
  const out = mkdtempSync(join(tmpdir(), 'agentx-bench-ceiling-'));
  console.log(
    `\n# Client ceiling — simulator TTFT 0 ms, ITL ${itl} ms; ${isl} prompt / ${osl} output tokens per request, zero think time; ${duration} s per reader and concurrency, ${reps} repetitions, ${concurrent ? 'the three readers at once' : 'one reader at a time'}`,
  );
  console.log(loadLine());
  console.log('| conc | reader | requests | tokens | CPU s | wall s | CPU % core | tok/CPU-s | errors |');
  console.log('|---|---|---|---|---|---|---|---|---|');
  const rows: CeilingRow[] = [];
  const ratios: Array<{ concurrency: number; ofBare: number; ofRaw: number }> = [];
  for (const c of concs) {
    let sim: Sim | undefined;
    try {
      sim = await startSim({ ttft: '0ms', itl: `${itl}ms`, maxModelLen: 4096, maxNumSeqs: 4 * c + 16 });
      const url = sim.url;
      const row = (
        reader: CeilingRow['reader'],
        requests: number,
        tokens: number,
        cpu: number,
        wall: number,
        errors: number,
      ): void => {
        const r = {
          concurrency: c,
          reader,
          tokens,
          cpuSeconds: cpu,
          wallSeconds: wall,
          errors,
          tokPerCpuSecond: tokens / cpu,
        };
        console.log(
          `| ${c} | ${reader} | ${requests} | ${tokens} | ${fmt(cpu, 2)} | ${fmt(wall, 1)} | ${fmt((100 * cpu) / wall)} | ${fmt(r.tokPerCpuSecond)} | ${errors} |`,
        );
        rows.push(r);
      };
      const body = fixedBody('agentx-sim', isl, osl);
      const clientInput = (rep: number) =>
        pointInput({
          concurrency: c,
          url,
          settings: {
            traces: { kind: 'file', path: corpus },
            profileDurationSeconds: duration,
            nonCanonical: true,
            warmupRequestsPerLane: 1,
            minMetricCoverage: 0,
            warmupGracePeriodSeconds: 120,
          },
          outDir: join(out, `client-c${c}-${rep}`),
        });
      for (let rep = 0; rep < reps; rep++) {
        if (concurrent) {
          // all three at once, each at concurrency c, the readers started when the client's profile window
          // opens: the same server speed and the same machine load for every reader (a shared host drifts
          // between sequential runs by more than the differences measured)
          let readers: Promise<[ReaderSummary, ReaderSummary]> | undefined;
          const a = await runClient(clientInput(rep), {
            onProfiling: () => {
              readers = Promise.all([
                runReader({ kind: 'bare', url, concurrency: c, durationSeconds: duration, body, maxTokens: osl }),
                runReader({ kind: 'raw', url, concurrency: c, durationSeconds: duration, body, maxTokens: osl }),
              ]);
            },
          });
          if (!readers) throw new Error('the client never opened its profile window');
          const [b, r] = await readers;
          row(
            'client',
            a.profiledRequests,
            a.windowTokens,
            a.windowCpuSeconds ?? NaN,
            a.windowWallSeconds ?? NaN,
            a.errors,
          );
          row('bare', b.responses, b.tokens, b.cpuSeconds, b.wallSeconds, b.errors);
          row('raw', r.responses, r.tokens, r.cpuSeconds, r.wallSeconds, r.errors);
          continue;
        }
        // sequential, interleaved (client, bare, raw, client, …)
        const a = await runClient(clientInput(rep));
        row(
          'client',
          a.profiledRequests,
          a.windowTokens,
          a.windowCpuSeconds ?? NaN,
          a.windowWallSeconds ?? NaN,
          a.errors,
        );
        for (const kind of ['bare', 'raw'] as const) {
          const b = await runReader({ kind, url, concurrency: c, durationSeconds: duration, body, maxTokens: osl });
          row(kind, b.responses, b.tokens, b.cpuSeconds, b.wallSeconds, b.errors);
        }
      }
      // pooled over the repetitions: Σ tokens / Σ CPU-seconds per reader
      const pooled = (reader: CeilingRow['reader']): number => {
        const rs = rows.filter((r) => r.concurrency === c && r.reader === reader);
        return rs.reduce((x, r) => x + r.tokens, 0) / rs.reduce((x, r) => x + r.cpuSeconds, 0);
      };
      ratios.push({
        concurrency: c,
        ofBare: pooled('client') / pooled('bare'),
        ofRaw: pooled('client') / pooled('raw'),
      });
    } finally {
      await sim?.stop();
    }
  }
  console.log(
    '\n## Client tokens per CPU-second as a fraction of the reference readers (same run, same simulator, same concurrency; pooled over the repetitions)',
  );
  for (const x of ratios)
    console.log(
      `- c=${x.concurrency}: ${(100 * x.ofBare).toFixed(0)} % of the bare reader, ${(100 * x.ofRaw).toFixed(0)} % of the raw-socket reader${x.ofBare < 0.8 ? '  ← below the 80 % goal' : ''}`,
    );
  return { rows, ratios };
}
