/**
 * Snapshots: a matrix of cells (config × orientation × cluster, libs/topology/src/config/snapshot.ts)
 * run as one batch within a window. Pure and workflow-safe: the matrix, each cell's state machine
 * (what a finished or failed sweep makes of its cell), and the headline — cells valid / cells
 * planned, failed GPU-hours / total. libs/orchestrator/src/workflows/snapshot.ts tells the story.
 *
 * A cell whose cluster cannot allocate (its sweep spent its allocation attempts) waits
 * `retryEverySeconds` and tries again, as often as the window allows, without spending the cell's
 * attempts: a cluster that is down delays its cells and never fails the snapshot. Only when the
 * window ends is a cell that has not finished reported `not-run`.
 */
import { childSweepId, safeName } from '@infersweep/core';
import type { CellPolicy, SnapshotConfig } from '@infersweep/topology';
import type { SweepInput, SweepResult } from './contract';
import { defineQuery, defineUpdate } from '@temporalio/workflow';
import { gpuHours, sweepSpend, type GpuLedger } from './ledger';

/** One cell of the matrix: one orientation of one config on one cluster, with its frozen sweep input. */
export interface SnapshotCellInput {
  cellId: string;
  /** the config's name (`name:` of the sweep config) */
  config: string;
  orientation: string;
  cluster: string;
  policy: CellPolicy;
  sweep: SweepInput;
  /** each try's results in `<resultsRoot>/<its sweep id>` (the cluster's results root: storage its worker sees) */
  resultsRoot: string;
}

/** Input of snapshotWorkflow: the planned matrix and the config's rules. */
export interface SnapshotInput {
  name: string;
  windowSeconds: number;
  retryEverySeconds: number;
  maxCellAttempts: number;
  cellsPerCluster: number;
  cells: SnapshotCellInput[];
}

export type CellStatus =
  | 'pending'
  | 'running'
  /** waiting for its retry time (cluster unavailable, or the retry-later policy) */
  | 'waiting'
  | 'awaiting-operator'
  /** the sweep completed with every point measured and valid */
  | 'valid'
  /** the sweep completed, some point invalid, failed or skipped */
  | 'invalid'
  /** the sweep failed and the cell's policy gives up (attempts spent) */
  | 'failed'
  /** the window ended before the cell finished */
  | 'not-run';

export const FINAL_CELL_STATUSES: readonly CellStatus[] = ['valid', 'invalid', 'failed', 'not-run'];

export interface CellState {
  cellId: string;
  config: string;
  orientation: string;
  cluster: string;
  policy: CellPolicy;
  status: CellStatus;
  /** sweeps started for this cell */
  tries: number;
  /** failed sweeps that counted against maxCellAttempts (cluster unavailable does not count) */
  failures: number;
  /** tries that found the cluster unable to allocate */
  unavailable: number;
  /** the last try's sweep id and results folder */
  sweepId?: string;
  resultsDir?: string;
  /** when it tries again (status waiting) */
  retryAt?: string;
  lastError?: string;
  /** points of the sweep that finished the cell: planned, and valid */
  points?: { planned: number; valid: number };
  /** GPU-seconds the finished sweeps' allocations held, and of them failed attempts */
  gpuSeconds: number;
  failedGpuSeconds: number;
}

export interface SnapshotHeadline {
  planned: number;
  valid: number;
  invalid: number;
  failed: number;
  notRun: number;
  /** not final yet (running, waiting, awaiting an operator, pending) */
  open: number;
  failedGpuSeconds: number;
  totalGpuSeconds: number;
  operatorActions: number;
}

export interface SnapshotProgress {
  name: string;
  phase: 'running' | 'completed' | 'cancelled';
  startedAt: string;
  windowEndsAt: string;
  cells: CellState[];
  operatorActions: number;
  headline: SnapshotHeadline;
}

/** The `snapshot` query: the snapshot's progress. */
export const snapshotQuery = defineQuery<SnapshotProgress>('snapshot');
/** An operator's answer to a cell awaiting one: try it again now. */
export const retryCellUpdate = defineUpdate<SnapshotProgress, [{ cellId: string }]>('retryCell');

/** The cell id: `<config>-<orientation>-<cluster>`, Temporal-safe. */
export function cellIdOf(config: string, orientation: string, cluster: string): string {
  return safeName(`${config}-${orientation}-${cluster}`);
}

/** The sweep id of try `n` (1-based) of a cell of snapshot run `snapshotId`. */
export function cellSweepId(snapshotId: string, cellId: string, n: number): string {
  return childSweepId(snapshotId, n === 1 ? cellId : `${cellId}-t${n}`);
}

/** A planned sweep of the matrix: the config's name, the orientation's frozen sweep input. */
export interface PlannedSweep {
  configName: string;
  sweep: SweepInput;
  resultsRoot: string;
}

