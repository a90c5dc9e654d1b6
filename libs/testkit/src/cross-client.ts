import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  generateTraces,
  loadTraces,
  readRequestRecords,
  rootRequests,
  runAiperfPoint,
  type AiperfProcessStats,
  type PointIdentityInput,
  type PointResult,
  type RequestRecord,
  type RunPointInput,
} from '@infersweep/agentx';
import type { AgentxSettingsInput } from '@infersweep/topology';
import { aiperfBinary } from './aiperf-env';
import type { EngineTraceSink } from './engine-traces';
import {
  INJECTED_FAULT,
  pairWithEngine,
  referee,
  withInjectedFault,
  type PairedRequest,
  type RefereeVerdict,
} from './referee';
import { midDenseModel, oneAfterTheOther, startVllm, type EngineWindow, type VllmEngine } from './vllm-engine';

/**
 * One workload for two clients (libs/agentx/README.md "Two clients, one answer"): the cross-client
 * test and `npm run bench -- agentx` replay this corpus with infersweep's client and with aiperf.
 * - no subagents (`subagentCorpus` keeps them: the clients now join them alike);
 * - every output `out` tokens (both clients then ask for the same `max_tokens`; aiperf also needs
 *   `--extra-inputs ignore_eos:true`, our client always sends it);
 * - recorded timing back to back (requests 10 ms apart, api_time 10 ms, zero think): aiperf starts each
 *   profiling lane after its recorded offset from t* ("spread", the InferenceX default), infersweep
 *   starts every lane at once; with recorded offsets of ~0 both start together.
 */
export function sameWorkloadCorpus(opts: {
  seed: number;
  traces: number;
  out: number;
  maxContextTokens: number;
}): string {
  const dir = mkdtempSync(join(tmpdir(), 'agentx-xclient-'));
  const traces = generateTraces({
    seed: opts.seed,
    traces: opts.traces,
    maxContextTokens: opts.maxContextTokens,
    thinkTimeScale: 0,
    subagentProbability: 0,
    outputMedian: opts.out,
  });
  for (const t of traces) {
    t.requests.forEach((r, i) => {
      if (r.type === 'subagent') throw new Error('the cross-client corpus must have no subagents');
      r.out = opts.out;
      r.t = i * 0.01;
      r.api_time = 0.01;
      r.think_time = 0;
    });
    writeFileSync(join(dir, `${t.id}.json`), JSON.stringify(t));
  }
  return dir;
}

/**
 * The generator's corpus as it is (subagents, recorded timing), every output `out` tokens: both clients
 * join each subagent at aiperf's turn (client/plan.ts `subagentJoins`).
 */
export function subagentCorpus(opts: { seed: number; traces: number; out: number; maxContextTokens: number }): string {
  const dir = mkdtempSync(join(tmpdir(), 'agentx-xclient-sub-'));
  for (const t of generateTraces({
    seed: opts.seed,
    traces: opts.traces,
    maxContextTokens: opts.maxContextTokens,
    thinkTimeScale: 0,
    outputMedian: opts.out,
  })) {
    for (const r of t.requests) {
      if (r.type === 'subagent') for (const c of r.requests) c.out = opts.out;
      else r.out = opts.out;
    }
    writeFileSync(join(dir, `${t.id}.json`), JSON.stringify(t));
  }
  return dir;
}

export interface ClientFigures {
  /** seconds */
  ttftP50: number;
  /** seconds */
  itlP50: number;
  /** output tokens per second over first profiled start -> last profiled end */
  outTps: number;
}

export function clientFigures(r: PointResult): ClientFigures {
  const l = r.request_metrics.latency;
  const tps = r.request_metrics.throughput.output.tokens_per_second;
  if (l.ttft.p50 === null || l.itl.p50 === null || tps === null)
    throw new Error(`${r.client.name}: no TTFT/ITL/throughput measured`);
  return { ttftP50: l.ttft.p50, itlP50: l.itl.p50, outTps: tps };
}

