import { describe, expect, it, vi } from 'vitest';
import { planSweep, parseSweepConfig, type SweepPlan } from '@infersweep/topology';
import { readFileSync } from 'node:fs';
import { EXIT, ExitWith } from '../src/ops/cli';
import { launchable } from '../src/ops/plans';

/**
 * Sweeps launch a disaggregated orientation behind llm-d's pd-sidecar (the local profile's stand-in router); one
 * behind another router is refused when named, left out aloud under `all`.
 */
const file = 'configs/kimik3-fp4-h200.yaml';
const text = readFileSync(new URL(`../../../${file}`, import.meta.url), 'utf8');
const { config, source } = parseSweepConfig(text, { file, env: { INFERSWEEP_STACK: '/stack' } });
const plans: SweepPlan[] = ['latency', 'pd-1p1d'].map((orientation) =>
  planSweep(config, { orientation, cluster: 'h200', source }),
);
const local = planSweep(config, { orientation: 'pd-1p1d', cluster: 'local', source });

describe('launchable (apps/cli/src/ops/plans.ts)', () => {
  it('refuses a named disaggregated orientation with a usage error (exit 2) that says why', () => {
    let caught: unknown;
    try {
      launchable([plans[1]!], 'pd-1p1d');
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(ExitWith);
    expect((caught as ExitWith).code).toBe(EXIT.usage);
    expect((caught as Error).message).toMatch(
      /pd-1p1d \(router vllm-router\) is disaggregated .*launch P\/D deployments behind router llm-d-pd-sidecar only/,
    );
  });

  it('launches a disaggregated orientation behind llm-d-pd-sidecar (the local profile stands it in for vllm-router)', () => {
    expect(local.disaggregation?.router.kind).toBe('llm-d-pd-sidecar');
    expect(launchable([local], 'pd-1p1d')).toEqual([local]);
    expect(launchable([plans[0]!, local], 'all')).toEqual([plans[0], local]);
  });

  it('under --orientation all keeps the aggregated plans and prints which it left out', () => {
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      expect(launchable(plans, 'all').map((p) => p.orientation)).toEqual(['latency']);
      expect(spy.mock.calls.map((c) => String(c[0])).join('')).toMatch(
        /leaving out disaggregated orientation\(s\) pd-1p1d \(router vllm-router\)/,
      );
    } finally {
      spy.mockRestore();
    }
    expect(() => launchable([plans[1]!], 'all')).toThrow(/no orientation can be launched/);
    expect(launchable([plans[0]!], 'latency')).toEqual([plans[0]]);
  });
});
