/**
 * The real-vLLM cross-client referee's statistic (./cross-client.ts interquartileMean, used by
 * cross-client-vllm.int.test.ts and the bench's vLLM row), on values whose answer is known by hand.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateTraces, rootRequests, type RequestRecord } from '@infersweep/agentx';
import { interquartileMean, profiledItls, promptsAgainstTraces } from './cross-client';
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

describe('interquartileMean', () => {
  it('is the mean of the middle half: ⌊n/4⌋ values dropped at each end, in any input order', () => {
    // 8 values: 2 dropped at each end, mean of 3, 4, 5, 6
    expect(interquartileMean([8, 1, 7, 2, 6, 3, 5, 4])).toBe(4.5);
    // 7 values: 1 dropped at each end, mean of 2..6
    expect(interquartileMean([7, 6, 5, 4, 3, 2, 1])).toBe(4);
    // fewer than 4: nothing dropped
    expect(interquartileMean([1, 2, 6])).toBe(3);
    expect(interquartileMean([])).toBeNaN();
  });

  it('ignores a quarter of outliers at either end (what a client that read some first tokens late produces)', () => {
    const itl = Array.from({ length: 20 }, (_, i) => 0.011 + (i % 5) * 0.0001);
    const clean = interquartileMean(itl);
    const lateReads = [...itl.slice(0, 15), 0.001, 0.002, 0.002, 0.003, 0.004];
    expect(Math.abs(interquartileMean(lateReads) / clean - 1)).toBeLessThan(0.02);
    const mean = lateReads.reduce((s, x) => s + x, 0) / lateReads.length;
    expect(mean / clean - 1).toBeLessThan(-0.15);
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
