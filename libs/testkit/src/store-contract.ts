/**
 * What every HistoryStore must do, as tests a store's suite runs with its own `open` (the file
 * store in record.test.ts, PostgreSQL in test/production/history-store.prod.test.ts): whole runs
 * replaced on a second write, series and runs read back as written, named runs removed and nothing
 * else, a rebuild that keeps another results root's runs, and the same verdicts night by night as
 * the file store gives.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import {
  extractRun,
  historySettingsSchema,
  rebuildHistory,
  resultsFolders,
  seriesId,
  verdictFromStore,
  type HistoryStore,
} from '@infersweep/history';
import { wobble, writeRun } from './runs-fixture';

export function storeContract(open: () => Promise<HistoryStore>): void {
  it('stores whole runs: a second write of a run replaces the first; series, runs and keys read back as written', async () => {
    const store = await open();
    try {
      const root = mkdtempSync(join(tmpdir(), 'hist-store-'));
      const a = extractRun(writeRun(root, 'n1', 1, { 1: 500, 2: 900 }));
      const b = extractRun(writeRun(root, 'n2', 2, { 2: 880 }));
      await store.putRun('n1', a.points);
      await store.putRun('n1', a.points);
      await store.putRun('n2', b.points);
      expect(await store.run('n1')).toEqual(a.points);
      expect(await store.series(b.points[0]!.key)).toEqual([a.points[1], b.points[0]]);
      expect((await store.seriesKeys()).map(seriesId).sort()).toEqual(a.points.map((p) => seriesId(p.key)).sort());
      await store.putRun('n1', a.points.slice(0, 1));
      expect(await store.series(b.points[0]!.key)).toEqual([b.points[0]]);
      await store.replaceRuns([{ runId: 'n1', points: [] }]);
      expect(await store.run('n1')).toEqual([]);
      expect(await store.run('n2')).toEqual(b.points);
      await store.replaceRuns([{ runId: 'n2', points: [] }]);
      expect(await store.seriesKeys()).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it("a rebuild replaces the runs under its results root and deletes nothing else: another root's run stays", async () => {
    const store = await open();
    try {
      const mine = mkdtempSync(join(tmpdir(), 'hist-mine-'));
      const theirs = mkdtempSync(join(tmpdir(), 'hist-theirs-'));
      const a1 = extractRun(writeRun(mine, 'mine-1', 1, { 2: 900 }));
      const a2 = extractRun(writeRun(mine, 'mine-2', 2, { 2: 905 }));
      const b1 = extractRun(writeRun(theirs, 'theirs-1', 3, { 1: 400, 2: 880 }));
      await store.putRun(
        'mine-1',
        a1.points.map((p) => ({ ...p, valid: false })),
      ); // a stale copy, replaced
      await store.putRun('theirs-1', b1.points);
      const settings = historySettingsSchema.parse({});
      const r = await rebuildHistory(store, resultsFolders(mine), settings);
      expect([r.runs, r.points]).toEqual([2, 2]);
      expect(await store.run('theirs-1')).toEqual(b1.points);
      expect(await store.run('mine-1')).toEqual(a1.points);
      expect(await store.run('mine-2')).toEqual(a2.points);
      await store.replaceRuns(['mine-1', 'mine-2', 'theirs-1'].map((runId) => ({ runId, points: [] })));
      expect(await store.seriesKeys()).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it('judges seven nights like any other store: the last two slower nights at c=2 are one regression', async () => {
    const store = await open();
    try {
      const root = mkdtempSync(join(tmpdir(), 'hist-store-'));
      const settings = historySettingsSchema.parse({});
      const labels: number[] = [];
      for (let i = 0; i < 7; i++) {
        const run = extractRun(
          writeRun(root, `night-${i}`, i + 1, { 1: 500 * wobble(i), 2: (i >= 5 ? 700 : 900) * wobble(i + 3) }),
        );
        await store.putRun(run.runId, run.points);
        labels.push((await verdictFromStore(store, run.runId, run.points, settings)).regressions);
      }
      expect(labels).toEqual([0, 0, 0, 0, 0, 0, 1]);
    } finally {
      await store.close();
    }
  });
}
