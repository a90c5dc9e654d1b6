/**
 * The Temporal of the workflow unit tests: TestWorkflowEnvironment.createLocal on the repo's Temporal
 * CLI (.tools/bin/temporal) with the search attributes the workflows write, and workers of the real
 * workflow bundle with mocked activities behind the real activity interceptor. createTimeSkipping
 * would download the Java test server from temporal.download, which this project's machines cannot
 * reach; nothing in these tests waits on a timer long enough to need skipping.
 */
import { existsSync } from 'node:fs';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { searchAttributeKeys, type PointSummary, type SweepInput } from '@infersweep/sweep';
import { bundlerOptions, workflowsPath } from '@infersweep/orchestrator';
import { sweepActivityInterceptors } from '../src/activities';
import type { Allocation, Deployment, SweepActivities } from '../src/activities/types';
import { temporalBinary } from '@infersweep/testkit/stack';

export async function unitWorkflowEnv(): Promise<TestWorkflowEnvironment> {
  if (!existsSync(temporalBinary))
    throw new Error(`${temporalBinary} is missing: run npm run setup (or set INFERSWEEP_TOOLS)`);
  try {
    Runtime.install({ logger: new DefaultLogger('ERROR') });
  } catch {
    // installed already
  }
  return TestWorkflowEnvironment.createLocal({
    server: {
      executable: { type: 'existing-path', path: temporalBinary },
      searchAttributes: Object.values(searchAttributeKeys),
    },
  });
}

/** A worker of the real workflows on `taskQueue` with these activities, running until `stop`. */
export async function mockedWorker(
  env: TestWorkflowEnvironment,
  taskQueue: string,
  activities: object,
): Promise<{ worker: Worker; stop(): Promise<void> }> {
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowsPath,
    bundlerOptions,
    activities,
    interceptors: { activity: [sweepActivityInterceptors({ heartbeatMs: 1000 })] },
  });
  const running = worker.run();
  return {
    worker,
    stop: async () => {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
    },
  };
}

/** A sweep input for mocked activities: three points of a `balanced` orientation, results under /results. */
export function unitSweepInput(sweepId: string): SweepInput {
  return {
    sweepId,
    label: 't',
    configName: 'unit',
    configHash: 'c',
    deploymentTag: 'unit.0a1b2c',
    planHash: 'p0',
    orientation: 'balanced',
    cluster: 'local',
    model: 'm',
    image: 'img',
    plan: { inline: 'plan', slurm: {} } as unknown as SweepInput['plan'],
    points: [1, 2, 4],
    policy: 'shared-server',
    pointBudgetSeconds: 30,
    startupBudgetSeconds: 30,
    timeLimitMinutes: 60,
    maxAllocationAttempts: 2,
    maxPointAttempts: 2,
    resultsDir: `/results/${sweepId}`,
    importImage: false,
    operatorTimeout: '2 minutes',
  };
}

/** Mocked activities that all succeed: one allocation of two nodes, every point valid. */
export const happyActivities: Record<keyof SweepActivities, (input: Record<string, unknown>) => unknown> = {
  prepareSweep: () => [],
  importImage: () => ({ note: 'none' }),
  allocate: (i) =>
    ({
      jobId: `${String(i.attempt)}00`,
      jobName: String(i.jobName),
      nodes: ['node1', 'node2'],
      headNode: 'node1',
      timeLimitMinutes: 60,
      grantedAt: new Date().toISOString(),
    }) satisfies Allocation,
  launchServer: (i) => {
    const a = i.allocation as Allocation;
    return {
      jobId: a.jobId,
      nodes: a.nodes,
      headNode: 'node1',
      serverIndex: i.serverIndex as number,
      steps: [],
      endpoints: ['http://x'],
      metricsEndpoints: ['http://x'],
      expectedEngines: null,
      logDir: '/l',
      launchedAt: '',
    } satisfies Deployment;
  },
  waitReady: () => ({ seconds: 1 }),
  runPoint: (i) =>
    ({
      concurrency: i.concurrency as number,
      valid: true,
      reasons: [],
      resultPath: `/r/c${i.concurrency}`,
      reused: false,
      jobId: (i.deployment as Deployment).jobId,
    }) satisfies PointSummary,
  captureLogs: () => ({ files: [], tails: {} }),
  stopServer: () => undefined,
  release: () => ({ ended: 'released', state: 'RUNNING' }),
  recordHistory: () => ({ regressions: 0, unmeasured: 0, label: 'none', store: '/results', skipped: [] }),
  storeHistory: () => ({ store: '/results', points: 1 }),
  judgeNight: (i) => ({
    runs: (i.runs as { sweepId: string }[]).map((r) => ({
      sweepId: r.sweepId,
      regressions: 0,
      unmeasured: 0,
      label: 'none',
      store: '/results',
      skipped: [],
    })),
    missing: [],
  }),
  implicateNodes: (i) => ({ quarantined: i.step === 'now' ? (i.nodes as string[]) : [] }),
  notifyConfirmation: () => undefined,
  stageArm: (i) => ({ planHash: '0000000000000000', resultsDir: String(i.resultsDir) }),
};
