/**
 * The bash runner's first defect, reproduced on a real vLLM: its throughput (DEP) branch ran
 * `--data-parallel-hybrid-lb` on every node (an API server per node, each balancing only its own DP
 * ranks) while the client sent every request to node 0. The planner refuses that shape
 * (libs/topology/test/local-vllm.test.ts), so this test builds it by hand from the planner's DP=2 + EP
 * plan and launches it with the production activities on the local-vllm profile (MoE model + the
 * project's plugin; with one rank per node vLLM switches hybrid LB to external LB, the per-rank mode this
 * build allows only for MoE models — docs/vllm-cpu.md). Readiness is the bash runner's: node 0's /health and
 * model list, then one request. The point must end invalid with the idle rank named, while rank 1 is
 * shown healthy (its own API server answers a request) — it was idle, not dead.
 * The internal-LB plan of the same shape passes with every engine serving: local-vllm.int.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MockActivityEnvironment } from '@temporalio/testing';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { bindPlan, derivePorts, removeFlag, sweepPlanSchema, type SweepPlan } from '@infersweep/topology';
import { checkReadiness, pointResultSchema, probeCompletion } from '@infersweep/agentx';
import {
  CLUSTER_CONFIGS,
  currentDeploymentTag,
  defaultWorkerSettings,
  loadSweepConfig,
} from '@infersweep/orchestrator';
import { allocationJobName } from '@infersweep/core';
import { planSweep } from '@infersweep/topology';
import { createActivities } from '../src/activities';
import type { Allocation, Deployment } from '../src/activities/types';
import { stackEnv, toolsDir } from '@infersweep/testkit/stack';
import { localSlurm } from '@infersweep/testkit/sweep-harness';

const slurm = localSlurm();

/**
 * The bash runner's DEP branch on the planner's DP=2 + EP plan: every node drops `--headless` and gets
 * `--data-parallel-hybrid-lb --data-parallel-start-rank k` and its own API server. Clients still go to
 * node 0 only (endpoints unchanged) and the plan still expects engines 0 and 1 behind that endpoint.
 * All "nodes" share one host here, so node 1's API server listens on the plan's master port (unused
 * by a DP-only topology) instead of clashing with node 0's.
 */
export function seedHybridPlan(): SweepPlan {
  const { config, source } = loadSweepConfig({ config: CLUSTER_CONFIGS['local-vllm'], clusters: ['local-vllm'] });
  const plan = planSweep(config, { orientation: 'throughput', cluster: 'local-vllm', points: [2], source });
  const hybrid = (argv: readonly string[], rank: number): string[] => {
    const a = [...argv];
    for (const f of ['--headless', '--data-parallel-start-rank', '--port', '--api-server-count']) removeFlag(a, f);
    return [
      ...a,
      '--data-parallel-hybrid-lb',
      '--data-parallel-start-rank',
      String(rank),
      '--port',
      rank === 0 ? '{{PORT}}' : '{{MASTER_PORT}}',
      '--api-server-count',
      '1',
    ];
  };
  const nodes = plan.nodes.map((n) => ({
    ...n,
    serves: true,
    argv: hybrid(n.argv, n.rank),
    launchArgv: hybrid(n.launchArgv, n.rank),
  }));
  return sweepPlanSchema.parse({
    ...plan,
    nodes,
    notes: [...plan.notes, "test: the bash runner's hybrid-LB shape, built by hand"],
  });
}

