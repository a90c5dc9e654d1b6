/**
 * `results --format inferencex` leaves invalid points out unless asked, and every exported file says, in its
 * warnings and its `.infersweep` sidecar, whether it is valid and whether it ran InferenceX's workload.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { inferencexAggSchema } from '@infersweep/agentx';
import { ResultsLayout } from '@infersweep/core';
import { loadSweepResults } from '../src/report/records';
import { writeInferencex } from '../src/report/inferencex';
import { requestRecord } from '@infersweep/testkit/records-fixture';
import { tempRoot, writeSweep } from './fixtures/sweep-results';

const SATURATED = 'client_saturated: event-loop delay p99 9.1 ms > 5 ms';

/** A sweep with a valid c=4 and an invalid c=8, each with a requests.jsonl of three profiled requests. */
function sweep(id: string) {
  const { dir } = writeSweep(tempRoot(), {
    sweepId: id,
    orientation: 'balanced',
    points: [
      { concurrency: 4, valid: true, tputPerGpu: 300, interactivity: 80 },
      { concurrency: 8, valid: false, reasons: [SATURATED], tputPerGpu: 500, interactivity: 60 },
    ],
  });
  const layout = new ResultsLayout(dir);
  for (const c of [4, 8])
    writeFileSync(
      layout.pointRequests(c),
      [0, 1, 2]
        .map((i) => JSON.stringify(requestRecord({ id: `r${i}`, start_ms: i * 100, end_ms: 1000 + i * 100 })))
        .join('\n'),
    );
  return { dir, results: loadSweepResults(dir) };
}

const sidecarOf = (path: string) => JSON.parse(readFileSync(`${path}.infersweep`, 'utf8')) as Record<string, unknown>;

describe('results --format inferencex: invalid points and comparability', () => {
  it('an invalid point is not exported without --include-invalid; the export says which and why', () => {
    const { dir, results } = sweep('sweep-ix-default');
    const w = writeInferencex([results], join(dir, 'ix'));
    expect(w.written.map((x) => [x.concurrency, x.valid])).toEqual([[4, true]]);
    expect(w.leftOutInvalid).toEqual([{ sweepId: 'sweep-ix-default', concurrency: 8, reasons: [SATURATED] }]);
    expect(w.skipped).toEqual([]);
    const path = w.written[0]!.path;
    expect(basename(path)).toMatch(/_conc4\.json$/);
    expect(sidecarOf(path)).toMatchObject({ conc: 4, submission_valid: true, submission_invalid_reasons: [] });
  });

  it('with --include-invalid the invalid point is exported with its reasons first in warnings and in the sidecar', () => {
    const { dir, results } = sweep('sweep-ix-include');
    const w = writeInferencex([results], join(dir, 'ix'), { includeInvalid: true });
    expect(w.written.map((x) => [x.concurrency, x.valid])).toEqual([
      [4, true],
      [8, false],
    ]);
    expect(w.leftOutInvalid).toEqual([]);
    const c8 = w.written[1]!.path;
    const agg = inferencexAggSchema.parse(JSON.parse(readFileSync(c8, 'utf8')));
    expect(agg.warnings?.[0]).toBe(`infersweep: INVALID point, not a submittable result: ${SATURATED}`);
    expect(sidecarOf(c8)).toMatchObject({ conc: 8, submission_valid: false, submission_invalid_reasons: [SATURATED] });
  });

  it("a point of infersweep's own client is flagged not comparable in the file, the sidecar and the export's summary", () => {
    const { dir, results } = sweep('sweep-ix-comparable');
    const w = writeInferencex([results], join(dir, 'ix'));
    const agg = inferencexAggSchema.parse(JSON.parse(readFileSync(w.written[0]!.path, 'utf8')));
    expect(agg.warnings?.[0]).toMatch(
      /^infersweep: not InferenceX's workload, not comparable with its results: client infersweep/,
    );
    expect(sidecarOf(w.written[0]!.path)).toMatchObject({ inferencex_comparable: false });
    expect(w.notComparable).toHaveLength(1);
    expect(w.notComparable[0]).toMatchObject({ sweepId: 'sweep-ix-comparable', orientation: 'balanced' });
    // the sidecar does not end in .json: InferenceX's collector globs <RESULT_FILENAME>_*.json
    expect(existsSync(`${w.written[0]!.path}.infersweep`)).toBe(true);
  });
});

