/**
 * ResultsLayout: every path of one sweep, in one object (like submitit's JobPaths). Results live
 * on POSIX shared storage, so paths are joined with `/` here (no node:path: this module is pure and
 * also used by workflow code).
 *
 *   <resultsDir>/plan.json                      the frozen plan (written by prepareSweep)
 *   <resultsDir>/points/c<N>/result.json        one point's record (libs/agentx PointResult)
 *   <resultsDir>/points/c<N>/requests.jsonl     its raw per-request lines
 *   <resultsDir>/points/c<N>/window-<k>/…        the same for a re-measure the search asked for (k ≥ 2)
 *   <resultsDir>/replicates/c<N>/r<k>/result.json   replicate k ≥ 2 of point N (the config's replicates block)
 *   <resultsDir>/logs/server-<k>/<node>.log     server logs copied at teardown
 *   <resultsDir>/progress.json                  the sweep's progress snapshot (the report)
 *   <resultsDir>/report.html                    the report
 *   <sharedDir>/infersweep/<sweep>/server-<k>/rank<r>-<node>.log   live server logs on the cluster
 *   <sharedDir>/infersweep/<sweep>/aiperf/c<N>/      aiperf on the head node: its log, artifacts, staged traces
 */

const join = (...parts: string[]) =>
  parts.map((p, i) => (i === 0 ? p.replace(/\/+$/, '') : p.replace(/^\/+|\/+$/g, ''))).join('/');
const safe = (s: string) => s.replace(/[^A-Za-z0-9._-]+/g, '-');

/** File names inside a point folder (libs/agentx writes them into the folder it is given). */
export const POINT_RECORD_FILE = 'result.json';
export const POINT_REQUESTS_FILE = 'requests.jsonl';
export const PLAN_FILE = 'plan.json';
export const PROGRESS_SNAPSHOT_FILE = 'progress.json';
export const REPORT_FILE = 'report.html';
/** The sweep id that owns a results folder: written once by its first prepareSweep, checked by every later one. */
export const OWNER_FILE = '.infersweep-sweep-id';

export class ResultsLayout {
  constructor(readonly resultsDir: string) {}

  /** The results folder of sweep `sweepId` under `resultsRoot`. */
  static of(resultsRoot: string, sweepId: string): ResultsLayout {
    return new ResultsLayout(join(resultsRoot, sweepId));
  }

  get planFile(): string {
    return join(this.resultsDir, PLAN_FILE);
  }
  get ownerFile(): string {
    return join(this.resultsDir, OWNER_FILE);
  }
  get pointsDir(): string {
    return join(this.resultsDir, 'points');
  }
  /** A point's folder; `window` ≥ 2: the folder of a re-measure inside it. */
  pointDir(concurrency: number, window = 1): string {
    const dir = join(this.pointsDir, `c${concurrency}`);
    return window > 1 ? join(dir, `window-${window}`) : dir;
  }
  pointRecord(concurrency: number, window = 1): string {
    return join(this.pointDir(concurrency, window), POINT_RECORD_FILE);
  }
  pointRequests(concurrency: number, window = 1): string {
    return join(this.pointDir(concurrency, window), POINT_REQUESTS_FILE);
  }
  /** Replicate `replicate` (≥ 2; replicate 1 is the point's own folder) of a point. */
  replicateDir(concurrency: number, replicate: number): string {
    return join(this.resultsDir, 'replicates', `c${concurrency}`, `r${replicate}`);
  }
  replicateRecord(concurrency: number, replicate: number): string {
    return join(this.replicateDir(concurrency, replicate), POINT_RECORD_FILE);
  }
  get logsDir(): string {
    return join(this.resultsDir, 'logs');
  }
  /** Where teardown copies server `serverIndex`'s logs. */
  serverLogsDir(serverIndex: number): string {
    return join(this.logsDir, `server-${serverIndex}`);
  }
  get progressSnapshot(): string {
    return join(this.resultsDir, PROGRESS_SNAPSHOT_FILE);
  }
  get reportFile(): string {
    return join(this.resultsDir, REPORT_FILE);
  }
}

/** The cluster-side folder a sweep's servers log into (on the cluster's shared storage). */
export function remoteSweepLogDir(sharedDir: string, sweepId: string): string {
  return join(sharedDir, 'infersweep', safe(sweepId));
}

/** The cluster-side folder server `serverIndex` of a sweep logs into. */
export function remoteServerLogDir(sharedDir: string, sweepId: string, serverIndex: number): string {
  return join(remoteSweepLogDir(sharedDir, sweepId), `server-${serverIndex}`);
}

/** The log file of one rank of a server. */
export function remoteRankLogFile(serverLogDir: string, rank: number, node: string): string {
  return join(serverLogDir, `rank${rank}-${node}.log`);
}

/** The log file of a server's P/D router step on `node`. */
export function remoteRouterLogFile(serverLogDir: string, node: string): string {
  return join(serverLogDir, `router-${node}.log`);
}

/** The cluster-side folder of point `concurrency` when aiperf runs on the head node (its log, artifacts, staged traces). */
export function remoteAiperfPointDir(sharedDir: string, sweepId: string, concurrency: number): string {
  return join(remoteSweepLogDir(sharedDir, sweepId), 'aiperf', `c${concurrency}`);
}
