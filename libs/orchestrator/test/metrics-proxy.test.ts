/**
 * The metrics proxy of the real-stack search tests (./metrics-proxy.ts), against a stand-in upstream
 * serving a fixed exposition: it drops the prompt-token counter and nothing else, from every
 * response while spoilAll is set and from about `rate` of them otherwise, and the plan's metrics
 * endpoint keeps its placeholders.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SweepPlan } from '@infersweep/topology';
import { startMetricsProxy, throughProxy } from './metrics-proxy';

const EXPOSITION = [
  '# TYPE vllm:prompt_tokens_total counter',
  'vllm:prompt_tokens_total{model_name="m"} 1234',
  'vllm:generation_tokens_total{model_name="m"} 567',
  'vllm:num_requests_running{model_name="m"} 2',
  '',
].join('\n');

let upstream: Server;
let port: number;
beforeAll(async () => {
  upstream = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end(EXPOSITION));
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  port = (upstream.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => upstream.close(() => resolve())));

const scrape = async (proxyPort: number) =>
  (await fetch(`http://127.0.0.1:${proxyPort}/127.0.0.1/${port}/metrics`)).text();

describe('the metrics proxy', () => {
  it('passes the exposition through at rate 0, drops only the prompt-token samples under spoilAll', async () => {
    const proxy = await startMetricsProxy({ rate: 0, seed: 1 });
    try {
      expect(await scrape(proxy.port)).toBe(EXPOSITION);
      proxy.spoilAll = true;
      const spoiled = await scrape(proxy.port);
      expect(spoiled).not.toMatch(/^vllm:prompt_tokens_total/m);
      expect(spoiled).toContain('vllm:generation_tokens_total{model_name="m"} 567');
      expect(spoiled).toContain('vllm:num_requests_running{model_name="m"} 2');
      expect([proxy.served, proxy.spoiled]).toEqual([2, 1]);
    } finally {
      await proxy.close();
    }
  });

  it('spoils about `rate` of the responses', async () => {
    const proxy = await startMetricsProxy({ rate: 0.05, seed: 7 });
    try {
      let dropped = 0;
      for (let i = 0; i < 400; i++) if (!(await scrape(proxy.port)).includes('vllm:prompt_tokens_total{')) dropped++;
      // binomial(400, 0.05): mean 20, SD 4.4
      expect(dropped).toBeGreaterThanOrEqual(8);
      expect(dropped).toBeLessThanOrEqual(32);
      expect(proxy.spoiled).toBe(dropped);
    } finally {
      await proxy.close();
    }
  });

  it('puts itself in front of the plan metrics endpoint, placeholders kept for the allocation', () => {
    const plan = { metricsEndpoints: ['http://{{HEAD_ADDR}}:{{PORT}}/metrics'] } as SweepPlan;
    throughProxy(plan, { port: 4321 });
    expect(plan.metricsEndpoints).toEqual(['http://127.0.0.1:4321/{{HEAD_ADDR}}/{{PORT}}/metrics']);
  });
});
