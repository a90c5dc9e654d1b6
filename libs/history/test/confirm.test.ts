/**
 * From a flagged verdict to the confirmation's request and its notification, on real files (runs
 * written the way a sweep writes them, ./runs-fixture.ts): the regression and last good run it
 * names, the candidate images between, the notification deferred until confirmed, and fail closed.
 */
import { mkdtempSync, readFileSync, existsSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ConfirmResult } from '@infersweep/sweep';
import {
  CONFIRM_NOTIFIED_FILE,
  candidatesFor,
  confirmSettingsSchema,
  historySettingsSchema,
  imagesBetween,
  notifyConfirmation,
  parseCandidates,
  recordRun,
  type HistorySettings,
  type RecordedRun,
} from '@infersweep/history';
import { plan, wobble, writeRun } from '@infersweep/testkit/runs-fixture';

const IMAGES = ['img:0', 'img:1', 'img:2', 'img:3', 'img:4', 'img:5'];

/** Seven nights at c=2, the last two on img:5 and 30 % slower: a regression from night-4 to night-5. */
async function flaggedSeries(settings: HistorySettings): Promise<{ root: string; recorded: RecordedRun[] }> {
  const root = mkdtempSync(join(tmpdir(), 'confirm-'));
  const recorded: RecordedRun[] = [];
  for (let i = 0; i < 7; i++) {
    const dir = writeRun(
      root,
      `night-${i}`,
      i + 1,
      { 2: (i >= 5 ? 630 : 900) * wobble(i) },
      { image: i >= 5 ? 'img:5' : 'img:0' },
    );
    recorded.push(await recordRun(dir, settings));
  }
  return { root, recorded };
}

const notifying = (root: string, confirm: object = {}) =>
  historySettingsSchema.parse({
    detection: { minBaselineRuns: 5 },
    confirm: { candidates: { images: IMAGES }, ...confirm },
    notify: { command: ['tee', join(root, 'notified.json')] },
  });

function result(outcome: 'confirmed' | 'cleared'): ConfirmResult {
  const comparison = {
    step: 'confirm',
    a: 'img:0',
    b: 'img:5',
    values: [],
    pairs: 6,
    relativeEffect: -0.3,
    relativeLower: -0.33,
    relativeUpper: -0.27,
    level: 0.95,
    gate: 0.05,
    outcome,
    jobId: '1',
  } as const;
  return {
    confirmId: 'confirm-night-6',
    sweepId: 'night-6',
    outcome,
    metric: 'throughputPerGpu',
    concurrency: 2,
    comparison: { ...comparison, values: [] },
    ...(outcome === 'confirmed'
      ? { culprit: { image: 'img:3', comparison: { ...comparison, b: 'img:3', values: [] }, bisected: true } }
      : {}),
    steps: [{ ...comparison, values: [] }],
  };
}

describe('the confirmation request of a flagged verdict', () => {
  it('names the regressed point, the last good run and the current one with their plans, and the images between', async () => {
    const root = mkdtempSync(join(tmpdir(), 'confirm-'));
    const { recorded } = await flaggedSeries(notifying(root));
    expect(recorded.slice(0, 5).map((r) => r.confirm)).toEqual([undefined, undefined, undefined, undefined, undefined]);
    // the first slower night is flagged only when k = 2 runs show it: night-6
    const last = recorded[6]!;
    expect(last.label).toBe('1');
    expect(last.confirm).toMatchObject({
      sweepId: 'night-6',
      concurrency: 2,
      higherIsBetter: true,
      gate: 0.05,
      pairs: 6,
      level: 0.95,
      good: { runId: 'night-4', image: 'img:0', planRef: { planHash: plan.planHash } },
      current: { runId: 'night-6', image: 'img:5', planRef: { planHash: plan.planHash } },
      candidates: ['img:1', 'img:2', 'img:3', 'img:4'],
    });
    expect(last.confirm!.good.planRef.resultsDir).toMatch(/night-4$/);
    expect(['throughputPerGpu', 'interactivityP50']).toContain(last.confirm!.metric);
  });

  it('defers the notification of a regression until it is confirmed (default), and notifies the flag under notifyOn: flagged', async () => {
    const root = mkdtempSync(join(tmpdir(), 'confirm-'));
    const deferred = await flaggedSeries(notifying(root));
    expect(deferred.recorded[6]!.notified).toBeUndefined();
    const root2 = mkdtempSync(join(tmpdir(), 'confirm-'));
    const flagged = await flaggedSeries(notifying(root2, { notifyOn: 'flagged' }));
    expect(flagged.recorded[6]!.notified).toBe('command tee');
  });

  it('no confirmation when it is off: the flag notifies at once', async () => {
    const root = mkdtempSync(join(tmpdir(), 'confirm-'));
    const { recorded } = await flaggedSeries(notifying(root, { enabled: false }));
    expect([recorded[6]!.confirm, recorded[6]!.notified]).toEqual([undefined, 'command tee']);
  });
});

