/**
 * The real-vLLM cross-client referee (./referee.ts, used by cross-client-vllm.int.test.ts and the bench's vLLM row):
 * its span decoder, its pairing, its verdict on real recorded windows and on the fault-injection control made from
 * them, and its false-alarm rate and power by seeded simulation.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { rng } from '../src/rng';
import { decodeRequestSpans, type EngineRequestSpan } from '@infersweep/testkit/engine-traces';
import { requestRecord } from '@infersweep/testkit/records-fixture';
import {
  blockBootstrap90,
  INJECTED_FAULT,
  itlReading,
  pairWithEngine,
  referee,
  ttftExcessMs,
  withInjectedFault,
  type PairedRequest,
} from '@infersweep/testkit/referee';

/** Calibration windows (libs/agentx/README.md "The referee"): each client's profiled requests and their spans. */
const recorded = JSON.parse(readFileSync(join(__dirname, 'data', 'referee-vllm-windows.json'), 'utf8')) as {
  windows: {
    client: string;
    records: { id: string; start_ms: number; ttft_ms: number; itl_ms: number; osl: number }[];
    spans: EngineRequestSpan[];
  }[];
};
const windows = recorded.windows.map((w, i) => ({
  name: `${w.client} #${i}`,
  paired: pairWithEngine(
    w.records.map((r) => requestRecord(r)),
    new Map(w.spans.map((s) => [s.id, s])),
  ),
}));
const FAULT = INJECTED_FAULT;

describe('decodeRequestSpans', () => {
  // the OTLP/HTTP message as opentelemetry-proto defines it (trace/v1, collector/trace/v1), with the fields the
  // decoder skips: resource, scope, ids, times
  const full = protobuf
    .parse(
      `syntax = "proto3";
       message Req { repeated RS resource_spans = 1; }
       message RS { Res resource = 1; repeated SS scope_spans = 2; string schema_url = 3; }
       message Res { repeated KV attributes = 1; }
       message SS { Scope scope = 1; repeated Span spans = 2; }
       message Scope { string name = 1; }
       message Span { bytes trace_id = 1; bytes span_id = 2; string name = 5; int32 kind = 6;
                      fixed64 start_time_unix_nano = 7; fixed64 end_time_unix_nano = 8; repeated KV attributes = 9; }
       message KV { string key = 1; AV value = 2; }
       message AV { oneof value { string string_value = 1; bool bool_value = 2; int64 int_value = 3; double double_value = 4; } }`,
    )
    .root.lookupType('Req');
  const kv = (key: string, v: number | string) => ({
    key,
    value: typeof v === 'string' ? { stringValue: v } : Number.isInteger(v) ? { intValue: v } : { doubleValue: v },
  });
  const span = (name: string, id: string) => ({
    traceId: Buffer.alloc(16, 1),
    spanId: Buffer.alloc(8, 2),
    name,
    kind: 2,
    startTimeUnixNano: 1_764_900_000_000_000_000,
    attributes: [
      kv('gen_ai.latency.time_to_first_token', 0.25),
      kv('gen_ai.latency.e2e', 1.5),
      kv('gen_ai.latency.time_in_queue', 0.001),
      kv('gen_ai.usage.prompt_tokens', 540),
      kv('gen_ai.usage.completion_tokens', 96),
      kv('gen_ai.latency.time_in_model_prefill', 0.2),
      kv('gen_ai.latency.time_in_model_decode', 1.14),
      kv('gen_ai.latency.time_in_model_inference', 1.34),
      kv('gen_ai.request.id', id),
      kv('gen_ai.request.max_tokens', 96),
    ],
  });
  const encode = (spans: object[]) =>
    full
      .encode(
        full.fromObject({
          resourceSpans: [
            { resource: { attributes: [kv('service.name', 'vllm')] }, scopeSpans: [{ scope: { name: 'v' }, spans }] },
          ],
        }),
      )
      .finish();

  it('reads each llm_request span’s engine timings and the client’s request id (vLLM’s chatcmpl- prefix removed)', () => {
    expect(
      decodeRequestSpans(encode([span('llm_request', 'chatcmpl-[rid:ab]:r:3'), span('other', 'chatcmpl-x')])),
    ).toEqual([
      {
        id: '[rid:ab]:r:3',
        ttft: 0.25,
        queue: 0.001,
        prefill: 0.2,
        decode: 1.14,
        e2e: 1.5,
        promptTokens: 540,
        completionTokens: 96,
      },
    ]);
  });

  it('throws on an llm_request span without a timing it needs', () => {
    const s = span('llm_request', 'chatcmpl-a');
    s.attributes = s.attributes.filter((a) => a.key !== 'gen_ai.latency.time_in_model_decode');
    expect(() => decodeRequestSpans(encode([s]))).toThrow('gen_ai.latency.time_in_model_decode');
  });
});

