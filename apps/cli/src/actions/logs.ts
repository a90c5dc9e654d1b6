/** What `infersweep logs` runs (its options are in ../commands/logs.ts). */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { executorForProfile, type Executor } from '@infersweep/slurm';
import { remoteSweepLogDir } from '@infersweep/core';
import { out, err, parsePositiveInt, EXIT, ExitWith } from '../ops/cli';
import { resolveSweeps } from '../report/generate';
import { readPlanFile } from '../report/plan-file';

export interface LogsOpts {
  node?: string;
  lines: string;
  follow?: boolean;
  captured?: boolean;
}

/** Does a log file `…/[rank<r>-]<node>.log` match `--node` (a node name, or a rank number)? */
export function matchesNode(file: string, node: string | undefined): boolean {
  if (!node) return true;
  const m = /(?:^|\/)(?:rank(\d+)-)?([^/]+)\.log$/.exec(file);
  if (!m) return false;
  return /^\d+$/.test(node) && m[1] !== undefined ? m[1] === node : m[2] === node;
}

/**
 * `tail -F` of `files` until `signal` aborts, each chunk written as it arrives and never kept: a
 * follow of hours of a chatty server costs no memory (the executor's stdout is not collected).
 */
export async function followLogs(
  exec: Executor,
  files: readonly string[],
  lines: number,
  signal: AbortSignal,
  write: (chunk: string) => void,
): Promise<void> {
  await exec
    .run(['tail', '-n', String(lines), '-F', ...files], { onStdout: write, collectStdout: false, signal })
    .catch(() => undefined);
}

export async function logs(id: string, opts: LogsOpts): Promise<number | void> {
  const lines = parsePositiveInt(opts.lines, '--lines');
  const r = await resolveSweeps(id);
  let shown = 0;
  for (const s of r.sweeps) {
    const { plan } = readPlanFile(s.resultsDir);
    const live =
      !opts.captured && s.phase !== null && !['completed', 'failed', 'cancelled', 'aborted'].includes(s.phase) && plan;
    if (live) {
      const exec = executorForProfile({ loginHost: live.login });
      try {
        const dir = remoteSweepLogDir(live.sharedDir, s.sweepId);
        const found = await exec.run(['find', dir, '-name', '*.log', '-type', 'f'], {
          timeoutMs: 30_000,
          idempotent: true,
        });
        const files = found.stdout
          .split('\n')
          .filter((f) => f && matchesNode(f, opts.node))
          .sort();
        if (files.length === 0) continue;
        shown += files.length;
        if (opts.follow) {
          const ac = new AbortController();
          process.once('SIGINT', () => ac.abort());
          err(`following ${files.length} log file(s) of ${s.sweepId} on ${exec.describe()} — Ctrl-C stops`);
          await followLogs(exec, files, lines, ac.signal, (c) => process.stdout.write(c));
          return EXIT.ok;
        }
        const t = await exec.run(['tail', '-n', String(lines), ...files], {
          timeoutMs: 30_000,
          idempotent: true,
        });
        process.stdout.write(files.length === 1 ? `==> ${files[0]} <==\n${t.stdout}` : t.stdout);
      } finally {
        await exec.close().catch(() => undefined);
      }
      continue;
    }
    for (const rel of s.logs.filter((l) => matchesNode(l, opts.node))) {
      const file = join(s.resultsDir, rel);
      if (!existsSync(file)) continue;
      shown += 1;
      const text = readFileSync(file, 'utf8').split('\n');
      out(`==> ${file} <==`);
      out(text.slice(-lines - 1).join('\n'));
    }
  }
  if (shown === 0) {
    throw new ExitWith(
      EXIT.failure,
      `no server logs for ${id}${opts.node ? ` on node ${opts.node}` : ''} yet (the server has not been launched, or its logs were not captured); see \`infersweep status ${id}\``,
    );
  }
  if (opts.follow) err('(the sweep is not running: nothing to follow; printed the captured logs)');
}
