/**
 * The stored plan (../src/activities/plans.ts) is read by every activity after prepareSweep: a read
 * that fails (a blip of shared storage, a folder not yet visible) is transient and retried, never an
 * input error that would fail the sweep; a plan that does not match the sweep stays an input error.
 */
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InputError, ResultsLayout } from '@infersweep/core';
import { planSweep } from '@infersweep/topology';
import { loadSweepConfig } from '../src/config-file';
import { PlanStore } from '../src/activities/plans';
import { InvalidPlanError, PlanUnreadableError } from '../src/activities/errors';
import { toFailure } from '../src/activities/interceptor';

const loaded = loadSweepConfig({
  clusters: ['local'],
  env: { HOME: '/home/u', INFERSWEEP_STACK: '/stack', INFERSWEEP_DATA: '/nonexistent-data' },
});
const plan = planSweep(loaded.config, { orientation: 'latency', cluster: 'local', points: [1], source: loaded.source });

describe('reading the stored plan', () => {
  it('an unreadable plan.json is a transient, retryable failure (not an input error)', async () => {
    const resultsDir = mkdtempSync(join(tmpdir(), 'plan-store-'));
    const err = await new PlanStore(2, 1)
      .resolve({ planRef: { planHash: plan.planHash, resultsDir } })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PlanUnreadableError);
    expect(err).not.toBeInstanceOf(InputError);
    expect((err as Error).message).toContain('2 tries');
    const failure = toFailure(err) as { nonRetryable: boolean; details: { input: boolean }[] };
    expect(failure.nonRetryable).toBe(false);
    expect(failure.details[0]!.input).toBe(false);
  });

  it('a blip shorter than the read retries is not seen at all', async () => {
    const resultsDir = mkdtempSync(join(tmpdir(), 'plan-store-'));
    const file = new ResultsLayout(resultsDir).planFile;
    const store = new PlanStore(3, 150);
    const pending = store.resolve({ planRef: { planHash: plan.planHash, resultsDir } });
    // the plan appears (storage back) after the first try failed, before the last
    await new Promise((r) => setTimeout(r, 50));
    mkdirSync(resultsDir, { recursive: true });
    writeFileSync(file, JSON.stringify(plan));
    await expect(pending).resolves.toMatchObject({ planHash: plan.planHash });
    rmSync(file); // cached per worker: no read needed any more
    await expect(store.resolve({ planRef: { planHash: plan.planHash, resultsDir } })).resolves.toMatchObject({
      planHash: plan.planHash,
    });
  });

  it('a plan.json of another plan stays an input error', async () => {
    const resultsDir = mkdtempSync(join(tmpdir(), 'plan-store-'));
    writeFileSync(new ResultsLayout(resultsDir).planFile, JSON.stringify(plan));
    const err = await new PlanStore(1, 1)
      .resolve({ planRef: { planHash: '0123456789abcdef', resultsDir } })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidPlanError);
  });
});