/** Relative differences infersweep / aiperf − 1 of the three figures, and a one-line report. */
export function crossClientDiff(
  ours: ClientFigures,
  aiperf: ClientFigures,
): { ttft: number; itl: number; tput: number; line: string } {
  const d = {
    ttft: ours.ttftP50 / aiperf.ttftP50 - 1,
    itl: ours.itlP50 / aiperf.itlP50 - 1,
    tput: ours.outTps / aiperf.outTps - 1,
  };
  const pc = (x: number): string => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(2)} %`;
  const line =
    `TTFT p50 ${(ours.ttftP50 * 1000).toFixed(2)} / ${(aiperf.ttftP50 * 1000).toFixed(2)} ms (${pc(d.ttft)}), ` +
    `ITL p50 ${(ours.itlP50 * 1000).toFixed(3)} / ${(aiperf.itlP50 * 1000).toFixed(3)} ms (${pc(d.itl)}), ` +
    `output throughput ${ours.outTps.toFixed(1)} / ${aiperf.outTps.toFixed(1)} tok/s (${pc(d.tput)})`;
  return { ...d, line };
}

/** aiperf's log line when its warmup (or, without one, its profiling) phase starts (aiperf 0.13.0 timing/phase/runner.py). */
const AIPERF_PHASE_STARTED = /\((?:warmup|profiling)\) started/;

/**
 * Both clients side by side: aiperf first (it spends ~25 s configuring), ours once aiperf's warmup phase
 * has started, so the two profiling windows overlap but for our warmup (~1-2 s) and host load hits both
 * alike (one after the other, a loaded 2-core host moved aiperf's throughput by 17 %). Only for a server
 * whose latency does not depend on load (the simulator): the server then serves 2 × N sessions.
 */
export async function sideBySide<A, B>(
  aiperf: (onLog: (chunk: string) => void) => Promise<A>,
  ours: () => Promise<B>,
): Promise<{ ours: B; aiperf: A }> {
  let log = '';
  let started!: () => void;
  const warm = new Promise<void>((resolve) => (started = resolve));
  const run = aiperf((chunk) => {
    log = (log + chunk).slice(-4096);
    if (AIPERF_PHASE_STARTED.test(log)) started();
  });
  await Promise.race([warm, run]);
  const b = await ours();
  return { ours: b, aiperf: await run };
}

/** A point's profiled, successful requests (its `requests.jsonl`: what its figures count). */
function profiledRequests(outDir: string): RequestRecord[] {
  return readRequestRecords(join(outDir, 'requests.jsonl')).filter((r) => r.phase === 'profiling' && r.ok);
}

/**
 * Each profiled, successful request's prompt as the engine counted it (usage.prompt_tokens, `isl`) beside the input
 * length its trace gives that turn (`traceIn`: `in` in the corpus both clients replayed), keyed by trace and turn
 * (aiperf's conversation_id and turn_index; libs/agentx/src/aiperf/parse.ts): a per-request reading, so two windows
 * that replayed different requests of the same traces compare like for like. A request the corpus lacks throws.
 */
export function promptsAgainstTraces(outDir: string, corpus: string): { isl: number; traceIn: number }[] {
  const inOf = new Map<string, number>();
  for (const t of loadTraces(corpus)) rootRequests(t).forEach((r, turn) => inOf.set(`${t.id}#${turn}`, r.in));
  return profiledRequests(outDir).map((r) => {
    const traceIn = inOf.get(`${r.trace_id}#${r.turn}`);
    if (traceIn === undefined || r.isl === null)
      throw new Error(
        `${outDir}: request ${r.id} (trace ${r.trace_id}, turn ${r.turn}, isl ${r.isl}) not in ${corpus}`,
      );
    return { isl: r.isl, traceIn };
  });
}

/**
 * One client's window on the referee engine: its engine readings, its point folder, the corpus it replayed and its
 * profiled requests paired with the engine's per-request spans (./referee.ts pairWithEngine).
 */
export type RefereedWindow<R extends PointResult = PointResult> = EngineWindow<R> & {
  outDir: string;
  corpus: string;
  paired: PairedRequest[];
};

/** Output tokens of every request of the real-vLLM two-client workload ({@link refereedWindows}). */
export const REFEREED_OUT = 96;

/**
 * Each client's profiling window on the real engine (s), by the referee's registered rule (./referee.ts): long enough
 * that each 90 % interval's half-width is under half its bound.
 * - ours, 60 s: the calibration put our ITL half-width at 0.5–1.0 % (0.4–0.65 % in the quiet-host CI runs since), so
 *   ≥ 25 requests meet the rule; twice that at the slowest rate seen (0.8 requests/s) is 60 s.
 * - aiperf, 180 s (amended 2026-12-06; libs/agentx/README.md "The referee"): 60 s were set from the same calibration
 *   (aiperf's half-width 1.2–1.7 %), but on the quiet host of the CI runs since, aiperf's half-width over its 60 s
 *   windows of ~100–120 requests was 1.47–2.72 % (7 runs whose point stood, docs/measurements.md), over the 2 % the
 *   rule allows in 3 of them. The widest needs (2.72 / 1.6)² ≈ 2.9 times the requests to reach 1.6 %, a fifth under
 *   the rule's 2 %: three times the window.
 */
export const REFEREE_WINDOW_S = { ours: 60, aiperf: 180 } as const;

/**
 * The engine of the real-vLLM two-client runs (cross-client-vllm.int.test.ts, the bench's vLLM row): vLLM's CPU
 * build serving the generated mid-dense model (~11 ms per token on one core), in dev mode for the prefix-cache reset,
 * exporting its per-request spans to `otlpTracesEndpoint` (./engine-traces.ts startTraceSink).
 */
