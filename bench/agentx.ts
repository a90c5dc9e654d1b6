/**
 * AgentX client bench: infersweep's client vs PyPI aiperf 0.13 (inferencex-agentx-mvp scenario), side by
 * side in one run against the same llm-d-inference-sim configuration, at rising concurrency. Prints:
 *   - streamed output tokens absorbed per client CPU-second (whole client process, incl. startup) and the ratio;
 *   - client CPU (fraction of a core over the client's wall time);
 *   - timing error: mean TTFT / ITL vs the simulator's configured constants (the sim's own Go sleep+flush
 *     overshoot is included for both clients alike; the sim embeds no send timestamps);
 *   - peak client RSS at concurrency 128 with ≥ 100k-token agentic prompts (target ≤ 1 GiB);
 *   - cross-client agreement: TTFT p50, ITL p50 and output throughput of both clients on one workload
 *     (libs/testkit/src/cross-client.ts), infersweep / aiperf − 1 (issue 22: within 5 %).
 * Bounded: each point runs a short profile; everything ends within a few minutes.
 *   npm run bench -- agentx [--conc 16,64] [--duration 15] [--cross-conc 4] [--no-rss] [--no-aiperf]
 */
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateTraces, readRequestRecords, runAiperfPoint } from '@infersweep/agentx';
import { startSim, type Sim } from '@infersweep/testkit/sim';
import { aiperfBinary, aiperfTokenizer, assertAiperfAvailable } from '@infersweep/testkit/aiperf-env';
import { crossClientBench } from './agentx-cross';
import { fmt, growingCorpus, identity, runClient, simPoint, writeCorpus } from './common';

const TTFT_MS = 100;
const ITL_MS = 10;

/** Short-context corpus (fast streaming, client-bound workloads): zero think time, ~64-token outputs. */
function streamingCorpus(): string {
  const traces = generateTraces({ seed: 9, traces: 128, maxContextTokens: 4096, thinkTimeScale: 0, outputMedian: 64 });
  for (const t of traces)
    for (const r of t.requests) {
      if (r.type === 'subagent') for (const c of r.requests) c.out = Math.max(8, Math.min(256, c.out));
      else r.out = Math.max(8, Math.min(256, r.out));
    }
  return writeCorpus(traces);
}

const pct = (x: number | null, ref: number): string =>
  x === null ? 'n/a' : `${(((x * 1000) / ref - 1) * 100).toFixed(2)} %`;

