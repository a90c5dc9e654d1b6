/**
 * A disaggregated (P/D) orientation on the local stack, end to end through the production activities: the
 * shipped `pd-1p1d` orientation on the `local` profile runs a simulator per role (prefill on nodes 0–1,
 * decode on nodes 2–3, each role's second node a stand-in) and llm-d's pd-sidecar in front of the decode
 * worker (a Slurm step of its own), which sends each request's prefill to the prefiller the request's
 * `x-prefiller-host-port` header names and then the request to its decode worker. The point counts the
 * requests each role's simulator finished over the profile window (`vllm:request_success_total`; the prefill
 * simulator counts a prefill as `finish_reason="remote_decode"`) against the client's: both roles served
 * every measured request. Without the header the sidecar sends everything to its decode worker (llm-d's
 * decode-only path): the prefill role is idle and the point invalid. The same deployment then measures a
 * point with aiperf as the client: it sends the header with `--header` and the same role gate counts both
 * roles over its run; the point's InferenceX export validates against the strict schema.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MockActivityEnvironment } from '@temporalio/testing';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SweepPlan } from '@infersweep/topology';
import {
  inferencexAggSchema,
  inferencexContext,
  parsePrometheus,
  pointResultSchema,
  readRequestRecords,
  scrapeText,
  toInferencex,
} from '@infersweep/agentx';
import { currentDeploymentTag, defaultWorkerSettings } from '@infersweep/orchestrator';
import { allocationJobName } from '@infersweep/core';
import { createActivities } from '../src/activities';
import type { Allocation, Deployment } from '../src/activities/types';
import { stackEnv, toolsDir } from '@infersweep/testkit/stack';
import { localSlurm, notSaturationGated, testPlan } from '@infersweep/testkit/sweep-harness';
import { assertAiperfAvailable, measureWithLocalAiperf } from '@infersweep/testkit/aiperf-env';

const slurm = localSlurm();

/** Requests the prefill simulator answered as prefills (`finish_reason="remote_decode"`), from its /metrics. */
async function remotePrefills(metricsEndpoint: string): Promise<number> {
  const samples = parsePrometheus(await scrapeText(metricsEndpoint, 5)).samples;
  return samples
    .filter(
      (s) =>
        s.name === 'vllm:request_success_total' &&
        (s.labels.finish_reason ?? s.labels.finished_reason) === 'remote_decode',
    )
    .reduce((a, s) => a + s.value, 0);
}

