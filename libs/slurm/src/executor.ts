import { spawn } from 'node:child_process';
import { tail } from '@infersweep/core';
import { assertSecretEnv, redactAssignments, shellJoin, withEnv } from './quote';
export { LOGIN_ENV } from './commands';
import { CommandAbortedError, CommandTimeoutError } from './errors';

export interface RunOptions {
  /** Kill the command (its whole process group) after this long; throws CommandTimeoutError. */
  timeoutMs?: number;
  stdin?: string;
  /** Passed as `env K=V … argv` (values quoted like every other value). */
  env?: Record<string, string>;
  /**
   * Secrets: exported into the command's environment, never on a command line (not in argv, not
   * in `ps`, not in error messages). Local: the child's environment. SSH: `NAME=value` lines on
   * the remote command's stdin, read and exported by a fixed /bin/sh script (see ssh.ts).
   */
  secretEnv?: Record<string, string>;
  /** Safe to run twice: an SSH executor re-runs it after reconnecting if the connection drops. */
  idempotent?: boolean;
  onStdout?(chunk: string): void;
  /** Keep stdout in RunResult.stdout (default true); false streams it to onStdout only (large output). */
  collectStdout?: boolean;
  onStderr?(chunk: string): void;
  signal?: AbortSignal;
}

export interface RunResult {
  code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  durationMs: number;
}

/** Runs argv (joined by the one quoting helper) somewhere: this host or a login node over SSH. */
export interface Executor {
  run(argv: string[], opts?: RunOptions): Promise<RunResult>;
  close(): Promise<void>;
  describe(): string;
}

/** The single command line an executor hands to a shell. */
export function commandLine(argv: readonly string[], env?: Record<string, string>): string {
  return shellJoin(withEnv(argv, env));
}

/** A command line fit for an error message: `NAME=value` assignments redacted. */
export function shownCommand(line: string): string {
  return redactAssignments(line);
}

/** Grace between SIGTERM and SIGKILL when a command times out or is aborted. */
export const KILL_GRACE_MS = 2_000;

/** `env` reduced to `names` and Slurm's `SLURM_*` variables. */
export function loginEnvOf(names: readonly string[], env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(env).filter(([k, v]) => v !== undefined && (names.includes(k) || k.startsWith('SLURM_'))),
  );
}

/**
 * Child processes of this host, each in its own process group; a timeout/abort kills the whole group.
 * With `envNames`, a command gets only those variables of this process (and `SLURM_*`), plus its
 * secrets; without, this process's whole environment (the tests' own Slurm client).
 */
export class LocalExecutor implements Executor {
  constructor(
    private readonly shell = '/bin/sh',
    private readonly envNames?: readonly string[],
  ) {}

  describe(): string {
    return 'local';
  }

  async close(): Promise<void> {}

  run(argv: string[], opts: RunOptions = {}): Promise<RunResult> {
    const line = commandLine(argv, opts.env);
    const shown = shownCommand(line);
    if (opts.secretEnv) assertSecretEnv(opts.secretEnv);
    const started = Date.now();
    return new Promise<RunResult>((resolve, reject) => {
      if (opts.signal?.aborted) return reject(new CommandAbortedError(`aborted before start: ${shown}`));
      const own = this.envNames ? loginEnvOf(this.envNames) : process.env;
      const env = opts.secretEnv ? { ...own, ...opts.secretEnv } : own;
      const child = spawn(this.shell, ['-c', `exec ${line}`], { detached: true, stdio: ['pipe', 'pipe', 'pipe'], env });
      let stdout = '';
      let stderr = '';
      let killedFor: 'timeout' | 'abort' | undefined;
      const killGroup = (sig: NodeJS.Signals): void => {
        try {
          if (child.pid) process.kill(-child.pid, sig);
        } catch {
          /* group already gone */
        }
      };
      const stop = (why: 'timeout' | 'abort'): void => {
        if (killedFor) return;
        killedFor = why;
        killGroup('SIGTERM');
        setTimeout(() => killGroup('SIGKILL'), KILL_GRACE_MS).unref();
      };
      const timer = opts.timeoutMs ? setTimeout(() => stop('timeout'), opts.timeoutMs) : undefined;
      const onAbort = (): void => stop('abort');
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      child.stdout.setEncoding('utf8').on('data', (d: string) => {
        if (opts.collectStdout !== false) stdout += d;
        opts.onStdout?.(d);
      });
      child.stderr.setEncoding('utf8').on('data', (d: string) => {
        stderr += d;
        opts.onStderr?.(d);
      });
      child.stdin.on('error', () => {});
      child.stdin.end(opts.stdin ?? '');
      child.on('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        opts.signal?.removeEventListener('abort', onAbort);
        // make sure nothing of the group outlives a timed-out/aborted command
        if (killedFor) killGroup('SIGKILL');
        const durationMs = Date.now() - started;
        const context = { logTail: tail(stderr || stdout), command: shown, durationMs };
        if (killedFor === 'timeout')
          return reject(new CommandTimeoutError(`timed out after ${opts.timeoutMs} ms: ${shown}`, { context }));
        if (killedFor === 'abort') return reject(new CommandAbortedError(`aborted: ${shown}`, { context }));
        resolve({ code, signal, stdout, stderr, durationMs });
      });
    });
  }
}