describe('pairWithEngine', () => {
  const s = (id: string, completionTokens = 96): EngineRequestSpan => ({
    id,
    ttft: 0.2,
    queue: 0,
    prefill: 0.2,
    decode: 0.95,
    e2e: 1.2,
    promptTokens: 500,
    completionTokens,
  });

  it('joins each profiled, successful request to its span by id, in start order; engine ITL = decode / (tokens − 1)', () => {
    const ps = pairWithEngine(
      [
        requestRecord({ id: 'b', start_ms: 20, osl: 96, itl_ms: 10.1, ttft_ms: 230 }),
        requestRecord({ id: 'w', phase: 'warmup', osl: 96 }),
        requestRecord({ id: 'f', ok: false, osl: null, itl_ms: null, ttft_ms: null }),
        requestRecord({ id: 'a', start_ms: 10, osl: 96, itl_ms: 9.9, ttft_ms: 210 }),
      ],
      new Map([s('a'), s('b')].map((x) => [x.id, x])),
    );
    expect(ps.map((p) => p.id)).toEqual(['a', 'b']);
    expect(ps[0]!.engineItl).toBeCloseTo(0.01, 12);
    expect(ps[0]!.clientTtft - ps[0]!.engineTtft).toBeCloseTo(0.01, 12);
  });

  it('throws naming the request when the engine has no span for it or counted other tokens (nothing is dropped)', () => {
    const one = [requestRecord({ id: 'a', osl: 96 })];
    expect(() => pairWithEngine(one, new Map())).toThrow('request a: the engine exported no span');
    expect(() => pairWithEngine(one, new Map([['a', s('a', 95)]]))).toThrow(
      'request a: 96 output tokens by the client, 95 by the engine',
    );
  });
});

describe('the referee on real recorded windows (vLLM CPU, mid-dense, c=2; both clients)', () => {
  it('has the calibration windows, every request paired', () => {
    expect(windows.length).toBeGreaterThanOrEqual(4);
    for (const w of windows) expect(w.paired.length).toBeGreaterThanOrEqual(30);
  });

  it.each(windows)('passes $name', ({ paired }) => {
    const v = referee(paired);
    expect(v.verdict, v.line).toBe('pass');
  });

  it.each(windows)(
    'flags the fault-injected control made from $name (ITL +8 %, first token 100 ms late)',
    ({ paired }) => {
      const v = referee(withInjectedFault(paired, FAULT));
      expect(v.verdict, v.line).toBe('fail');
    },
  );

  it.each(windows)(
    'flags each fault alone in $name: +8 % ITL by the ITL bound, a 100 ms late first read by TTFT',
    ({ paired }) => {
      const biased = referee(withInjectedFault(paired, { ...FAULT, lateFirstMs: 0 }));
      expect(biased.itl.within, biased.line).toBe(false);
      const late = referee(withInjectedFault(paired, { ...FAULT, itlBias: 0 }));
      expect(late.ttft.within, late.line).toBe(false);
    },
  );
});

describe('withInjectedFault', () => {
  it('reads ITL (x − late / (tokens − 1)) × (1 + bias) and TTFT + late', () => {
    const p: PairedRequest = {
      id: 'a',
      startMs: 0,
      tokens: 96,
      clientItl: 0.011,
      engineItl: 0.011,
      clientTtft: 0.3,
      engineTtft: 0.29,
    };
    const [q] = withInjectedFault([p], { itlBias: 0.08, lateFirstMs: 95 });
    expect(q!.clientItl).toBeCloseTo((0.011 - 0.001) * 1.08, 12);
    expect(q!.clientTtft).toBeCloseTo(0.395, 12);
    expect(itlReading([q!])).toBeCloseTo(0.0108 / 0.011 - 1, 12);
    expect(ttftExcessMs([q!])).toBeCloseTo(105, 9);
  });
});

