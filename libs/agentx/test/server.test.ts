import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  checkIdleRanks,
  drainStep,
  initialDrainState,
  kvPoolTokens,
  observeDrain,
  parsePrometheus,
  PrometheusParseError,
  serverMetricsWindow,
  sumMetric,
  type DrainObservation,
} from '@infersweep/agentx';

/** Real scrapes of a DP=2 vLLM CPU deployment (how and when: the header of each file): one engine idle, and under load. */
const fixture = readFileSync(new URL('./data/vllm-dp2-metrics.txt', import.meta.url), 'utf8');
const underLoad = readFileSync(new URL('./data/vllm-dp2-metrics-load.txt', import.meta.url), 'utf8');

describe('parsePrometheus', () => {
  it('parses the vLLM DP=2 fixture keeping labels and types', () => {
    const { samples, types } = parsePrometheus(fixture);
    expect(types['vllm:num_requests_running']).toBe('gauge');
    expect(types['vllm:iteration_tokens_total']).toBe('histogram');
    const run = samples.filter((s) => s.name === 'vllm:num_requests_running');
    expect(run.map((s) => s.labels.engine)).toEqual(['0', '1']);
    expect(run[0]!.labels.model_name).toBe('infersweep/tiny-moe');
    // one streamed request of 32 tokens (max_tokens), served by engine 0
    expect(sumMetric(samples, 'vllm:request_success_total')).toBe(1);
    expect(sumMetric(samples, 'vllm:request_success_total', (l) => l.engine === '1')).toBe(0);
    expect(sumMetric(samples, 'vllm:generation_tokens_total', (l) => l.engine === '0')).toBe(32);
    expect(samples.find((s) => s.labels.le === '+Inf')!.value).toBe(1);
    expect(sumMetric(samples, 'vllm:absent')).toBeNull();
    // the KV pool per engine: vllm:cache_config_info's labels (num_gpu_blocks × block_size, and vLLM's own token count)
    const cfg = samples.filter((s) => s.name === 'vllm:cache_config_info');
    expect(
      cfg.map((s) => [s.labels.engine, s.labels.num_gpu_blocks, s.labels.block_size, s.labels.kv_cache_size_tokens]),
    ).toEqual([
      ['0', '8192', '128', '524288'],
      ['1', '8192', '128', '524288'],
    ]);
    // the pool is vLLM's own count per engine (the figure its log line prints), not blocks × block size
    // (8192 × 128 = 1,048,576 per engine here); summed over the two engines
    expect(kvPoolTokens([{ endpoint: 'e0', samples }], 'vllm:cache_config_info')).toBe(2 * 524_288);
    const withoutOwnCount = samples.map((s) => {
      if (s.name !== 'vllm:cache_config_info') return s;
      const { kv_cache_size_tokens: _dropped, ...labels } = s.labels;
      return { ...s, labels };
    });
    expect(kvPoolTokens([{ endpoint: 'e0', samples: withoutOwnCount }], 'vllm:cache_config_info')).toBe(2 * 8192 * 128);
  });
  it('parses the scrape under load: both engines running, KV usage a fraction, every engine series labelled', () => {
    const { samples } = parsePrometheus(underLoad);
    const by = (name: string) => samples.filter((s) => s.name === name).map((s) => [s.labels.engine, s.value]);
    expect(by('vllm:num_requests_running')).toEqual([
      ['0', 1],
      ['1', 1],
    ]);
    // a fraction, not a percentage: two blocks of the ~8192-block pool in use on each engine
    for (const [, v] of by('vllm:kv_cache_usage_perc')) expect(v).toBeCloseTo(2 / 8192, 6);
    expect(sumMetric(samples, 'vllm:num_requests_waiting')).toBe(35);
    const unlabelled = samples
      .filter((s) => s.name.startsWith('vllm:') && s.labels.engine === undefined)
      .map((s) => s.name);
    // every engine series carries engine=; only the API server's own admission counter does not
    expect([...new Set(unlabelled)]).toEqual(['vllm:admission_rejections_total', 'vllm:admission_rejections_created']);
  });
  it('handles escapes, special values, timestamps, unlabelled and CRLF lines', () => {
    const t =
      'a{x="q\\"uote",y="back\\\\slash",z="new\\nline"} +Inf 1700000000000\r\nb NaN\nc{} -Inf\nd 1.5e3\n# EOF\n';
    const { samples } = parsePrometheus(t);
    expect(samples[0]!.labels).toEqual({ x: 'q"uote', y: 'back\\slash', z: 'new\nline' });
    expect(samples[0]!.value).toBe(Infinity);
    expect(samples[0]!.timestampMs).toBe(1700000000000);
    expect(Number.isNaN(samples[1]!.value)).toBe(true);
    expect(samples[2]!.value).toBe(-Infinity);
    expect(samples[3]!.value).toBe(1500);
  });
  it('rejects malformed lines with the line number', () => {
    expect(() => parsePrometheus('ok 1\nbad{a=unquoted} 1\n')).toThrow(PrometheusParseError);
    expect(() => parsePrometheus('ok 1\nbad{a=unquoted} 1\n')).toThrow(/line 2/);
    expect(() => parsePrometheus('m{a="x"\n')).toThrow(PrometheusParseError);
    expect(() => parsePrometheus('m abc\n')).toThrow(/bad value/);
    expect(() => parsePrometheus('9m 1\n')).toThrow(/name/);
  });
  it('round-trips arbitrary label values and numbers (property)', () => {
    fc.assert(
      fc.property(fc.string(), fc.double({ noNaN: true, noDefaultInfinity: true }), (v, x) => {
        const esc = v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
        const { samples } = parsePrometheus(`m{l="${esc}"} ${x}\n`);
        expect(samples[0]!.labels.l).toBe(v);
        expect(samples[0]!.value === x).toBe(true); // (-0 prints as 0)
      }),
    );
  });
});

