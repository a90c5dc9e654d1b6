/**
 * `logs --follow` (../src/commands/logs.ts followLogs) streams a live log without keeping it: a
 * follow of a log that grows by megabytes writes every byte, and the executor holds none of it
 * (what it kept would show in the stopped command's error context).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { appendFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InfersweepError } from '@infersweep/core';
import { LocalExecutor, type RunOptions } from '@infersweep/slurm';
import { followLogs } from '../src/actions/logs';

describe('logs --follow', () => {
  it('streams megabytes of a growing log and keeps none of it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'logs-follow-'));
    const file = join(dir, 'rank0-node1.log');
    writeFileSync(file, 'first line\n');
    const local = new LocalExecutor();
    let ended: unknown;
    const exec = Object.assign(Object.create(local) as LocalExecutor, {
      run: (argv: string[], opts?: RunOptions) =>
        local.run(argv, opts).catch((e: unknown) => {
          ended = e;
          throw e;
        }),
    });
    const ac = new AbortController();
    let written = 0;
    let started: () => void = () => undefined;
    const following = new Promise<void>((r) => (started = r));
    const total = 8 << 20;
    const done = followLogs(exec, [file], 10, ac.signal, (c) => {
      written += Buffer.byteLength(c);
      started();
      if (written >= total) ac.abort();
    });
    await following; // tail is running: what is appended now is followed
    const block = `${'x'.repeat(1023)}\n`.repeat(256);
    while (!ac.signal.aborted) await appendFile(file, block);
    await done;
    expect(written).toBeGreaterThanOrEqual(total);
    expect(ended).toBeInstanceOf(InfersweepError); // stopped by the abort (Ctrl-C)
    expect(String((ended as InfersweepError).context.logTail ?? '')).not.toContain('x'.repeat(100));
  });
});
