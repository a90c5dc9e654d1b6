import { describe, expect, it } from 'vitest';
import { CommandFailedError, SetupError, SlurmQueries } from '../src/index';
import { ScriptedExecutor } from './scripted-executor';

const row = (id: string, state: string): string => `${id}|${state}|None|node[1-2]|10:00|N/A|infersweep-q\n`;

describe('SlurmQueries', () => {
  it('asks a read-only query again while slurmctld gives no answer, and reads the answer when it comes', async () => {
    const exec = new ScriptedExecutor((argv, n) =>
      argv[0] === 'scontrol'
        ? { stdout: 'node1\nnode2\n' }
        : n < 3
          ? { code: 1, stderr: 'Socket timed out on send/recv' }
          : { stdout: row('42', 'RUNNING') },
    );
    const info = await new SlurmQueries(exec, { readAttempts: 4 }).describe('42');
    expect(info).toMatchObject({ jobId: '42', state: 'RUNNING', nodes: ['node1', 'node2'], headNode: 'node1' });
    expect(exec.ran.filter((a) => a[0] === 'squeue')).toHaveLength(3);
  });

  it('a job slurmctld no longer knows is GONE; a missing squeue is a SetupError naming it; other failures stay retryable', async () => {
    const gone = new SlurmQueries(
      new ScriptedExecutor(() => ({ code: 1, stderr: 'slurm_load_jobs error: Invalid job id specified' })),
    );
    expect((await gone.describe('7')).state).toBe('GONE');
    const missing = new SlurmQueries(
      new ScriptedExecutor(() => ({ code: 127, stderr: 'bash: squeue: command not found' })),
    );
    await expect(missing.describe('7')).rejects.toBeInstanceOf(SetupError);
    const busy = new SlurmQueries(new ScriptedExecutor(() => ({ code: 1, stderr: 'Socket timed out' })), {
      readAttempts: 2,
    });
    const err = await busy.describe('7').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(CommandFailedError);
    expect((err as CommandFailedError).kind).toBe('transient');
  });

  it('asks the login node to expand a node list once per process: Slurm expands a hostlist by its text', async () => {
    const rowOf = (id: string, nodes: string) => `${id}|RUNNING|None|${nodes}|10:00|N/A|infersweep-q\n`;
    const exec = new ScriptedExecutor((argv) =>
      argv[0] === 'scontrol'
        ? { stdout: argv[3] === 'memo[7-8]' ? 'memo7\nmemo8\n' : 'memo9\n' }
        : { stdout: rowOf(argv[2]!, argv[2] === '3' ? 'memo9' : 'memo[7-8]') },
    );
    const q = new SlurmQueries(exec);
    const first = await q.describe('1');
    first.nodes.push('changed by a caller');
    const again = await new SlurmQueries(exec).describe('2'); // another job on the same list, another instance
    const other = await q.describe('3');
    expect(again.nodes).toEqual(['memo7', 'memo8']);
    expect(other.nodes).toEqual(['memo9']);
    expect(exec.ran.filter((a) => a[0] === 'scontrol').map((a) => a[3])).toEqual(['memo[7-8]', 'memo9']);
  });

  it('release: scancel, then waits until the job has left the live states', async () => {
    let state = 'RUNNING';
    const exec = new ScriptedExecutor((argv) => {
      if (argv[0] === 'scancel') {
        state = 'COMPLETING';
        return {};
      }
      if (argv[0] === 'scontrol') return { stdout: 'node1\n' };
      const out = row('9', state);
      if (state === 'COMPLETING') state = 'CANCELLED';
      return { stdout: out };
    });
    expect(await new SlurmQueries(exec, { pollIntervalMs: 1 }).release('9')).toEqual({
      state: 'CANCELLED',
      settled: true,
    });
  });
});
