/**
 * The result-reuse wiring of `runPoint` (../src/activities/point.ts): a retried or resumed point
 * whose valid record this sweep and plan already published is returned as it is, `reused: true`,
 * without reaching the cluster (no executor, so no squeue, no drain gate, no client, no GPU time).
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { describe, expect, it } from 'vitest';
import { ResultsLayout } from '@infersweep/core';
import { planSweep } from '@infersweep/topology';
import { loadSweepConfig } from '../src/config-file';
import { ActivityContext, defaultDeps } from '../src/activities/context';
import { pointActivities } from '../src/activities/point';
import type { PointRequest } from '../src/activities/types';
import { defaultWorkerSettings } from '../src/worker-settings';
import { POINT_RECORD_FILE } from '@infersweep/testkit/runs-fixture';

/** A record the real point activity wrote (it validates against libs/agentx's pointResultSchema). */
const real = JSON.parse(readFileSync(POINT_RECORD_FILE, 'utf8')) as {
  conc: number;
  submission_valid: boolean;
  identity: Record<string, unknown>;
};

const root = mkdtempSync(join(tmpdir(), 'infersweep-reuse-'));
const env = { HOME: '/home/u', INFERSWEEP_STACK: '/stack', INFERSWEEP_DATA: root };
const loaded = loadSweepConfig({ clusters: ['local'], env });
const plan = planSweep(loaded.config, { orientation: 'latency', cluster: 'local', points: [2], source: loaded.source });
const sweepId = 'sweep-reuse-test';

function request(resultsDir: string): PointRequest {
  return {
    planRef: { planHash: plan.planHash, resultsDir },
    sweepId,
    planHash: plan.planHash,
    deployment: {
      jobId: '401',
      nodes: ['node1'],
      headNode: 'node1',
      serverIndex: 0,
      steps: [],
      endpoints: ['http://127.0.0.1:1/v1'],
      metricsEndpoints: ['http://127.0.0.1:1/metrics'],
      expectedEngines: null,
      logDir: join(resultsDir, 'logs'),
      launchedAt: '2026-01-01T00:00:00Z',
    },
    concurrency: 2,
    attempt: 2,
    allocationAttempt: 1,
    policy: 'shared-server',
    pointBudgetSeconds: 600,
    resultsDir,
    serverUsed: true,
  };
}

describe('runPoint reuses a published valid record', () => {
  it('returns the stored point with reused: true and never reaches the cluster', async () => {
    const resultsDir = join(root, sweepId);
    const layout = new ResultsLayout(resultsDir);
    mkdirSync(layout.pointDir(2), { recursive: true });
    // the stored plan, as prepareSweep leaves it: without the reuse, runPoint would read it and go on to the cluster
    writeFileSync(layout.planFile, JSON.stringify(plan));
    expect(real.submission_valid).toBe(true);
    writeFileSync(
      layout.pointRecord(2),
      JSON.stringify({ ...real, conc: 2, identity: { ...real.identity, sweepId, planHash: plan.planHash } }),
    );
    const reached: string[] = [];
    const ctx = new ActivityContext(
      defaultDeps({
        settings: defaultWorkerSettings('local', env),
        executorFor: (login) => {
          reached.push(JSON.stringify(login));
          throw new Error('runPoint reached the cluster for a point it had already measured');
        },
      }),
    );
    const summary = await new MockActivityEnvironment({
      workflowExecution: { workflowId: sweepId, runId: 'run-1' },
    }).run(() => pointActivities(ctx).runPoint(request(resultsDir)));
    expect(summary).toMatchObject({ concurrency: 2, valid: true, reused: true, resultPath: layout.pointRecord(2) });
    expect(reached).toEqual([]);
  });
});
