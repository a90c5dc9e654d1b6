/**
 * Where the aiperf process runs. The local runner spawns it in this host (the worker's); a runner given by
 * the caller runs the same argv elsewhere (the orchestrator's head-node runner: an `srun --overlap` step on
 * the allocation's head node) and brings the artifacts back into the point folder.
 */
import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { aiperfProcessEnv } from './process-env';

export interface AiperfProcessStats {
  exitCode: number | null;
  wallSeconds: number;
  /** CPU seconds of aiperf and all its (waited-for) subprocesses, from the shell's `times`. */
  childCpuSeconds: number | null;
}

/** One aiperf run: `binary argv…` with `env`, killed after `hardTimeoutMs` or on `signal`. */
export interface AiperfCommand {
  binary: string;
  argv: string[];
  env: Record<string, string>;
  /** Local file the process's output ends in (the point's benchmark.log). */
  logFile: string;
  /** The local point folder's aiperf_artifacts, where the exports must be when `run` returns. */
  artifactDir: string;
  hardTimeoutMs: number;
  signal?: AbortSignal;
  onLog?(text: string): void;
}

export interface AiperfRunOutcome extends AiperfProcessStats {
  /** The last 20 kB of the output. */
  logTail: string;
  /** Stopped because `signal` fired. */
  aborted: boolean;
}

export interface AiperfRunner {
  /** Where aiperf writes (`--output-artifact-dir`) as the runner's host sees it; unset: the local point folder. */
  artifactDir?: string;
  /** Make a local trace file or folder readable where aiperf runs; returns the path to give aiperf. */
  stage?(localPath: string): Promise<string>;
  /** Run to the end; when it returns, the artifacts are in the local point folder's aiperf_artifacts. */
  run(cmd: AiperfCommand): Promise<AiperfRunOutcome>;
}

/**
 * The wrapper every runner uses: run aiperf, then print its exit code and the shell's `times` (children's
 * CPU, parsed by {@link parseTimes}). Positional arguments only: nothing of the argv is shell text.
 */
export const AIPERF_WRAPPER = [
  'bash',
  '-c',
  '"$@"; rc=$?; echo "infersweep-aiperf-exit=$rc"; times; exit $rc',
  'aiperf-wrapper',
];

/** Parse bash `times` output (second line = children user/sys). */
export function parseTimes(text: string): number | null {
  const lines = text.trim().split('\n').slice(-2);
  const m = /(\d+)m([\d.]+)s\s+(\d+)m([\d.]+)s/.exec(lines[1] ?? '');
  if (!m) return null;
  return Number(m[1]) * 60 + Number(m[2]) + Number(m[3]) * 60 + Number(m[4]);
}

/** The exit code the wrapper printed (null: it never got there). */
export function wrapperExitCode(text: string): number | null {
  const m = /infersweep-aiperf-exit=(\d+)/.exec(text);
  return m ? Number(m[1]) : null;
}

/** aiperf in this host: a process group of its own, SIGINT then SIGKILL on abort, SIGKILL at the hard timeout. */
export const localAiperfRunner: AiperfRunner = {
  async run(cmd) {
    const log = createWriteStream(cmd.logFile);
    let logTail = '';
    const t0 = performance.now();
    const proc = spawn(AIPERF_WRAPPER[0]!, [...AIPERF_WRAPPER.slice(1), cmd.binary, ...cmd.argv], {
      env: aiperfProcessEnv(process.env, cmd.env),
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    const onData = (d: Buffer): void => {
      log.write(d);
      logTail = (logTail + d.toString()).slice(-20_000);
      cmd.onLog?.(d.toString());
    };
    proc.stdout.on('data', onData);
    proc.stderr.on('data', onData);
    const killGroup = (sig: NodeJS.Signals): void => {
      try {
        if (proc.pid) process.kill(-proc.pid, sig);
      } catch {
        /* already gone */
      }
    };
    let aborted = false;
    const onAbort = (): void => {
      aborted = true;
      killGroup('SIGINT');
      setTimeout(() => killGroup('SIGKILL'), 10_000).unref();
    };
    cmd.signal?.addEventListener('abort', onAbort, { once: true });
    const hardTimeout = setTimeout(() => killGroup('SIGKILL'), cmd.hardTimeoutMs);
    const exitCode = await new Promise<number | null>((resolve) => proc.on('close', (code) => resolve(code)));
    clearTimeout(hardTimeout);
    cmd.signal?.removeEventListener('abort', onAbort);
    await new Promise<void>((r) => log.end(r));
    return {
      exitCode,
      wallSeconds: (performance.now() - t0) / 1000,
      childCpuSeconds: parseTimes(logTail),
      logTail,
      aborted,
    };
  },
};