describe('checkIdleRanks', () => {
  it('readiness: every expected engine label present passes; a missing one fails', () => {
    expect(checkIdleRanks(fixture, [0, 1], 'readiness').ok).toBe(true);
    const r = checkIdleRanks(fixture, [0, 1, 2, 3], 'readiness');
    expect(r.ok).toBe(false);
    expect(r.missing).toEqual([2, 3]);
    expect(r.message).toMatch(/hybrid\/external LB/);
  });
  it('post-warmup: engine 1 served nothing → "idle DP rank 1"', () => {
    const r = checkIdleRanks(fixture, [0, 1], 'post-warmup');
    expect(r.ok).toBe(false);
    expect(r.missing).toEqual([1]);
    expect(r.message).toContain('idle DP rank 1');
    expect(r.perEngine).toEqual({ '0': 1, '1': 0 });
    expect(checkIdleRanks(fixture, [0], 'post-warmup').ok).toBe(true);
  });
  it('post-warmup under load: both engines served → ok', () => {
    const r = checkIdleRanks(underLoad, [0, 1], 'post-warmup');
    expect(r.ok).toBe(true);
    expect(r.perEngine).toEqual({ '0': 2, '1': 2 });
  });
  it('counts both finished_reason and finish_reason (simulator dialect)', () => {
    const t =
      'vllm:request_success_total{engine="0",finish_reason="length"} 2\nvllm:request_success_total{engine="1",finished_reason="stop"} 1\n';
    expect(checkIdleRanks(t, [0, 1], 'post-warmup').ok).toBe(true);
  });
  it('no engine label (null expected) is recorded as not applicable', () => {
    const r = checkIdleRanks('vllm:num_requests_running 0\n', null, 'readiness');
    expect(r).toMatchObject({ applicable: false, ok: true });
    expect(r.message).toMatch(/not applicable/);
    expect(checkIdleRanks('', [0], 'readiness', 'sglang').applicable).toBe(false);
  });
});

