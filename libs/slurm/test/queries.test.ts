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
