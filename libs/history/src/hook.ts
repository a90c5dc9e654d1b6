/**
 * The notification command of the worker's history settings, run so that it can neither hang the
 * recordHistory activity nor outlive its bound: its own process group (`detached`), the input on stdin,
 * stdout discarded and the last {@link STDERR_TAIL} bytes of stderr kept for the message, a minimal
 * environment, and at the timeout SIGTERM to the whole group, then SIGKILL after {@link KILL_GRACE_MS}.
 * It is done when the command itself exits: children it leaves running after a normal exit are its own
 * business (a backgrounded `curl`), but after a timeout nothing of the group survives.
 */
import { spawn } from 'node:child_process';

/** Bytes of the command's stderr kept for the failure message. */
export const STDERR_TAIL = 4096;
/** Between SIGTERM and SIGKILL to the group after a timeout. */
export const KILL_GRACE_MS = 2000;

/** The environment a hook gets: enough to find programs and write in a home, nothing of the worker's secrets. */
export function hookEnv(extra: Record<string, string>, from: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: from.PATH ?? '/usr/local/bin:/usr/bin:/bin' };
  for (const k of ['HOME', 'LANG', 'TZ'] as const) if (from[k] !== undefined) env[k] = from[k];
  return { ...env, ...extra };
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // the group is gone already
  }
}

export function runHook(
  argv: readonly string[],
  input: string,
  opts: { timeoutMs: number; env: NodeJS.ProcessEnv },
): Promise<void> {
  const [cmd, ...args] = argv;
  return new Promise<void>((resolve, reject) => {
    const child = spawn(cmd!, args, { detached: true, stdio: ['pipe', 'ignore', 'pipe'], env: opts.env });
    let stderr = '';
    let timedOut = false;
    let killTimer: NodeJS.Timeout | undefined;
    child.stderr?.on('data', (b: Buffer) => {
      stderr = (stderr + b.toString()).slice(-STDERR_TAIL);
    });
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child.pid!, 'SIGTERM');
      killTimer = setTimeout(() => killGroup(child.pid!, 'SIGKILL'), KILL_GRACE_MS);
    }, opts.timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(new Error(`notification command ${cmd}: ${err.message}`));
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      // a grandchild may still hold stderr open: stop reading, the command is done
      child.stderr?.destroy();
      const tail = stderr.trim() === '' ? '' : `: ${stderr.trim()}`;
      if (timedOut) {
        clearTimeout(killTimer);
        killGroup(child.pid!, 'SIGKILL');
        reject(
          new Error(
            `notification command ${cmd}: timed out after ${opts.timeoutMs} ms, its process group killed${tail}`,
          ),
        );
      } else if (code === 0) resolve();
      else reject(new Error(`notification command ${cmd}: exited with ${code ?? signal}${tail}`));
    });
    // a command that exits without reading its input closes the pipe under the write: its exit status says how
    // it went; the EPIPE must not become an uncaught exception of the worker
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(input);
  });
}
