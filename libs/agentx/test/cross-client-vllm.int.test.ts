import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runPoint, stats, type AiperfProcessStats, type PointResult } from '@infersweep/agentx';
import { assertAiperfAvailable } from '@infersweep/testkit/aiperf-env';
import {
  engineRefereed,
  promptsAgainstTraces,
  REFEREED_OUT as OUT,
  refereedWindows,
  startRefereeEngine,
  type RefereedWindow,
} from '@infersweep/testkit/cross-client';
import { startTraceSink, type EngineTraceSink } from '@infersweep/testkit/engine-traces';
import { INJECTED_FAULT, ITL_BOUND, referee, TTFT_EXCESS_MS, withInjectedFault } from '@infersweep/testkit/referee';
import type { VllmEngine } from '@infersweep/testkit/vllm-engine';

/**
 * Two clients, one workload, one real engine (issue 22 item 3): one `vllm serve` of the generated mid-dense model
 * (vLLM's CPU build, random weights: the engine, not the host, sets the pace; ./vllm-engine.ts), the same corpus at c=2
 * replayed by infersweep's client and then by PyPI aiperf 0.13.0, each window from an empty prefix cache. Not side by
 * side, as on the simulator (./cross-client.int.test.ts): on 2 cores side by side aiperf's multi-process pipeline
 * starved (libs/agentx/README.md "Two clients, one answer").
 *
 * The referee, pre-registered (libs/agentx/README.md "The referee"; ./referee.ts; fixed from two calibration runs
 * before any run it judged, and not to be retuned after a failed one):
 * - reference: the engine's own clock per request, vLLM's OpenTelemetry `llm_request` span of each request
 *   (./engine-traces.ts), joined by the X-Request-Id both clients send; every profiled request must have one;
 * - ITL: Σ client per-request ITL / Σ engine per-request ITL (decode / (tokens − 1)) − 1, no trimming; bound ±4 %;
 * - TTFT: the median over requests of client − engine TTFT, additive (the client's clock also holds the send, the API
 *   server's parsing and tokenising and the first token's delivery); bound 0..40 ms (calibrated 7–17 ms); the median
 *   because a host stall moves one request by up to 0.8 s, a client defect every request;
 * - each 90 % moving-block-bootstrap interval's half-width under half its bound (else `inconclusive`): the windows
 *   are long enough for that (../../testkit/src/cross-client.ts REFEREE_WINDOW_S: ours 60 s, aiperf 180 s since the amendment of 2026-12-06);
 * - the fault-injection control: our window with ITL read 8 % high and every first token read 100 ms late
 *   (./referee.ts INJECTED_FAULT), judged by the same function, must fail, and each part alone.
 * Amended 2026-12-05 after an inconclusive CI run (our client's host saturated: event-loop p99 164 ms, its thread
 * waiting for a CPU 46 % of the window): a pair whose window found our client's host saturated is measured once
 * more, and a host saturated in both fails the verdict test by name. The statistic, bounds and half-width rule stand.
 * Amended again 2026-12-05 after two failed quiet-host runs (aiperf `inconclusive`, then `fail` at −4.20 %): aiperf
 * had read 6 of 122 responses whole, in one read (ITL 0, TTFT = E2E, ../src/client-health.ts collapsedStreams). The
 * product now refuses such an aiperf point (`client_saturated`); aiperf's verdict must be `pass` unless its point was
 * refused so. Our client's verdict must still be `pass`; the statistic, bounds and half-width rule stand.
 * Amended 2026-12-06 after two `inconclusive` quiet-host runs of aiperf (half-widths 2.72 % and 2.11 % over 60 s):
 * aiperf's window is 180 s, re-derived by the registered rule from its seven quiet-host windows whose point stood
 * (../../testkit/src/cross-client.ts REFEREE_WINDOW_S). The statistic, bounds and half-width rule stand.
 */
/** Pairs of windows at most: a second when the first found our client's host saturated. */
const PAIRS = 2;

const identity = {
  sweepId: 'xclient-vllm',
  orientation: 'latency',
  topology: 'tp1',
  image: 'vllm-cpu',
  model: 'mid-dense',
  engineArgsFingerprint: 'x',
  jobId: null,
  nodes: ['localhost'],
  attempt: 0,
  deploymentPolicy: 'shared-server',
};

