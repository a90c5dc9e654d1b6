/**
 * A proxy in front of the simulator's `/metrics` that makes windows spuriously invalid for a reason
 * load does not cause (docs/statistics.md "Sixth registration"). It drops the
 * `vllm:prompt_tokens_total` samples from a response — from every response while `spoilAll` is set,
 * else with probability `rate` per response from a seeded generator — so a window whose end
 * snapshot lost them is invalid `server_metrics_missing: prompt-token counter delta unavailable`
 * (libs/agentx/src/server/window.ts). The drain gate and readiness read other metrics.
 *
 * A plan reaches it through its metrics endpoint: `http://127.0.0.1:<proxy>/{{HEAD_ADDR}}/{{PORT}}/metrics`
 * ({@link throughProxy}); the placeholders are filled per allocation, so the proxy learns the
 * simulator's address from the path. The client's requests go to the simulator directly.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { seededRng } from '@infersweep/stats';
import type { SweepPlan } from '@infersweep/topology';

const COUNTER = 'vllm:prompt_tokens_total';

export interface MetricsProxy {
  port: number;
  /** drop the counter from every response (the deterministic spoil of the per-commit search) */
  spoilAll: boolean;
  /** responses served, and those the counter was dropped from */
  readonly served: number;
  readonly spoiled: number;
  close(): Promise<void>;
}

export async function startMetricsProxy(opts: { rate: number; seed: number }): Promise<MetricsProxy> {
  const rng = seededRng(opts.seed);
  let served = 0;
  let spoiled = 0;
  const state = { spoilAll: false };
  const server: Server = createServer((req, res) => {
    const m = /^\/([^/]+)\/(\d+)\/metrics$/.exec(req.url ?? '');
    if (!m) {
      res.writeHead(404).end(`not a proxied metrics path: ${req.url}`);
      return;
    }
    fetch(`http://${m[1]}:${m[2]}/metrics`, { signal: AbortSignal.timeout(5000) })
      .then(async (up) => {
        const body = await up.text();
        // one draw per response, whatever the mode, so a seed's sequence does not depend on spoilAll
        const drop = rng.next() < opts.rate || state.spoilAll;
        served++;
        if (drop) spoiled++;
        const out = drop
          ? body
              .split('\n')
              .filter((l) => !l.startsWith(COUNTER))
              .join('\n')
          : body;
        res.writeHead(up.status, { 'content-type': up.headers.get('content-type') ?? 'text/plain' }).end(out);
      })
      .catch((e: unknown) => res.writeHead(502).end(String(e)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    get spoilAll() {
      return state.spoilAll;
    },
    set spoilAll(v: boolean) {
      state.spoilAll = v;
    },
    get served() {
      return served;
    },
    get spoiled() {
      return spoiled;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Point the plan's metrics endpoints at the proxy (the placeholders stay, filled per allocation). */
export function throughProxy(plan: SweepPlan, proxy: Pick<MetricsProxy, 'port'>): void {
  plan.metricsEndpoints = plan.metricsEndpoints.map((e) => {
    const m = /^http:\/\/([^/:]+):([^/]+)\/metrics$/.exec(e);
    if (!m) throw new Error(`not a simulator metrics endpoint: ${e}`);
    return `http://127.0.0.1:${proxy.port}/${m[1]}/${m[2]}/metrics`;
  });
}
