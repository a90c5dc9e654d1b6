import { describe, expect, it } from 'vitest';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { niceTicks, paretoFrontier, paretoSvg } from '../src/report/chart';
import { loadSweepResults, rowFromRecord } from '../src/report/records';
import { csvCell, renderReport, seriesOf, toCsv, CSV_COLUMNS } from '../src/report/html';
import { X_AXES } from '../src/report/axes';
import { locateOnDisk } from '../src/report/generate';
import { pointRecord, tempRoot, writeSweep } from './fixtures/sweep-results';

const markers = (html: string) => (html.match(/class="marker[ "]/g) ?? []).length;

describe('point records', () => {
  it('reads the InferenceX-shaped record: per-GPU throughput, interactivity, latencies in ms', () => {
    const r = rowFromRecord(
      pointRecord('s', 'balanced', {
        concurrency: 16,
        valid: true,
        tputPerGpu: 812.5,
        interactivity: 42,
        ttftSeconds: 0.25,
      }),
      '/x/c16.json',
    );
    expect(r).toMatchObject({
      concurrency: 16,
      valid: true,
      status: 'done',
      totalThroughputPerGpu: 812.5,
      outputThroughputPerGpu: 81.25,
      interactivityP50: 42,
      ttftP50Ms: 250,
      ttftP99Ms: 500,
      requestsProfiled: 100,
      requestsFailed: 2,
      jobId: '101',
    });
  });

  it('keeps the validity reasons of an invalid point', () => {
    const r = rowFromRecord(
      pointRecord('s', 'b', {
        concurrency: 64,
        valid: false,
        reasons: ['error rate 0.31 > 0.10', 'profile 300 s < 900 s'],
        tputPerGpu: 1,
        interactivity: 1,
      }),
      null,
    );
    expect(r.valid).toBe(false);
    expect(r.status).toBe('invalid');
    expect(r.reasons).toEqual(['error rate 0.31 > 0.10', 'profile 300 s < 900 s']);
  });

  it('a record that does not validate against its schema is an invalid point with the reason, no numbers', () => {
    const r = rowFromRecord({ conc: 8, submission_valid: true }, '/x/c8/result.json');
    expect(r).toMatchObject({
      concurrency: 8,
      status: 'invalid',
      valid: false,
      totalThroughputPerGpu: null,
      interactivityP50: null,
    });
    expect(r.reasons[0]).toMatch(/^the record \/x\/c8\/result.json does not validate: /);
  });
});

describe('Pareto frontier and axes', () => {
  it('keeps exactly the points no other point beats on both axes', () => {
    const pts = [
      { x: 10, y: 100 },
      { x: 20, y: 90 },
      { x: 15, y: 80 }, // dominated by (20, 90)
      { x: 40, y: 30 },
      { x: 5, y: 100 }, // dominated by (10, 100)
    ];
    expect(paretoFrontier(pts)).toEqual([
      { x: 10, y: 100 },
      { x: 20, y: 90 },
      { x: 40, y: 30 },
    ]);
  });

  it('nice ticks start at 0 and cover the maximum', () => {
    expect(niceTicks(87)).toEqual([0, 20, 40, 60, 80, 100]);
    const t = niceTicks(0.37);
    expect(t[0]).toBe(0);
    expect(t[t.length - 1]).toBeGreaterThanOrEqual(0.37);
  });

  it('draws one marker per point and says so when there are none', () => {
    const svg = paretoSvg(
      [
        {
          name: 'a',
          points: [
            { x: 1, y: 2, label: 'c=1' },
            { x: 2, y: 1, label: 'c=2' },
          ],
        },
      ],
      { title: 't', xLabel: 'x', yLabel: 'y' },
    );
    expect(markers(svg)).toBe(2);
    expect(svg).toContain('class="frontier"');
    expect(paretoSvg([{ name: 'a', points: [] }], { title: 't', xLabel: 'x', yLabel: 'y' })).toContain(
      'no valid points',
    );
  });
});

