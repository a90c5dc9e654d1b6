import { describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ResultsLayout } from '@infersweep/core';
import { tInterval } from '@infersweep/stats';
import { extractRun } from '../src';
import { plan, writeRun } from '@infersweep/testkit/runs-fixture';

/** A run of c=1 whose plan replicates it (fixed n = 3), with replicate records at the given throughputs. */
function replicatedRun(tput: number[], valid: boolean[] = tput.map(() => true)): string {
  const root = mkdtempSync(join(tmpdir(), 'hist-rep-'));
  const dir = writeRun(root, 'night-r', 1, { 1: tput[0]! });
  const layout = new ResultsLayout(dir);
  const replicates = { ...plan.replicates, points: 'all', min: 3, max: 3, target: {}, independentAllocations: true };
  writeFileSync(
    layout.planFile,
    JSON.stringify({
      ...JSON.parse(readFileSync(layout.planFile, 'utf8')),
      replicates: {
        ...replicates,
        pointGpuHours: 1,
        startupGpuHours: 1,
        replicatedPoints: 1,
        worstCaseExtraPoints: 2,
        worstCaseExtraAllocations: 2,
        worstCaseGpuHours: 5,
        singlePassGpuHours: 3,
        summary: 's',
      },
    }),
  );
  const first = JSON.parse(readFileSync(layout.pointRecord(1), 'utf8')) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  tput.slice(1).forEach((t, i) => {
    const r = structuredClone(first);
    r.request_metrics.throughput.per_gpu.total_tput_tps = t;
    r.submission_valid = valid[i + 1];
    mkdirSync(layout.replicateDir(1, i + 2), { recursive: true });
    writeFileSync(layout.replicateRecord(1, i + 2), JSON.stringify(r));
  });
  return dir;
}

describe('history of a replicated point', () => {
  it('records the mean over allocations with n and the 95 % CI (ci, n in the history schema)', () => {
    const run = extractRun(replicatedRun([1000, 1030, 970]));
    expect(run.skipped).toEqual([]);
    const [p] = run.points;
    const want = tInterval([1000, 1030, 970]);
    expect(p!.n).toBe(3);
    expect(p!.metrics.throughputPerGpu).toBeCloseTo(1000, 9);
    expect(p!.ci!.throughputPerGpu!.lower).toBeCloseTo(want.lower, 9);
    expect(p!.ci!.throughputPerGpu!.upper).toBeCloseTo(want.upper, 9);
  });

  it('counts only valid replicates; a point measured once has neither n nor ci', () => {
    const two = extractRun(replicatedRun([1000, 1030, 970], [true, true, false])).points[0]!;
    expect(two.n).toBe(2);
    const once = extractRun(writeRun(mkdtempSync(join(tmpdir(), 'hist-one-')), 'n1', 1, { 1: 500 })).points[0]!;
    expect(once).not.toHaveProperty('n');
    expect(once).not.toHaveProperty('ci');
  });
});