describe('blockBootstrap90', () => {
  it('is the same for the same seed and collapses on constant data', () => {
    const mean = (xs: readonly number[]) => (idx: Int32Array) => idx.reduce((a, i) => a + xs[i]!, 0) / idx.length;
    const opts = { block: 3, resamples: 500, seed: 7 };
    const ramp = mean(Array.from({ length: 30 }, (_, i) => i));
    expect(blockBootstrap90(30, ramp, opts)).toEqual(blockBootstrap90(30, ramp, opts));
    expect(blockBootstrap90(30, mean(Array(30).fill(2)), opts)).toEqual({ lo: 2, hi: 2 });
  });

  it('its 90 % interval of a mean covers the true mean of AR(1) data (ρ 0.3, 48 items) in 80–97 % of 200 seeded windows', () => {
    const rand = rng(99).next;
    const gauss = (): number => Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
    let covered = 0;
    for (let k = 0; k < 200; k++) {
      let e = gauss();
      const xs = Array.from({ length: 48 }, () => (e = 0.3 * e + Math.sqrt(1 - 0.09) * gauss()));
      const mean = (idx: Int32Array) => idx.reduce((s, i) => s + xs[i]!, 0) / idx.length;
      const { lo, hi } = blockBootstrap90(48, mean, { block: 4, resamples: 2000, seed: k });
      if (lo <= 0 && 0 <= hi) covered++;
    }
    expect(covered / 200).toBeGreaterThanOrEqual(0.8);
    expect(covered / 200).toBeLessThanOrEqual(0.97);
  });
});

/**
 * A window as the calibration runs measured the noisier client (aiperf; libs/agentx/README.md "The referee"): each
 * request's ITL error AR(1), ρ 0.3, sd 4.5 % (the bootstrap half-width of its ITL reading at 48 requests then ~1.4 %,
 * as aiperf's calibration windows scale to), around `itlOffset`; its TTFT excess 2 ms + log-normal (median
 * `ttftMs`, σ 0.8) and, in 5 % of requests, a stall of 100–800 ms.
 */
function simulatedWindow(rand: () => number, n: number, itlOffset: number, ttftMs: number): PairedRequest[] {
  const gauss = (): number => Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
  const [rho, sd] = [0.3, 0.045];
  let e = gauss() * sd;
  return Array.from({ length: n }, (_, i) => {
    e = rho * e + Math.sqrt(1 - rho * rho) * sd * gauss();
    const engineItl = 0.011 + 0.012 * rand();
    const engineTtft = 0.15 + 0.3 * rand();
    const stall = rand() < 0.05 ? 100 + 700 * rand() : 0;
    const excessMs = 2 + Math.exp(Math.log(ttftMs) + 0.8 * gauss()) + stall;
    return {
      id: String(i),
      startMs: i * 1250,
      tokens: 96,
      clientItl: engineItl * (1 + itlOffset + e),
      engineItl,
      clientTtft: engineTtft + excessMs / 1000,
      engineTtft,
    };
  });
}

describe('the referee by seeded simulation (200 windows of 48 requests — 60 s at the slowest rate seen —, the calibrated noise)', () => {
  const rate = (itlOffset: number, ttftMs: number, fault?: { itlBias: number; lateFirstMs: number }): number => {
    const rand = rng(12345).next;
    let failed = 0;
    for (let k = 0; k < 200; k++) {
      const w = simulatedWindow(rand, 48, itlOffset, ttftMs);
      if (referee(fault ? withInjectedFault(w, fault) : w, k).verdict !== 'pass') failed++;
    }
    return failed / 200;
  };

  it('false alarms on an honest client as calibrated (ITL −1 %, TTFT median excess ~12 ms): at most 2 %', () => {
    expect(rate(-0.01, 10)).toBeLessThanOrEqual(0.02);
  });

  it('false alarms on a loaded honest client (ITL −2 %, TTFT median excess ~22 ms): at most 5 %', () => {
    expect(rate(-0.02, 20)).toBeLessThanOrEqual(0.05);
  });

  it('flags the injected fault (+8 % ITL, first token 100 ms late) always, its late read alone always, its +8 % alone in ≥ 95 %', () => {
    expect(rate(-0.01, 10, FAULT)).toBe(1);
    expect(rate(-0.01, 10, { ...FAULT, itlBias: 0 })).toBe(1);
    expect(rate(-0.01, 10, { ...FAULT, lateFirstMs: 0 })).toBeGreaterThanOrEqual(0.95);
  });
});
