import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseSweepConfig, planSweep } from '@infersweep/topology';
import { checkEveryEndpoint, readinessTargets, type checkReadiness, type ReadinessResult } from '@infersweep/agentx';

const shipped = readFileSync(new URL('../../../configs/kimik3-fp4-h200.yaml', import.meta.url), 'utf8');
const hybridText = shipped.replace(
  'topology: { tp: 1, pp: 2, dp: 16, ep: 16, nodes: 4 }',
  'topology: { tp: 1, pp: 2, dp: 16, ep: 16, nodes: 4, lbMode: hybrid }',
);
const planOf = (text: string, orientation: string) => {
  const { config } = parseSweepConfig(text, {
    file: 'configs/kimik3-fp4-h200.yaml',
    env: { INFERSWEEP_STACK: '/stack' },
  });
  return planSweep(config, { orientation, cluster: 'h200' });
};

const ready: ReadinessResult = {
  ready: true,
  state: 'ready',
  reason: null,
  detail: 'ready',
  models: ['m'],
  idleRanks: { ok: true, phase: 'readiness', expected: [], served: {}, idle: [], message: null } as never,
};

/** A readiness probe that records what it was asked and answers from `answers` by endpoint. */
function recorder(answers: Record<string, ReadinessResult>) {
  const calls: Array<{ endpoint: string; engines: number[] | null | undefined; metrics: string | undefined }> = [];
  const check = (async (endpoint, _model, engines, opts) => {
    calls.push({ endpoint, engines, metrics: opts?.metricsEndpoint });
    return answers[endpoint] ?? ready;
  }) as typeof checkReadiness;
  return { calls, check };
}

describe('readiness of every endpoint (rule 19)', () => {
  it('hybrid LB: each serving node is checked at its own endpoint for its own DP ranks', async () => {
    const p = planOf(hybridText, 'throughput');
    expect(p.topology.lbMode).toBe('hybrid');
    const targets = readinessTargets(p.endpoints, p.metricsEndpoints, p.engineIds);
    expect(targets.map((t) => t.engines)).toEqual([
      [0, 1, 2, 3],
      [4, 5, 6, 7],
      [8, 9, 10, 11],
      [12, 13, 14, 15],
    ]);
    const { calls, check } = recorder({});
    const r = await checkEveryEndpoint(targets, 'moonshotai/Kimi-K3', check);
    expect(r.ready).toBe(true);
    expect(r.detail).toBe('ready (4 endpoints)');
    expect(calls.map((c) => [c.endpoint, c.metrics, c.engines])).toEqual(
      targets.map((t) => [t.endpoint, t.metricsEndpoint, t.engines]),
    );
  });

  it('a deployment whose second endpoint is not ready is not ready, and the detail names that endpoint', async () => {
    const p = planOf(hybridText, 'throughput');
    const targets = readinessTargets(p.endpoints, p.metricsEndpoints, p.engineIds);
    const second = targets[1]!.endpoint;
    const { check } = recorder({
      [second]: {
        ...ready,
        ready: false,
        state: 'failed',
        reason: 'DP ranks 5 missing',
        detail: 'failed: DP ranks 5 missing',
      },
    });
    const r = await checkEveryEndpoint(targets, 'moonshotai/Kimi-K3', check);
    expect(r).toMatchObject({ ready: false, state: 'failed', detail: `${second}: failed: DP ranks 5 missing` });
  });

  it('internal LB: one endpoint with every engine; the simulator has no engine labels', () => {
    const p = planOf(shipped, 'ix-balanced');
    expect(readinessTargets(p.endpoints, p.metricsEndpoints, p.engineIds).map((t) => t.engines)).toEqual([
      [0, 1, 2, 3],
    ]);
    expect(readinessTargets(['http://a:8000'], ['http://a:8000/metrics'], { labelled: false })).toEqual([
      { endpoint: 'http://a:8000', metricsEndpoint: 'http://a:8000/metrics', engines: null },
    ]);
    expect(() => readinessTargets(['a', 'b'], ['a/metrics'], { labelled: false })).toThrow(/2 endpoints but 1 metrics/);
  });
});
