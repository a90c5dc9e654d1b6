import { describe, expect, it } from 'vitest';
import { deriveEngineSettings } from '../../src/plan/derive-engine-settings';
import { planAgentx } from '../../src/plan/plan-agentx';
import { planAllocation } from '../../src/plan/plan-allocation';
import { resolveOverride } from '../../src/plan/resolve-override';
import { resolveTopology } from '../../src/plan/resolve-topology';
import { selectPoints } from '../../src/plan/select-points';
import { edit, shippedText } from '../helpers';
import { configErrorOf, draftOf } from './fixture';

function allocationOf(orientation: string, cluster: string, text = shippedText) {
  const d = draftOf(orientation, cluster, text);
  const topology = resolveTopology(d);
  const { agentx, budgets } = planAgentx(d);
  const points = selectPoints(d);
  const settings = deriveEngineSettings(d, topology, points, agentx);
  const override = resolveOverride(d, topology, agentx);
  return { d, run: () => planAllocation(d, points, budgets, agentx, settings, override) };
}

describe('planAllocation', () => {
  it('shared-server: one allocation for all points, its limit summing every point', () => {
    const a = allocationOf('latency', 'local').run();
    expect(a.deployment).toEqual({ policy: 'shared-server', maxAllocationAttempts: 3, allocations: 1 });
    expect(a.pointBudgets.map((p) => p.totalSeconds)).toEqual([60, 60, 60, 60]);
    expect(a.timeLimit.derivation).toContain('4 × (warmup 20 s + profile 10 s + drain 30 s)');
  });

  it('allocation-per-point: one allocation per point, each limited to one point', () => {
    const a = allocationOf('ix-balanced', 'h200').run();
    expect(a.deployment).toMatchObject({ policy: 'allocation-per-point', pointsPerAllocation: 1, allocations: 12 });
    expect(a.timeLimit.derivation).toMatch(/^per allocation \(one point each\)/);
  });

  it("a limit over the partition's MaxTime is refused with the ways out", () => {
    const e = configErrorOf(allocationOf('latency', 'h200', edit('maxWallMinutes: 720', 'maxWallMinutes: 60')).run);
    expect(e.issues.map((i) => i.path)).toEqual(['clusters.h200.maxWallMinutes']);
    expect(e.issues[0]!.message).toContain('deployment.policy: allocation-per-point');
  });

  it("vLLM's own readiness wait longer than the startup budget is a warning", () => {
    const { d, run } = allocationOf(
      'latency',
      'h200',
      edit('VLLM_ENGINE_READY_TIMEOUT_S: "7200"', 'VLLM_ENGINE_READY_TIMEOUT_S: "9000"'),
    );
    run();
    expect(d.warnings.join('\n')).toContain('VLLM_ENGINE_READY_TIMEOUT_S=9000 exceeds budgets.startupSeconds 7200');
  });
});
