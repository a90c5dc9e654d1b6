/**
 * Scaling: how the AgentX client's CPU and memory grow with concurrency and context length (c up to 1024,
 * prompts up to 1M tokens), one client process per cell against a private simulator. Per cell: profiled
 * requests, output tokens/s, client CPU (profiling window, % of one core), CPU per request, prompt MB
 * sent per CPU-second, peak RSS and RSS per lane.
 *   npm run bench -- scaling [--cells 16x4k,256x4k,1024x4k,64x128k,4x1m] [--duration 6]
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FILLER_WORDS, readRequestRecords } from '@infersweep/agentx';
import { startSim, type Sim } from '@infersweep/testkit/sim';
import { fmt, growingCorpus, loadLine, mib, options, pointInput, runClient } from './common';
import { parseCell } from './lib/args';

export interface ScalingRow {
  concurrency: number;
  contextTokens: number;
  requests: number;
  errors: number;
  /** profiled requests still streaming when the grace ended (cancelled; the simulator is slow on long prompts). */
  cutAtGrace: number;
  outTokPerSecond: number;
  cpuFraction: number;
  cpuMsPerRequest: number;
  promptMiBPerCpuSecond: number;
  peakRssBytes: number;
}

/** Average bytes per prompt token on the wire (a filler word and its space). */
const BYTES_PER_TOKEN = FILLER_WORDS.reduce((s, w) => s + w.length + 1, 0) / FILLER_WORDS.length;

export async function scalingBench(args: string[]): Promise<{ rows: ScalingRow[] }> {
  const opt = options(args);
  const cells = (opt('--cells') ?? '16x4k,256x4k,1024x4k,64x128k,4x1m').split(',').map(parseCell);
  const duration = Number(opt('--duration') ?? 6);
  const out = mkdtempSync(join(tmpdir(), 'agentx-bench-scaling-'));
  console.log(
    `\n# Client scaling — one client process per cell, simulator TTFT 20 ms, ITL 2 ms, growing agentic contexts, zero think time, ${duration} s profile`,
  );
  console.log(loadLine());
  console.log(
    '| conc | context tokens | profiled requests | errors | cut at grace | out tok/s | client CPU % core | CPU ms / request | prompt MiB / CPU-s | peak RSS | RSS / lane |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|---|');
  const rows: ScalingRow[] = [];
  for (const { concurrency: c, contextTokens: ctx } of cells) {
    const long = ctx > 16_384;
    const turns = 6;
    const step = Math.max(64, Math.round(ctx * 0.015));
    const osl = long ? 8 : 64;
    const maxModelLen = ctx + turns * step + c + osl + 1024;
    let sim: Sim | undefined;
    try {
      // the simulator sizes a metrics buffer by (max-num-seqs + waiting queue) × max-model-len: keep the queue short
      sim = await startSim({
        ttft: '20ms',
        itl: '2ms',
        maxModelLen,
        maxNumSeqs: c + 16,
        extra: ['--max-waiting-queue-length', '16', '--max-request-body-size-mb', '512'],
      });
      const corpus = growingCorpus({ traces: Math.min(c, 64), turns, contextTokens: ctx, step, osl });
      const dir = join(out, `c${c}-ctx${ctx}`);
      const a = await runClient(
        pointInput({
          concurrency: c,
          url: sim.url,
          // no cache-pressure stage (the primer alone warms each lane) and a short grace: a 1M-token request keeps
          // the simulator tokenizing for seconds, and this bench measures the client, not the server
          settings: {
            traces: { kind: 'file', path: corpus },
            profileDurationSeconds: duration,
            nonCanonical: true,
            warmupRequestsPerLane: 0,
            minMetricCoverage: 0,
            requestTimeoutSeconds: 600,
            warmupGracePeriodSeconds: 300,
            profileGracePeriodSeconds: 15,
          },
          outDir: dir,
        }),
      );
      const recs = readRequestRecords(join(dir, 'requests.jsonl'));
      const prof = recs.filter((r) => r.phase === 'profiling');
      const promptBytes = prof.reduce((s, r) => s + r.expected_isl * BYTES_PER_TOKEN, 0);
      const cpu = a.windowCpuSeconds ?? NaN;
      const wall = a.windowWallSeconds ?? NaN;
      const row: ScalingRow = {
        concurrency: c,
        contextTokens: ctx,
        requests: prof.length,
        errors: prof.filter((r) => !r.ok && r.error_category !== 'grace_cancelled').length,
        cutAtGrace: prof.filter((r) => r.error_category === 'grace_cancelled').length,
        outTokPerSecond: a.windowTokens / wall,
        cpuFraction: cpu / wall,
        cpuMsPerRequest: (1000 * cpu) / Math.max(1, prof.length),
        promptMiBPerCpuSecond: promptBytes / 2 ** 20 / cpu,
        peakRssBytes: a.maxRssBytes,
      };
      rows.push(row);
      console.log(
        `| ${c} | ${ctx.toLocaleString('en-US')} | ${row.requests} | ${row.errors} | ${row.cutAtGrace} | ${fmt(row.outTokPerSecond)} | ${fmt(100 * row.cpuFraction)} | ${fmt(row.cpuMsPerRequest, 2)} | ${fmt(row.promptMiBPerCpuSecond, 1)} | ${mib(row.peakRssBytes)} | ${fmt(row.peakRssBytes / c / 1024)} KiB |`,
      );
    } finally {
      await sim?.stop();
    }
  }
  return { rows };
}
