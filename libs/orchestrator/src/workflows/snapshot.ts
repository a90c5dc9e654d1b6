/**
 * A snapshot: every cell of a matrix (config × orientation × cluster) as a child sweep on its
 * cluster's task queue, within one window (libs/sweep/src/snapshot.ts holds the rules). Per cluster,
 * its cells run one after another (`cellsPerCluster` at once); the clusters run side by side, so a
 * cluster that is down delays only its own cells. A cell whose sweep failed with
 * ClusterUnavailableError (libs/core/src/errors.ts) waits on a durable timer and tries again; a cell
 * whose sweep failed otherwise follows its policy. When the window ends, every cell still open is
 * cancelled and reported not run, and the snapshot completes with its headline: cells valid /
 * planned, failed GPU-hours / total (a failed sweep's GPU time comes in its failure's details).
 * Workflow code.
 */
import {
  ApplicationFailure,
  CancellationScope,
  ChildWorkflowCancellationType,
  ChildWorkflowFailure,
  ParentClosePolicy,
  condition,
  executeChild,
  isCancellation,
  setHandler,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import {
  cellFailed,
  cellFinished,
  cellLanes,
  cellSpent,
  cellSweepId,
  initialSnapshot,
  ledgerOfFailure,
  retryCellUpdate,
  snapshotHeadline,
  snapshotQuery,
  sweepSearchAttributes,
  windowEnded,
  type CellFailure,
  type CellState,
  type GpuLedger,
  type SnapshotCellInput,
  type SnapshotInput,
  type SnapshotProgress,
  type SweepInput,
} from '@infersweep/sweep';
import { CLUSTER_UNAVAILABLE, ResultsLayout, taskQueueFor } from '@infersweep/core';
import { messageOf } from './failures';
import { sweepWorkflow } from './sweep';

export async function snapshotWorkflow(input: SnapshotInput): Promise<SnapshotProgress> {
  const snap = new SnapshotRun(input);
  //
  // Messages
  //
  setHandler(snapshotQuery, () => snap.progress());
  setHandler(retryCellUpdate, ({ cellId }) => snap.operatorRetry(cellId), {
    validator: ({ cellId }) => snap.assertAwaiting(cellId),
  });
  //
  // The story: every cluster's lanes of cells, until every cell is final or the window ends
  //
  const lanes = new CancellationScope();
  const cells = lanes.run(() => Promise.all(cellLanes(input.cells, input.cellsPerCluster).map((l) => snap.runLane(l))));
  const windowEnds = sleep(Math.max(1, snap.windowEndMs - Date.now()));
  const allFinal = await Promise.race([cells.then(() => true), windowEnds.then(() => false)]);
  if (!allFinal) {
    // the window ended: every lane stops (its running sweep is asked to cancel, its cleanup runs)
    lanes.cancel();
    await cells.catch((err: unknown) => (isCancellation(err) ? undefined : Promise.reject(err)));
  }
  return snap.close();
}

/** The snapshot's state and the steps its story is told in. */
class SnapshotRun {
  readonly state: SnapshotProgress;
  readonly windowEndMs: number;
  private readonly cellState = new Map<string, CellState>();
  private readonly retryAsked = new Set<string>();

  constructor(private readonly input: SnapshotInput) {
    this.state = initialSnapshot(input, Date.now());
    this.windowEndMs = Date.parse(this.state.windowEndsAt);
    for (const c of this.state.cells) this.cellState.set(c.cellId, c);
  }

  progress(): SnapshotProgress {
    this.state.headline = snapshotHeadline(this.state.cells, this.state.operatorActions);
    return this.state;
  }

  /** One lane: its cells one after another, each until it is final. */
  async runLane(lane: SnapshotCellInput[]): Promise<void> {
    for (const cell of lane) await this.runCell(cell);
  }

  /** A cell: a sweep, then as its outcome decides, again (now, after a durable timer, or on an operator's word). */
  private async runCell(cell: SnapshotCellInput): Promise<void> {
    const s = this.cellState.get(cell.cellId)!;
    for (;;) {
      const failure = await this.trySweep(cell, s);
      if (!failure) return;
      cellSpent(s, failure.ledger, 'failed');
      const next = cellFailed(s, failure.kind, failure.message, Date.now(), this.windowEndMs, this.input);
      if (next.then === 'stop') return;
      if (next.then === 'retry') {
        const wait = next.atMs - Date.now();
        if (wait > 0) await sleep(wait);
      } else {
        await condition(() => this.retryAsked.has(cell.cellId));
        this.retryAsked.delete(cell.cellId);
      }
    }
  }

  /** One try of a cell: its child sweep on the cluster's task queue; undefined when the cell is final. */
  private async trySweep(cell: SnapshotCellInput, s: CellState): Promise<SweepFailure | undefined> {
    s.tries++;
    const sweep = this.sweepOf(cell, s.tries);
    Object.assign(s, { status: 'running', sweepId: sweep.sweepId, resultsDir: sweep.resultsDir, retryAt: undefined });
    try {
      const result = await executeChild(sweepWorkflow, {
        workflowId: sweep.sweepId,
        taskQueue: taskQueueFor(cell.cluster),
        args: [sweep],
        parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
        // a cluster whose worker is away cannot confirm a cancel: the window's end does not wait for it
        cancellationType: ChildWorkflowCancellationType.TRY_CANCEL,
        typedSearchAttributes: sweepSearchAttributes(sweep),
      });
      cellFinished(s, result);
      return undefined;
    } catch (err) {
      // the window ended (or the snapshot was cancelled): not this cell's failure
      if (isCancellation(err) && CancellationScope.current().consideredCancelled) throw err;
      return failureOf(err);
    }
  }

  /** The cell's sweep input for try `n`: its own sweep id and results folder under the snapshot's root. */
  private sweepOf(cell: SnapshotCellInput, n: number): SweepInput {
    const sweepId = cellSweepId(workflowInfo().workflowId, cell.cellId, n);
    return { ...cell.sweep, sweepId, resultsDir: ResultsLayout.of(cell.resultsRoot, sweepId).resultsDir };
  }

  /** retryCell: the operator tries a cell awaiting one again. */
  operatorRetry(cellId: string): SnapshotProgress {
    this.retryAsked.add(cellId);
    this.state.operatorActions++;
    return this.progress();
  }

  /** retryCell's validator: only a cell of this snapshot that awaits an operator. */
  assertAwaiting(cellId: string): void {
    const s = this.cellState.get(cellId);
    if (!s) throw new Error(`no cell ${cellId} in this snapshot; cells: ${[...this.cellState.keys()].join(', ')}`);
    if (s.status !== 'awaiting-operator')
      throw new Error(`cell ${cellId} is ${s.status}, not waiting for an operator; nothing to retry`);
  }

  /** The end: every cell still open is not run; the headline is final. */
  close(): SnapshotProgress {
    for (const c of this.state.cells) windowEnded(c);
    this.state.phase = 'completed';
    return this.progress();
  }
}

/** How a cell's sweep failed, and the GPU time it held (its failure's details). */
interface SweepFailure {
  kind: CellFailure;
  message: string;
  ledger?: GpuLedger;
}

/**
 * How a cell's sweep failed, by its failure's type: ClusterUnavailableError (its allocation attempts
 * all found the cluster unavailable and nobody answered its operator wait, ./run.ts) — the cell
 * waits for its cluster — or anything else. The failure's details carry the sweep's ledger.
 */
function failureOf(err: unknown): SweepFailure {
  const cause = err instanceof ChildWorkflowFailure && err.cause ? err.cause : err;
  const app = cause instanceof ApplicationFailure ? cause : undefined;
  const ledger = ledgerOfFailure(app?.details ?? undefined);
  return {
    kind: app?.type === CLUSTER_UNAVAILABLE ? 'unavailable' : 'failed',
    message: messageOf(cause),
    ...(ledger ? { ledger } : {}),
  };
}