describe('the HTML report', () => {
  const root = tempRoot();
  const a = writeSweep(root, {
    sweepId: 'sweep-kimik3-balanced-local-L1',
    orientation: 'balanced',
    points: [
      { concurrency: 4, valid: true, tputPerGpu: 300, interactivity: 80 },
      { concurrency: 16, valid: true, tputPerGpu: 900, interactivity: 50 },
      { concurrency: 64, valid: false, reasons: ['error rate 0.31 > 0.10'], tputPerGpu: 950, interactivity: 10 },
    ],
    missing: [{ concurrency: 128, status: 'failed', lastError: 'server lost twice' }],
  });
  const b = writeSweep(root, {
    sweepId: 'sweep-kimik3-throughput-local-L1',
    orientation: 'throughput',
    points: [{ concurrency: 32, valid: true, tputPerGpu: 1500, interactivity: 25 }],
  });
  const sweeps = [loadSweepResults(a.dir, a.progress), loadSweepResults(b.dir, b.progress)];
  const html = renderReport({ sweeps, outDir: root, generatedAt: new Date('2026-01-01T00:00:00Z') });

  it('has one marker per valid point in each orientation chart and in the overview', () => {
    const overview = html.slice(html.indexOf('id="chart-all"'), html.indexOf('</svg>', html.indexOf('id="chart-all"')));
    expect(markers(overview)).toBe(3);
    const first = html.slice(html.indexOf('id="chart-0"'), html.indexOf('</svg>', html.indexOf('id="chart-0"')));
    expect(markers(first)).toBe(2);
    expect(first).not.toContain('c=64');
  });

  it("lists every point with validity, reasons and the failed point's last error", () => {
    expect((html.match(/<tr class="point/g) ?? []).length).toBe(5);
    expect(html).toContain('error rate 0.31 &gt; 0.10');
    expect(html).toContain('server lost twice');
    expect(html).toMatch(/badge bad">failed/);
  });

  it('shows the allocation history with how each allocation ended', () => {
    expect(html).toContain('NODE_FAIL');
    expect(html).toContain('node2 died');
    expect((html.match(/<tr class="allocation"/g) ?? []).length).toBe(4);
  });

  it("shows an allocation's warnings (a failed log capture) with its reason", () => {
    const c = writeSweep(tempRoot(), {
      sweepId: 's-w',
      orientation: 'balanced',
      points: [{ concurrency: 1, valid: true, tputPerGpu: 1, interactivity: 1 }],
      allocations: [
        {
          attempt: 1,
          jobName: 'j1',
          jobId: '7',
          nodes: ['n1'],
          requestedAt: 't',
          ended: 'released',
          warnings: ['log capture of server 1 <failed>'],
        },
      ],
    });
    const h = renderReport({ sweeps: [loadSweepResults(c.dir, c.progress)], outDir: c.dir });
    expect(h).toContain('<td class="reasons">log capture of server 1 &lt;failed&gt;</td>');
  });

  it('links logs and records relative to the report and needs no network', () => {
    expect(html).toContain('href="sweep-kimik3-balanced-local-L1/logs/server-0/rank0-node1.log"');
    expect(html).toContain('href="sweep-kimik3-balanced-local-L1/points/c16/result.json"');
    expect(html).not.toMatch(/<script|<link|src=|url\(|@import/);
  });

  it('escapes text from records', () => {
    const c = writeSweep(tempRoot(), {
      sweepId: 's-x',
      orientation: '<img onerror=x>',
      points: [{ concurrency: 1, valid: false, reasons: ['<b>bad</b>'], tputPerGpu: 1, interactivity: 1 }],
    });
    const h = renderReport({ sweeps: [loadSweepResults(c.dir, c.progress)], outDir: c.dir });
    expect(h).not.toContain('<img onerror');
    expect(h).toContain('&lt;b&gt;bad&lt;/b&gt;');
  });

  it('falls back to the progress snapshot, then to the files alone', () => {
    const files = loadSweepResults(a.dir);
    expect(files.source).toBe('files');
    expect(files.points.map((p) => p.concurrency)).toEqual([4, 16, 64]);
    expect(files.orientation).toBe('balanced');
  });

  it('finds the orientations of an all-sweep on disk by its label', () => {
    expect(locateOnDisk('sweep-kimik3-all-local-L1', root).map((l) => l.id)).toEqual([
      'sweep-kimik3-balanced-local-L1',
      'sweep-kimik3-throughput-local-L1',
    ]);
    expect(locateOnDisk('sweep-kimik3-all-local-NOPE', root)).toEqual([]);
  });

  it('writes CSV with one row per point and RFC 4180 quoting', () => {
    const csv = toCsv(sweeps);
    const lines = csv.trimEnd().split('\r\n');
    expect(lines[0]).toBe(CSV_COLUMNS.join(','));
    expect(lines).toHaveLength(1 + 5);
    expect(lines.find((l) => l.includes(',64,'))).toContain('error rate 0.31 > 0.10');
    expect(csvCell('a,"b"')).toBe('"a,""b"""');
  });

  it('the report reads each point record from disk into its row (path, numbers, validity)', () => {
    const c16 = loadSweepResults(a.dir).points.find((p) => p.concurrency === 16);
    expect(c16).toMatchObject({
      valid: true,
      totalThroughputPerGpu: 900,
      interactivityP50: 50,
      resultPath: join(a.dir, 'points', 'c16', 'result.json'),
    });
    // the row follows the file: rewrite its throughput and the report reads the new value
    const file = join(a.dir, 'points', 'c16', 'result.json');
    const before = readFileSync(file, 'utf8');
    try {
      const rec = JSON.parse(before);
      rec.request_metrics.throughput.per_gpu.total_tput_tps = 901.5;
      writeFileSync(file, JSON.stringify(rec));
      expect(loadSweepResults(a.dir).points.find((p) => p.concurrency === 16)?.totalThroughputPerGpu).toBe(901.5);
    } finally {
      writeFileSync(file, before);
    }
  });
});

describe("the report's x-axis and goodput", () => {
  const w = writeSweep(tempRoot(), {
    sweepId: 's-axis',
    orientation: 'balanced',
    points: [
      {
        concurrency: 4,
        valid: true,
        tputPerGpu: 300,
        interactivity: 80,
        e2eNormInteractivity: 31,
        goodput: { good: 97, total: 100 },
      },
      { concurrency: 16, valid: true, tputPerGpu: 900, interactivity: 50, e2eNormInteractivity: 12 },
    ],
  });
  const s = loadSweepResults(w.dir, w.progress);

  it("plots InferenceX's P90 E2E-normalized interactivity by default, 1 / ITL p50 when asked", () => {
    expect(seriesOf(s).points.map((p) => p.x)).toEqual([31, 12]);
    expect(seriesOf(s, 'itl-p50').points.map((p) => p.x)).toEqual([80, 50]);
    expect(renderReport({ sweeps: [s], outDir: w.dir })).toContain(X_AXES['e2e-norm-p90'].label);
    const itl = renderReport({ sweeps: [s], outDir: w.dir, xAxis: 'itl-p50' });
    expect(itl).toContain(X_AXES['itl-p50'].label);
    expect(itl).not.toContain(X_AXES['e2e-norm-p90'].label);
  });

  it('carries goodput attainment and the axis into the rows and the CSV; no bounds, no goodput', () => {
    const [c4, c16] = s.points;
    expect(c4).toMatchObject({
      e2eNormInteractivityP90: 31,
      goodputAttainment: 0.97,
      goodputCiLower: 0.9,
      goodputCiUpper: 0.99,
    });
    expect(c16).toMatchObject({ e2eNormInteractivityP90: 12, goodputAttainment: null });
    const [head, row4] = toCsv([s]).split('\r\n');
    const col = (name: string) => head!.split(',').indexOf(name);
    expect(row4!.split(',')[col('goodput_attainment')]).toBe('0.97');
    expect(row4!.split(',')[col('e2e_norm_intvty_p90')]).toBe('31');
  });
});

describe('results folder layouts', () => {
  it('reads a folder per point (points/c<N>/result.json + requests.jsonl)', async () => {
    const { mkdirSync, writeFileSync } = await import('node:fs');
    const root = tempRoot();
    const dir = join(root, 'sweep-y');
    mkdirSync(join(dir, 'points', 'c4'), { recursive: true });
    writeFileSync(
      join(dir, 'points', 'c4', 'result.json'),
      JSON.stringify(
        pointRecord('sweep-y', 'balanced', { concurrency: 4, valid: true, tputPerGpu: 423, interactivity: 182 }),
      ),
    );
    writeFileSync(join(dir, 'points', 'c4', 'requests.jsonl'), '{}\n');
    const r = loadSweepResults(dir);
    expect(r.points).toHaveLength(1);
    expect(r.points[0]).toMatchObject({
      concurrency: 4,
      valid: true,
      totalThroughputPerGpu: 423,
      requestsJsonl: join(dir, 'points', 'c4', 'requests.jsonl'),
    });
    expect(markers(renderReport({ sweeps: [r], outDir: dir }))).toBe(1);
  });
  it('ignores what a dead attempt left: `.partial-` point folders (libs/agentx/src/point.ts) and log copies (libs/slurm/src/cluster.ts copyLogs)', () => {
    const { dir } = writeSweep(tempRoot(), {
      sweepId: 'sweep-z',
      orientation: 'balanced',
      points: [{ concurrency: 4, valid: true, tputPerGpu: 100, interactivity: 10 }],
    });
    const staged = (folder: string, c: number, tputPerGpu: number) => {
      mkdirSync(join(dir, 'points', folder), { recursive: true });
      const rec = pointRecord('sweep-z', 'balanced', { concurrency: c, valid: true, tputPerGpu, interactivity: 10 });
      writeFileSync(join(dir, 'points', folder, 'result.json'), JSON.stringify(rec));
    };
    staged('c4.partial-aaaa1111', 4, 999); // a later attempt of a measured point that died
    staged('c8.partial-bbbb2222', 8, 555); // the only attempt of a point that died
    writeFileSync(join(dir, 'logs', 'server-0', 'node1.log.partial-cccc3333'), 'half a log');
    const r = loadSweepResults(dir);
    expect(r.source).toBe('files');
    expect(r.points.map((p) => [p.concurrency, p.totalThroughputPerGpu])).toEqual([[4, 100]]);
    expect(r.logs).toEqual(['logs/server-0/rank0-node1.log']);
  });
});
