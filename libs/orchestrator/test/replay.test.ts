import { beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { bundleWorkflowCode, Worker, type WorkflowBundle } from '@temporalio/worker';
import { bundlerOptions, workflowsPath } from '../src/bundle';
import { historyFixtures } from '@infersweep/testkit/history-fixtures';
import { SNAPSHOT_WORKFLOW_TYPE } from '@infersweep/core';

/** The workflow type a recorded history started (its first event). */
const workflowTypeOf = (h: {
  events?: { workflowExecutionStartedEventAttributes?: { workflowType?: { name?: string } } }[];
}) => h.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name;

const fixtures = historyFixtures();

// the current workflow code, bundled once from the sources (as a worker given workflowsPath would) for every replay
let bundle: WorkflowBundle;
beforeAll(async () => {
  const silent = { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} };
  bundle = await bundleWorkflowCode({ workflowsPath, ...bundlerOptions, logger: silent as never });
}, 120_000);

/**
 * Histories recorded from finished sweeps, one folder per release (libs/testkit/src/history-fixtures.ts;
 * INFERSWEEP_RECORD_HISTORIES=1 records them), must replay with the current workflow code: a change
 * that breaks determinism fails here.
 */
describe('workflow replay', () => {
  it('has recorded histories to check', () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(3);
  });

  it('has a recorded history of each workflow a snapshot runs (snapshotWorkflow and its sweeps)', () => {
    const types = new Set(fixtures.map((f) => workflowTypeOf(JSON.parse(readFileSync(f.file, 'utf8')))));
    expect([...types]).toEqual(expect.arrayContaining([SNAPSHOT_WORKFLOW_TYPE, 'sweepWorkflow']));
  });

  it.each(fixtures.map((f) => [f.name, f.file, f.workflowId]))(
    '%s replays without nondeterminism',
    async (name, file, workflowId) => {
      const history = JSON.parse(readFileSync(file, 'utf8'));
      await expect(
        Worker.runReplayHistory({ workflowBundle: bundle }, history, workflowId ?? name.replace('/', '-')),
      ).resolves.toBeUndefined();
    },
    60_000,
  );
});
