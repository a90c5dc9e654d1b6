/**
 * `infersweep history`, `history rebuild`, `compare` and the report's "compared with history"
 * section, on results folders written the way sweeps write them (seven nights, the last two slower
 * at c=2, the last on a new image).
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { HISTORY_FILE, historySettingsSchema, recordRun, seriesId, type HistoryPoint } from '@infersweep/history';
import { renderReport } from '../src/report/html';
import { loadSweepResults } from '../src/report/records';
import { runCli } from '@infersweep/testkit/cli';
import { wobble, writeRun } from '@infersweep/testkit/runs-fixture';

let root: string;
let dirs: string[];
const env = () => ({ ...process.env, INFERSWEEP_HISTORY_SETTINGS: '' });

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'cli-hist-'));
  dirs = [];
  for (let i = 0; i < 7; i++)
    dirs.push(
      writeRun(
        root,
        `night-${i}`,
        i + 1,
        { 1: 500 * wobble(i), 2: (i >= 5 ? 700 : 900) * wobble(i + 2) },
        i >= 5 ? { image: 'vllm/vllm-openai:next' } : {},
      ),
    );
  const settings = historySettingsSchema.parse({});
  for (const d of dirs) await recordRun(d, settings);
}, 60_000);

// each test spawns the CLI one to three times, ~7 s each on a loaded 2-core host
describe('history on the command line', { timeout: 90_000 }, () => {
  it('`history` lists the series; `history SERIES` prints it run by run with the newest verdict', async () => {
    const list = await runCli(['history', '--root', root], { env: env() });
    expect(list.code, list.stderr).toBe(0);
    const ids = list.stdout.trim().split('\n');
    expect(ids).toHaveLength(2);
    expect(ids[1]).toMatch(/:c2$/);
    const show = await runCli(['history', ids[1]!, '--root', root], { env: env() });
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toContain(`series ${ids[1]} (7 runs)`);
    for (let i = 0; i < 7; i++) expect(show.stdout).toContain(`night-${i}`);
    expect(show.stdout).toMatch(/night-6 .* regression/);
    expect(show.stdout).toContain('c=2 tok/s/GPU: regression from night-4 to night-5: image');
  });

  it('`history PREFIX` prints every series under it; an unknown series is a usage error', async () => {
    const prefix = (await runCli(['history', '--root', root], { env: env() })).stdout
      .split('\n')[0]!
      .replace(/:c1$/, '');
    const both = await runCli(['history', prefix, '--root', root, '--json'], { env: env() });
    expect(both.code, both.stderr).toBe(0);
    expect((JSON.parse(both.stdout) as { series: string }[]).map((s) => s.series)).toEqual([
      `${prefix}:c1`,
      `${prefix}:c2`,
    ]);
    const none = await runCli(['history', 'nope:x', '--root', root], { env: env() });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('no series matches nope:x');
  });

  it('`history analyze` finds the step over the whole series, places the nightly change on it, and says so', async () => {
    const root2 = mkdtempSync(join(tmpdir(), 'cli-hist-analyze-'));
    const settings = historySettingsSchema.parse({});
    for (let i = 0; i < 24; i++)
      await recordRun(
        writeRun(root2, `day-${String(i).padStart(2, '0')}`, i + 1, { 2: (i >= 12 ? 800 : 1000) * wobble(i) }),
        settings,
      );
    const r = await runCli(['history', 'analyze', '--root', root2], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/tok\/s\/GPU \(24 valid runs\)\n {2}change points: day-12 \(-20\.\d %, p 0\.\d+\)/);
    expect(r.stdout).toMatch(/step \(regression\): at day-12, -20\.\d %/);
    expect(r.stdout).toContain('nightly change at day-12: confirmed by the whole series');
    expect(r.stdout).toMatch(/0 drift\(s\), 0 nightly change\(s\) moved or not confirmed, over 1 series/);
  });

  it('`compare` shows both runs, the change, the context difference and the later run against its history', async () => {
    const r = await runCli(['compare', 'night-4', 'night-6', '--root', root], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^night-4 → night-6: image vllm\/vllm-openai:\S+ → vllm\/vllm-openai:next/);
    expect(r.stdout).toMatch(/c=2 +tok\/s\/GPU +\d+ → +\d+ +-2\d\.\d %/);
    expect(r.stdout).toContain('night-6 against its history:');
    expect(r.stdout).toMatch(/c=2 +tok\/s\/GPU .* regression/);
  });

  it('`history rebuild` re-indexes the results folders, keeps the runs of another root, drops a torn line and says so', async () => {
    const store = join(mkdtempSync(join(tmpdir(), 'cli-hist-store-')), HISTORY_FILE);
    // a run another results root wrote into the shared store (a series of its own: the verdicts here stay as they are)
    const night0 = JSON.parse(readFileSync(join(root, HISTORY_FILE), 'utf8').split('\n')[0]!) as {
      points: HistoryPoint[];
    };
    const other = {
      runId: 'elsewhere-0',
      points: night0.points.map((p) => ({ ...p, runId: 'elsewhere-0', key: { ...p.key, config: 'elsewhere' } })),
    };
    writeFileSync(store, `${JSON.stringify(other)}\n{"runId": "torn`);
    const listed = await runCli(['history', '--root', root, '--store', store], { env: env() });
    expect(listed.stderr).toContain(`warning: 1 line(s) of ${store} did not validate and were skipped`);
    const r = await runCli(['history', 'rebuild', '--root', root, '--store', store], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(
      `history rebuilt in ${store}: 7 runs, 14 points from ${root} (runs of other results roots kept); 1 regressed points across all runs`,
    );
    expect(r.stderr).toContain(`dropped 1 line(s) of ${store} that did not validate`);
    const lines = readFileSync(store, 'utf8').trim().split('\n');
    expect(lines.map((l) => (JSON.parse(l) as { runId: string }).runId)).toEqual([
      'elsewhere-0',
      ...dirs.map((_, i) => `night-${i}`),
    ]);
    const c2 = (JSON.parse(lines[7]!) as { points: HistoryPoint[] }).points.map((p) => seriesId(p.key));
    expect(c2.at(-1)).toMatch(/:c2$/);
  });
});

describe('the report', () => {
  it('has a "compared with history" section naming the regressed point, its baseline runs and a trend chart', () => {
    const html = renderReport({ sweeps: [loadSweepResults(dirs[6]!)], outDir: root });
    const section = html.slice(html.indexOf('<h2 id="history">'));
    expect(section).toContain('Compared with history');
    expect(section).toContain('<b>regressions: 1</b>');
    const c2 = section.split('<tr').filter((r) => r.includes('<td>c=2</td>') && r.includes('tok/s/GPU'));
    expect(c2).toHaveLength(1);
    expect(c2[0]).toContain('class="bad"');
    expect(c2[0]).toContain('5 runs: night-0, night-1, night-2, night-3, night-4');
    expect(c2[0]).toContain('image vllm/vllm-openai:');
    expect(c2[0]).toMatch(/<svg [^>]*aria-label="trend of 7 runs/);
  });

  it('has no history section for a run without a verdict', () => {
    const other = mkdtempSync(join(tmpdir(), 'cli-hist-none-'));
    const html = renderReport({ sweeps: [loadSweepResults(writeRun(other, 'lonely', 1, { 1: 500 }))], outDir: other });
    expect(html).not.toContain('Compared with history');
  });
});
