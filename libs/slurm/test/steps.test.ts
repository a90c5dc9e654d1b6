import { describe, expect, it } from 'vitest';
import { SlurmQueries, stepStatus, stopStep } from '../src/index';
import { ScriptedExecutor } from './scripted-executor';

const step = { jobId: '42', node: 'node1', stepName: 'infersweep-s1-r0', launcherPid: 4242 };

describe('steps', () => {
  it('stepStatus: listed by squeue → running; not listed and its launcher gone → exited; no answer → unknown', async () => {
    const listed = new ScriptedExecutor((argv) =>
      argv[0] === 'squeue' ? { stdout: '42.0|node1|infersweep-s1-r0\n' } : { stdout: 'dead\n' },
    );
    expect(await stepStatus(new SlurmQueries(listed), step)).toBe('running');
    const gone = new ScriptedExecutor((argv) => (argv[0] === 'squeue' ? { stdout: '' } : { stdout: 'dead\n' }));
    expect(await stepStatus(new SlurmQueries(gone), step)).toBe('exited');
    const silent = new ScriptedExecutor(() => ({ code: 1, stderr: 'Socket timed out' }));
    expect(await stepStatus(new SlurmQueries(silent, { readAttempts: 1 }), step)).toBe('unknown');
  });

  it('stopStep cancels the listed step J.S and returns once it has left squeue and its launcher is gone', async () => {
    let listed = true;
    const exec = new ScriptedExecutor((argv) => {
      if (argv[0] === 'scancel') {
        listed = false;
        return {};
      }
      if (argv[0] === 'squeue') return { stdout: listed ? '42.3|node1|infersweep-s1-r0\n' : '' };
      return { stdout: 'dead\n' };
    });
    await stopStep(new SlurmQueries(exec, { pollIntervalMs: 1 }), step);
    expect(exec.ran.filter((a) => a[0] === 'scancel')).toEqual([['scancel', '42.3']]);
  });
});
