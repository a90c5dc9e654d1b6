import { describe, expect, it } from 'vitest';
import {
  checkIdleRanks,
  engineWindows,
  parsePrometheus,
  servedPerEngine,
  serverMetricsWindow,
  type EndpointSnapshot,
} from '@infersweep/agentx';

/** vLLM 0.32's per-engine series (label sets as the CPU build's /metrics prints them). */
function exposition(
  e: Record<
    string,
    { ok: number; abort?: number; prompt: number; gen: number; hits: number; queries: number; kv: number }
  >,
): string {
  const lines: string[] = [];
  for (const [id, v] of Object.entries(e)) {
    const l = `engine="${id}",model_name="m"`;
    lines.push(
      `vllm:num_requests_running{${l}} 0.0`,
      `vllm:request_success_total{${l},finished_reason="stop"} 0.0`,
      `vllm:request_success_total{${l},finished_reason="length"} ${v.ok}`,
      `vllm:request_success_total{${l},finished_reason="abort"} ${v.abort ?? 0}`,
      `vllm:request_success_total{${l},finished_reason="error"} 0.0`,
      `vllm:prompt_tokens_total{${l}} ${v.prompt}`,
      `vllm:generation_tokens_total{${l}} ${v.gen}`,
      `vllm:prefix_cache_hits_total{${l}} ${v.hits}`,
      `vllm:prefix_cache_queries_total{${l}} ${v.queries}`,
      `vllm:kv_cache_usage_perc{${l}} ${v.kv}`,
    );
  }
  return lines.join('\n') + '\n';
}
const snap = (text: string, endpoint = 'http://h:1/metrics'): EndpointSnapshot[] => [
  { endpoint, samples: parsePrometheus(text).samples },
];
const z = { ok: 0, prompt: 0, gen: 0, hits: 0, queries: 0, kv: 0 };

describe('per-engine accounting', () => {
  it('served requests exclude aborted and errored ones', () => {
    const s = parsePrometheus(exposition({ '0': { ...z, ok: 5, abort: 7 }, '1': { ...z, ok: 0, abort: 3 } })).samples;
    expect(servedPerEngine(s)).toEqual({ '0': 5, '1': 0 });
  });

  it('post-warmup idle check counts only what this point served: readiness probes cannot hide an idle rank', () => {
    const before = exposition({ '0': { ...z, ok: 1 }, '1': { ...z, ok: 1 } }); // one readiness probe each
    const after = exposition({ '0': { ...z, ok: 9 }, '1': { ...z, ok: 1, abort: 2 } });
    const withBaseline = checkIdleRanks(after, [0, 1], 'post-warmup', 'vllm', before);
    expect(withBaseline.ok).toBe(false);
    expect(withBaseline.missing).toEqual([1]);
    expect(withBaseline.perEngine).toEqual({ '0': 8, '1': 0 });
    expect(withBaseline.message).toMatch(/^idle DP rank 1 /);
    // without the baseline the probe would have counted as service
    expect(checkIdleRanks(after, [0, 1], 'post-warmup').ok).toBe(true);
  });

  it('an engine absent from the endpoint is idle with 0 requests (the hybrid-LB symptom)', () => {
    const c = checkIdleRanks(
      exposition({ '0': { ...z, ok: 4 } }),
      [0, 1],
      'post-warmup',
      'vllm',
      exposition({ '0': z }),
    );
    expect(c).toMatchObject({ ok: false, missing: [1], perEngine: { '0': 4, '1': 0 } });
  });

  it('engineWindows: per-engine deltas over the window and the KV peak of any sample', () => {
    const start = snap(
      exposition({
        '0': { ok: 2, prompt: 100, gen: 10, hits: 0, queries: 100, kv: 0 },
        '1': { ok: 1, prompt: 50, gen: 5, hits: 0, queries: 50, kv: 0 },
      }),
    );
    const mid = snap(exposition({ '0': { ...z, kv: 0.25 }, '1': { ...z, kv: 0.5 } }));
    const end = snap(
      exposition({
        '0': { ok: 12, abort: 1, prompt: 1100, gen: 410, hits: 600, queries: 1100, kv: 0.125 },
        '1': { ok: 9, prompt: 850, gen: 305, hits: 400, queries: 850, kv: 0 },
      }),
    );
    const w = engineWindows(start, end, [mid]);
    expect(w).toEqual({
      '0': {
        requests: 10,
        prompt_tokens: 1000,
        generation_tokens: 400,
        prefix_hits: 600,
        prefix_queries: 1000,
        kv_usage_pct_max: 25,
      },
      '1': {
        requests: 8,
        prompt_tokens: 800,
        generation_tokens: 300,
        prefix_hits: 400,
        prefix_queries: 800,
        kv_usage_pct_max: 50,
      },
    });
    const sm = serverMetricsWindow(start, end, [mid]);
    expect(sm.per_engine).toEqual(w);
    expect(sm.tokens).toEqual({ prompt: 1800, generation: 700 });
  });

  it('no engine label (simulator) or a failed snapshot: no per-engine numbers rather than wrong ones', () => {
    expect(engineWindows(snap('vllm:num_requests_running 0\n'), snap('vllm:num_requests_running 0\n'), [])).toEqual({});
    expect(
      engineWindows([{ endpoint: 'x', samples: null, error: 'refused' }], snap(exposition({ '0': z })), []),
    ).toEqual({});
  });
});
