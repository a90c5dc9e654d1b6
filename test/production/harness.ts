/**
 * Harness for the tests on the production-shaped stack (scripts/stack-production.sh): PostgreSQL,
 * temporal-server with mutual TLS, namespace `infersweep`, and the local Slurm split into the
 * partitions east and west (configs/two-clusters-local.yaml). Workers and the CLI run as
 * subprocesses with the environment a deployment gives them (TEMPORAL_* variables, their own
 * client certificate); the tests observe through a client of their own (the `cli` certificate).
 */
import { execFile, execFileSync, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { Client, WorkflowExecutionDescription, WorkflowHandle } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { connectClient, temporalTarget, type TemporalTarget } from '@infersweep/orchestrator';
import { dataDir, repoRoot } from '@infersweep/testkit/stack';
import { signalGroup, spawnWorkerProcess, ungatedConfigText } from '@infersweep/testkit/sweep-harness';
import { cli as devStackCli, type CliRun } from '@infersweep/testkit/cli';
import { until } from '@infersweep/testkit/wait';

export { until };

/** The shipped two-cluster config these tests deploy. */
const SHIPPED_CONFIG = join(repoRoot, 'configs', 'two-clusters-local.yaml');

/**
 * The shipped config with its client-health gate relaxed, the file the workers and the CLI of these tests read:
 * they are about TLS, namespaces, restarts and two clusters, not a measurement. Lane B's production project runs
 * beside the other lanes on 2 cores, where a point of tls-namespace.prod went `host_saturated` (event-loop p99
 * 43 ms > 25 ms, load 7.1). Same name in its own folder, so the config name in sweep ids and lists is unchanged.
 */
function relaxedConfig(): string {
  const relaxed = ungatedConfigText(readFileSync(SHIPPED_CONFIG, 'utf8'), SHIPPED_CONFIG);
  const dir = join(dataDir, 'production-config');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'two-clusters-local.yaml');
  const tmp = `${file}.tmp-${process.pid}`;
  writeFileSync(tmp, relaxed);
  renameSync(tmp, file); // whole, so a worker started by another file never reads half of it
  return file;
}

export const CONFIG = relaxedConfig();
export const STACK = join(repoRoot, 'scripts', 'stack-production.sh');

function readEnvFile(file: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const i = line.indexOf('=');
    if (i > 0) out[line.slice(0, i)] = line.slice(i + 1);
  }
  return out;
}

/** What scripts/stack-production.sh wrote: the local stack's values plus TEMPORAL_* for the production server. */
export function prodEnv(): Record<string, string> {
  return readEnvFile(join(dataDir, 'production', 'env'));
}

/**
 * A database of its own on the production stack's PostgreSQL (TLS with the stack's CA, verify-full,
 * the scram password from its secrets): the URL a store connects with, and the admin statements that
 * create and drop it.
 */
export function prodPgDatabase(prefix: string): { url: string; create(): Promise<void>; drop(): Promise<void> } {
  const e = prodEnv();
  const password = readFileSync(join(e.INFERSWEEP_PRODUCTION!, 'secrets', 'pg-temporal-password'), 'utf8').trim();
  const db = `${prefix}_${randomUUID().slice(0, 8)}`;
  const url = (database: string) =>
    `postgresql://temporal:${encodeURIComponent(password)}@127.0.0.1:${e.INFERSWEEP_PRODUCTION_PG_PORT}/${database}?sslmode=verify-full&sslrootcert=${encodeURIComponent(e.TEMPORAL_TLS_SERVER_CA_CERT_PATH!)}`;
  const admin = async (sql: string): Promise<void> => {
    const c = new pg.Client({ connectionString: url('temporal') });
    await c.connect();
    try {
      await c.query(sql);
    } finally {
      await c.end();
    }
  };
  return {
    url: url(db),
    create: () => admin(`CREATE DATABASE ${db}`),
    drop: () => admin(`DROP DATABASE IF EXISTS ${db}`),
  };
}

/**
 * GET `path` of the Web UI server's HTTP API through its unix socket (TEMPORAL_UI_SOCKET: the UI
 * listens on no TCP port of the host; scripts/stack-production.sh ui_start).
 */