/**
 * The matrix: one cell per (row, cluster, orientation) from `plansOf(row, cluster)`, the planned
 * sweeps of that row's config on that cluster. Throws on a cell listed twice (two rows naming the
 * same config, orientation and cluster), naming both rows.
 */
export function planSnapshotCells(
  config: SnapshotConfig,
  plansOf: (rowIndex: number, cluster: string) => PlannedSweep[],
): SnapshotCellInput[] {
  const cells: SnapshotCellInput[] = [];
  const rowOf = new Map<string, number>();
  config.matrix.forEach((row, r) => {
    for (const cluster of row.clusters)
      for (const p of plansOf(r, cluster)) {
        const cellId = cellIdOf(p.configName, p.sweep.orientation, cluster);
        const first = rowOf.get(cellId);
        if (first !== undefined)
          throw new Error(
            `matrix[${r}]: cell ${cellId} (config ${p.configName}, orientation ${p.sweep.orientation}, cluster ${cluster}) is already in matrix[${first}]; list each config × orientation × cluster once`,
          );
        rowOf.set(cellId, r);
        cells.push({
          cellId,
          config: p.configName,
          orientation: p.sweep.orientation,
          cluster,
          policy: row.policy ?? config.policy,
          sweep: p.sweep,
          resultsRoot: p.resultsRoot,
        });
      }
  });
  return cells;
}

/** The cells in lanes: per cluster, `perCluster` lanes taking its cells in matrix order. */
export function cellLanes(cells: readonly SnapshotCellInput[], perCluster: number): SnapshotCellInput[][] {
  const byCluster = new Map<string, SnapshotCellInput[]>();
  for (const c of cells) byCluster.set(c.cluster, [...(byCluster.get(c.cluster) ?? []), c]);
  const lanes: SnapshotCellInput[][] = [];
  for (const list of byCluster.values()) {
    const n = Math.max(1, Math.min(perCluster, list.length));
    for (let l = 0; l < n; l++) lanes.push(list.filter((_, i) => i % n === l));
  }
  return lanes;
}

export function initialSnapshot(input: SnapshotInput, startMs: number): SnapshotProgress {
  const cells = input.cells.map((c): CellState => ({
    cellId: c.cellId,
    config: c.config,
    orientation: c.orientation,
    cluster: c.cluster,
    policy: c.policy,
    status: 'pending',
    tries: 0,
    failures: 0,
    unavailable: 0,
    gpuSeconds: 0,
    failedGpuSeconds: 0,
  }));
  return {
    name: input.name,
    phase: 'running',
    startedAt: new Date(startMs).toISOString(),
    windowEndsAt: new Date(startMs + input.windowSeconds * 1000).toISOString(),
    cells,
    operatorActions: 0,
    headline: snapshotHeadline(cells, 0),
  };
}

/** A cell's sweep finished: valid when it completed with every point measured and valid. */
export function cellFinished(cell: CellState, r: SweepResult): void {
  const valid = r.points.filter((p) => p.status === 'done').length;
  cell.points = { planned: r.points.length, valid };
  cell.status = r.status === 'completed' && r.points.length > 0 && valid === r.points.length ? 'valid' : 'invalid';
  if (cell.status === 'invalid')
    cell.lastError =
      r.status === 'completed'
        ? `${r.points.length - valid} of ${r.points.length} points not valid`
        : `sweep ${r.status}${r.message ? `: ${r.message}` : ''}`;
  cellSpent(cell, r.ledger, 'finished');
  cell.retryAt = undefined;
}

/** A try's GPU time into its cell (./ledger.ts sweepSpend): a finished sweep's from its result, a failed one's from its failure. */
export function cellSpent(cell: CellState, ledger: GpuLedger | undefined, outcome: 'finished' | 'failed'): void {
  const spent = sweepSpend(ledger, outcome);
  cell.gpuSeconds += spent.gpuSeconds;
  cell.failedGpuSeconds += spent.failedGpuSeconds;
}

/**
 * What a failed sweep reports to its parent: its failure's details[0]
 * (libs/orchestrator/src/workflows/run.ts), the GPU time its allocations held until it failed.
 */
export interface SweepFailureDetails {
  ledger?: GpuLedger;
}

/** The ledger in a failed sweep's failure details; undefined when they carry none (a cancelled sweep, an older worker). */
export function ledgerOfFailure(details: readonly unknown[] | undefined): GpuLedger | undefined {
  const d = details?.[0] as SweepFailureDetails | undefined;
  const l = d && typeof d === 'object' ? d.ledger : undefined;
  return l && typeof l === 'object' && typeof l.heldGpuSeconds === 'number' && typeof l.sweep === 'object'
    ? l
    : undefined;
}

/** Why a cell's sweep did not finish: its cluster could not allocate, or it failed otherwise. */
export type CellFailure = 'unavailable' | 'failed';

/** What the cell does next: try again at `atMs` (now for re-place), wait for an operator, or stop. */
export type CellNext = { then: 'retry'; atMs: number } | { then: 'operator' } | { then: 'stop' };

