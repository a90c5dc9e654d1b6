import { describe, expect, it } from 'vitest';
import { stackEnv } from '@infersweep/testkit/stack';

/**
 * Sum every sample of a metric family (all label sets) in Prometheus text. A fresh simulator creates a
 * counter with its first request, so `absentIsZero` reads a not-yet-exposed counter as 0.
 */
function sumMetric(text: string, name: string, absentIsZero = false): number {
  let total = 0;
  let seen = false;
  for (const line of text.split('\n')) {
    if (line.startsWith(`${name}{`) || line.startsWith(`${name} `)) {
      total += Number(line.slice(line.lastIndexOf(' ') + 1));
      seen = true;
    }
  }
  if (!seen && !absentIsZero) throw new Error(`metric ${name} not exposed`);
  return total;
}

describe('smoke: llm-d-inference-sim', () => {
  it('streams chat completion tokens and moves its vllm: counters', async () => {
    const base = stackEnv().INFERSWEEP_SIM_URL;
    const before = sumMetric(await (await fetch(`${base}/metrics`)).text(), 'vllm:generation_tokens_total', true);

    const res = await fetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'infersweep-sim',
        messages: [{ role: 'user', content: 'smoke test: say something' }],
        max_tokens: 7,
        ignore_eos: true,
        stream: true,
        stream_options: { include_usage: true },
      }),
    });
    expect(res.status).toBe(200);
    const text = await res.text();
    const events = text
      .split('\n')
      .filter((l) => l.startsWith('data: ') && !l.includes('[DONE]'))
      .map((l) => JSON.parse(l.slice(6)));
    const contentChunks = events.filter((e) => e.choices?.[0]?.delta?.content);
    expect(contentChunks.length).toBeGreaterThan(0);
    const usage = events.find((e) => e.usage)?.usage;
    expect(usage.completion_tokens).toBe(7);

    const after = sumMetric(await (await fetch(`${base}/metrics`)).text(), 'vllm:generation_tokens_total');
    expect(after - before).toBeGreaterThanOrEqual(7);
  });
});
