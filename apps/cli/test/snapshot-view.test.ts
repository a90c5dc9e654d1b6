/** `status` of a snapshot (apps/cli/src/ops/render.ts): the window, the headline and one line per cell. */
import { describe, expect, it } from 'vitest';
import { snapshotHeadline, type CellState, type SnapshotProgress } from '@infersweep/sweep';
import { statusJson, statusText } from '../src/ops/render';
import type { SweepView } from '../src/ops/temporal';

const cell = (cellId: string, over: Partial<CellState>): CellState => ({
  cellId,
  config: 'two',
  orientation: 'tp',
  cluster: 'east',
  policy: 'retry-later',
  status: 'valid',
  tries: 1,
  failures: 0,
  unavailable: 0,
  gpuSeconds: 7200,
  failedGpuSeconds: 0,
  ...over,
});

const cells = [
  cell('two-tp-east', { points: { planned: 2, valid: 2 } }),
  cell('two-tp-west', {
    cluster: 'west',
    status: 'not-run',
    tries: 3,
    unavailable: 3,
    gpuSeconds: 0,
    lastError: '3 allocation attempts failed',
  }),
];
const snapshot: SnapshotProgress = {
  name: 'weekly',
  phase: 'completed',
  startedAt: '2026-12-05T00:00:00.000Z',
  windowEndsAt: '2026-12-06T00:00:00.000Z',
  cells,
  operatorActions: 0,
  headline: snapshotHeadline(cells, 0),
};
const view = (over: Partial<SweepView>): SweepView => ({
  workflowId: 'snapshot-weekly-1',
  runId: 'r',
  type: 'snapshotWorkflow',
  kind: 'snapshot',
  status: 'COMPLETED',
  uiLink: 'http://ui/x',
  taskQueue: 'infersweep-east',
  searchAttributes: {},
  memo: {},
  live: [],
  children: [],
  ...over,
});

describe('status of a snapshot', () => {
  it('prints the window, the headline and every cell with why it is not valid', () => {
    const lines = statusText(view({ snapshot })).split('\n');
    expect(lines).toContain(
      '  snapshot     weekly: completed, window 2026-12-05T00:00:00.000Z – 2026-12-06T00:00:00.000Z',
    );
    expect(lines).toContain(
      '  headline     cells valid 1/2 (not run 1) · failed GPU-h 0.0000/2.00 · operator actions 0',
    );
    expect(lines.find((l) => l.includes('two-tp-west'))).toMatch(
      /not-run +tries 3 \(3 cluster unavailable\) — 3 allocation attempts failed$/,
    );
    expect(lines.find((l) => l.includes('two-tp-east'))).toMatch(/valid +points 2\/2 tries 1$/);
  });

  it('says why there is no snapshot to show; --json carries the headline', () => {
    expect(statusText(view({ status: 'RUNNING', progressNote: 'snapshot query failed: timeout' }))).toContain(
      '  snapshot     unavailable: snapshot query failed: timeout',
    );
    expect(statusJson(view({ snapshot }))).toMatchObject({
      kind: 'snapshot',
      headline: { planned: 2, valid: 1, notRun: 1 },
    });
  });
});
