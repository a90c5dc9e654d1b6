import { describe, expect, it } from 'vitest';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { calibratedSequentialDecision } from '@infersweep/stats';
import type { ReplicatedPoint, SweepProgress } from '@infersweep/sweep';
import { loadSweepResults } from '../src/report/records';
import { renderReport, seriesOf, toCsv, CSV_COLUMNS } from '../src/report/html';
import { tempRoot, writeSweep } from './fixtures/sweep-results';

/** Per-request lines of one replicate (libs/agentx RequestRecord): profiled requests whose ITL is `itl` ms (± 2 ms). */
const requests = (itl: number) =>
  Array.from({ length: 20 }, (_, i) =>
    JSON.stringify({
      id: `r${i}`,
      lane: 0,
      trace_id: 't',
      play: 0,
      turn: i,
      kind: 'root',
      agent_id: null,
      phase: 'profiling',
      endpoint: 'http://x',
      start_ms: 0,
      end_ms: 1000,
      ttft_ms: 50,
      itl_ms: itl + (i % 5) - 2,
      full_response_itl_ms: null,
      e2el_ms: 1000,
      isl: 100,
      osl: 40,
      cached_tokens: 0,
      expected_isl: 100,
      expected_osl: 40,
      max_tokens: 40,
      theoretical_cache_hit_tokens: 0,
      content_chunks: 40,
      status: 200,
      ok: true,
      error_category: null,
      error: null,
    }),
  ).join('\n');

/** A replicated point c=8: three allocations, throughput 1000/1030/970, the last one short of its target. */
function replicated(dir: string): ReplicatedPoint {
  const stat = (v: number[]) => {
    const ci = calibratedSequentialDecision(v, { min: 3, max: 3, relativeHalfWidth: 0.01 }).interval!;
    return { ...ci, target: 0.01 };
  };
  const paths = [1, 2, 3].map((k) => {
    const d = join(dir, 'replicates', 'c8', `r${k}`);
    mkdirSync(d, { recursive: true });
    writeFileSync(join(d, 'requests.jsonl'), requests([20, 30, 40][k - 1]!));
    return join(d, 'result.json');
  });
  return {
    concurrency: 8,
    status: 'max-reached',
    note: 'target not met within max 3: totalThroughputPerGpu ±6.9 % > 1.0 %',
    replicates: paths.map((resultPath, i) => ({ jobId: `${i + 1}00`, nodes: [], resultPath, values: {} })),
    stats: { totalThroughputPerGpu: stat([1000, 1030, 970]), e2eNormInteractivityP90: stat([40, 41, 39]) },
  };
}

describe('the report of a replicated sweep', () => {
  const root = tempRoot();
  const { dir, progress } = writeSweep(root, {
    sweepId: 'rep',
    orientation: 'balanced',
    points: [
      { concurrency: 4, valid: true, tputPerGpu: 500, interactivity: 60 },
      { concurrency: 8, valid: true, tputPerGpu: 990, interactivity: 40 },
    ],
  });
  const prog: SweepProgress = { ...progress, replicates: { points: [replicated(dir)] } };
  const s = loadSweepResults(dir, prog);

  it('plots a replicated point at its mean with 95 % CI error bars; the others as measured', () => {
    const [c4, c8] = seriesOf(s).points;
    expect(c4).not.toHaveProperty('yErr');
    expect(c8!.y).toBeCloseTo(1000, 9);
    expect(c8!.yErr![0]).toBeLessThan(1000);
    expect(c8!.yErr![1]).toBeGreaterThan(1000);
    expect(c8!.xErr).toBeDefined();
    const html = renderReport({ sweeps: [s], outDir: root });
    expect((html.match(/class="error-bar" data-axis="y"/g) ?? []).length).toBe(3);
    expect((html.match(/class="error-bar" data-axis="x"/g) ?? []).length).toBe(3);
  });

  it('tables the CI, n and the between-allocation share, and says where the target was not met', () => {
    const html = renderReport({ sweeps: [s], outDir: root });
    expect(html).toContain('<h3>Replicates across allocations</h3>');
    expect(html).toContain('Target not met within max for c=8');
    expect(html).toMatch(/<tr data-concurrency="8"><td class="num">8<\/td><td class="num">3<\/td>/);
    // allocations' ITLs 20, 30, 40 ms with a ±2 ms spread: almost all the variance is between allocations
    expect(s.replicates![0]!.betweenShare).toBeGreaterThan(0.95);
    expect(html).toContain('100, 200, 300');
  });

  it('results --csv and --json carry n, the CI and the share', () => {
    const [head, , c8] = toCsv([s]).trim().split(/\r?\n/);
    expect(head).toBe(CSV_COLUMNS.join(','));
    const cells = c8!.split(',');
    const at = (col: (typeof CSV_COLUMNS)[number]) => cells[CSV_COLUMNS.indexOf(col)];
    expect([at('replicates_n'), at('replicate_status'), at('tput_per_gpu_mean')]).toEqual(['3', 'max-reached', '1000']);
    expect(Number(at('between_allocation_share'))).toBeGreaterThan(0.95);
    expect(JSON.parse(JSON.stringify(s)).replicates[0]).toMatchObject({ concurrency: 8, n: 3, status: 'max-reached' });
  });

  it('a sweep without replicates has no replicate fields or table', () => {
    const plain = loadSweepResults(dir, progress);
    expect(plain).not.toHaveProperty('replicates');
    expect(renderReport({ sweeps: [plain], outDir: root })).not.toContain('Replicates across allocations');
  });
});
