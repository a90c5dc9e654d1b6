/**
 * Following a sweep from the CLI (`sweep`, `watch`, `resume`): run an in-process worker when the
 * embedded default needs one, show live progress, and on the end write the report; Ctrl-C
 * detaches and says honestly what happens to the sweep next.
 */
import { SEARCH_ATTRIBUTES } from '@infersweep/sweep';
import { taskQueueFor } from '@infersweep/core';
import { EXIT, err } from './cli';
import { ensureWorker, type EmbeddedWorker } from './embedded';
import { activePollers, describeSweep, type Session, type SweepView } from './temporal';
import { statusText, sweepSucceeded } from './render';
import { watchSweep } from './watcher';
import { resolveSweeps, writeReport } from '../report/generate';

export interface FollowOptions {
  /** progress lines go here (stderr for --json runs) */
  write?: (line: string) => void;
  plain?: boolean;
  /** write the report when the sweep ends (default true) */
  report?: boolean;
}

/** The cluster a sweep runs on (its search attribute, else its task queue). */
export async function clusterOf(s: Session, id: string): Promise<{ cluster: string; view: SweepView }> {
  const view = await describeSweep(s, id, { query: false, children: false });
  return {
    cluster: view.searchAttributes[SEARCH_ATTRIBUTES.cluster] ?? view.taskQueue.replace(/^infersweep-/, ''),
    view,
  };
}

function detachMessage(id: string, cluster: string, worker: EmbeddedWorker | null, otherPollers: number): string {
  const lines = [`detached from ${id}; the sweep itself was not cancelled.`];
  if (worker || otherPollers === 0) {
    lines.push(
      `${worker ? 'This process was running the only worker' : 'No worker polls'} for task queue ${taskQueueFor(cluster)}, so the sweep pauses (its state is safe on Temporal; a running point is retried) until a worker polls again:`,
      `  npx nx run worker:serve -- --cluster ${cluster}     (a long-lived worker), or`,
      `  infersweep watch ${id}      (re-attach; runs a worker in-process again)`,
    );
  } else {
    lines.push(`It keeps running on its worker. Re-attach: infersweep watch ${id}    Stop it: infersweep cancel ${id}`);
  }
  return lines.join('\n');
}

/**
 * Watch `id` until it closes or the user presses Ctrl-C. Returns the exit code: 0 success, 3 the
 * sweep failed or has invalid/failed points, 130 detached.
 */
export async function follow(s: Session, id: string, opts: FollowOptions = {}): Promise<number> {
  const write = opts.write ?? ((l: string) => process.stdout.write(`${l}\n`));
  const { cluster, view } = await clusterOf(s, id);
  let worker: EmbeddedWorker | null = null;
  if (view.status === 'RUNNING') worker = await ensureWorker(s, cluster, write);

  let firstSigint = 0;
  let detachNow!: () => void;
  const detach = new Promise<void>((r) => (detachNow = r));
  const onSigint = () => {
    // one Ctrl-C can arrive twice (the terminal signals the group, and tsx relays it too)
    if (firstSigint === 0) {
      firstSigint = Date.now();
      detachNow();
    } else if (Date.now() - firstSigint > 1000) {
      err(
        'second Ctrl-C: exiting now (running activities of the in-process worker are abandoned; Temporal retries them)',
      );
      process.exit(EXIT.detached);
    }
  };
  process.on('SIGINT', onSigint);
  try {
    if (view.status === 'RUNNING') write(`watching ${id} — Ctrl-C detaches (the sweep keeps its state on Temporal)`);
    // A worker that just stopped still counts as a poller for about a minute: re-check while
    // watching and start the in-process worker once none polls.
    let checking = false;
    const recheck = setInterval(() => {
      if (worker || checking || !s.target.embedded) return;
      checking = true;
      activePollers(s.client, s.target.namespace, cluster)
        .then(async (n) => {
          if (n === 0 && !worker) worker = await ensureWorker(s, cluster, write);
        })
        .catch(() => undefined)
        .finally(() => (checking = false));
    }, 15_000);
    let end;
    try {
      end = await watchSweep(s, id, { detach, write, plain: opts.plain });
    } finally {
      clearInterval(recheck);
    }
    if (end.kind === 'detached') {
      const others = worker ? 0 : await activePollers(s.client, s.target.namespace, cluster).catch(() => 1);
      write(detachMessage(id, cluster, worker, others));
      if (worker) {
        write('stopping the in-process worker (running activities get up to 30 s to stop)…');
        await worker.stop();
      }
      return EXIT.detached;
    }
    // described and reported while the in-process worker still answers the closed sweep's progress
    // query: the report saves that final state in the results folder (progress.json), which
    // `status` and `report` read later with no worker
    const final = await describeSweep(s, id).catch(() => end.view);
    write('');
    write(statusText(final));
    if (opts.report !== false) {
      try {
        const r = await resolveSweeps(id, { session: s });
        const w = await writeReport(r);
        write('');
        write(`report: ${w.html}`);
      } catch (e) {
        write(`(no report written: ${(e as Error).message})`);
      }
    }
    if (worker) await worker.stop();
    return sweepSucceeded(final) ? EXIT.ok : EXIT.sweepFailed;
  } finally {
    process.removeListener('SIGINT', onSigint);
    if (worker) await worker.stop();
  }
}