export async function agentxBench(args: string[]): Promise<void> {
  const opt = (k: string): string | undefined => {
    const i = args.indexOf(k);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const concs = (opt('--conc') ?? '16,64').split(',').map(Number);
  const duration = Number(opt('--duration') ?? 15);
  const withAiperf = !args.includes('--no-aiperf');
  if (withAiperf) assertAiperfAvailable();
  const out = mkdtempSync(join(tmpdir(), 'agentx-bench-'));
  const corpus = streamingCorpus();
  console.log(
    `# AgentX client bench — sim TTFT ${TTFT_MS} ms, ITL ${ITL_MS} ms; profile ${duration} s per point; corpus ${corpus}`,
  );
  console.log(
    '| conc | client | out tok | CPU s | tok/CPU-s | CPU % core | TTFT err | ITL err | sessions | loop p99 ms |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  const ratios: string[] = [];
  for (const c of concs) {
    let sim: Sim | undefined;
    try {
      sim = await startSim({
        ttft: `${TTFT_MS}ms`,
        itl: `${ITL_MS}ms`,
        maxModelLen: 8192,
        maxNumSeqs: Math.max(256, 4 * c),
      });
      const base = simPoint(sim, c);
      const settings = {
        traces: { kind: 'file' as const, path: corpus },
        profileDurationSeconds: duration,
        nonCanonical: true,
        warmupRequestsPerLane: 2,
        minMetricCoverage: 0,
      };
      const a = await runClient({ ...base, settings, outDir: join(out, `ours-c${c}`) });
      const aTps = a.outputTokens / a.cpuSeconds;
      console.log(
        `| ${c} | infersweep | ${a.outputTokens} | ${fmt(a.cpuSeconds, 1)} | ${fmt(aTps)} | ${fmt((100 * a.cpuSeconds) / a.wallSeconds)} | ${pct(a.ttftMean, TTFT_MS)} | ${pct(a.itlMean, ITL_MS)} | ${a.sessions?.toFixed(2)} | ${a.loopP99?.toFixed(2)} |`,
      );
      if (withAiperf) {
        const b = await runAiperfPoint({
          ...base,
          settings: {
            ...settings,
            warmupGracePeriodSeconds: 120,
            aiperf: { binary: aiperfBinary, flavor: 'pypi', tokenizer: aiperfTokenizer },
          },
          outDir: join(out, `aiperf-c${c}`),
          traceFile: corpus,
        });
        const toks = readRequestRecords(join(out, `aiperf-c${c}`, 'requests.jsonl')).reduce(
          (s, x) => s + (x.ok ? (x.osl ?? 0) : 0),
          0,
        );
        const cpu = b.aiperf.childCpuSeconds ?? NaN;
        const bTps = toks / cpu;
        console.log(
          `| ${c} | aiperf ${b.client.version} | ${toks} | ${fmt(cpu, 1)} | ${fmt(bTps)} | ${fmt((100 * cpu) / b.aiperf.wallSeconds)} | ${pct(b.request_metrics.latency.ttft.mean, TTFT_MS)} | ${pct(b.request_metrics.latency.itl.mean, ITL_MS)} | n/a | n/a |`,
        );
        ratios.push(
          `c=${c}: tokens per client CPU-second infersweep/aiperf = ${(aTps / bTps).toFixed(2)}×; client CPU-seconds aiperf/infersweep = ${(cpu / a.cpuSeconds).toFixed(2)}×`,
        );
      }
    } finally {
      await sim?.stop();
    }
  }
  if (ratios.length) {
    console.log('\n## Ratios (same run, same simulator settings)');
    for (const r of ratios) console.log(`- ${r}`);
  }

  if (withAiperf) await crossClientBench((opt('--cross-conc') ?? '4').split(',').map(Number), duration, out);

  if (!args.includes('--no-rss')) {
    let sim: Sim | undefined;
    try {
      sim = await startSim({
        ttft: '20ms',
        itl: '2ms',
        maxModelLen: 131072,
        maxNumSeqs: 160,
        extra: ['--max-request-body-size-mb', '64'],
      });
      const long = growingCorpus({ traces: 32, turns: 12, contextTokens: 100_000, step: 1_500, osl: 4 });
      mkdirSync(join(out, 'rss'), { recursive: true });
      const r = await runClient({
        concurrency: 128,
        endpoints: [sim.url],
        metricsEndpoints: [sim.url],
        servedModel: 'agentx-sim',
        gpuCount: 1,
        identity,
        settings: {
          traces: { kind: 'file', path: long },
          profileDurationSeconds: 15,
          nonCanonical: true,
          warmupRequestsPerLane: 1,
          minMetricCoverage: 0,
          requestTimeoutSeconds: 300,
        },
        outDir: join(out, 'rss'),
      });
      console.log(`\n## Peak client RSS, concurrency 128, prompts ≥ 100k tokens (max ISL seen ${r.maxIsl})`);
      console.log(
        `- peak RSS ${(r.maxRssBytes / 2 ** 20).toFixed(0)} MiB (target ≤ 1024 MiB) over ${r.requests} requests (${r.errors} errors), client CPU ${fmt(r.cpuSeconds, 1)} s`,
      );
    } finally {
      await sim?.stop();
    }
  }
  console.log(`\nartifacts: ${out}`);
}