export function uiGet(path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { socketPath: prodEnv().TEMPORAL_UI_SOCKET, path, headers: { host: 'localhost' } },
      (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

export function prodTarget(extra: Record<string, string> = {}): TemporalTarget {
  return temporalTarget({ ...prodEnv(), ...extra });
}

export async function prodClient(): Promise<Client> {
  return connectClient(prodTarget());
}

export function stack(...args: string[]): void {
  execFileSync('bash', [STACK, ...args], { stdio: 'ignore', timeout: 240_000 });
}

/** {@link stack} without blocking the test: what it waits on (e.g. a sweep's next phase) can be watched meanwhile. */
export function stackInBackground(...args: string[]): Promise<void> {
  return new Promise((resolve, reject) =>
    execFile('bash', [STACK, ...args], { timeout: 240_000 }, (err, _out, stderr) =>
      err ? reject(new Error(`${STACK} ${args.join(' ')}: ${err.message}\n${stderr}`)) : resolve(),
    ),
  );
}

/**
 * A worker's environment: the deployment's TEMPORAL_* with the worker's own client certificate, and
 * the site config its cluster's profile is read from.
 */
export function workerEnv(cluster: string): Record<string, string> {
  const e = prodEnv();
  const tls = join(e.INFERSWEEP_PRODUCTION!, 'tls', 'clients');
  return {
    ...e,
    INFERSWEEP_WORKER_CONFIG: CONFIG,
    TEMPORAL_TLS_CLIENT_CERT_PATH: join(tls, `worker-${cluster}.pem`),
    TEMPORAL_TLS_CLIENT_KEY_PATH: join(tls, `worker-${cluster}.key`),
  };
}

export interface WorkerProcess {
  cluster: string;
  proc: ChildProcess;
  log: string;
  kill(sig?: NodeJS.Signals): void;
}

/** `worker:serve --cluster C` as a deployed worker: its own process group (tsx's node child dies with it). */
export function spawnWorker(cluster: string): WorkerProcess {
  const logDir = join(dataDir, 'production', 'log');
  mkdirSync(logDir, { recursive: true });
  const log = join(logDir, `test-worker-${cluster}.log`);
  const fd = openSync(log, 'a');
  const proc = spawnWorkerProcess(['--cluster', cluster], {
    env: { ...process.env, ...workerEnv(cluster) },
    stdio: ['ignore', fd, fd],
  });
  closeSync(fd);
  return { cluster, proc, log, kill: (sig: NodeJS.Signals = 'SIGKILL') => signalGroup(proc, sig) };
}

/** `infersweep …` against the production stack (plain output). */
export function cli(args: string[], env: Record<string, string> = {}, timeoutMs = 120_000): Promise<CliRun> {
  return devStackCli(args, { ...prodEnv(), ...env }, timeoutMs);
}

/** `sweep --detach --json` on the two-cluster config: the started sweep's summary. */
export async function startSweep(
  cluster: string,
  orientation: string,
  label: string,
  points?: number[],
  config = CONFIG,
): Promise<{
  sweepId: string;
  uiLink: string;
  orientations: { orientation: string; sweepId: string; points: number[]; resultsDir: string }[];
}> {
  const r = await cli([
    'sweep',
    '--config',
    config,
    '--cluster',
    cluster,
    '--orientation',
    orientation,
    '--label',
    label,
    '--detach',
    '--json',
    ...(points ? ['--points', points.join(',')] : []),
  ]);
  if (r.code !== 0) throw new Error(`infersweep sweep exited ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').at(-1)!);
}

export interface PointActivityCounts {
  /** runPoint activities scheduled for this point (a retry is an attempt, not a new schedule) */
  scheduled: number;
  completed: number;
  /** the highest activity attempt started (2+: the server retried it, e.g. after a heartbeat timeout) */
  attempts: number;
  /** the completed attempt found an earlier attempt's valid result on disk instead of measuring again */
  reused?: boolean;
}

/** runPoint activities in a sweep's history, per concurrency. */
export async function runPointCounts(h: WorkflowHandle): Promise<Map<number, PointActivityCounts>> {
  const events = (await h.fetchHistory()).events ?? [];
  const concurrencyOf = new Map<string, number>();
  const out = new Map<number, PointActivityCounts>();
  const of = (id: unknown) => out.get(concurrencyOf.get(String(id)) ?? -1);
  for (const e of events) {
    const s = e.activityTaskScheduledEventAttributes;
    if (s?.activityType?.name === 'runPoint') {
      const arg = defaultPayloadConverter.fromPayload(s.input!.payloads![0]!) as { concurrency: number };
      concurrencyOf.set(String(e.eventId), arg.concurrency);
      const n = out.get(arg.concurrency) ?? { scheduled: 0, completed: 0, attempts: 0 };
      n.scheduled++;
      out.set(arg.concurrency, n);
    }
    const started = e.activityTaskStartedEventAttributes;
    const n = started ? of(started.scheduledEventId) : undefined;
    if (started && n) n.attempts = Math.max(n.attempts, started.attempt ?? 1);
    const done = e.activityTaskCompletedEventAttributes;
    const d = done ? of(done.scheduledEventId) : undefined;
    if (done && d) {
      d.completed++;
      d.reused = (defaultPayloadConverter.fromPayload(done.result!.payloads![0]!) as { reused: boolean }).reused;
    }
  }
  return out;
}

/** Each point of a sweep: its runPoint scheduled once and completed once (no point lost or recorded twice). */
export async function expectEachPointOnce(
  h: WorkflowHandle,
  points: number[],
): Promise<Map<number, PointActivityCounts>> {
  const counts = await runPointCounts(h);
  const seen = [...counts.entries()].sort((a, b) => a[0] - b[0]).map(([c, n]) => [c, n.scheduled, n.completed]);
  if (JSON.stringify(seen) !== JSON.stringify(points.map((c) => [c, 1, 1])))
    throw new Error(
      `${h.workflowId}: runPoint per point [concurrency, scheduled, completed] = ${JSON.stringify(seen)}, expected each of ${points.join(',')} once`,
    );
  return counts;
}

/** The activity currently running for a sweep and its last heartbeat (no worker needed: describe). */
export async function pendingHeartbeat(h: WorkflowHandle): Promise<Record<string, unknown> | undefined> {
  return heartbeatOf(await h.describe());
}

type PendingActivity = NonNullable<WorkflowExecutionDescription['raw']['pendingActivities']>[number];

/** A pending activity's last heartbeat details, decoded (undefined before its first heartbeat). */
function lastHeartbeat(a: PendingActivity): Record<string, unknown> | undefined {
  const p = a.heartbeatDetails?.payloads?.[0];
  return p ? (defaultPayloadConverter.fromPayload(p) as Record<string, unknown>) : undefined;
}

function heartbeatOf(d: WorkflowExecutionDescription): Record<string, unknown> | undefined {
  for (const a of d.raw.pendingActivities ?? []) {
    const hb = lastHeartbeat(a);
    if (hb) return hb;
  }
  return undefined;
}

/**
 * Wait until the sweep's running point `c` heartbeats phase `phase`; fails at once when the sweep
 * closes first, and on either failure says what the sweep and its worker were doing ({@link sweepSnapshot}).
 */
export async function pointInPhase(
  h: WorkflowHandle,
  c: number,
  phase: string,
  timeoutMs: number,
  worker?: WorkerProcess,
): Promise<Record<string, unknown>> {
  const what = `point c=${c} ${phase}`;
  let seen: { hb?: Record<string, unknown>; closed?: string } | undefined;
  try {
    seen = await until(
      what,
      async () => {
        const d = await h.describe();
        if (d.status.name !== 'RUNNING') return { closed: d.status.name };
        const hb = heartbeatOf(d);
        return hb?.phase === phase && hb.concurrency === c ? { hb } : undefined;
      },
      timeoutMs,
    );
  } catch (err) {
    throw new Error(`${(err as Error).message}\n${await sweepSnapshot(h, worker)}`);
  }
  if (!seen.hb) throw new Error(`the sweep closed (${seen.closed}) before ${what}\n${await sweepSnapshot(h, worker)}`);
  return seen.hb;
}

/** What a sweep is doing, for a failed wait's message: status, pending activities, last history events, worker state and log tail. */
export async function sweepSnapshot(h: WorkflowHandle, worker?: WorkerProcess): Promise<string> {
  const lines: string[] = [];
  const text = (v: unknown) => JSON.stringify(v)?.slice(0, 300);
  try {
    const d = await h.describe();
    lines.push(`sweep ${h.workflowId}: ${d.status.name}`);
    for (const a of d.raw.pendingActivities ?? []) {
      const hb = lastHeartbeat(a);
      lines.push(
        `  pending ${a.activityType?.name} attempt ${a.attempt} state ${a.state} heartbeat ${hb ? text(hb) : '-'}` +
          (a.lastFailure?.message ? ` last failure: ${a.lastFailure.message.slice(0, 300)}` : ''),
      );
    }
    const events = (await h.fetchHistory()).events ?? [];
    lines.push(`  last of ${events.length} history events:`);
    for (const e of events.slice(-12)) {
      const failure =
        e.activityTaskFailedEventAttributes?.failure?.message ??
        e.activityTaskTimedOutEventAttributes?.failure?.message ??
        e.workflowTaskFailedEventAttributes?.failure?.message;
      // the event's kind is the name of its one set attributes field (eventType is a bare number here)
      const kind = Object.entries(e).find(([k, v]) => k.endsWith('EventAttributes') && v)?.[0] ?? String(e.eventType);
      const activity = e.activityTaskScheduledEventAttributes?.activityType?.name;
      const attempt = e.activityTaskStartedEventAttributes?.attempt;
      lines.push(
        `    ${e.eventId} ${kind.replace(/EventAttributes$/, '')}${activity ? ` ${activity}` : ''}${attempt ? ` attempt ${attempt}` : ''}${failure ? `: ${failure.slice(0, 300)}` : ''}`,
      );
    }
  } catch (err) {
    lines.push(`sweep ${h.workflowId}: describe failed: ${(err as Error).message}`);
  }
  if (worker) {
    const { exitCode, signalCode } = worker.proc;
    lines.push(
      `worker ${worker.cluster}: ${exitCode === null && signalCode === null ? 'running' : `exited ${exitCode ?? signalCode}`}; log tail (${worker.log}):`,
    );
    const tail = readFileSync(worker.log, 'utf8')
      .split('\n')
      .filter((l) => !l.includes('retried'))
      .slice(-30);
    for (const l of tail) lines.push(`    ${l.slice(0, 300)}`);
  }
  return lines.join('\n');
}
