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
import { searchAttributeKeys, type SweepInput } from '@infersweep/sweep';
import { bundlerOptions, workflowsPath } from '@infersweep/orchestrator';
import { sweepActivityInterceptors } from '../src/activities';
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
