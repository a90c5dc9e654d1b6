/**
 * The real-vLLM cross-client referee's statistic (./cross-client.ts lowFencedMean, used by
 * cross-client-vllm.int.test.ts and the bench's vLLM row), on values whose answer is known by hand.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateTraces, rootRequests, type RequestRecord } from '@infersweep/agentx';
import { lowFencedMean, profiledItls, promptsAgainstTraces } from './cross-client';
import { requestRecord } from './records-fixture';

/** A request record (./records-fixture.ts) with its phase, success, per-request ITL (ms), id `r<i>` and turn i. */
const rec = (
  phase: RequestRecord['phase'],
  ok: boolean,
  itl: number | null,
  i: number,
  over: Partial<RequestRecord> = {},
): RequestRecord => requestRecord({ id: `r${i}`, turn: i, phase, ok, itl_ms: itl, ...over });

function pointDir(lines: object[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'referee-'));
  writeFileSync(join(dir, 'requests.jsonl'), lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  return dir;
}

describe('lowFencedMean', () => {
  const mean = (xs: number[]) => xs.reduce((sum, x) => sum + x, 0) / xs.length;

  it('drops values below Q1 − 1.5 × IQR (quartiles by linear interpolation) and averages the rest, in any input order', () => {
    // sorted 1, 10, 10, 11, 11, 12, 12: Q1 10, Q3 11.5, fence 7.75: the 1 goes, the mean of the six is 11
    expect(lowFencedMean([12, 1, 10, 11, 12, 10, 11])).toBe(11);
    // a value at the fence stays: 4, 10, 10, 10, 10 → Q1 10, Q3 10, fence 10, so 4 goes; 10 × 4 stays
    expect(lowFencedMean([10, 4, 10, 10, 10])).toBe(10);
    expect(lowFencedMean([])).toBeNaN();
  });

  it('keeps high values: a slow stretch of the engine is in the engine’s mean too', () => {
    // sorted 10, 10, 11, 11, 12, 12, 30: Q1 10.5, Q3 12, fence 8.25: nothing dropped, the plain mean
    expect(lowFencedMean([30, 10, 11, 12, 10, 11, 12])).toBe(96 / 7);
    const slowStretch = [
      ...Array.from({ length: 15 }, (_, i) => 0.011 + (i % 5) * 0.0001),
      0.016,
      0.017,
      0.018,
      0.019,
      0.02,
    ];
    expect(lowFencedMean(slowStretch)).toBeCloseTo(mean(slowStretch), 12);
  });

  it('ignores requests whose first token a client read late (short per-request ITL), which move the plain mean', () => {
    const itl = Array.from({ length: 20 }, (_, i) => 0.011 + (i % 5) * 0.0001);
    const lateReads = [...itl.slice(0, 15), 0.001, 0.002, 0.002, 0.003, 0.004];
    expect(lowFencedMean(lateReads)).toBeCloseTo(mean(itl.slice(0, 15)), 12);
    expect(mean(lateReads) / mean(itl) - 1).toBeLessThan(-0.15);
  });
});

describe('profiledItls', () => {
  it('reads the per-request ITL (s) of profiled, successful requests only', () => {
    const dir = pointDir([
      rec('warmup', true, null, 0),
      rec('profiling', true, 11, 1),
      rec('profiling', false, null, 2),
      rec('profiling', true, 12.5, 3),
      rec('cache-pressure', true, 9, 4),
    ]);
    expect(profiledItls(dir)).toEqual([0.011, 0.0125]);
  });
});

describe('promptsAgainstTraces', () => {
  const corpus = mkdtempSync(join(tmpdir(), 'referee-corpus-'));
  const traces = generateTraces({ seed: 3, traces: 2, maxContextTokens: 2048, subagentProbability: 0 });
  for (const t of traces) writeFileSync(join(corpus, `${t.id}.json`), JSON.stringify(t));
  const [a, b] = traces.map((t) => ({ id: t.id, in: rootRequests(t).map((r) => r.in) }));

  it('pairs each profiled, successful request’s engine-counted prompt with its trace’s input length at that turn', () => {
    const dir = pointDir([
      rec('warmup', true, 11, 0, { trace_id: a!.id, turn: 0, isl: 1 }),
      rec('profiling', true, 11, 1, { trace_id: a!.id, turn: 1, isl: a!.in[1]! + 4 }),
      rec('profiling', true, 11, 0, { trace_id: b!.id, turn: 0, isl: b!.in[0]! * 2 }),
      rec('profiling', false, null, 2, { trace_id: b!.id, turn: 1, isl: null }),
    ]);
    expect(promptsAgainstTraces(dir, corpus)).toEqual([
      { isl: a!.in[1]! + 4, traceIn: a!.in[1]! },
      { isl: b!.in[0]! * 2, traceIn: b!.in[0]! },
    ]);
  });

  it('throws, naming the request, on a trace or turn the corpus does not have (a mapping that would compare nothing)', () => {
    const unknownTrace = pointDir([rec('profiling', true, 11, 0, { trace_id: 'nope', turn: 0, isl: 50 })]);
    expect(() => promptsAgainstTraces(unknownTrace, corpus)).toThrow(
      /request r0 \(trace nope, turn 0, isl 50\) not in/,
    );
    const pastTheEnd = pointDir([rec('profiling', true, 11, 7, { trace_id: a!.id, turn: a!.in.length, isl: 50 })]);
    expect(() => promptsAgainstTraces(pastTheEnd, corpus)).toThrow(`turn ${a!.in.length}, isl 50) not in`);
  });
});
