import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { status } from '@grpc/grpc-js';
import { clientInterceptors, closedChannelGuard } from '../src/closed-channel-guard';

/**
 * The real @temporalio/client retry interceptor over the real grpc-js channel, each scenario in its own process
 * (./fixtures/closed-channel/retry-after-close.ts): a retry pending when the connection closes. CI saw the
 * unguarded case kill a test file's process (2026-12-04, "Channel has been shut down" from grpc-retry.ts's timer).
 */
const TSX = join(__dirname, '../../../node_modules/.bin/tsx');
const SCENARIO = join(__dirname, 'fixtures/closed-channel/retry-after-close.ts');

function run(mode: 'guarded' | 'unguarded'): { code: number | null; out: string; err: string } {
  const r = spawnSync(TSX, [SCENARIO, mode], { encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, out: r.stdout.trim(), err: r.stderr };
}

describe('a retry pending when the Temporal connection closes', () => {
  it('without the guard the retry timer throws "Channel has been shut down" and the process dies', () => {
    const r = run('unguarded');
    expect(r.code).toBe(1);
    expect(r.out).toBe('');
    expect(r.err).toMatch(/Error: Channel has been shut down\n\s+at InternalChannel\.createCall/);
    expect(r.err).toMatch(/grpc-retry\.ts/);
  });

  it('with the guard below the retry the call rejects CANCELLED, nothing is thrown, the process exits 0', () => {
    const r = run('guarded');
    expect(r.err).not.toMatch(/Channel has been shut down/);
    expect(JSON.parse(r.out)).toEqual({
      outcome: 'rejected',
      code: status.CANCELLED,
      details: 'the Temporal connection was closed',
    });
    expect(r.code).toBe(0);
  });

  it('every client connection gets the SDK’s default retry first and the guard below it', () => {
    const interceptors = clientInterceptors();
    expect(interceptors).toHaveLength(2);
    expect(interceptors[1]).toBe(closedChannelGuard);
    expect(interceptors[0]).not.toBe(closedChannelGuard);
  });
});
