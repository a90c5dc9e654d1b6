import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { InfersweepError, repoRoot, type ErrorContext, type ErrorKind } from '@infersweep/core';
import type { Progress } from './client/replay';
import { ClientProcessError, IdleRankError, PointAbortedError, ReadinessError, RecordInvalidError } from './errors';
import type { RunPointHooks, RunPointInput } from './point';
import type { PointResult } from './result';

/**
 * A point's own client process. The client-health gate measures the process the client runs in
 * (libs/agentx/src/client-health.ts): run in the worker's process, two points measured at once would
 * add up their CPU and share one event loop, and both read `client_saturated`. Here each point's
 * client runs in a child process of its own (client-process-main.ts; its own event loop, CPU and
 * peak memory), which reports progress and its result over the IPC channel; the worker keeps only
 * the count of points it runs at once, which every running client records (`concurrent_points_max`).
 */

/** What the parent sends: the point to run, an abort, the worker's count of running points. */
export type ToClient =
  | { type: 'run'; input: RunPointInput; concurrentPoints: number }
  | { type: 'abort'; reason: string }
  | { type: 'points'; n: number };

/** What the client sends back. */
export type FromClient =
  | { type: 'progress'; progress: Progress }
  | { type: 'result'; result: PointResult }
  | { type: 'error'; error: WireError };

/** An error across the process boundary: the fields the agentx error classes carry. */
export interface WireError {
  name: string;
  message: string;
  stack?: string;
  kind?: ErrorKind;
  context?: ErrorContext;
  reasons?: string[];
  recordPath?: string | null;
  missing?: number[];
  state?: 'not-ready' | 'failed';
}

export function toWire(err: unknown): WireError {
  if (!(err instanceof Error)) return { name: 'Error', message: String(err) };
  const w: WireError = { name: err.name, message: err.message, ...(err.stack ? { stack: err.stack } : {}) };
  if (err instanceof InfersweepError) Object.assign(w, { kind: err.kind, context: err.context });
  if (err instanceof RecordInvalidError) Object.assign(w, { reasons: err.reasons, recordPath: err.recordPath });
  if (err instanceof IdleRankError) w.missing = err.missing;
  if (err instanceof ReadinessError) w.state = err.state;
  return w;
}

/** The error the client threw, as its own class where the caller tells classes apart; else its kind and name. */
export function fromWire(w: WireError): Error {
  const ctx = w.context ?? {};
  let err: Error;
  if (w.name === 'RecordInvalidError') err = new RecordInvalidError(w.reasons ?? [], w.recordPath ?? null, ctx);
  else if (w.name === 'IdleRankError') err = new IdleRankError(w.message, w.missing ?? [], ctx);
  else if (w.name === 'ReadinessError') err = new ReadinessError(w.message, w.state ?? 'failed', ctx);
  else if (w.name === 'PointAbortedError') err = new PointAbortedError(w.message, ctx);
  else if (w.kind) {
    err = new InfersweepError(w.message, { kind: w.kind, context: ctx });
    err.name = w.name;
  } else {
    err = new Error(w.message);
    err.name = w.name;
  }
  if (w.stack) err.stack = w.stack;
  return err;
}

/** Listeners of the points this process runs now, one per running point. */
const running = new Set<(n: number) => void>();

/**
 * Count a point as running in this process until `leave`: every running point's `listen` hears the
 * new count on each change (its own start included).
 */
export function enterPoint(listen: (n: number) => void): { count: number; leave(): void } {
  running.add(listen);
  for (const l of running) l(running.size);
  return {
    count: running.size,
    leave: () => {
      running.delete(listen);
      for (const l of running) l(running.size);
    },
  };
}

const CHILD_MAIN = fileURLToPath(new URL('./client-process-main.ts', import.meta.url));
/** How long an aborted client gets to send its result or error before it is killed. */
const ABORT_GRACE_MS = 30_000;
const STDERR_TAIL = 4000;

/**
 * Run one point with infersweep's client (runPoint) in a child process of its own; resolves with its
 * result, rejects with the error it threw (same class for the ones callers tell apart) or a
 * {@link ClientProcessError} with its stderr's tail when it ended without either. An abort of
 * `hooks.signal` aborts the client (its point ends PointAbortedError); the child dies with the worker
 * (it exits when its IPC channel closes) and does not share the worker's process group (a signal to
 * the worker's group is the worker's to handle).
 */
export function runPointInOwnProcess(input: RunPointInput, hooks: RunPointHooks = {}): Promise<PointResult> {
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
  const child = spawn(process.execPath, ['--import', tsx, CHILD_MAIN], {
    cwd: repoRoot,
    env: { ...process.env, TSX_TSCONFIG_PATH: `${repoRoot}tsconfig.json` },
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    detached: true,
  });
  let stderr = '';
  child.stderr!.on('data', (b: Buffer) => (stderr = (stderr + b.toString('utf8')).slice(-STDERR_TAIL)));
  const send = (m: ToClient): void => {
    if (child.connected) child.send(m, () => undefined);
  };
  const point = enterPoint((n) => send({ type: 'points', n }));
  const step = `point:c=${input.concurrency}`;
  return new Promise<PointResult>((resolve, reject) => {
    let settled = false;
    let killer: NodeJS.Timeout | undefined;
    const onAbort = (): void => {
      send({ type: 'abort', reason: String(hooks.signal?.reason ?? 'aborted') });
      killer = setTimeout(() => child.kill('SIGKILL'), ABORT_GRACE_MS);
    };
    const settle = (f: () => void): void => {
      if (settled) return;
      settled = true;
      hooks.signal?.removeEventListener('abort', onAbort);
      f();
    };
    child.on('message', (m: FromClient) => {
      if (m.type === 'progress') hooks.onProgress?.(m.progress);
      else if (m.type === 'result') settle(() => resolve(m.result));
      else settle(() => reject(fromWire(m.error)));
    });
    child.on('error', (err) =>
      settle(() => reject(new ClientProcessError(`the client process did not start: ${err.message}`, { step }))),
    );
    child.on('exit', (code, signal) => {
      clearTimeout(killer);
      settle(() =>
        reject(
          new ClientProcessError(`the client process ended (${signal ?? `exit ${code}`}) without a result`, {
            step,
            logTail: stderr,
          }),
        ),
      );
    });
    if (hooks.signal?.aborted) onAbort();
    else hooks.signal?.addEventListener('abort', onAbort, { once: true });
    send({ type: 'run', input, concurrentPoints: point.count });
  }).finally(() => point.leave());
}
