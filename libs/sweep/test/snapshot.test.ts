/** The snapshot's rules (libs/sweep/src/snapshot.ts): the matrix, a cell's state machine, the headline. */
import { describe, expect, it } from 'vitest';
import type { SnapshotConfig } from '@infersweep/topology';
import {
  cellFailed,
  cellFinished,
  cellIdOf,
  cellSpent,
  cellLanes,
  cellLines,
  cellSweepId,
  emptyLedger,
  headlineLine,
  initialSnapshot,
  ledgerOfFailure,
  planSnapshotCells,
  snapshotHeadline,
  windowEnded,
  type CellState,
  type PointState,
  type SnapshotInput,
  type SweepInput,
  type SweepResult,
} from '@infersweep/sweep';

const sweep = (orientation: string, cluster: string) => ({ orientation, cluster }) as unknown as SweepInput;

const config = (over: Partial<SnapshotConfig> = {}): SnapshotConfig => ({
  name: 'weekly',
  windowSeconds: 3600,
  retryEverySeconds: 600,
  unavailableAfterSeconds: 60,
  policy: 'retry-later',
  maxCellAttempts: 2,
  cellsPerCluster: 1,
  matrix: [
    { config: 'a.yaml', orientations: 'all', clusters: ['east', 'west'] },
    { config: 'b.yaml', orientations: ['tp'], clusters: ['east'], policy: 'operator' },
  ],
  ...over,
});

const plansOf = (r: number, cluster: string) =>
  r === 0
    ? ['tp', 'dp'].map((o) => ({ configName: 'a', sweep: sweep(o, cluster), resultsRoot: '/r' }))
    : [{ configName: 'b', sweep: sweep('tp', cluster), resultsRoot: '/r' }];

const cell = (over: Partial<CellState> = {}): CellState => ({
  cellId: 'a-tp-east',
  config: 'a',
  orientation: 'tp',
  cluster: 'east',
  policy: 'retry-later',
  status: 'running',
  tries: 1,
  failures: 0,
  unavailable: 0,
  gpuSeconds: 0,
  failedGpuSeconds: 0,
  ...over,
});

const rules = { retryEverySeconds: 600, maxCellAttempts: 2 };
const T = Date.parse('2026-12-05T00:00:00Z');
const WINDOW_END = T + 3600_000;

const point = (status: PointState['status']): PointState => ({ concurrency: 1, status, attempts: 1 });
const result = (statuses: PointState['status'][], over: Partial<SweepResult> = {}): SweepResult => ({
  sweepId: 's',
  status: 'completed',
  points: statuses.map(point),
  allocations: [],
  resultsDir: '/r',
  ...over,
});

describe('the matrix', () => {
  it('one cell per row × cluster × orientation, in matrix order, with the row policy or the snapshot default', () => {
    const cells = planSnapshotCells(config(), plansOf);
    expect(cells.map((c) => [c.cellId, c.policy])).toEqual([
      ['a-tp-east', 'retry-later'],
      ['a-dp-east', 'retry-later'],
      ['a-tp-west', 'retry-later'],
      ['a-dp-west', 'retry-later'],
      ['b-tp-east', 'operator'],
    ]);
    expect(cells[2]!.sweep.cluster).toBe('west');
  });

  it('refuses a cell listed twice, naming both rows and the cell', () => {
    const twice = config({
      matrix: [
        { config: 'a.yaml', orientations: 'all', clusters: ['east'] },
        { config: 'a.yaml', orientations: 'all', clusters: ['east'] },
      ],
    });
    expect(() => planSnapshotCells(twice, (_r, c) => plansOf(0, c))).toThrow(
      /matrix\[1\]: cell a-tp-east .* is already in matrix\[0\]; list each config × orientation × cluster once/,
    );
  });

  it('cell ids and sweep ids are Temporal-safe; the first try keeps the plain id', () => {
    expect(cellIdOf('my cfg', 'tp/dp', 'east')).toBe('my-cfg-tp-dp-east');
    expect(cellSweepId('snap-1', 'a-tp-east', 1)).toBe('snap-1-a-tp-east');
    expect(cellSweepId('snap-1', 'a-tp-east', 3)).toBe('snap-1-a-tp-east-t3');
  });

  it('lanes: per cluster, cells split round-robin into at most cellsPerCluster lanes', () => {
    const cells = planSnapshotCells(config(), plansOf);
    expect(cellLanes(cells, 1).map((l) => l.map((c) => c.cellId))).toEqual([
      ['a-tp-east', 'a-dp-east', 'b-tp-east'],
      ['a-tp-west', 'a-dp-west'],
    ]);
    expect(cellLanes(cells, 2).map((l) => l.map((c) => c.cellId))).toEqual([
      ['a-tp-east', 'b-tp-east'],
      ['a-dp-east'],
      ['a-tp-west'],
      ['a-dp-west'],
    ]);
    expect(cellLanes(cells, 9)).toHaveLength(5);
  });

  it('initial state: every cell pending, the window end from the start', () => {
    const input: SnapshotInput = {
      name: 'w',
      windowSeconds: 3600,
      retryEverySeconds: 600,
      maxCellAttempts: 2,
      cellsPerCluster: 1,
      cells: planSnapshotCells(config(), plansOf),
    };
    const s = initialSnapshot(input, T);
    expect(s.windowEndsAt).toBe('2026-12-05T01:00:00.000Z');
    expect(s.cells.map((c) => c.status)).toEqual(Array(5).fill('pending'));
    expect(s.headline).toMatchObject({ planned: 5, valid: 0, open: 5 });
  });
});