describe('results --format inferencex of a replicated point', () => {
  it('one file per replicate; every sidecar carries the mean’s 95 % CI over allocations, n and the share', () => {
    const { dir, results } = sweep('sweep-ix-replicates');
    const layout = new ResultsLayout(dir);
    const paths = [2, 3].map((k) => {
      const d = layout.replicateDir(4, k);
      mkdirSync(d, { recursive: true });
      writeFileSync(join(d, 'result.json'), readFileSync(layout.pointRecord(4), 'utf8'));
      writeFileSync(join(d, 'requests.jsonl'), readFileSync(layout.pointRequests(4), 'utf8'));
      return join(d, 'result.json');
    });
    const stat = { n: 3, mean: 300, lower: 290, upper: 310, halfWidth: 10, relativeHalfWidth: 0.033, level: 0.95 };
    const replicated = {
      ...results,
      replicates: [
        {
          concurrency: 4,
          n: 3,
          status: 'fixed-n' as const,
          note: null,
          stats: { totalThroughputPerGpu: stat },
          betweenShare: 0.4,
          jobIds: ['1', '2', '3'],
          resultPaths: [layout.pointRecord(4), ...paths],
        },
      ],
    };
    const w = writeInferencex([replicated], join(dir, 'ix'));
    expect(w.skipped).toEqual([]);
    expect(w.written.map((x) => basename(x.path).replace(/^.*_conc/, 'conc'))).toEqual([
      'conc4.json',
      'conc4_r2.json',
      'conc4_r3.json',
    ]);
    for (const [i, x] of w.written.entries()) {
      inferencexAggSchema.parse(JSON.parse(readFileSync(x.path, 'utf8')));
      expect(sidecarOf(x.path)).toMatchObject({
        conc: 4,
        replicate: i + 1,
        replicates: { n: 3, status: 'fixed-n', ci95: { totalThroughputPerGpu: stat }, betweenAllocationShare: 0.4 },
      });
    }
  });
});

describe('results --format inferencex of an aiperf point', () => {
  it("reads the point's aiperf server-metrics export: one source per endpoint with its own counters, as InferenceX", () => {
    const { dir } = sweep('sweep-ix-aiperf');
    const layout = new ResultsLayout(dir);
    const record = JSON.parse(readFileSync(layout.pointRecord(4), 'utf8')) as { client: { name: string } };
    writeFileSync(layout.pointRecord(4), JSON.stringify({ ...record, client: { name: 'aiperf', version: '0.13.0' } }));
    // a real aiperf 0.13.0 export of a P/D point (libs/agentx/test/inferencex-export.test.ts says how it was made)
    const artifacts = join(dirname(layout.pointRecord(4)), 'aiperf_artifacts');
    mkdirSync(artifacts, { recursive: true });
    writeFileSync(
      join(artifacts, 'server_metrics_export.json'),
      readFileSync(
        new URL('../../../libs/agentx/test/data/aiperf-sim-pd-c2-server-metrics-export.json', import.meta.url),
      ),
    );
    const w = writeInferencex([loadSweepResults(dir)], join(dir, 'ix'));
    const agg = inferencexAggSchema.parse(JSON.parse(readFileSync(w.written[0]!.path, 'utf8')));
    expect(agg.server_metrics.sources.map((x) => [x.id, x.prompt_tokens, x.generation_tokens])).toEqual([
      ['combined|http://127.0.0.1:18401/metrics', 44470, 4275],
      ['combined|http://127.0.0.1:22401/metrics', 44470, 26],
      ['combined|http://127.0.0.1:22465/metrics', 44470, 4275],
    ]);
  });
});
