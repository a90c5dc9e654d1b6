import { describe, expect, it } from 'vitest';
import { requestRecord } from '@infersweep/testkit/records-fixture';
import { agentxSettingsSchema } from '@infersweep/topology';
import {
  accounting,
  aiperfPhase,
  configuredTraces,
  parsePrometheus,
  prefixCacheGate,
  serverMetricsWindow,
  validity,
  type RequestRecord,
} from '@infersweep/agentx';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A short request (100 prompt / 10 output tokens) without cache accounting unless a test sets it. */
const rec = (p: Partial<RequestRecord>): RequestRecord =>
  requestRecord({
    id: 'r',
    end_ms: 10,
    ttft_ms: 1,
    itl_ms: 1,
    e2el_ms: 10,
    isl: 100,
    osl: 10,
    cached_tokens: null,
    expected_isl: 100,
    expected_osl: 10,
    max_tokens: 10,
    theoretical_cache_hit_tokens: 0,
    content_chunks: 10,
    ...p,
  });

describe('cached-token gate (multi-turn traffic must show prefix reuse)', () => {
  const later = [
    rec({ turn: 0, cached_tokens: 0 }),
    rec({ turn: 1, cached_tokens: 0 }),
    rec({ turn: 2, cached_tokens: 0 }),
  ];
  it('no cached tokens anywhere on multi-turn requests: invalid, naming both sources', () => {
    const r = prefixCacheGate(later, 0, true);
    expect(r).toContain(
      'no cached prompt tokens on 2 multi-turn requests (usage cached_tokens 0, server prefix-cache hits 0)',
    );
    expect(
      prefixCacheGate(
        later.map((x) => ({ ...x, cached_tokens: null })),
        null,
        true,
      ),
    ).toContain('usage cached_tokens absent, server prefix-cache hits absent');
  });
  it('either source reporting cached tokens passes', () => {
    expect(prefixCacheGate([...later.slice(0, 2), rec({ turn: 2, cached_tokens: 512 })], 0, true)).toBeNull();
    expect(prefixCacheGate(later, 4096, true)).toBeNull();
  });
  it('not required, no multi-turn traffic, or only warmup/failed later turns: no verdict', () => {
    expect(prefixCacheGate(later, 0, false)).toBeNull();
    expect(prefixCacheGate([rec({ turn: 0 }), rec({ turn: 0 })], 0, true)).toBeNull();
    expect(
      prefixCacheGate([rec({ turn: 3, phase: 'warmup' }), rec({ turn: 4, ok: false, cached_tokens: null })], 0, true),
    ).toBeNull();
  });
  it('validity turns the reason into no_cached_tokens', () => {
    const settings = agentxSettingsSchema.parse({});
    const v = validity({
      settings,
      accounting: accounting(later),
      successes: 3,
      coverage: 1,
      clientSaturatedReason: null,
      concurrencyHeld: null,
      runCancelledReason: null,
      serverMetricsMissing: [],
      idleRankMessages: [],
      prefixCacheReason: prefixCacheGate(later, 0, true),
    });
    expect(v.valid).toBe(false);
    expect(v.reasons).toEqual([
      expect.stringMatching(/^no_cached_tokens: no cached prompt tokens on 2 multi-turn requests/),
    ]);
  });
});

describe('aiperf as the sweep client: helpers', () => {
  it('phase markers in aiperf logs', () => {
    expect(aiperfPhase('… Phase profiling started …')).toBe('profiling');
    expect(aiperfPhase('WARMUP cache pressure stage')).toBe('cache-pressure');
    expect(aiperfPhase('Phase profiling complete')).toBe('draining');
    expect(aiperfPhase('stats: 12 requests')).toBeNull();
  });
  it('configured synthetic traces are written as Weka files; a file source is passed as is', () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentx-traces-'));
    const s = agentxSettingsSchema.parse({ traces: { kind: 'synthetic', traces: 3, seed: 7, maxContextTokens: 2048 } });
    const out = configuredTraces(s, dir);
    expect(out).toBe(join(dir, 'traces'));
    expect(readdirSync(out).sort()).toEqual(['syn-0000.json', 'syn-0001.json', 'syn-0002.json']);
    expect(configuredTraces(agentxSettingsSchema.parse({ traces: { kind: 'file', path: '/data/t' } }), dir)).toBe(
      '/data/t',
    );
  });
});

describe('server counters created lazily', () => {
  const snap = (text: string) => [{ endpoint: 'http://e/metrics', samples: parsePrometheus(text).samples }];
  it('absent at the window start and present at the end counts from 0, with a warning; absent at the end stays null', () => {
    const m = serverMetricsWindow(
      snap('vllm:prompt_tokens_total 0\n'),
      snap('vllm:prompt_tokens_total 500\nvllm:generation_tokens_total{model_name="m"} 40\n'),
      [],
    );
    expect(m.tokens).toEqual({ prompt: 500, generation: 40 });
    expect(m.warnings).toContain(
      'vllm:generation_tokens_total absent at window start on http://e/metrics, present at the end: counted from 0',
    );
    const gone = serverMetricsWindow(
      snap('vllm:generation_tokens_total 3\n'),
      snap('vllm:prompt_tokens_total 5\n'),
      [],
    );
    expect(gone.tokens.generation).toBeNull();
  });
});