describe('a cell finished', () => {
  it('valid: completed with every point done; the ledger adds to its GPU time', () => {
    const c = cell({ gpuSeconds: 10 });
    const ledger = { ...emptyLedger(), heldGpuSeconds: 100 };
    ledger.sweep.failedAttempts = 7;
    cellFinished(c, result(['done', 'done'], { ledger }));
    expect(c).toMatchObject({
      status: 'valid',
      points: { planned: 2, valid: 2 },
      gpuSeconds: 110,
      failedGpuSeconds: 7,
    });
  });

  it.each([
    ['a point invalid', ['done', 'invalid'], {}, '1 of 2 points not valid'],
    ['a point failed', ['failed'], {}, '1 of 1 points not valid'],
    ['a point skipped', ['done', 'skipped'], {}, '1 of 2 points not valid'],
    ['no points at all', [], {}, '0 of 0 points not valid'],
    ['aborted', ['done'], { status: 'aborted', message: 'by hand' }, 'sweep aborted: by hand'],
  ] as const)('invalid: %s', (_w, statuses, over, why) => {
    const c = cell();
    cellFinished(c, result([...statuses], over as Partial<SweepResult>));
    expect(c.status).toBe('invalid');
    expect(c.lastError).toBe(why);
  });
});

describe('a cell failed', () => {
  it('unavailable: retry after retryEvery without spending an attempt, as often as the window allows', () => {
    const c = cell();
    for (let k = 1; k <= 5; k++) {
      const next = cellFailed(c, 'unavailable', 'allocation attempts failed', T + (k - 1) * 600_000, WINDOW_END, rules);
      expect(next).toEqual({ then: 'retry', atMs: T + k * 600_000 });
      expect(c).toMatchObject({ status: 'waiting', unavailable: k, failures: 0 });
      expect(c.retryAt).toBe(new Date(T + k * 600_000).toISOString());
    }
    // the next retry would fall at the window's end: not run
    expect(cellFailed(c, 'unavailable', 'down', T + 3000_000, WINDOW_END, rules)).toEqual({ then: 'stop' });
    expect(c).toMatchObject({
      status: 'not-run',
      lastError: "down; the next try would fall after the window's end",
      failures: 0,
    });
    expect(c.retryAt).toBeUndefined();
  });

  it('retry-later: one attempt spent, retry after retryEvery; the last attempt fails the cell', () => {
    const c = cell();
    expect(cellFailed(c, 'failed', 'boom', T, WINDOW_END, rules)).toEqual({ then: 'retry', atMs: T + 600_000 });
    expect(c).toMatchObject({ status: 'waiting', failures: 1 });
    expect(cellFailed(c, 'failed', 'boom again', T + 600_000, WINDOW_END, rules)).toEqual({ then: 'stop' });
    expect(c).toMatchObject({ status: 'failed', failures: 2, lastError: 'boom again' });
  });

  it('retry-later near the window end: not run (the window decides)', () => {
    const c = cell();
    expect(cellFailed(c, 'failed', 'boom', WINDOW_END - 1000, WINDOW_END, rules)).toEqual({ then: 'stop' });
    expect(c).toMatchObject({ status: 'not-run', lastError: "boom; the next try would fall after the window's end" });
  });

  it('re-place: retry at once; operator: wait for one; both within maxCellAttempts', () => {
    const r = cell({ policy: 're-place' });
    expect(cellFailed(r, 'failed', 'x', T, WINDOW_END, rules)).toEqual({ then: 'retry', atMs: T });
    const o = cell({ policy: 'operator' });
    expect(cellFailed(o, 'failed', 'x', T, WINDOW_END, rules)).toEqual({ then: 'operator' });
    expect(o.status).toBe('awaiting-operator');
    expect(cellFailed(o, 'failed', 'x', T, WINDOW_END, rules)).toEqual({ then: 'stop' });
    expect(o.status).toBe('failed');
  });

  it('the window end makes every open cell not run, saying what it was doing, and leaves final ones', () => {
    const statuses = ['pending', 'running', 'waiting', 'awaiting-operator', 'valid', 'invalid', 'failed'] as const;
    const after = statuses.map((status) => {
      const c = cell({ status, retryAt: 'x', sweepId: 's-1', ...(status === 'waiting' ? { lastError: 'down' } : {}) });
      windowEnded(c);
      return [c.status, c.lastError];
    });
    expect(after).toEqual([
      ['not-run', 'the window ended before the cell started'],
      ['not-run', 'the window ended while its sweep s-1 ran (asked to cancel)'],
      ['not-run', 'the window ended while it waited to try again; last error: down'],
      ['not-run', 'the window ended while it awaited an operator'],
      ['valid', undefined],
      ['invalid', undefined],
      ['failed', undefined],
    ]);
  });
});