describe('the notification of a confirmation', () => {
  it('a confirmed regression notifies once with the first bad image; a cleared one does not notify', async () => {
    const root = mkdtempSync(join(tmpdir(), 'confirm-'));
    const s = notifying(root);
    const { root: runs } = await flaggedSeries(s);
    const dir = join(runs, 'night-6');
    expect(await notifyConfirmation(dir, result('cleared'), s)).toBeUndefined();
    expect(existsSync(join(root, 'notified.json'))).toBe(false);
    expect(await notifyConfirmation(dir, result('confirmed'), s)).toBe('command tee');
    const sent = JSON.parse(readFileSync(join(root, 'notified.json'), 'utf8')) as {
      runId: string;
      text: string;
      confirmation: ConfirmResult;
    };
    expect(sent.runId).toBe('night-6');
    expect(sent.confirmation.culprit?.image).toBe('img:3');
    expect(sent.text).toContain('first bad image: img:3 (-30.0 %, CI [-33.0 %, -27.0 %], bisected)');
    expect(await notifyConfirmation(dir, result('confirmed'), s)).toMatch(/^already notified/);
    expect(existsSync(join(dir, CONFIRM_NOTIFIED_FILE))).toBe(true);
  });

  it('fails closed: a confirmation that failed notifies the flag with why', async () => {
    const root = mkdtempSync(join(tmpdir(), 'confirm-'));
    const s = notifying(root);
    const { root: runs } = await flaggedSeries(s);
    expect(await notifyConfirmation(join(runs, 'night-6'), { failed: 'allocation refused' }, s)).toBe('command tee');
    const sent = JSON.parse(readFileSync(join(root, 'notified.json'), 'utf8')) as { text: string };
    expect(sent.text).toContain('the paired A/B failed, the flag stands: allocation refused');
  });
});

describe('candidate images', () => {
  it('takes the images strictly between the good and the bad one from the release order', () => {
    expect(imagesBetween(IMAGES, 'img:0', 'img:5')).toEqual(['img:1', 'img:2', 'img:3', 'img:4']);
    expect(imagesBetween(IMAGES, 'img:5', 'img:0')).toEqual([]);
    expect(imagesBetween(IMAGES, 'other', 'img:5')).toEqual([]);
  });

  it("runs the worker's candidates command with the two images in its environment", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'confirm-'));
    const script = join(dir, 'list.sh');
    writeFileSync(
      script,
      '#!/bin/sh\nprintf "%s\\nmid:1\\n\\nmid:2\\n%s\\n" "$INFERSWEEP_GOOD_IMAGE" "$INFERSWEEP_BAD_IMAGE"\n',
    );
    chmodSync(script, 0o755);
    const s = confirmSettingsSchema.parse({ candidates: { command: [script] } });
    expect(await candidatesFor(s, 'a:1', 'a:9')).toEqual(['mid:1', 'mid:2']);
    expect(await candidatesFor(s, 'a:1', 'a:1')).toEqual([]);
    expect(parseCandidates(' x \n\ny\n', 'x', 'z')).toEqual(['y']);
  });

  it('a failing candidates command is an error naming the setting', async () => {
    const s = confirmSettingsSchema.parse({ candidates: { command: ['false'] } });
    await expect(candidatesFor(s, 'a', 'b')).rejects.toThrow(/confirm\.candidates\.command false/);
  });
});