describe('drain gate', () => {
  const ok = (busy: number): DrainObservation => ({ kind: 'ok', busy, perEndpoint: {} });
  const err: DrainObservation = { kind: 'scrape-error', endpoint: 'e', message: 'ECONNREFUSED' };
  const run = (obs: DrainObservation[]) => obs.reduce((s, o) => drainStep(s, o, 3), initialDrainState);
  it('busy → idle ×3 passes', () => {
    expect(run([ok(5), ok(2), ok(0), ok(0), ok(0)])).toMatchObject({ outcome: 'idle', polls: 5 });
  });
  it('idle, error, idle does not pass (a failed scrape resets, never counts as idle)', () => {
    expect(run([ok(0), ok(0), err, ok(0)])).toMatchObject({ outcome: 'pending', streak: 1 });
    expect(run([ok(0), ok(0), ok(1), ok(0), ok(0)]).outcome).toBe('pending');
  });
  it('a missing metric fails', () => {
    expect(
      run([ok(0), { kind: 'missing-metric', endpoint: 'e', metric: 'vllm:num_requests_waiting' }, ok(0), ok(0), ok(0)]),
    ).toMatchObject({ outcome: 'failed' });
  });
  it('never reports idle unless the last idlePolls observations were ok(0) (property)', () => {
    const obsArb = fc.oneof(fc.nat(3).map(ok), fc.constant(err));
    fc.assert(
      fc.property(fc.array(obsArb, { maxLength: 30 }), (obs) => {
        let s = initialDrainState;
        let idleAt = -1;
        for (let i = 0; i < obs.length && idleAt < 0; i++) {
          s = drainStep(s, obs[i]!, 3);
          if (s.outcome === 'idle') idleAt = i;
        }
        // the observations up to the first idle verdict end in three ok(0) (none when it never came)
        const last = idleAt < 0 ? [] : obs.slice(Math.max(0, idleAt - 2), idleAt + 1);
        expect(last.map((o) => o.kind === 'ok' && o.busy === 0)).toEqual(idleAt < 0 ? [] : [true, true, true]);
      }),
    );
  });
  it('observeDrain sums running+waiting over all label sets and endpoints; absent gauge → missing-metric', () => {
    const o = observeDrain([
      { endpoint: 'a', text: underLoad },
      {
        endpoint: 'b',
        text: 'vllm:num_requests_running 1\nvllm:num_requests_waiting 0\ndynamo_frontend_active_requests 4\n',
      },
    ]);
    // a: running 1 + 1, waiting 18 + 17 (the real scrape under load); b: 1 + 0 + 4
    expect(o).toEqual({ kind: 'ok', busy: 42, perEndpoint: { a: 37, b: 5 } });
    expect(observeDrain([{ endpoint: 'a', text: fixture }])).toEqual({ kind: 'ok', busy: 0, perEndpoint: { a: 0 } });
    expect(observeDrain([{ endpoint: 'a', text: 'vllm:num_requests_running 0\n' }])).toMatchObject({
      kind: 'missing-metric',
      metric: 'vllm:num_requests_waiting',
    });
    expect(observeDrain([{ endpoint: 'a', error: 'refused' }]).kind).toBe('scrape-error');
    expect(observeDrain([{ endpoint: 'a', text: 'bad{x=1} 1' }]).kind).toBe('scrape-error');
    expect(
      observeDrain([{ endpoint: 'a', text: 'sglang:num_running_reqs 0\nsglang:num_queue_reqs 0\n' }], 'sglang'),
    ).toMatchObject({
      kind: 'ok',
      busy: 0,
    });
  });
});

describe('serverMetricsWindow', () => {
  const snap = (t: string) => [{ endpoint: 'a', samples: parsePrometheus(t).samples }];
  it('computes counter deltas and KV max over the window', () => {
    const start = snap(
      'vllm:prompt_tokens_total 100\nvllm:generation_tokens_total 10\nvllm:prefix_cache_hits_total 50\nvllm:prefix_cache_queries_total 100\nvllm:kv_cache_usage_perc 0.1\n',
    );
    const mid = snap('vllm:kv_cache_usage_perc 0.7\n');
    const end = snap(
      'vllm:prompt_tokens_total 1100\nvllm:generation_tokens_total 60\nvllm:prefix_cache_hits_total 850\nvllm:prefix_cache_queries_total 1100\nvllm:kv_cache_usage_perc 0.2\n',
    );
    const m = serverMetricsWindow(start, end, [mid]);
    expect(m.tokens).toEqual({ prompt: 1000, generation: 50 });
    expect(m.cache.overall_cache_hit_rate).toBeCloseTo(0.8);
    expect(m.kv_cache.gpu_usage_pct).toBeCloseTo(70);
    expect(m.warnings).toEqual([]);
  });
  it('absent counters give null plus a warning, never 0; counter reset is flagged', () => {
    const m = serverMetricsWindow(snap('vllm:prompt_tokens_total 5\n'), snap('vllm:prompt_tokens_total 3\n'), []);
    expect(m.tokens.prompt).toBeNull();
    expect(m.tokens.generation).toBeNull();
    expect(m.warnings.join('\n')).toMatch(/went backwards/);
    expect(m.warnings.join('\n')).toMatch(/generation_tokens_total absent/);
  });
});
