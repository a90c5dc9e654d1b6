/**
 * The history's edges on real files: runs written the way a sweep writes them (a real plan of the
 * shipped config, point records derived from one the point activity wrote), extracted, stored in
 * the file store, judged, rebuilt, and a notification command.
 */
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ResultsLayout } from '@infersweep/core';
import {
  FileHistoryStore,
  HISTORY_FILE,
  HISTORY_SETTINGS_ENV,
  KILL_GRACE_MS,
  NOTIFIED_FILE,
  evaluatePoint,
  extractRun,
  hookEnv,
  historySettingsSchema,
  loadHistorySettings,
  readVerdict,
  rebuildHistory,
  recordNight,
  recordRun,
  resultsFolders,
  seriesId,
  storeRun,
  verdictText,
} from '@infersweep/history';
import { benjaminiHochberg } from '@infersweep/stats';
import { plan, record, wobble, writeRun } from '@infersweep/testkit/runs-fixture';
import { storeContract } from '@infersweep/testkit/store-contract';

const settings = historySettingsSchema.parse({ detection: { minBaselineRuns: 5 } });

/** Whether each process is dead (gone or a zombie) within `ms`, polled every 20 ms. */
async function deadWithin(pids: readonly number[], ms: number): Promise<boolean[]> {
  const until = Date.now() + ms;
  while (pids.some(alive) && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
  return pids.map((p) => !alive(p));
}

/** Whether a process is alive: it exists and is not a zombie waiting for a reaper. */
function alive(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]![0] !== 'Z';
  } catch {
    return false;
  }
}

