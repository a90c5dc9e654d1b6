/**
 * InferenceX fidelity end to end on the real stack (Temporal dev server, local Slurm over the loopback sshd, the
 * simulator with its KV cache on, launched through srun): a sweep measured by infersweep's own AgentX
 * client and one measured by the pinned aiperf (PyPI flavour, the configured synthetic traces) both
 * produce point records, and `infersweep results ID --format inferencex` converts them into InferenceX
 * aggregated agentic results.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@temporalio/client';
import type { SweepResult } from '@infersweep/sweep';
import { inferencexAggSchema, readRequestRecords } from '@infersweep/agentx';
import { repoRoot } from '@infersweep/testkit/stack';
import { assertAiperfAvailable, measureWithLocalAiperf } from '@infersweep/testkit/aiperf-env';
import {
  cleanupStarted,
  client as connect,
  localSlurm,
  readPoint,
  startOnNewWorker,
  testInput,
  testPlan,
} from '@infersweep/testkit/sweep-harness';

const slurm = localSlurm();
let c: Client;
beforeAll(async () => {
  c = await connect();
});
afterEach(async () => {
  await cleanupStarted(slurm);
});
afterAll(async () => {
  await c?.connection.close();
});

/**
 * `bin/infersweep results ID --format inferencex --next-to-points [--include-invalid]` as a subprocess (the
 * PyPI aiperf point is invalid by design, `aiperf:unsafe_override`: only `--include-invalid` exports it).
 */
function convert(sweepId: string, includeInvalid: boolean): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      join(repoRoot, 'bin', 'infersweep'),
      [
        'results',
        sweepId,
        '--format',
        'inferencex',
        '--next-to-points',
        ...(includeInvalid ? ['--include-invalid'] : []),
      ],
      { cwd: repoRoot, timeout: 120_000 },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

async function runAndConvert(tag: string, client: 'infersweep' | 'aiperf') {
  const plan = testPlan('latency', [2], (p) => {
    p.agentx.client = client;
    if (client === 'aiperf') measureWithLocalAiperf(p);
  });
  expect(plan.agentx.requireCachedTokens).toBe(true); // prefix caching on ⇒ the cached-token gate is on
  expect(plan.nodes[0]!.launchArgv).toContain('--enable-kvcache');
  const input = testInput(plan, tag);
  const { worker, h } = await startOnNewWorker(c, input);
  const result = (await worker.runUntil(h.result())) as SweepResult;
  expect(result.points.map((p) => p.concurrency)).toEqual([2]);
  const record = readPoint(input.resultsDir, 2);
  if (client === 'aiperf') {
    const refused = await convert(input.sweepId, false);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('left out (invalid): ');
    expect(refused.stderr).toContain('aiperf:unsafe_override');
  }
  const conv = await convert(input.sweepId, client === 'aiperf');
  expect(conv.code, conv.stderr).toBe(0);
  const file = conv.stdout
    .trim()
    .split('\n')
    .find((l) => l.endsWith('_conc2.json'));
  expect(file, conv.stdout).toBeDefined();
  expect(file!.startsWith(join(input.resultsDir, 'points', 'c2'))).toBe(true);
  const agg = inferencexAggSchema.parse(JSON.parse(readFileSync(file!, 'utf8')));
  return { result, record, agg, input };
}

describe('both AgentX clients in a sweep, exported for InferenceX', () => {
  it('infersweep client: a valid record with cached tokens on multi-turn requests, converted', async () => {
    const { result, record, agg } = await runAndConvert('own', 'infersweep');
    expect(result.status).toBe('completed');
    expect(record.client.name).toBe('infersweep');
    expect(record.submission_invalid_reasons).toEqual([]);
    expect(record.submission_valid).toBe(true);
    expect(record.identity.hw).toBe('fake');
    const lines = readRequestRecords(record.artifacts.requests_jsonl!);
    expect(
      lines.filter((l) => l.phase === 'profiling' && l.turn > 0).reduce((s, l) => s + (l.cached_tokens ?? 0), 0),
    ).toBeGreaterThan(0);
    expect(agg).toMatchObject({
      hw: 'fake',
      conc: 2,
      framework: 'vllm',
      infmax_model_prefix: 'kimik3',
      precision: 'fp4',
      tp: 8,
      is_multinode: true,
      prefill_pp: 2,
    });
    expect(agg.num_requests_successful).toBe(record.num_requests_successful);
    // InferenceX reads the KV pool from the server logs' "GPU KV cache size" lines, which the simulator does not
    // write; the record keeps the /metrics pool (the simulator's vllm:cache_config_info) as its cross-check
    expect(agg.kv_cache_pool_tokens).toBeNull();
    expect(record.server_metrics.kv_cache.gpu_total_tokens).toBeGreaterThan(0);
    expect(agg.recipe_fingerprint).toMatch(/^[0-9a-f]{16}$/);
  });

  it('aiperf client: the pinned aiperf runs the point, its export parsed into the same record, converted', async () => {
    assertAiperfAvailable();
    const { record, agg, input } = await runAndConvert('aiperf', 'aiperf');
    expect(record.client.name).toBe('aiperf');
    expect(record.num_requests_successful).toBeGreaterThan(0);
    // PyPI aiperf needs --unsafe-override for the per-trace idle cap: the run is stamped non-submittable
    expect(record.submission_invalid_reasons).toContain('aiperf:unsafe_override');
    expect(
      record.submission_invalid_reasons.filter(
        (r) => !r.startsWith('aiperf:') && !r.startsWith('insufficient_profile_metric_coverage'),
      ),
    ).toEqual([]);
    const pointDir = join(input.resultsDir, 'points', 'c2');
    expect(readFileSync(join(pointDir, 'benchmark_command.txt'), 'utf8')).toContain(
      'profile --scenario inferencex-agentx-mvp',
    );
    expect(readdirSync(join(pointDir, 'traces')).length).toBeGreaterThan(0);
    expect(agg.conc).toBe(2);
    expect(agg.num_requests_successful).toBe(record.num_requests_successful);
    expect(agg.warnings?.[0]).toMatch(/^infersweep: INVALID point, not a submittable result: .*aiperf:unsafe_override/);
  });
});
