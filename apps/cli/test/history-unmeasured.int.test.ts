/**
 * A nightly that measures nothing fails closed, on the real local stack: a series of two runs started
 * the way a schedule starts them (sweepAllWorkflow with perRun), the second with its only point made
 * invalid by the client-health gate (a CPU limit no client meets: `client_saturated`, a real validity
 * gate, not a fake). The second run must end with InfersweepRegression `unmeasured:1` on the sweep and
 * on the scheduled run, its verdict must name the point unmeasured, and the worker's notification
 * command must have received it (with the default `notify.on: regression`: a finding notifies).
 */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SWEEP_ALL_WORKFLOW_TYPE, childSweepId } from '@infersweep/core';
import { searchAttributeKeys, type SweepAllInput } from '@infersweep/sweep';
import { HISTORY_SETTINGS_ENV, readVerdict } from '@infersweep/history';
import { stackEnv } from '@infersweep/testkit/stack';
import {
  localSlurm,
  notSaturationGated,
  realStackSuite,
  runningWorker,
  testInput,
  testPlan,
  track,
} from '@infersweep/testkit/sweep-harness';

const slurm = localSlurm();
const suite = realStackSuite(slurm);

describe('a nightly that measures nothing', () => {
  const tag = randomUUID().slice(0, 8);
  const root = join(stackEnv().INFERSWEEP_STACK, '..', 'test-results', `history-unmeasured-${tag}`);
  const notified = join(root, 'notified.json');
  const taskQueue = `t-unmeasured-${tag}`;
  let worker: { stop(): Promise<void> };
  let previousSettings: string | undefined;

  beforeAll(async () => {
    mkdirSync(root, { recursive: true });
    const settingsFile = join(root, 'history-settings.yaml');
    writeFileSync(settingsFile, ['notify:', `  command: [tee, ${notified}]`, ''].join('\n'));
    previousSettings = process.env[HISTORY_SETTINGS_ENV];
    process.env[HISTORY_SETTINGS_ENV] = settingsFile;
    worker = await runningWorker(taskQueue);
  });

  afterAll(async () => {
    await worker?.stop();
    if (previousSettings === undefined) delete process.env[HISTORY_SETTINGS_ENV];
    else process.env[HISTORY_SETTINGS_ENV] = previousSettings;
  });

  it('ends unmeasured, not none, on the sweep and the scheduled run, and notifies', async () => {
    const c = suite.client();
    const label = async (id: string) =>
      (await c.workflow.getHandle(id).describe()).typedSearchAttributes.get(searchAttributeKeys.regression);
    /** One night of the series, started as a schedule starts it; its only point measurable or not. */
    const nightly = async (i: number, measurable: boolean) => {
      const plan = testPlan('latency', [1], (p) => {
        notSaturationGated(p);
        // no client stays under 0.01 % of a core: the point is invalid (client_saturated)
        p.agentx.clientHealth = { ...p.agentx.clientHealth, maxCpuFraction: measurable ? 1 : 0.0001 };
      });
      const input: SweepAllInput = {
        sweeps: [testInput(plan, `history-unmeasured-${tag}`)],
        maxConcurrentSweeps: 1,
        perRun: { resultsRoot: root },
      };
      const parentId = `sweep-unmeasured-${tag}-all-2026-01-0${i + 1}T02:00:00Z`;
      const h = await c.workflow.start(SWEEP_ALL_WORKFLOW_TYPE, { taskQueue, workflowId: parentId, args: [input] });
      const childId = childSweepId(parentId, 'latency');
      track(h, childId);
      const outcome = (await h.result()) as { status: string; result?: { points: { status: string }[] } }[];
      return { parentId, childId, statuses: outcome.map((o) => [o.status, o.result?.points.map((p) => p.status)]) };
    };
    const first = await nightly(0, true);
    expect(first.statuses).toEqual([['completed', ['done']]]);
    expect(existsSync(notified), 'the valid first run notifies nobody').toBe(false);
    const second = await nightly(1, false);
    expect(second.statuses).toEqual([['completed', ['invalid']]]);
    const runs = [first, second];
    const last = runs[1]!;
    expect([await label(runs[0]!.childId), await label(last.childId), await label(last.parentId)]).toEqual([
      'none',
      'unmeasured:1',
      'unmeasured:1',
    ]);
    const verdict = readVerdict(join(root, last.childId))!;
    expect([verdict.regressions, verdict.unmeasured, verdict.points.map((p) => p.status)]).toEqual([
      0,
      1,
      ['unmeasured'],
    ]);
    const sent = JSON.parse(readFileSync(notified, 'utf8')) as { runId: string; unmeasured: number; text: string };
    expect(sent).toMatchObject({ runId: last.childId, unmeasured: 1 });
  }, 900_000);
});