describe('P/D on the local stack: llm-d pd-sidecar in front of simulator roles', () => {
  const acts = createActivities({ pollMs: 500, settings: defaultWorkerSettings('local') });
  const sweepId = `pd-sidecar-${randomUUID().slice(0, 8)}`;
  const env = new MockActivityEnvironment({ workflowExecution: { workflowId: sweepId, runId: randomUUID() } });
  const run = <T>(f: () => Promise<T>): Promise<T> => env.run(f) as Promise<T>;
  const resultsDir = join(stackEnv().INFERSWEEP_STACK, '..', 'test-results', 'sweeps', sweepId);
  let plan: SweepPlan;
  /** The same orientation measured by aiperf (its own plan hash, so its own results folder). */
  let aiperfPlan: SweepPlan;
  const aiperfResultsDir = `${resultsDir}-aiperf`;
  const planRef = () => ({ planHash: plan.planHash, resultsDir });
  const jobName = allocationJobName(sweepId, 1, currentDeploymentTag());
  let allocation: Allocation | undefined;
  let deployment: Deployment | undefined;
  /** One point on a deployment, through the production point activity. */
  const point = (p: SweepPlan, dir: string, deployment: Deployment, concurrency: number, serverUsed: boolean) =>
    run(() =>
      acts.runPoint({
        sweepId,
        planHash: p.planHash,
        planRef: { planHash: p.planHash, resultsDir: dir },
        deployment,
        concurrency,
        attempt: 1,
        allocationAttempt: 1,
        policy: 'shared-server',
        pointBudgetSeconds: p.pointBudgets.find((b) => b.concurrency === concurrency)!.totalSeconds,
        resultsDir: dir,
        serverUsed,
      }),
    );

  beforeAll(async () => {
    if (!existsSync(join(toolsDir, 'bin', 'pd-sidecar')))
      throw new Error(`no pd-sidecar at ${toolsDir}/bin: run npm run setup (scripts/setup-pd-router.sh)`);
    plan = testPlan('pd-1p1d', [1, 2], notSaturationGated);
    await run(() => acts.prepareSweep({ sweepId, planHash: plan.planHash, plan, resultsDir, points: [1, 2] }));
    assertAiperfAvailable();
    aiperfPlan = testPlan('pd-1p1d', [2], (p) => {
      notSaturationGated(p);
      measureWithLocalAiperf(p);
      p.engine.maxModelLen = 8192;
    });
    const a = aiperfPlan;
    await run(() =>
      acts.prepareSweep({ sweepId, planHash: a.planHash, plan: a, resultsDir: aiperfResultsDir, points: [2] }),
    );
  });
  afterAll(async () => {
    const dep = deployment;
    const alloc = allocation;
    if (dep)
      await run(() =>
        acts.captureLogs({ planRef: planRef(), deployment: dep, destDir: join(resultsDir, 'logs'), reason: 'end' }),
      ).catch(() => undefined);
    // releasing the allocation ends its steps (the simulators and the sidecar); findOrphans checks it did
    if (alloc) await run(() => acts.release({ planRef: planRef(), jobId: alloc.jobId, jobName: alloc.jobName }));
    expect(await slurm.findOrphans(jobName)).toEqual([]);
  });

  it('both roles serve every measured request; without the prefiller header the idle prefill role invalidates the point', async () => {
    const pd = plan.disaggregation!;
    expect(pd.router.kind).toBe('llm-d-pd-sidecar');
    expect(pd.roles.map((r) => [r.role, r.workerNodes])).toEqual([
      ['prefill', [[0, 1]]],
      ['decode', [[2, 3]]],
    ]);
    const alloc = await run(() => acts.allocate({ sweepId, planRef: planRef(), jobName, attempt: 1 }));
    allocation = alloc;
    const dep = await run(() =>
      acts.launchServer({ sweepId, planRef: planRef(), allocation: alloc, serverIndex: 1, resultsDir }),
    );
    deployment = dep;
    // four node steps and the sidecar's, on the decode worker's head node
    expect(dep.steps.map((s) => [s.stepName, s.node])).toEqual([
      ...alloc.nodes.map((n, i) => [`infersweep-server1-r${i}`, n]),
      ['infersweep-server1-router', alloc.nodes[2]],
    ]);
    const [prefillMetrics, decodeMetrics] = dep.metricsEndpoints;
    const prefillHostPort = prefillMetrics!.replace(/^http:\/\//, '').replace(/\/metrics$/, '');
    expect(dep.requestHeaders).toEqual({ 'x-prefiller-host-port': prefillHostPort });
    expect(decodeMetrics).not.toBe(prefillMetrics);
    // readiness of every role: each worker on its own, then a P/D probe through the sidecar
    await run(() => acts.waitReady({ planRef: planRef(), deployment: dep, startupBudgetSeconds: 60 }));

    const prefillsBefore = await remotePrefills(prefillMetrics!);
    const good = await point(plan, resultsDir, dep, 2, false);
    expect(good.reasons).toEqual([]);
    expect(good.valid).toBe(true);
    const record = pointResultSchema.parse(JSON.parse(readFileSync(good.resultPath!, 'utf8')));
    const checks = record.role_checks!;
    expect(checks.map((c) => [c.role, c.ok])).toEqual([
      ['prefill', true],
      ['decode', true],
    ]);
    const measured = checks[0]!.client_requests!;
    expect(measured).toBeGreaterThanOrEqual(10);
    for (const c of checks) expect(Math.abs(c.served! - measured)).toBeLessThanOrEqual(c.tolerance!);
    // the prefill role's requests were prefills handed over to the decode worker, not whole requests
    expect((await remotePrefills(prefillMetrics!)) - prefillsBefore).toBeGreaterThanOrEqual(checks[0]!.served!);

    // the sidecar without a prefiller header: every request straight to the decode worker
    const { requestHeaders: _prefillers, ...bypass } = dep;
    const bad = await point(plan, resultsDir, bypass, 1, true);
    expect(bad.valid).toBe(false);
    expect(bad.reasons).toEqual([
      `pd_role: idle prefill role: no request finished on its workers (${prefillMetrics}) during the profile`,
    ]);
    const badRecord = pointResultSchema.parse(JSON.parse(readFileSync(bad.resultPath!, 'utf8')));
    expect(badRecord.submission_valid).toBe(false);
    expect(badRecord.role_checks!.map((c) => [c.role, c.served === 0, c.ok])).toEqual([
      ['prefill', true, false],
      ['decode', false, true],
    ]);
  }, 120_000);

  it('aiperf as the client: --header carries the prefillers, both roles serve its requests, the export is InferenceX-shaped', async () => {
    const dep = deployment;
    if (dep === undefined) throw new Error('no deployment: the first test of this file launches it');
    const [prefillMetrics] = dep.metricsEndpoints;
    const prefillsBefore = await remotePrefills(prefillMetrics!);
    const summary = await point(aiperfPlan, aiperfResultsDir, dep, 2, true);
    // PyPI aiperf runs with --unsafe-override (argv.ts): never submittable, and nothing else against the point
    expect(summary.reasons).toEqual(['aiperf:unsafe_override']);
    const record = pointResultSchema.parse(JSON.parse(readFileSync(summary.resultPath!, 'utf8')));
    expect(record.client.name).toBe('aiperf');
    // the header went to aiperf as its --header, one JSON object (libs/agentx/src/aiperf/argv.ts)
    const command = readFileSync(record.artifacts.command!, 'utf8');
    expect(command).toContain(`--header '${JSON.stringify(dep.requestHeaders)}'`);
    // the role gate over aiperf's run: every successful request went through both roles
    const checks = record.role_checks!;
    expect(checks.map((c) => [c.role, c.ok])).toEqual([
      ['prefill', true],
      ['decode', true],
    ]);
    const requests = readRequestRecords(record.artifacts.requests_jsonl!);
    expect(checks[0]!.client_requests).toBe(requests.filter((r) => r.ok).length);
    expect(record.num_requests_successful).toBeGreaterThanOrEqual(5);
    for (const c of checks) expect(Math.abs(c.served! - c.client_requests!)).toBeLessThanOrEqual(c.tolerance!);
    expect((await remotePrefills(prefillMetrics!)) - prefillsBefore).toBeGreaterThanOrEqual(checks[0]!.served!);

    // InferenceX's export of the point, with aiperf's own server-metrics export as `results --format inferencex`
    // reads it: the strict schema (the key sets of InferenceX's stable-schema test), both roles' own sources.
    // InferenceX's processor on such artifacts: libs/agentx/test/inferencex-export.test.ts (a recorded run).
    const aiperfServerMetrics = JSON.parse(
      readFileSync(join(record.artifacts.raw_dir!, 'server_metrics_export.json'), 'utf8'),
    ) as unknown;
    const agg = toInferencex(record, inferencexContext(aiperfPlan), { requests, aiperfServerMetrics });
    expect(inferencexAggSchema.parse(agg)).toEqual(agg);
    expect(agg).toMatchObject({
      disagg: true,
      kv_p2p_transfer: 'nixl',
      num_requests_successful: record.num_requests_successful,
    });
    const sourceOf = (metrics: string) => agg.server_metrics.sources.find((x) => x.id === `combined|${metrics}`);
    for (const m of dep.metricsEndpoints) expect(sourceOf(m)?.prompt_tokens).toBeGreaterThan(0);
  }, 90_000);
});