/**
 * A cell's sweep failed: record it and decide. Unavailable: retry after `retryEverySeconds` if that
 * is within the window, else the cell is not run (the window decides, not the attempts). Failed:
 * one attempt spent; with attempts left the cell's policy decides (re-place: now; retry-later: after
 * `retryEverySeconds` within the window; operator: wait for one), else the cell failed.
 */
export function cellFailed(
  cell: CellState,
  failure: CellFailure,
  message: string,
  nowMs: number,
  windowEndMs: number,
  rules: Pick<SnapshotInput, 'retryEverySeconds' | 'maxCellAttempts'>,
): CellNext {
  cell.lastError = message;
  const later = nowMs + rules.retryEverySeconds * 1000;
  const retryAt = (atMs: number): CellNext => {
    cell.status = 'waiting';
    cell.retryAt = new Date(atMs).toISOString();
    return { then: 'retry', atMs };
  };
  if (failure === 'unavailable') {
    cell.unavailable++;
    return later < windowEndMs ? retryAt(later) : noRoomLeft(cell);
  }
  cell.failures++;
  if (cell.failures >= rules.maxCellAttempts) {
    cell.status = 'failed';
    cell.retryAt = undefined;
    return { then: 'stop' };
  }
  if (cell.policy === 're-place') return retryAt(nowMs);
  if (cell.policy === 'operator') {
    cell.status = 'awaiting-operator';
    return { then: 'operator' };
  }
  return later < windowEndMs ? retryAt(later) : noRoomLeft(cell);
}

/** The window ended: a cell that is not final is not run, and its last error says what it was doing. */
export function windowEnded(cell: CellState): { then: 'stop' } {
  if (FINAL_CELL_STATUSES.includes(cell.status)) return { then: 'stop' };
  const doing: Record<string, string> = {
    pending: 'before the cell started',
    running: `while its sweep ${cell.sweepId ?? ''} ran (asked to cancel)`,
    waiting: 'while it waited to try again',
    'awaiting-operator': 'while it awaited an operator',
  };
  const why = `the window ended ${doing[cell.status] ?? ''}`;
  cell.lastError = cell.lastError ? `${why}; last error: ${cell.lastError}` : why;
  cell.status = 'not-run';
  cell.retryAt = undefined;
  return { then: 'stop' };
}

/** A try the window leaves no room for: the cell is not run. */
function noRoomLeft(cell: CellState): { then: 'stop' } {
  cell.status = 'not-run';
  cell.retryAt = undefined;
  cell.lastError = `${cell.lastError ?? 'failed'}; the next try would fall after the window's end`;
  return { then: 'stop' };
}

export function snapshotHeadline(cells: readonly CellState[], operatorActions: number): SnapshotHeadline {
  const count = (s: CellStatus) => cells.filter((c) => c.status === s).length;
  const final = cells.filter((c) => FINAL_CELL_STATUSES.includes(c.status)).length;
  return {
    planned: cells.length,
    valid: count('valid'),
    invalid: count('invalid'),
    failed: count('failed'),
    notRun: count('not-run'),
    open: cells.length - final,
    failedGpuSeconds: cells.reduce((s, c) => s + c.failedGpuSeconds, 0),
    totalGpuSeconds: cells.reduce((s, c) => s + c.gpuSeconds, 0),
    operatorActions,
  };
}

/**
 * The headline in one line, e.g. `cells valid 11/12 (not run 1) · failed GPU-h 0.0100/3.20 ·
 * operator actions 0`.
 */
export function headlineLine(h: SnapshotHeadline): string {
  const rest = [
    ...(h.invalid ? [`invalid ${h.invalid}`] : []),
    ...(h.failed ? [`failed ${h.failed}`] : []),
    ...(h.notRun ? [`not run ${h.notRun}`] : []),
    ...(h.open ? [`open ${h.open}`] : []),
  ];
  return `cells valid ${h.valid}/${h.planned}${rest.length ? ` (${rest.join(', ')})` : ''} · failed GPU-h ${gpuHours(h.failedGpuSeconds)}/${gpuHours(h.totalGpuSeconds)} · operator actions ${h.operatorActions}`;
}

/** One line per cell for `status`: id, status, tries, and why it is not valid. */
export function cellLines(cells: readonly CellState[]): string[] {
  return cells.map((c) => {
    const pts = c.points ? ` points ${c.points.valid}/${c.points.planned}` : '';
    const tries = ` tries ${c.tries}${c.unavailable ? ` (${c.unavailable} cluster unavailable)` : ''}`;
    const when = c.retryAt ? ` retry at ${c.retryAt}` : '';
    const why = c.status !== 'valid' && c.lastError ? ` — ${c.lastError}` : '';
    return `  ${c.cellId.padEnd(40)} ${c.status.padEnd(17)}${pts}${tries}${when}${why}`;
  });
}