describe("the bash runner's hybrid-LB shape on a real vLLM", () => {
  const acts = createActivities({ pollMs: 1000, settings: defaultWorkerSettings('local-vllm') });
  const sweepId = `hybrid-lb-${randomUUID().slice(0, 8)}`;
  // the activities act only for the workflow asking: the mock's workflow is this sweep
  const env = new MockActivityEnvironment({ workflowExecution: { workflowId: sweepId, runId: randomUUID() } });
  /** Run an activity in a mock activity context (heartbeats, cancellation signal), as a worker would. */
  const run = <T>(f: () => Promise<T>): Promise<T> => env.run(f) as Promise<T>;
  const resultsDir = join(stackEnv().INFERSWEEP_STACK, '..', 'test-results', 'sweeps', sweepId);
  let plan: SweepPlan;
  /** activities read the plan prepareSweep stored, as in a sweep */
  const planRef = () => ({ planHash: plan.planHash, resultsDir });
  const jobName = allocationJobName(sweepId, 1, currentDeploymentTag());
  let allocation: Allocation | undefined;
  let deployment: Deployment | undefined;

  beforeAll(async () => {
    if (!existsSync(join(toolsDir, 'vllm-venv', 'bin', 'vllm')))
      throw new Error(`no vLLM at ${toolsDir}/vllm-venv: run npm run setup (scripts/setup-vllm.sh)`);
    plan = seedHybridPlan();
    await run(() => acts.prepareSweep({ sweepId, planHash: plan.planHash, plan, resultsDir, points: [2] }));
  });
  afterAll(async () => {
    const dep = deployment;
    const alloc = allocation;
    if (dep)
      await run(() =>
        acts.captureLogs({
          planRef: planRef(),
          deployment: dep,
          destDir: join(resultsDir, 'logs', 'server-1'),
          reason: 'test end',
        }),
      ).catch(() => undefined);
    if (dep) await run(() => acts.stopServer({ planRef: planRef(), deployment: dep }));
    if (alloc) await run(() => acts.release({ planRef: planRef(), jobId: alloc.jobId, jobName: alloc.jobName }));
    // nothing of this test is left in squeue: its allocation (and with it the vLLM steps) is gone
    expect(await slurm.findOrphans(jobName)).toEqual([]);
  });

  it('every node serves, clients go to node 0: the point is invalid and names idle DP rank 1', async () => {
    expect(
      plan.nodes.map((n) => [
        n.serves,
        n.launchArgv.includes('--data-parallel-hybrid-lb'),
        n.launchArgv.includes('--headless'),
      ]),
    ).toEqual([
      [true, true, false],
      [true, true, false],
    ]);
    expect(plan.endpoints).toEqual(['http://{{HEAD_ADDR}}:{{PORT}}']);
    const alloc = await run(() =>
      acts.allocate({
        sweepId,
        planRef: planRef(),
        jobName,
        attempt: 1,
      }),
    );
    allocation = alloc;
    const dep = await run(() =>
      acts.launchServer({ sweepId, planRef: planRef(), allocation: alloc, serverIndex: 1, resultsDir }),
    );
    deployment = dep;
    expect(dep.expectedEngines).toEqual([0, 1]);
    const ports = derivePorts(alloc.jobId);
    const bound = bindPlan(plan, {
      jobId: alloc.jobId,
      nodes: alloc.nodes,
      headAddress: '127.0.0.1',
      nodeAddresses: alloc.nodes.map(() => '127.0.0.1'),
    });
    const node1 = `http://127.0.0.1:${ports.masterPort}`;
    expect(bound.nodes[1]!.launchArgv).toEqual(expect.arrayContaining(['--port', String(ports.masterPort)]));

    // the bash runner's readiness: node 0's health, model list and a completed request; nothing about engines
    const deadline = Date.now() + 900_000;
    let last = '';
    for (;;) {
      const st = await slurm.stepStatus(dep.steps[0]!);
      expect(st, `node 0's step: ${last}`).toBe('running');
      const r0 = await checkReadiness(dep.endpoints[0]!, plan.model.servedName, null);
      const r1 = await checkReadiness(node1, plan.model.servedName, null, { probe: false });
      if (r0.ready && r1.ready) break;
      last = `${r0.detail} | node 1: ${r1.detail}`;
      if (Date.now() > deadline) throw new Error(`hybrid deployment not ready: ${last}`);
      await new Promise((res) => setTimeout(res, 2000));
    }

    const summary = await run(() =>
      acts.runPoint({
        sweepId,
        planHash: plan.planHash,
        planRef: planRef(),
        deployment: dep,
        concurrency: 2,
        attempt: 1,
        allocationAttempt: 1,
        policy: 'shared-server',
        pointBudgetSeconds: plan.pointBudgets[0]!.totalSeconds,
        resultsDir,
        serverUsed: false,
      }),
    );
    expect(summary.valid).toBe(false);
    expect(summary.reasons.join('\n')).toMatch(/idle_dp_rank: idle DP rank 1/);
    expect(summary.reasons.join('\n')).toMatch(/engine 1 absent/);

    const record = pointResultSchema.parse(JSON.parse(readFileSync(summary.resultPath!, 'utf8')));
    expect(record.submission_valid).toBe(false);
    const ready = record.idle_rank_checks.find((c) => c.phase === 'readiness')!;
    expect(ready).toMatchObject({ applicable: true, ok: false, missing: [1], present: [0] });
    const post = record.idle_rank_checks.find((c) => c.phase === 'post-warmup')!;
    expect(post).toMatchObject({ applicable: true, ok: false, missing: [1] });
    expect(post.perEngine['0']).toBeGreaterThan(0);
    expect(post.perEngine['1']).toBe(0);
    // no profile was measured on a deployment that hides half its GPUs
    expect(record.timing.profiling_started_at).toBeNull();

    // rank 1 was idle, not dead: its own API server (which no client knew of) completes a request
    expect(await probeCompletion(node1, plan.model.servedName, 60_000)).toBeNull();
  }, 1_500_000);
});
