import { describe, expect, it } from 'vitest';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { until } from '@infersweep/testkit/wait';
import { CommandAbortedError, CommandTimeoutError, LocalExecutor } from '../src/index';

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

describe('LocalExecutor', () => {
  const ex = new LocalExecutor();

  it('reports stdout, stderr, exit code, env and stdin; values arrive intact', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'infersweep-local-'));
    // the script runs in `dir`, so an argument that were evaluated as shell would create dir/x
    const r = await ex.run(
      ['bash', '-c', 'cd "$2" && echo "$1|$V"; cat; echo err >&2; exit 3', '_', '$(touch x);`y`', dir],
      {
        env: { V: "a'b\nc" },
        stdin: 'in',
      },
    );
    expect(r.code).toBe(3);
    expect(r.signal).toBeNull();
    expect(r.stdout).toBe("$(touch x);`y`|a'b\nc\nin");
    expect(r.stderr).toBe('err\n');
    expect(readdirSync(dir)).toEqual([]);
    // positive control: the same script with the value evaluated does create dir/x
    await ex.run(['bash', '-c', 'cd "$2" && eval "echo $1"', '_', '$(touch x)', dir]);
    expect(readdirSync(dir)).toEqual(['x']);
  });

  it('reports a terminating signal', async () => {
    const r = await ex.run(['bash', '-c', 'kill -KILL $$']);
    expect(r.code).toBeNull();
    expect(r.signal).toBe('SIGKILL');
  });

  it('a timeout kills the whole process group, grandchildren included', async () => {
    const pids: number[] = [];
    // 3 s: bash must print the grandchild's pid before the timeout fires, even on a loaded 2-core host
    // (at 500 ms, a load average of 17 once left the pid unprinted when the group was killed)
    const p = ex.run(['bash', '-c', 'sleep 300 & echo $!; sleep 300'], {
      timeoutMs: 3_000,
      onStdout: (d) => pids.push(Number(d.trim())),
    });
    await expect(p).rejects.toBeInstanceOf(CommandTimeoutError);
    expect(pids[0]).toBeGreaterThan(0);
    expect(await until('the grandchild gone', async () => !alive(pids[0]!), 5_000, 50)).toBe(true);
  });

  it('an abort kills the group too, grandchildren included', async () => {
    const ac = new AbortController();
    const pids: number[] = [];
    const p = ex.run(['bash', '-c', 'sleep 300 & echo $$ $!; sleep 300'], {
      signal: ac.signal,
      onStdout: (d) => {
        pids.push(...d.trim().split(' ').map(Number));
        ac.abort();
      },
    });
    await expect(p).rejects.toBeInstanceOf(CommandAbortedError);
    expect(pids).toHaveLength(2);
    expect(pids.every((pid) => pid > 0)).toBe(true);
    expect(await until('every child gone', async () => !pids.some(alive), 5_000, 50)).toBe(true);
  });
});