describe("a failed sweep's GPU time", () => {
  const ledger = (held: number, failedAttempts = 0) => {
    const l = { ...emptyLedger(), heldGpuSeconds: held };
    l.sweep.failedAttempts = failedAttempts;
    return l;
  };

  it('its failure details carry the ledger; anything else carries none', () => {
    const l = ledger(100);
    expect(ledgerOfFailure([{ ledger: l }])).toEqual(l);
    expect(ledgerOfFailure(undefined)).toBeUndefined();
    expect(ledgerOfFailure([])).toBeUndefined();
    expect(ledgerOfFailure([{ kind: 'fatal' }])).toBeUndefined();
    expect(ledgerOfFailure([{ ledger: { heldGpuSeconds: 'x' } }])).toBeUndefined();
    expect(ledgerOfFailure(['text'])).toBeUndefined();
  });

  it('a cell with a failed try and a finished one: the headline counts both tries, the failed one all failed', () => {
    const c = cell();
    cellSpent(c, ledgerOfFailure([{ ledger: ledger(400, 80) }]), 'failed');
    cellFailed(c, 'failed', 'boom', T, WINDOW_END, rules);
    cellFinished(c, result(['done'], { ledger: ledger(300, 30) }));
    expect(c).toMatchObject({ status: 'valid', gpuSeconds: 700, failedGpuSeconds: 430 });
    const h = snapshotHeadline([c, cell({ status: 'failed' })], 0);
    expect(h).toMatchObject({ failedGpuSeconds: 430, totalGpuSeconds: 700 });
  });
});

describe('the headline', () => {
  it('counts cells by status and sums GPU time; one line says it', () => {
    const cells = [
      ...Array.from({ length: 10 }, () => cell({ status: 'valid', gpuSeconds: 3600, failedGpuSeconds: 360 })),
      cell({ status: 'invalid', gpuSeconds: 1800 }),
      cell({ status: 'not-run' }),
      cell({ status: 'failed' }),
      cell({ status: 'waiting' }),
    ];
    const h = snapshotHeadline(cells, 1);
    expect(h).toEqual({
      planned: 14,
      valid: 10,
      invalid: 1,
      failed: 1,
      notRun: 1,
      open: 1,
      failedGpuSeconds: 3600,
      totalGpuSeconds: 37_800,
      operatorActions: 1,
    });
    expect(headlineLine(h)).toBe(
      'cells valid 10/14 (invalid 1, failed 1, not run 1, open 1) · failed GPU-h 1.00/10.50 · operator actions 1',
    );
    expect(headlineLine(snapshotHeadline([cell({ status: 'valid' })], 0))).toBe(
      'cells valid 1/1 · failed GPU-h 0.0000/0.0000 · operator actions 0',
    );
  });

  it('cell lines: status, points, tries with unavailable ones, retry time, why not valid', () => {
    const [a, b] = cellLines([
      cell({ status: 'valid', points: { planned: 3, valid: 3 }, lastError: 'old' }),
      cell({ cellId: 'a-tp-west', status: 'waiting', tries: 2, unavailable: 2, retryAt: 'T1', lastError: 'down' }),
    ]);
    expect(a).toMatch(/^ {2}a-tp-east +valid +points 3\/3 tries 1$/);
    expect(b).toMatch(/a-tp-west +waiting +tries 2 \(2 cluster unavailable\) retry at T1 — down$/);
  });
});
