import { describe, expect, it } from 'vitest';
import { observe, SlurmQueries, SshConnectionError } from '../src/index';
import { ScriptedExecutor } from './scripted-executor';

describe('liveness watch', () => {
  it('observe: a poll that gets no answer is an observation with both sections failed (unknown), never a loss or a throw', async () => {
    const q = new SlurmQueries(new ScriptedExecutor(() => new SshConnectionError('connection reset')));
    const o = await observe(q, '42', [{ node: 'node1', stepName: 'infersweep-s1-r0', launcherPid: 7 }]);
    expect(o.job).toMatchObject({ ok: false, error: expect.stringContaining('connection reset') });
    expect(o.steps).toMatchObject({ ok: false });
    expect(o.launchers).toEqual({});
  });
});
