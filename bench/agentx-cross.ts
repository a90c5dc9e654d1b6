/**
 * The cross-client row of `npm run bench -- agentx`: infersweep's client (in its own process) and PyPI
 * aiperf 0.13 replay the same workload (libs/agentx/test/cross-client.ts) side by side against one simulator, and the
 * relative differences of TTFT p50, ITL p50 and output throughput are printed (issue 22: within 5 %).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pointResultSchema, runAiperfPoint, type PointResult } from '@infersweep/agentx';
import { aiperfBinary, aiperfTokenizer } from '../libs/agentx/test/aiperf-env';
import {
  clientFigures,
  crossClientDiff,
  sameWorkloadCorpus,
  sideBySide,
  subagentCorpus,
} from '../libs/agentx/test/cross-client';
import { startSim, type Sim } from '../libs/agentx/test/sim';
import { midDenseModel, oneAfterTheOther, startVllm, vllmBinary } from '../libs/agentx/test/vllm-engine';
import { runClient, simPoint } from './common';

const TTFT_MS = 100;
const ITL_MS = 10;
const OUT = 32;

export async function crossClientBench(concs: number[], duration: number, out: string): Promise<void> {
  const corpusOpts = { seed: 11, traces: 64, out: OUT, maxContextTokens: 2048 };
  const corpora: Array<[string, string]> = [
    ['none', sameWorkloadCorpus(corpusOpts)],
    ["generator's", subagentCorpus(corpusOpts)],
  ];
  console.log(
    `\n## Cross-client agreement — sim TTFT ${TTFT_MS} ms, ITL ${ITL_MS} ms, ${OUT}-token outputs; infersweep / aiperf`,
  );
  console.log('| conc | subagents | TTFT p50 ms | ITL p50 ms | output tok/s | Δ TTFT | Δ ITL | Δ throughput |');
  console.log('|---|---|---|---|---|---|---|---|');
  for (const c of concs) for (const [label, corpus] of corpora) await crossRow(c, label, corpus, duration, out);
  if (existsSync(vllmBinary)) await vllmRow(Math.max(30, duration), out);
}

/**
 * The real engine: vLLM's CPU build serving the generated mid-dense model (~11 ms per token on one core, so the
 * engine and not this host sets the pace), c=2, prompts built with the model's own tokenizer on both sides. The two
 * clients run one after the other, each window from an empty prefix cache and read against the engine's own clock
 * (libs/agentx/test/vllm-engine.ts oneAfterTheOther; side by side on 2 cores aiperf starves: libs/agentx/README.md).
 */
async function vllmRow(duration: number, out: string): Promise<void> {
  const engine = await startVllm({
    model: midDenseModel,
    servedName: 'mid-dense',
    maxModelLen: 4096,
    maxNumSeqs: 8,
    devMode: true,
  });
  try {
    const corpus = sameWorkloadCorpus({ seed: 11, traces: 16, out: 96, maxContextTokens: 1024 });
    const base = {
      concurrency: 2,
      endpoints: [engine.url],
      metricsEndpoints: [engine.url],
      servedModel: 'mid-dense',
      gpuCount: 1,
      identity: { ...simPoint(engine, 2).identity, model: 'mid-dense', image: 'vllm-cpu' },
    };
    const settings = { profileDurationSeconds: duration, nonCanonical: true, minMetricCoverage: 0 };
    const oursDir = join(out, 'cross-ours-vllm');
    const w = await oneAfterTheOther(
      engine.url,
      async () => {
        await runClient({
          ...base,
          settings: { ...settings, traces: { kind: 'file' as const, path: corpus } },
          outDir: oursDir,
        });
        return pointResultSchema.parse(JSON.parse(readFileSync(join(oursDir, 'result.json'), 'utf8')));
      },
      () =>
        runAiperfPoint({
          ...base,
          tokenizer: midDenseModel,
          settings: {
            ...settings,
            warmupGracePeriodSeconds: 120,
            aiperf: { binary: aiperfBinary, flavor: 'pypi', extraInputs: ['ignore_eos:true'] },
          },
          outDir: join(out, 'cross-aiperf-vllm'),
          traceFile: corpus,
        }),
    );
    const [o, a] = [w.first.result, w.second.result];
    const d = crossClientDiff(clientFigures(o), clientFigures(a));
    const ms = (x: number | null | undefined): string => ((x ?? NaN) * 1000).toFixed(2);
    const vs = (x: number | null | undefined, e: number): string => `${(((x ?? NaN) / e - 1) * 100).toFixed(1)} %`;
    const lo = o.request_metrics.latency;
    const la = a.request_metrics.latency;
    console.log(
      `\n## Cross-client on the real vLLM CPU engine (mid-dense, c=2, 96-token outputs, ${duration} s each, one after the other); infersweep / aiperf\n` +
        `${d.line}\nthe engine's own means per window: TTFT ${ms(w.first.engine.ttft)} / ${ms(w.second.engine.ttft)} ms, ITL ${ms(w.first.engine.itl)} / ${ms(w.second.engine.itl)} ms\n` +
        `each client against the engine: TTFT mean ${ms(lo.ttft.mean)} (${vs(lo.ttft.mean, w.first.engine.ttft)}) / ${ms(la.ttft.mean)} (${vs(la.ttft.mean, w.second.engine.ttft)}), ` +
        `ITL mean ${ms(lo.itl.mean)} (${vs(lo.itl.mean, w.first.engine.itl)}) / ${ms(la.itl.mean)} (${vs(la.itl.mean, w.second.engine.itl)}); ` +
        `ITL p50 ${vs(lo.itl.p50, w.first.engine.itl)} / ${vs(la.itl.p50, w.second.engine.itl)}, the two so read ` +
        `${(((lo.itl.p50 ?? NaN) / w.first.engine.itl / ((la.itl.p50 ?? NaN) / w.second.engine.itl) - 1) * 100).toFixed(2)} %; ` +
        `requests in flight ${o.concurrency.time_weighted_requests_in_flight?.toFixed(2)} / ${a.concurrency.time_weighted_requests_in_flight?.toFixed(2)}`,
    );
  } finally {
    await engine.stop();
  }
}