describe('two clients on the real vLLM CPU engine (mid-dense, c=2, one after the other, refereed by the engine)', () => {
  let engine: VllmEngine | undefined;
  let traces: EngineTraceSink | undefined;
  let ours: RefereedWindow;
  let aiperf: RefereedWindow<PointResult & { aiperf: AiperfProcessStats }>;

  beforeAll(async () => {
    assertAiperfAvailable();
    traces = await startTraceSink();
    engine = await startRefereeEngine(traces.endpoint);
    // a pair whose window found our client's host saturated is no measurement (the product marks such a point
    // invalid): measured once more (amendment of 2026-12-05, libs/agentx/README.md "The referee")
    for (let pair = 1; pair <= PAIRS; pair++) {
      ({ ours, aiperf } = await refereedWindows({
        engine,
        traces,
        identity,
        settings: { nonCanonical: true },
        oursSettings: {
          warmupRequestsPerLane: 2,
          minMetricCoverage: 0.8,
          clientHealth: { maxEventLoopDelayP99Ms: 50, maxCpuFraction: 0.85 },
        },
        dirs: {
          ours: mkdtempSync(join(tmpdir(), 'agentx-xvllm-ours-')),
          aiperf: mkdtempSync(join(tmpdir(), 'agentx-xvllm-aiperf-')),
        },
        ours: (input) => runPoint(input),
      }));
      if (!ours.result.client_health.host_saturated) break;
      console.info(`pair ${pair} of ${PAIRS}: ${ours.result.client_health.host_reason}`);
    }
    expect(aiperf.result.aiperf.exitCode).toBe(0);
  }, 1_500_000);

  afterAll(async () => {
    await engine?.stop();
    await traces?.close();
  });

  it('both replay the same workload: every profiled request succeeds with 96 output tokens', () => {
    for (const r of [ours.result, aiperf.result]) {
      expect(r.num_requests_successful).toBeGreaterThan(15);
      expect(r.request_accounting.records_error_dropped).toBe(0);
      expect(r.request_metrics.tokens.output_actual.min).toBe(OUT);
      expect(r.request_metrics.tokens.output_actual.max).toBe(OUT);
    }
  });

  it('the engine counted the same prompts from both (per request, tokens over its trace’s input length: the two clients’ medians within 3 % of the prompt, each under 10 %)', () => {
    // per request, not the windows' ISL distributions: the two windows replay different requests of the same traces (a
    // CI run's ISL means differed 3.1 % with the same per-request counts; ./cross-client.ts promptsAgainstTraces)
    const o = promptsAgainstTraces(ours.outDir, ours.corpus);
    const a = promptsAgainstTraces(aiperf.outDir, aiperf.corpus);
    expect([o.length, a.length]).toEqual([ours.result.num_requests_successful, aiperf.result.num_requests_successful]);
    const median = (xs: number[]) => stats(xs).p50!;
    const over = (ps: { isl: number; traceIn: number }[]) => median(ps.map((p) => p.isl - p.traceIn));
    const prompt = median([...o, ...a].map((p) => p.traceIn));
    const isl = (r: PointResult) => r.request_metrics.tokens.input;
    console.info(
      `prompt tokens over the trace's, median ${over(o)} / ${over(a)} of a median ${prompt}; ` +
        `the windows' ISL p50 ${isl(ours.result).p50} / ${isl(aiperf.result).p50}, ` +
        `mean ${isl(ours.result).mean?.toFixed(1)} / ${isl(aiperf.result).mean?.toFixed(1)} (infersweep / aiperf)`,
    );
    // both frame the trace's prompt alike (chat roles, the per-play marker): measured 2026-12-04, every request
    // +42 or +43 tokens from ours, +37 to +62 (median +39) from aiperf, of prompts of 470-790 tokens
    expect(Math.abs(over(o) - over(a)) / prompt).toBeLessThan(0.03);
    for (const ps of [o, a]) expect(over(ps) / prompt).toBeGreaterThanOrEqual(0);
    for (const ps of [o, a]) expect(over(ps) / prompt).toBeLessThan(0.1);
  });

  it(`each client’s ITL and TTFT are the engine’s own, request by request, within the pre-registered bounds (ITL ±${ITL_BOUND * 100} %, TTFT median ${TTFT_EXCESS_MS.min}..${TTFT_EXCESS_MS.max} ms over the engine’s), and the windows are long enough to tell`, () => {
    const health = ours.result.client_health;
    expect(health.host_saturated, `our client's host was saturated in every pair: ${health.host_reason}`).toBe(false);
    const r = engineRefereed(ours, aiperf);
    console.info(`real vLLM, ${r.line}; our client's health ${JSON.stringify(ours.result.client_health)}`);
    expect(r.ours.verdict).toBe('pass');
    // aiperf passes, or the product refused its point because aiperf read whole responses in one read (its loop
    // stalled; amendment of 2026-12-05, libs/agentx/README.md "The referee"): never a wrong number passed on
    const refused = aiperf.result.client_health.reason;
    console.info(`aiperf: ${r.aiperf.verdict}; its point ${refused === null ? 'stands' : `refused: ${refused}`}`);
    const refusedForStalls =
      /read whole/.test(refused ?? '') &&
      aiperf.result.submission_invalid_reasons.some((x) => x.startsWith('client_saturated'));
    expect(r.aiperf.verdict === 'pass' || refusedForStalls, `aiperf ${r.aiperf.verdict}, its point not refused`).toBe(
      true,
    );
  });

  it(`the referee flags the fault-injected control (our window, ITL +${INJECTED_FAULT.itlBias * 100} %, first token read ${INJECTED_FAULT.lateFirstMs} ms late)`, () => {
    const r = engineRefereed(ours, aiperf);
    expect(r.control.verdict).toBe('fail');
    expect(r.control.ttft.within).toBe(false);
    // each part alone: the bias by the ITL bound, the late read by the TTFT bound
    const biased = referee(withInjectedFault(ours.paired, { ...INJECTED_FAULT, lateFirstMs: 0 }));
    const late = referee(withInjectedFault(ours.paired, { ...INJECTED_FAULT, itlBias: 0 }));
    console.info(`control parts: +8 % ITL alone ${biased.line}\nfirst token 100 ms late alone ${late.line}`);
    expect(biased.itl.within).toBe(false);
    expect(late.ttft.within).toBe(false);
  });

  it('our client’s verdict follows its own health: saturated ⇔ invalid for client_saturated', () => {
    const r = ours.result;
    expect(r.submission_invalid_reasons.some((x) => x.startsWith('client_saturated'))).toBe(r.client_health.saturated);
  });
});
