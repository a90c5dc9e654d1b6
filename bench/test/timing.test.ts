import { describe, expect, it } from 'vitest';
import { aiperfRawErrors, clientEventTimes, joinErrors, parseSendUs } from '../lib/timing';

describe('timing error helpers', () => {
  it('reads the send time a tick-server token carries', () => {
    expect(parseSendUs('@123456789')).toBe(123456789);
    expect(parseSendUs('word')).toBeNull();
    expect(parseSendUs('@')).toBeNull();
    expect(parseSendUs('@12x')).toBeNull();
  });

  it('puts a client record on the server clock: first token at start + TTFT, last at first + ITL·(OSL − 1)', () => {
    const t = clientEventTimes({ cached_tokens: 7, start_ms: 100, ttft_ms: 5, itl_ms: 2, osl: 11 }, 1000);
    expect(t).toEqual({ seq: 7, firstRecvUs: 1_105_000, lastRecvUs: 1_125_000 });
    expect(clientEventTimes({ cached_tokens: 7, start_ms: 100, ttft_ms: 5, itl_ms: null, osl: 1 }, 0)).toEqual({
      seq: 7,
      firstRecvUs: 105_000,
      lastRecvUs: null,
    });
    expect(clientEventTimes({ cached_tokens: null, start_ms: 0, ttft_ms: 5, itl_ms: 1, osl: 3 }, 0)).toBeNull();
    expect(clientEventTimes({ cached_tokens: 3, start_ms: 0, ttft_ms: null, itl_ms: null, osl: null }, 0)).toBeNull();
  });

  it('joins records with the send log on the sequence number and counts what does not match', () => {
    const log = [
      { seq: 1, firstSendUs: 1000, lastSendUs: 5000, tokens: 5 },
      { seq: 2, firstSendUs: 2000, lastSendUs: 2000, tokens: 1 },
    ];
    const r = joinErrors(log, [
      { seq: 1, firstRecvUs: 1250, lastRecvUs: 6000 },
      { seq: 2, firstRecvUs: 2100, lastRecvUs: null },
      { seq: 9, firstRecvUs: 1, lastRecvUs: 2 },
    ]);
    expect(r.errorsMs).toEqual([0.25, 1, 0.1]);
    expect(r.unmatched).toBe(1);
  });

  it('reads receive − send from aiperf raw records (packets, or text), profiling phase only', () => {
    const data = (sendUs: number | string) =>
      `{"id":"tick","choices":[{"index":0,"delta":{"content":"@${sendUs}"},"finish_reason":null}]}`;
    const rec = (phase: string, responses: unknown[]) =>
      JSON.stringify({ metadata: { benchmark_phase: phase }, status: 200, responses });
    const jsonl = [
      rec('warmup', [{ perf_ns: 5_000_000, packets: [{ name: 'data', value: data(1) }] }]),
      // two packets read together share aiperf's receive time
      rec('profiling', [
        {
          perf_ns: 2_000_500_000,
          packets: [
            { name: 'data', value: data(2_000_000) },
            { name: 'data', value: data(2_000_250) },
          ],
        },
      ]),
      rec('profiling', [
        { perf_ns: 3_001_000_000, text: data(3_000_000) },
        { perf_ns: 4_000_000_000, packets: [{ name: 'data', value: '[DONE]' }] },
      ]),
      '',
    ].join('\n');
    const r = aiperfRawErrors(jsonl);
    expect(r.errorsMs).toEqual([0.5, 0.25, 1]);
    expect(r.events).toBe(3);
    expect(r.spanSeconds).toBeCloseTo(1.0005, 6);
  });
});
