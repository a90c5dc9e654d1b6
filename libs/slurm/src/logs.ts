/**
 * A step's log on shared storage: its size and last lines (fetchLogs), or the whole file copied
 * to the worker (copyLogs), streamed and capped.
 */
import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rename, unlink } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { tail } from '@infersweep/core';
import { CommandFailedError } from './errors';
import { cappedCatArgv, tailArgv } from './commands';
import { parseTail } from './parse';
import { allEnded, type SlurmQueries } from './queries';

/** Where a step's log is: the file on shared storage, read on `node` under job `jobId` (a StepHandle is one). */
export interface LogRef {
  jobId: string;
  node: string;
  logFile: string;
}

export interface LogTail {
  node: string;
  logFile: string;
  exists: boolean;
  bytes: number;
  tail: string;
}

/** Size and last lines of each step's log (fine while the steps run and after they end). */
export async function fetchLogs(
  q: SlurmQueries,
  handles: LogRef[],
  opts: { tailLines?: number } = {},
): Promise<LogTail[]> {
  return Promise.all(
    handles.map(async (h) => {
      const r = await q.query(tailArgv(h.logFile, opts.tailLines ?? 50), {
        jobId: h.jobId,
        node: h.node,
        step: 'logs',
      });
      return { node: h.node, logFile: h.logFile, ...parseTail(r.stdout) };
    }),
  );
}

/**
 * Copy each log into `destDir` (local) as `<node>.log`, streamed to the file (never held whole in
 * memory) and capped at `maxBytes` per log (default 64 MiB: the last bytes, after a header line
 * saying how much was left out). Each copy lands by rename, so a failed copy leaves no partial file.
 */
export async function copyLogs(
  q: Pick<SlurmQueries, 'exec'>,
  handles: LogRef[],
  destDir: string,
  opts: { maxBytes?: number; timeoutMs?: number } = {},
): Promise<{ node: string; path: string; bytes: number }[]> {
  await mkdir(destDir, { recursive: true });
  const nodes = new Set<string>();
  const named = handles.map((h) => {
    // `<node>.log`; a second step on the node (a P/D router beside its rank) keeps its own file's name
    const node = posix.basename(h.node);
    const name = nodes.has(node) ? `${node}-${posix.basename(h.logFile)}` : `${node}.log`;
    nodes.add(node);
    return { h, path: join(destDir, name) };
  });
  // every log at once (a 4-node deployment's copies took 4 SSH round trips in turn); each failure is
  // reported after every copy has ended, so none is still writing when the caller moves on
  return allEnded(named.map(({ h, path }) => copyLog(q, h, path, opts)));
}

/** One log into `path`, streamed and capped ({@link copyLogs}); lands by rename. */
async function copyLog(
  q: Pick<SlurmQueries, 'exec'>,
  h: LogRef,
  path: string,
  opts: { maxBytes?: number; timeoutMs?: number },
): Promise<{ node: string; path: string; bytes: number }> {
  const tmp = `${path}.partial-${randomUUID().slice(0, 8)}`;
  const file = createWriteStream(tmp);
  let bytes = 0;
  try {
    const r = await q.exec.run(cappedCatArgv(h.logFile, opts.maxBytes ?? 64 * 1024 * 1024), {
      timeoutMs: opts.timeoutMs ?? 300_000,
      idempotent: true,
      collectStdout: false,
      onStdout: (chunk) => {
        bytes += Buffer.byteLength(chunk);
        file.write(chunk);
      },
    });
    await new Promise<void>((resolve, reject) => file.end((err?: Error | null) => (err ? reject(err) : resolve())));
    if (r.code !== 0) {
      throw new CommandFailedError(`copying ${h.logFile} failed (rc=${r.code}): ${tail(r.stderr, 3)}`, {
        kind: r.code !== 66 ? 'transient' : 'fatal',
        context: { jobId: h.jobId, node: h.node, step: 'logs', logTail: tail(r.stderr) },
      });
    }
    await rename(tmp, path);
  } catch (err) {
    file.destroy();
    await unlink(tmp).catch(() => undefined);
    throw err;
  }
  return { node: h.node, path, bytes };
}