describe('history on results folders', () => {
  it('extracts a run: the plan gives the series key and context, the record the fingerprint, validity and metrics', () => {
    const root = mkdtempSync(join(tmpdir(), 'hist-'));
    const run = extractRun(writeRun(root, 'night-1', 1, { 1: 500, 2: 900 }));
    expect(run.skipped).toEqual([]);
    expect(run.runId).toBe('night-1');
    // the key holds the cluster, the client and the workload (the record's dataset: source, loader, seed)
    const prefix = `${plan.sweep}:latency:${record.identity.model}:${plan.slurm.gpu.toLowerCase()}x${plan.topology.gpus}`;
    const workload = `${record.dataset.source_type}/${record.dataset.loader}@${record.dataset.seed}`;
    expect(run.points.map((p) => seriesId(p.key))).toEqual([
      `${prefix}:local:${record.client.name}:${workload}:c1`,
      `${prefix}:local:${record.client.name}:${workload}:c2`,
    ]);
    expect(run.points[0]!.schedule).toBeUndefined();
    expect(run.points[0]!.context).toEqual({
      cluster: 'local',
      image: plan.image,
      engineVersion: plan.engine.version,
      launchFingerprint: record.identity.engineArgsFingerprint,
      planHash: plan.planHash,
    });
    // one time for the run: its first point's start
    expect(run.points.map((p) => p.time)).toEqual(['2026-01-01T02:01:00.000Z', '2026-01-01T02:01:00.000Z']);
    expect(run.points[1]!.metrics.throughputPerGpu).toBe(900);
    expect(run.points[1]!.metrics.ttftP50Ms).toBeCloseTo(record.request_metrics.latency.ttft.p50 * 1000, 9);
  });

  it('a point the search measured again enters the history by its newest window', () => {
    const root = mkdtempSync(join(tmpdir(), 'hist-'));
    const dir = writeRun(root, 'night-1', 1, { 1: 500, 2: 900 }, { valid: false });
    const layout = new ResultsLayout(dir);
    const again = JSON.parse(readFileSync(layout.pointRecord(2), 'utf8')) as typeof record;
    again.submission_valid = true;
    again.submission_invalid_reasons = [];
    again.request_metrics.throughput.per_gpu.total_tput_tps = 950;
    mkdirSync(layout.pointDir(2, 2), { recursive: true });
    writeFileSync(layout.pointRecord(2, 2), JSON.stringify(again));
    const run = extractRun(dir);
    expect(run.points.map((p) => [p.key.concurrency, p.valid, p.metrics.throughputPerGpu])).toEqual([
      [1, false, 500],
      [2, true, 950],
    ]);
  });

  it('reports a record that does not validate and leaves it in place', () => {
    const root = mkdtempSync(join(tmpdir(), 'hist-'));
    const dir = writeRun(root, 'night-1', 1, { 1: 500, 2: 900 });
    const bad = new ResultsLayout(dir).pointRecord(2);
    writeFileSync(bad, '{"conc": 2}');
    const run = extractRun(dir);
    // the configured point without a valid record is in the history as a failed point, never dropped
    expect(run.points.map((p) => [p.key.concurrency, p.valid, p.failed ?? false])).toEqual([
      [1, true, false],
      [2, false, true],
    ]);
    expect(run.skipped).toHaveLength(1);
    expect(run.skipped[0]).toContain(bad);
    expect(readFileSync(bad, 'utf8')).toBe('{"conc": 2}');
  });

  describe('the file store', () => {
    storeContract(async () => new FileHistoryStore(join(mkdtempSync(join(tmpdir(), 'hist-')), HISTORY_FILE)));

    it('a torn last line (no newline) never glues to the next append: both runs stay, the torn line is counted and reported', async () => {
      const root = mkdtempSync(join(tmpdir(), 'hist-'));
      const s = historySettingsSchema.parse({ store: join(root, HISTORY_FILE) });
      const first = await recordRun(writeRun(root, 'n1', 1, { 1: 500 }), s);
      expect(first.verdict.skippedLines).toBeUndefined();
      // a crash, a full disk or an NFS client loss in the middle of an append: half a line, no newline
      const whole = JSON.stringify({ runId: 'n2', points: extractRun(writeRun(root, 'n2', 2, { 1: 510 })).points });
      appendFileSync(join(root, HISTORY_FILE), whole.slice(0, whole.length >> 1));
      const third = await recordRun(writeRun(root, 'n3', 3, { 1: 505 }), s);
      const store = new FileHistoryStore(join(root, HISTORY_FILE));
      expect((await store.run('n1')).map((p) => p.runId)).toEqual(['n1']);
      expect((await store.run('n3')).map((p) => p.runId)).toEqual(['n3']);
      expect(store.skippedLines).toBe(1);
      expect(third.verdict.skippedLines).toBe(1);
      expect(readVerdict(join(root, 'n3'))?.skippedLines).toBe(1);
      expect(verdictText(third.verdict)).toContain('warning: 1 line(s) of the history store did not validate');
      // the torn run's own record again (a retried activity): appended whole, now stored
      await recordRun(join(root, 'n2'), s);
      expect((await store.run('n2')).map((p) => p.runId)).toEqual(['n2']);
    });

    it("a run's GPU-seconds per point and its failed attempts' classes are stored with the point", async () => {
      const root = mkdtempSync(join(tmpdir(), 'hist-'));
      const s = historySettingsSchema.parse({ store: join(root, HISTORY_FILE) });
      const gpuSeconds = { measurement: 160, drain: 16, warmup: 8, failedAttempts: 320 };
      await recordRun(
        writeRun(root, 'c1', 1, { 1: 500 }),
        s,
        {},
        { 1: { gpuSeconds, failureClasses: ['node-health'] } },
      );
      const [p] = await new FileHistoryStore(join(root, HISTORY_FILE)).run('c1');
      expect(p).toMatchObject({ gpuSeconds, failureClasses: ['node-health'] });
      // a point the run has no cost for stores none
      await recordRun(writeRun(root, 'c2', 2, { 1: 500 }), s);
      const [q] = await new FileHistoryStore(join(root, HISTORY_FILE)).run('c2');
      expect(q!.gpuSeconds).toBeUndefined();
    });

    it('skips and counts a line that does not validate', async () => {
      const root = mkdtempSync(join(tmpdir(), 'hist-'));
      const store = new FileHistoryStore(join(root, HISTORY_FILE));
      const a = extractRun(writeRun(root, 'n1', 1, { 1: 500 }));
      await store.putRun('n1', a.points);
      appendFileSync(store.file, '{"runId": "broken"\n');
      expect(await store.series(a.points[0]!.key)).toHaveLength(1);
      expect(store.skippedLines).toBe(1);
    });
  });

  it('records nights one by one: the last two slower nights at c=2 give `regressions: 1` naming the runs compared, c=1 unchanged', async () => {
    const root = mkdtempSync(join(tmpdir(), 'hist-'));
    const dirs: string[] = [];
    for (let i = 0; i < 7; i++)
      dirs.push(writeRun(root, `night-${i}`, i + 1, { 1: 500 * wobble(i), 2: (i >= 5 ? 700 : 900) * wobble(i + 3) }));
    const recorded = [];
    for (const d of dirs) recorded.push(await recordRun(d, settings));
    expect(recorded.map((r) => r.label)).toEqual(['none', 'none', 'none', 'none', 'none', 'none', '1']);
    const last = recorded.at(-1)!.verdict;
    expect(last.points.map((p) => [p.concurrency, p.status])).toEqual([
      [1, 'unchanged'],
      [2, 'regression'],
    ]);
    const tput = last.points[1]!.metrics.find((m) => m.metric === 'throughputPerGpu')!;
    expect(tput.baselineRunIds).toEqual(['night-0', 'night-1', 'night-2', 'night-3', 'night-4']);
    expect(tput.windowRunIds).toEqual(['night-5', 'night-6']);
    expect(tput.change?.attribution).toEqual([]);
    expect(tput.trend.map((t) => t.runId)).toEqual(dirs.map((_, i) => `night-${i}`));
    expect(readVerdict(dirs[6]!)).toEqual(last);
    expect(verdictText(last)).toMatch(/^run night-6: regressions: 1\n/);
    expect(verdictText(last)).toContain(
      'c=2 tok/s/GPU: regression from night-4 to night-5: nothing in the run context changed',
    );
  });

  /** A scheduled night as its run records it: each sweep stores its points with its origin, then the night is judged. */
  const night = async (root: string, id: string, day: number, sweeps: Record<string, Record<number, number>>) => {
    const runs = [];
    for (const [orientation, tput] of Object.entries(sweeps)) {
      const dir = writeRun(root, `${id}-${orientation}`, day, tput, { orientation });
      await storeRun(dir, { schedule: 'infersweep-nightly', night: id }, settings);
      runs.push({ runId: `${id}-${orientation}`, resultsDir: dir });
    }
    return recordNight(id, runs, settings);
  };

  it("keeps ad-hoc runs out of a schedule's baseline unless asked; a schedule's runs are known by the origin they stored, never by their id", async () => {
    const root = mkdtempSync(join(tmpdir(), 'hist-'));
    for (let i = 0; i < 6; i++) await night(root, `n${i}`, i + 1, { latency: { 2: 900 * wobble(i) } });
    expect(extractRun(join(root, 'n0-latency')).points[0]!.schedule).toBe('infersweep-nightly');
    // an id in the schedules' old workflow-id format, without an origin, is an ad-hoc run
    const lookalike = writeRun(root, 'infersweep-sched-nightly-2026-01-07T02-00-00Z-latency', 7, { 2: 900 });
    expect(extractRun(lookalike).points[0]!.schedule).toBeUndefined();
    // a manual run of the same config at half the throughput (a debugging run), between two nights
    const adhoc = await recordRun(writeRun(root, 'manual-debug', 7, { 2: 450 }), settings);
    // an ad-hoc run is compared with every run of its series
    expect(adhoc.verdict.points[0]!.status).toBe('regression');
    const r = await night(root, 'n7', 8, { latency: { 2: 900 } });
    const v = r.runs[0]!.verdict;
    const tput = v.points[0]!.metrics.find((m) => m.metric === 'throughputPerGpu')!;
    expect(tput.baselineRunIds).not.toContain('manual-debug');
    expect(tput.windowRunIds).toEqual(['n5-latency', 'n7-latency']);
    expect(r.runs[0]!.label).toBe('none');
    const store = new FileHistoryStore(join(root, HISTORY_FILE));
    const pts = await store.run('n7-latency');
    const all = await store.series(pts[0]!.key);
    const withAdhoc = evaluatePoint(pts[0]!, all, { ...settings.detection, includeAdhoc: true });
    expect(withAdhoc.metrics[0]!.windowRunIds).toEqual(['manual-debug', 'n7-latency']);
  });

  it("judges a scheduled night's sweeps as one family: one BH across every orientation's units", async () => {
    const root = mkdtempSync(join(tmpdir(), 'hist-'));
    const sweeps = (i: number, slow = 1) => ({
      latency: { 1: 500 * wobble(i), 2: 900 * wobble(i + 3) },
      throughput: { 1: 800 * wobble(i + 1) * slow, 2: 1200 * wobble(i + 5) * slow },
    });
    for (let i = 0; i < 6; i++) await night(root, `n${i}`, i + 1, sweeps(i));
    const r = await night(root, 'n6', 7, sweeps(6, 0.7));
    expect(r.missing).toEqual([]);
    expect(r.runs.map((x) => [x.runId, x.label])).toEqual([
      ['n6-latency', 'none'],
      ['n6-throughput', '2'],
    ]);
    // 2 orientations × 2 primary metrics, one family: each unit's q-value is BH over the night's 4 p-values
    for (const x of r.runs) expect(x.verdict.family).toMatchObject({ primaryUnits: 4, night: 'n6', runs: 2, q: 0.05 });
    const units = new Map<string, { p: number; q: number }>();
    for (const x of r.runs)
      for (const pt of x.verdict.points)
        for (const m of pt.metrics)
          if (m.unitPValue !== undefined && !m.secondary)
            units.set(`${x.runId}|${m.metric}`, { p: m.unitPValue, q: m.qValue! });
    const list = [...units.values()];
    expect(list).toHaveLength(4);
    const bh = benjaminiHochberg(list.map((u) => u.p));
    list.forEach((u, i) => expect(u.q).toBeCloseTo(bh.adjusted[i]!, 12));
    expect(verdictText(r.runs[1]!.verdict)).toContain(
      'expected false alarms of the night n6 (2 sweeps, one family) ≤ 0.05',
    );
    // the verdict lies next to each sweep's results; a rebuild judges the night the same way
    const before = r.runs.map((x) => readVerdict(join(root, x.runId)));
    expect(before.map((v) => v?.runId)).toEqual(['n6-latency', 'n6-throughput']);
    await rebuildHistory(new FileHistoryStore(join(root, HISTORY_FILE)), resultsFolders(root), settings);
    expect(r.runs.map((x) => readVerdict(join(root, x.runId)))).toEqual(before);
  });

  it('a sweep of the night that stored nothing is missing from its verdicts, not judged none', async () => {
    const root = mkdtempSync(join(tmpdir(), 'hist-'));
    const dir = writeRun(root, 'n0-latency', 1, { 2: 900 });
    const r = await recordNight('n0', [{ runId: 'n0-latency', resultsDir: dir }], settings);
    expect([r.runs, r.missing]).toEqual([[], ['n0-latency']]);
  });

  it('an old store (series keys without cluster, client, workload) stops with an error naming the fix', async () => {
    const root = mkdtempSync(join(tmpdir(), 'hist-'));
    const dir = writeRun(root, 'n0', 1, { 2: 900 });
    const [pt] = extractRun(dir).points;
    const { cluster: _c, client: _l, workload: _w, ...oldKey } = pt!.key;
    writeFileSync(
      join(root, HISTORY_FILE),
      `${JSON.stringify({ runId: 'old', points: [{ ...pt, runId: 'old', key: oldKey }] })}\n`,
    );
    await expect(recordRun(writeRun(root, 'n1', 2, { 2: 900 }), settings)).rejects.toThrow(
      /holds points in an older format \(series keys without cluster, client, workload\); rewrite it .*infersweep history rebuild --root/,
    );
    // the fix works: the rebuild rewrites the runs it finds and drops the old lines
    const store = new FileHistoryStore(join(root, HISTORY_FILE));
    const r = await rebuildHistory(store, resultsFolders(root), settings);
    expect([r.runs, r.droppedLines]).toEqual([2, 1]);
    expect((await store.seriesKeys()).map((k) => k.cluster)).toEqual(['local']);
  });

  it('keeps an invalid night out of the baseline and reports it unmeasured, never none', async () => {
    const root = mkdtempSync(join(tmpdir(), 'hist-'));
    for (let i = 0; i < 6; i++) await recordRun(writeRun(root, `n${i}`, i + 1, { 2: 900 * wobble(i) }), settings);
    const bad = await recordRun(writeRun(root, 'n6', 7, { 2: 100 }, { valid: false }), settings);
    expect(bad.verdict.points.map((p) => p.status)).toEqual(['unmeasured']);
    expect([bad.verdict.regressions, bad.verdict.unmeasured, bad.label]).toEqual([0, 1, 'unmeasured:1']);
    const next = await recordRun(writeRun(root, 'n7', 8, { 2: 900 }), settings);
    expect(next.verdict.points[0]!.metrics[0]!.baselineRunIds).not.toContain('n6');
    expect(next.label).toBe('none');
  });

  it('rebuilds the store from the results folders: the same verdicts as recorded night by night', async () => {
    const root = mkdtempSync(join(tmpdir(), 'hist-'));
    const dirs: string[] = [];
    for (let i = 0; i < 7; i++) dirs.push(writeRun(root, `night-${i}`, i + 1, { 2: (i >= 5 ? 700 : 900) * wobble(i) }));
    for (const d of dirs) await recordRun(d, settings);
    const before = readVerdict(dirs[6]!);
    const store = new FileHistoryStore(join(root, HISTORY_FILE));
    const rebuilt = await rebuildHistory(store, resultsFolders(root), settings);
    expect(rebuilt).toEqual({ runs: 7, points: 7, regressions: 1, skipped: [], droppedLines: 0 });
    expect(readVerdict(dirs[6]!)).toEqual(before);
  });

  it("runs the worker's notification command with the verdict on stdin when a run regresses (confirmation off)", async () => {
    const root = mkdtempSync(join(tmpdir(), 'hist-'));
    const out = join(root, 'notified.json');
    const settingsFile = join(root, 'history.yaml');
    // confirmation off: the flag itself notifies (./confirm.test.ts: on, the confirmed regression does)
    writeFileSync(
      settingsFile,
      `detection:\n  minBaselineRuns: 5\nconfirm:\n  enabled: false\nnotify:\n  command: [tee, ${out}]\n`,
    );
    const s = loadHistorySettings({ [HISTORY_SETTINGS_ENV]: settingsFile });
    const recorded = [];
    for (let i = 0; i < 7; i++)
      recorded.push(await recordRun(writeRun(root, `night-${i}`, i + 1, { 2: (i >= 5 ? 700 : 900) * wobble(i) }), s));
    expect(recorded.map((r) => r.notified)).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      'command tee',
    ]);
    const sent = JSON.parse(readFileSync(out, 'utf8')) as { runId: string; regressions: number; text: string };
    expect(sent).toMatchObject({ runId: 'night-6', regressions: 1 });
    expect(sent.text).toContain('regressions: 1');
  });

  describe('fails closed', () => {
    const notifying = (root: string) => {
      const out = join(root, 'notified.json');
      const file = join(root, 'history.yaml');
      writeFileSync(file, `detection:\n  minBaselineRuns: 5\nnotify:\n  command: [tee, ${out}]\n`);
      return { out, s: loadHistorySettings({ [HISTORY_SETTINGS_ENV]: file }) };
    };

    it('a run whose every point is invalid is unmeasured and notifies, even with no history before it', async () => {
      const root = mkdtempSync(join(tmpdir(), 'hist-'));
      const { out, s } = notifying(root);
      const r = await recordRun(writeRun(root, 'n0', 1, { 1: 500, 2: 900 }, { valid: false }), s);
      expect(r.verdict.points.map((p) => p.status)).toEqual(['unmeasured', 'unmeasured']);
      expect(r.label).toBe('unmeasured:2');
      expect(r.notified).toBe('command tee');
      const sent = JSON.parse(readFileSync(out, 'utf8')) as { unmeasured: number; text: string };
      expect(sent.unmeasured).toBe(2);
      expect(sent.text).toContain('unmeasured: 2 (c=1, c=2): invalid or failed where a measurement was due');
    });

    it('a first run with one invalid point beside a valid one has nothing to compare it with: invalid, no finding', async () => {
      const root = mkdtempSync(join(tmpdir(), 'hist-'));
      // c2 invalid, then c1 valid, into the same results folder (a run of two points)
      const dir = writeRun(root, 'n0', 1, { 2: 900 }, { valid: false, points: [1, 2] });
      writeRun(root, 'n0', 1, { 1: 500 }, { points: [1, 2] });
      const r = await recordRun(dir, settings);
      expect(r.verdict.points.map((p) => p.status)).toEqual(['insufficient-history', 'invalid']);
      expect(r.label).toBe('none');
    });

    it("a configured point that failed (no record) is stored as failed with the sweep's reason and is unmeasured", async () => {
      const root = mkdtempSync(join(tmpdir(), 'hist-'));
      for (let i = 0; i < 6; i++)
        await recordRun(writeRun(root, `n${i}`, i + 1, { 1: 500 * wobble(i), 2: 900 * wobble(i) }), settings);
      const dir = writeRun(root, 'n6', 7, { 1: 500 }, { points: [1, 2] });
      const r = await recordRun(dir, settings, { 2: 'failed: server lost during the point' });
      expect(r.verdict.points.map((p) => [p.concurrency, p.status])).toEqual([
        [1, 'unchanged'],
        [2, 'unmeasured'],
      ]);
      expect(r.label).toBe('unmeasured:1');
      const stored = await new FileHistoryStore(join(root, HISTORY_FILE)).run('n6');
      expect(stored.find((p) => p.key.concurrency === 2)).toMatchObject({
        valid: false,
        failed: true,
        invalidReasons: ['failed: server lost during the point'],
      });
    });

    it('the error rate regresses on an absolute rise from a zero baseline (0 % → 8 % of 200 requests)', async () => {
      const root = mkdtempSync(join(tmpdir(), 'hist-'));
      const withErrors = (dir: string, errors: number) => {
        const file = new ResultsLayout(dir).pointRecord(2);
        const r = JSON.parse(readFileSync(file, 'utf8')) as typeof record;
        Object.assign(r.request_accounting, { records_total: 204, records_warmup_dropped: 4 });
        r.request_accounting.records_error_dropped = errors;
        writeFileSync(file, JSON.stringify(r));
        return dir;
      };
      const nights = [];
      for (let i = 0; i < 6; i++)
        nights.push(await recordRun(withErrors(writeRun(root, `n${i}`, i + 1, { 2: 900 * wobble(i) }), 0), settings));
      expect(nights.map((n) => n.label)).toEqual(['none', 'none', 'none', 'none', 'none', 'none']);
      const r = await recordRun(withErrors(writeRun(root, 'n6', 7, { 2: 900 }), 16), settings);
      const err = r.verdict.points[0]!.metrics.find((m) => m.metric === 'errorRate')!;
      expect(err).toMatchObject({ status: 'regression', baseline: 0, value: 0.08 });
      expect(err.pValue).toBeLessThan(1e-10);
      expect(r.label).toBe('1');
    });
  });

  it('reports a failing notification command in the result and still records the run', async () => {
    const root = mkdtempSync(join(tmpdir(), 'hist-'));
    const s = historySettingsSchema.parse({
      detection: { minBaselineRuns: 5 },
      notify: { command: ['false'], on: 'always' },
    });
    const r = await recordRun(writeRun(root, 'night-0', 1, { 2: 900 }), s);
    expect(r.notified).toMatch(/^failed: notification command false: /);
    expect(readVerdict(join(root, 'night-0'))?.runId).toBe('night-0');
  });

  it('a notification command that exits without reading its input is a failed notification, not a crash', async () => {
    // 600 points make a body of several pipe buffers (64 KiB each), so the write is still going when the command
    // has closed its stdin and exited: the EPIPE must end up in the result, not as an uncaught exception
    const root = mkdtempSync(join(tmpdir(), 'hist-'));
    const s = historySettingsSchema.parse({
      detection: { minBaselineRuns: 5 },
      notify: { command: ['sh', '-c', 'exec 0<&-; exit 3'], on: 'always' },
    });
    const points = Object.fromEntries(Array.from({ length: 600 }, (_, i) => [i + 1, 500 + i]));
    const r = await recordRun(writeRun(root, 'night-0', 1, points), s);
    expect(r.notified).toMatch(/^failed: notification command sh: /);
    expect(readVerdict(join(root, 'night-0'))?.runId).toBe('night-0');
  });

  it('a hook that backgrounds a child and ignores SIGTERM is killed with its whole group within the bound; the record returns', async () => {
    const root = mkdtempSync(join(tmpdir(), 'hist-'));
    const pids = join(root, 'pids');
    // both the shell and its background sleep ignore SIGTERM (an ignored signal stays ignored across fork and
    // exec); each would live 300 s, far beyond the 1 s bound + 2 s grace
    const s = historySettingsSchema.parse({
      notify: {
        on: 'always',
        timeoutSeconds: 1,
        command: ['/bin/sh', '-c', `trap '' TERM; sleep 300 & echo $$ $! > ${pids}; wait`],
      },
    });
    const t0 = Date.now();
    const r = await recordRun(writeRun(root, 'night-0', 1, { 2: 900 }), s);
    const took = Date.now() - t0;
    expect(r.notified).toMatch(
      /^failed: notification command \/bin\/sh: timed out after 1000 ms, its process group killed/,
    );
    expect(took).toBeGreaterThanOrEqual(1000 + KILL_GRACE_MS);
    expect(took).toBeLessThan(1000 + KILL_GRACE_MS + 3000);
    const [shell, sleeper] = readFileSync(pids, 'utf8').trim().split(' ').map(Number);
    // SIGKILL is sent; the kernel finishes each process when it is next scheduled (a loaded host: a few ms)
    expect(await deadWithin([shell!, sleeper!], 1000)).toEqual([true, true]);
    // a failed notification leaves no marker: a later record of the run may notify
    expect(existsSync(join(root, 'night-0', NOTIFIED_FILE))).toBe(false);
  });

  it('notifies once per run: a retried record of the same run finds the marker and does not notify again', async () => {
    const root = mkdtempSync(join(tmpdir(), 'hist-'));
    const log = join(root, 'notified.log');
    const s = historySettingsSchema.parse({
      notify: { on: 'always', command: ['/bin/sh', '-c', `echo "$INFERSWEEP_RUN_ID" >> ${log}`] },
    });
    const dir = writeRun(root, 'night-0', 1, { 2: 900 });
    expect((await recordRun(dir, s)).notified).toBe('command /bin/sh');
    expect((await recordRun(dir, s)).notified).toBe(`already notified for run night-0 (${join(dir, NOTIFIED_FILE)})`);
    expect(readFileSync(log, 'utf8')).toBe('night-0\n');
  });

  it("the hook's environment is PATH, HOME, LANG, TZ and the run id: nothing else of the worker's", async () => {
    expect(hookEnv({ INFERSWEEP_RUN_ID: 'r' }, { PATH: '/bin', HOME: '/h', AWS_SECRET_ACCESS_KEY: 'x' })).toEqual({
      PATH: '/bin',
      HOME: '/h',
      INFERSWEEP_RUN_ID: 'r',
    });
    const root = mkdtempSync(join(tmpdir(), 'hist-'));
    const dump = join(root, 'env');
    const s = historySettingsSchema.parse({ notify: { on: 'always', command: ['/usr/bin/env'] } });
    const withDump = { ...s, notify: { ...s.notify!, command: ['/bin/sh', '-c', `/usr/bin/env > ${dump}`] } };
    await recordRun(writeRun(root, 'night-0', 1, { 2: 900 }), withDump);
    const names = readFileSync(dump, 'utf8')
      .trim()
      .split('\n')
      .map((l) => l.split('=')[0]);
    // sh itself adds PWD (and some shells SHLVL, _)
    expect(
      names.filter((n) => !['PATH', 'HOME', 'LANG', 'TZ', 'INFERSWEEP_RUN_ID', 'PWD', 'SHLVL', '_'].includes(n!)),
    ).toEqual([]);
    expect(names).toContain('INFERSWEEP_RUN_ID');
  });

  it('refuses a settings file with an unknown key, naming the file', () => {
    const root = mkdtempSync(join(tmpdir(), 'hist-'));
    const f = join(root, 'history.yaml');
    writeFileSync(f, 'detection:\n  alpah: 0.1\n');
    expect(() => loadHistorySettings({ [HISTORY_SETTINGS_ENV]: f })).toThrow(
      new RegExp(`${HISTORY_SETTINGS_ENV}=${f}: detection`),
    );
  });
});
