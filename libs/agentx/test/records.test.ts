import { describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import {
  droppedSampleWarnings,
  publishDir,
  readRecordFile,
  tokenCount,
  toRequestRecord,
  type ChatOutcome,
  type RequestContext,
} from '../src/index';

const outcome = (over: Partial<ChatOutcome> = {}): ChatOutcome => ({
  ok: true,
  status: 200,
  startMs: 100,
  firstTokenMs: 150,
  lastTokenMs: 250,
  endMs: 260,
  contentChunks: 11,
  promptTokens: 1000,
  completionTokens: 11,
  cachedTokens: 512,
  finishReason: 'length',
  errorCategory: null,
  error: null,
  ...over,
});
const ctx = (over: Partial<RequestContext> = {}): RequestContext => ({
  lane: 2,
  play: { no: 5, marker: '[rid:ab-cd]', traceId: 't1', endpoint: 'http://h:1' },
  kind: 'root',
  agentId: null,
  turn: 3,
  phase: 'profiling',
  maxTokens: 11,
  expected: { isl: 1000, osl: 11 },
  theoreticalHitTokens: 448,
  graceCancelled: false,
  ...over,
});

describe('toRequestRecord (pure)', () => {
  it('a successful request: TTFT, mean ITL over streamed tokens, e2el, server-reported counts', () => {
    expect(toRequestRecord(outcome(), ctx())).toMatchObject({
      id: '[rid:ab-cd]:r:3',
      lane: 2,
      trace_id: 't1',
      play: 5,
      ttft_ms: 50,
      itl_ms: 10,
      e2el_ms: 160,
      isl: 1000,
      osl: 11,
      cached_tokens: 512,
      expected_isl: 1000,
      theoretical_cache_hit_tokens: 448,
      ok: true,
      error_category: null,
    });
  });

  it('a failed request has no latencies; a cut at the grace period is grace_cancelled; a subagent id names its agent', () => {
    const failed = toRequestRecord(
      outcome({ ok: false, errorCategory: 'cancelled', error: 'aborted', completionTokens: null }),
      ctx({ graceCancelled: true, kind: 'subagent', agentId: 'sa1' }),
    );
    expect(failed).toMatchObject({
      id: '[rid:ab-cd]:sa1:3',
      ttft_ms: null,
      itl_ms: null,
      e2el_ms: null,
      ok: false,
      error_category: 'grace_cancelled',
    });
    expect(toRequestRecord(outcome({ ok: false, errorCategory: 'cancelled' }), ctx()).error_category).toBe('cancelled');
    expect(toRequestRecord(outcome({ completionTokens: 1 }), ctx()).itl_ms).toBeNull();
  });
});

describe('non-finite and non-numeric data are dropped with a warning', () => {
  it('tokenCount: integers pass; strings, NaN, negatives, fractions → null + warning', () => {
    const w: string[] = [];
    expect(tokenCount(12, 'completion_tokens', w)).toBe(12);
    expect(tokenCount(undefined, 'x', w)).toBeNull();
    expect(w).toEqual([]);
    for (const bad of ['12', Number.NaN, -1, 1.5, { n: 1 }]) expect(tokenCount(bad, 'completion_tokens', w)).toBeNull();
    expect(w).toHaveLength(5);
    expect(w[0]).toMatch(/usage\.completion_tokens is not a token count: "12" \(dropped\)/);
  });

  it('droppedSampleWarnings names the endpoint and the metrics', () => {
    expect(
      droppedSampleWarnings([
        [{ endpoint: 'e1', samples: [], dropped: ['vllm:kv_cache_usage_perc', 'vllm:kv_cache_usage_perc'] }],
        [{ endpoint: 'e2', samples: [] }],
      ]),
    ).toEqual(['e1: non-finite samples dropped (vllm:kv_cache_usage_perc ×2)']);
  });
});

describe('stored records and attempt folders', () => {
  const schema = z.object({ conc: z.number() }).strict();

  it('readRecordFile: missing, ok, corrupt JSON moved aside, another shape left in place', () => {
    const dir = mkdtempSync(join(tmpdir(), 'infersweep-rec-'));
    const f = join(dir, 'result.json');
    expect(readRecordFile(f, schema)).toEqual({ kind: 'missing' });
    writeFileSync(f, '{"conc": 4}');
    expect(readRecordFile(f, schema)).toEqual({ kind: 'ok', record: { conc: 4 } });
    writeFileSync(f, '{"conc": 4, "trunc');
    const bad = readRecordFile(f, schema);
    expect(bad).toMatchObject({ kind: 'corrupt', warning: expect.stringMatching(/not JSON.*moved aside/) });
    expect(existsSync(f)).toBe(false);
    expect(readFileSync((bad as { movedTo: string }).movedTo, 'utf8')).toBe('{"conc": 4, "trunc');
    writeFileSync(f, '{"conc": "four"}');
    expect(readRecordFile(f, schema)).toMatchObject({
      kind: 'unusable',
      warning: expect.stringMatching(/conc: .*left in place/),
    });
    expect(readFileSync(f, 'utf8')).toBe('{"conc": "four"}'); // another version's record is not moved
  });

  it("readRecordFile: a newer writer's record (unknown fields, nested too) is read; the file keeps them", () => {
    const nested = z.object({ conc: z.number(), summary: z.object({ p50: z.number() }).strict() }).strict();
    const dir = mkdtempSync(join(tmpdir(), 'infersweep-rec-'));
    const f = join(dir, 'result.json');
    const text = JSON.stringify({ conc: 4, fromNewer: true, summary: { p50: 1.5, p999: 9 } });
    writeFileSync(f, text);
    expect(readRecordFile(f, nested)).toEqual({
      kind: 'ok',
      record: { conc: 4, summary: { p50: 1.5 } },
      ignored: expect.arrayContaining(['fromNewer', 'summary.p999']),
    });
    expect(readFileSync(f, 'utf8')).toBe(text);
    // writing stays strict: the schema still refuses the unknown field
    expect(nested.safeParse(JSON.parse(text)).success).toBe(false);
  });

  it('publishDir: one rename; an earlier published folder is moved aside, never deleted', () => {
    const dir = mkdtempSync(join(tmpdir(), 'infersweep-pub-'));
    const final = join(dir, 'c4');
    const a = join(dir, 'c4.partial-a');
    mkdirSync(a);
    writeFileSync(join(a, 'result.json'), 'A');
    expect(publishDir(a, final)).toBeNull();
    const b = join(dir, 'c4.partial-b');
    mkdirSync(b);
    writeFileSync(join(b, 'result.json'), 'B');
    const aside = publishDir(b, final)!;
    expect(readFileSync(join(final, 'result.json'), 'utf8')).toBe('B');
    expect(readFileSync(join(aside, 'result.json'), 'utf8')).toBe('A');
    expect(readdirSync(dir).sort()).toEqual(['c4', aside.slice(dir.length + 1)].sort());
  });
});
