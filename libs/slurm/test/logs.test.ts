import { describe, expect, it } from 'vitest';
import { fetchLogs, SlurmQueries } from '../src/index';
import { ScriptedExecutor } from './scripted-executor';

describe('logs', () => {
  it("fetchLogs: each log's size and last lines; a log not written yet is reported missing, not an error", async () => {
    const exec = new ScriptedExecutor((argv) =>
      argv.includes('/l/a.log') ? { stdout: '120\nloading weights\nready\n' } : { stdout: 'missing\n' },
    );
    const logs = await fetchLogs(new SlurmQueries(exec), [
      { node: 'node1', logFile: '/l/a.log', jobId: '42' },
      { node: 'node2', logFile: '/l/b.log', jobId: '42' },
    ]);
    expect(logs).toEqual([
      { node: 'node1', logFile: '/l/a.log', exists: true, bytes: 120, tail: 'loading weights\nready\n' },
      { node: 'node2', logFile: '/l/b.log', exists: false, bytes: 0, tail: '' },
    ]);
  });
});
