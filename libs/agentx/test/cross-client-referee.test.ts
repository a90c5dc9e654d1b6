/** The real-vLLM cross-client test's prompt pairing (./cross-client.ts promptsAgainstTraces), on hand-made records. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateTraces, rootRequests, type RequestRecord } from '@infersweep/agentx';
import { promptsAgainstTraces } from '@infersweep/testkit/cross-client';
import { requestRecord } from '@infersweep/testkit/records-fixture';

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