export function startRefereeEngine(otlpTracesEndpoint: string): Promise<VllmEngine> {
  return startVllm({
    model: midDenseModel,
    servedName: 'mid-dense',
    maxModelLen: 4096,
    maxNumSeqs: 8,
    devMode: true,
    otlpTracesEndpoint,
  });
}

/**
 * The real-vLLM two-client run the test and the bench row share: one corpus ({@link sameWorkloadCorpus}, prompts up
 * to 1024 tokens, {@link REFEREED_OUT}-token outputs) at c=2 on `engine`, infersweep's client (`ours`, given its
 * whole input) and then aiperf (the served model's tokenizer — with the offline test tokenizer its prompts were ~11 %
 * longer —, ignore_eos), one after the other ({@link oneAfterTheOther}); each window with its folder and its requests
 * paired with the engine's spans from `traces`, ready for {@link engineRefereed}. `settings` go to both clients,
 * `oursSettings` to ours only.
 */
export async function refereedWindows(opts: {
  engine: VllmEngine;
  traces: EngineTraceSink;
  identity: PointIdentityInput;
  settings: AgentxSettingsInput;
  oursSettings?: AgentxSettingsInput;
  dirs: { ours: string; aiperf: string };
  ours: (input: RunPointInput & { outDir: string }) => Promise<PointResult>;
}): Promise<{ ours: RefereedWindow; aiperf: RefereedWindow<PointResult & { aiperf: AiperfProcessStats }> }> {
  const { engine, settings, dirs } = opts;
  const corpus = sameWorkloadCorpus({ seed: 11, traces: 16, out: REFEREED_OUT, maxContextTokens: 1024 });
  const base = {
    concurrency: 2,
    endpoints: [engine.url],
    metricsEndpoints: [engine.url],
    servedModel: 'mid-dense',
    gpuCount: 1,
    identity: opts.identity,
  };
  const w = await oneAfterTheOther(
    engine.url,
    () =>
      opts.ours({
        ...base,
        settings: {
          ...settings,
          ...opts.oursSettings,
          profileDurationSeconds: REFEREE_WINDOW_S.ours,
          traces: { kind: 'file', path: corpus },
        },
        outDir: dirs.ours,
      }),
    () =>
      runAiperfPoint({
        ...base,
        tokenizer: midDenseModel,
        settings: {
          ...settings,
          profileDurationSeconds: REFEREE_WINDOW_S.aiperf,
          warmupGracePeriodSeconds: 120,
          aiperf: { binary: aiperfBinary, flavor: 'pypi', extraInputs: ['ignore_eos:true'] },
        },
        outDir: dirs.aiperf,
        traceFile: corpus,
      }),
  );
  const paired = async (outDir: string): Promise<PairedRequest[]> => {
    const records = profiledRequests(outDir);
    return pairWithEngine(records, await opts.traces.spansOf(records.map((r) => r.id)));
  };
  return {
    ours: { ...w.first, outDir: dirs.ours, corpus, paired: await paired(dirs.ours) },
    aiperf: { ...w.second, outDir: dirs.aiperf, corpus, paired: await paired(dirs.aiperf) },
  };
}

/**
 * Two clients' windows on one real engine judged by the pre-registered referee (./referee.ts `referee`: each
 * client's requests against the engine's own clock for the same requests), with the fault-injection control
 * ({@link INJECTED_FAULT} on our window) judged by the same function. `line` reports every reading, the raw figures and
 * the engine's histogram means over each window.
 */
export function engineRefereed(
  ours: RefereedWindow,
  aiperf: RefereedWindow,
): { ours: RefereeVerdict; aiperf: RefereeVerdict; control: RefereeVerdict; line: string } {
  const v = {
    ours: referee(ours.paired),
    aiperf: referee(aiperf.paired),
    control: referee(withInjectedFault(ours.paired, INJECTED_FAULT)),
  };
  const ms = (x: number | null): string => (x === null ? '-' : (x * 1000).toFixed(2));
  const inFlight = (w: EngineWindow<PointResult>): string =>
    w.result.concurrency.time_weighted_requests_in_flight?.toFixed(2) ?? '-';
  const line =
    `referee: infersweep ${v.ours.line}\n         aiperf ${v.aiperf.line}\n` +
    `         control (+${INJECTED_FAULT.itlBias * 100} % ITL, first token ${INJECTED_FAULT.lateFirstMs} ms late) ${v.control.line}\n` +
    `raw: ${crossClientDiff(clientFigures(ours.result), clientFigures(aiperf.result)).line}; ` +
    `requests ${ours.result.num_requests_successful} / ${aiperf.result.num_requests_successful}; ` +
    `in flight ${inFlight(ours)} / ${inFlight(aiperf)}; ` +
    `the engine's histogram means per window: TTFT ${ms(ours.engine.ttft)} / ${ms(aiperf.engine.ttft)} ms, ` +
    `ITL ${ms(ours.engine.itl)} / ${ms(aiperf.engine.itl)} ms`;
  return { ...v, line };
}
