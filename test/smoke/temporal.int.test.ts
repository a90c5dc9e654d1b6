import { describe, expect, it } from 'vitest';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import * as activities from './fixtures/smoke-activities';
import { smokeWorkflow } from './fixtures/smoke-workflow';
import { stackEnv } from '@infersweep/testkit/stack';

describe('smoke: Temporal dev server', () => {
  it('runs a workflow + activity through a real worker and exposes its history', async () => {
    const address = stackEnv().INFERSWEEP_TEMPORAL_ADDRESS;
    const taskQueue = `smoke-${randomUUID()}`;
    const nativeConnection = await NativeConnection.connect({ address });
    const connection = await Connection.connect({ address });
    try {
      const worker = await Worker.create({
        connection: nativeConnection,
        taskQueue,
        workflowsPath: fileURLToPath(new URL('./fixtures/smoke-workflow.ts', import.meta.url)),
        activities,
      });
      const client = new Client({ connection });
      const workflowId = `smoke-${randomUUID()}`;
      const result = await worker.runUntil(
        client.workflow.execute(smokeWorkflow, { taskQueue, workflowId, args: ['infersweep'] }),
      );
      expect(result).toBe(`hello infersweep from pid ${process.pid}`);

      const history = await client.workflow.getHandle(workflowId).fetchHistory();
      const types = (history.events ?? []).map((e) => String(e.eventType));
      expect(types.some((t) => t.includes('ACTIVITY_TASK_COMPLETED') || t === '12')).toBe(true);
      expect(types.some((t) => t.includes('WORKFLOW_EXECUTION_COMPLETED') || t === '2')).toBe(true);
    } finally {
      await connection.close();
      await nativeConnection.close();
    }
  });
});