async function crossRow(c: number, label: string, corpus: string, duration: number, out: string): Promise<void> {
  let sim: Sim | undefined;
  try {
    sim = await startSim({
      ttft: `${TTFT_MS}ms`,
      itl: `${ITL_MS}ms`,
      maxModelLen: 4096,
      maxNumSeqs: Math.max(256, 4 * c),
    });
    const base = simPoint(sim, c);
    const tag = `c${c}-${label === 'none' ? 'plain' : 'sub'}`;
    const both = await clientsSideBySide(base, corpus, duration, {
      tokenizer: aiperfTokenizer,
      aiperfDir: join(out, `cross-aiperf-${tag}`),
      oursDir: join(out, `cross-ours-${tag}`),
    });
    const ours = clientFigures(both.ours);
    const theirs = clientFigures(both.aiperf);
    const d = crossClientDiff(ours, theirs);
    const pc = (x: number): string => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(2)} %`;
    const pair = (a: number, b: number, k: number): string => `${a.toFixed(k)} / ${b.toFixed(k)}`;
    console.log(
      `| ${c} | ${label} | ${pair(ours.ttftP50 * 1000, theirs.ttftP50 * 1000, 2)} | ${pair(ours.itlP50 * 1000, theirs.itlP50 * 1000, 3)} | ${pair(ours.outTps, theirs.outTps, 1)} | ${pc(d.ttft)} | ${pc(d.itl)} | ${pc(d.tput)} |`,
    );
  } finally {
    await sim?.stop();
  }
}

/**
 * aiperf and infersweep's client (in its own process, read back from its result.json) side by side on one server,
 * the same corpus and profile, aiperf with the tokenizer `tokenizer` (its setting).
 */
async function clientsSideBySide(
  base: ReturnType<typeof simPoint>,
  corpus: string,
  duration: number,
  o: { tokenizer: string; aiperfDir: string; oursDir: string },
): Promise<{ ours: PointResult; aiperf: PointResult }> {
  const settings = { profileDurationSeconds: duration, nonCanonical: true, minMetricCoverage: 0 };
  const both = await sideBySide(
    (onLog) =>
      runAiperfPoint(
        {
          ...base,
          settings: {
            ...settings,
            warmupGracePeriodSeconds: 120,
            aiperf: {
              binary: aiperfBinary,
              flavor: 'pypi',
              tokenizer: o.tokenizer,
              extraInputs: ['ignore_eos:true'],
            },
          },
          outDir: o.aiperfDir,
          traceFile: corpus,
        },
        { onLog },
      ),
    () =>
      runClient({
        ...base,
        settings: { ...settings, traces: { kind: 'file' as const, path: corpus } },
        outDir: o.oursDir,
      }),
  );
  const ours = pointResultSchema.parse(JSON.parse(readFileSync(join(o.oursDir, 'result.json'), 'utf8')));
  return { ours, aiperf: both.aiperf };
}
