import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { utils } from 'ssh2';
import {
  CommandTimeoutError,
  SshConnectionError,
  SshExecutor,
  SshHostKeyError,
  executorForProfile,
} from '../src/index';
import { shared, sshOptions, sshSessionPid, stackEnv } from './helpers';
import { until } from '@infersweep/testkit/wait';

describe('SshExecutor against the loopback sshd', () => {
  const ex = new SshExecutor(sshOptions());
  afterAll(() => ex.close());

  it('runs argv with the pinned host key; exit code, stdout, stderr, sshd SetEnv visible', async () => {
    const r = await ex.run(['bash', '-c', 'echo "$SLURM_CONF"; echo oops >&2; exit 7']);
    expect(r.code).toBe(7);
    expect(r.stdout.trim()).toBe(stackEnv().SLURM_CONF);
    expect(r.stderr).toBe('oops\n');
  });

  it('reports a terminating signal', async () => {
    const r = await ex.run(['bash', '-c', 'kill -TERM $$']);
    expect(r.code).toBeNull();
    expect(r.signal).toBe('SIGTERM');
  });

  it('refuses a changed host key (pinned) with a non-retryable SshHostKeyError', async () => {
    const other = new SshExecutor(sshOptions({ hostKey: utils.generateKeyPairSync('ed25519').public }));
    const err = await other.run(['true']).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SshHostKeyError);
    expect((err as SshHostKeyError).kind).toBe('fatal');
    expect((err as SshHostKeyError).context.why).toBe('changed');
  });

  it('accepts the host via known_hosts and refuses a host known_hosts does not list', async () => {
    const e = stackEnv();
    const viaKnown = new SshExecutor(sshOptions({ hostKey: undefined, knownHostsPath: e.INFERSWEEP_SSH_KNOWN_HOSTS }));
    expect((await viaKnown.run(['echo', 'ok'])).stdout).toBe('ok\n');
    await viaKnown.close();
    const dir = mkdtempSync(join(tmpdir(), 'infersweep-kh-'));
    const kh = join(dir, 'known_hosts');
    writeFileSync(kh, 'someotherhost ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHh0ZXN0a2V5MXh0ZXN0a2V5MXh0ZXN0a2V5MXg=\n');
    const unknown = new SshExecutor(sshOptions({ hostKey: undefined, knownHostsPath: kh }));
    const err = await unknown.run(['true']).catch((x: unknown) => x);
    expect(err).toBeInstanceOf(SshHostKeyError);
    expect((err as SshHostKeyError).context.why).toBe('unknown');
    expect(() => new SshExecutor(sshOptions({ hostKey: undefined }))).toThrow(SshHostKeyError);
  });

  it('executorForProfile: a .pub path as hostKey works', async () => {
    const e = stackEnv();
    const x = executorForProfile({
      loginHost: {
        host: e.INFERSWEEP_SSH_HOST!,
        port: Number(e.INFERSWEEP_SSH_PORT),
        user: e.INFERSWEEP_SSH_USER!,
        keyPath: e.INFERSWEEP_SSH_KEY,
        hostKey: e.INFERSWEEP_SSH_HOST_KEY,
      },
    });
    expect((await x.run(['echo', 'profile'])).stdout).toBe('profile\n');
    await x.close();
  });

  it('hostile strings in argv, env values and paths arrive intact and nothing runs', async () => {
    const dir = join(shared(), `infersweep-test-slurm-quote-${Date.now()}`);
    const marker = join(dir, 'pwned');
    const hostile = [
      `$(touch ${marker})`,
      `\`touch ${marker}\``,
      `; touch ${marker}`,
      `" ; touch ${marker}; "`,
      `' ; touch ${marker}; '`,
      'line1\nline2',
      '*',
      '$HOME',
    ];
    await ex.run(['mkdir', '-p', dir]);
    const r = await ex.run(['bash', '-c', 'printf "%s\\0" "$@"; printf "%s\\0" "$V1" "$V2"', 'x', ...hostile], {
      env: { V1: hostile[0]!, V2: hostile[4]! },
    });
    expect(r.stdout.split('\0').slice(0, -1)).toEqual([...hostile, hostile[0], hostile[4]]);
    const file = join(dir, hostile[3]!.replace(/\//g, '_'));
    await ex.run(['bash', '-c', 'printf %s "$2" > "$1"', 'x', file, 'content']);
    expect((await ex.run(['cat', '--', file])).stdout).toBe('content');
    expect((await ex.run(['test', '-e', marker])).code).toBe(1);
    await ex.run(['rm', '-rf', '--', dir]);
  });

  it('streams output while the command runs', async () => {
    const chunks: string[] = [];
    let sawFirstBeforeEnd = false;
    await ex.run(['bash', '-c', 'echo one; read -t 5 x < <(sleep 1; echo); echo two'], {
      onStdout: (c) => {
        chunks.push(c);
        if (c.includes('one') && !chunks.join('').includes('two')) sawFirstBeforeEnd = true;
      },
    });
    expect(sawFirstBeforeEnd).toBe(true);
    expect(chunks.join('')).toBe('one\ntwo\n');
  });

  it('a per-command timeout kills the remote process group', async () => {
    const pids: string[] = [];
    const err = await ex
      .run(['bash', '-c', 'sleep 300 & echo $!; wait'], { timeoutMs: 3_000, onStdout: (d) => pids.push(d.trim()) })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CommandTimeoutError);
    const pid = pids[0]!;
    expect(pid).toMatch(/^\d+$/);
    await until(`remote sleep ${pid} gone`, async () => (await ex.run(['kill', '-0', pid])).code !== 0, 10_000);
  });

  it('a dropped connection: the in-flight non-idempotent command fails retryably, the next call reconnects, idempotent commands are retried', async () => {
    const x = new SshExecutor(sshOptions());
    // the sshd process serving this connection is the parent of the remote shell
    const myShellParent = await sshSessionPid(x);
    expect(x.connects).toBe(1);
    const inflight = x.run(['sleep', '30']).catch((e: unknown) => e);
    const killer = new SshExecutor(sshOptions());
    await killer.run(['kill', '-KILL', myShellParent]);
    const err = await inflight;
    expect(err).toBeInstanceOf(SshConnectionError);
    expect((err as SshConnectionError).kind).toBe('transient');
    expect((await x.run(['echo', 'back'])).stdout).toBe('back\n');
    expect(x.connects).toBe(2);

    // idempotent: dropped mid-command, re-run transparently on a new connection
    const parent2 = await sshSessionPid(x);
    const retried = x.run(['bash', '-c', 'sleep 1; echo done'], { idempotent: true });
    await killer.run(['kill', '-KILL', parent2]);
    expect((await retried).stdout).toBe('done\n');
    expect(x.connects).toBe(3);
    await x.close();
    await killer.close();
  });

  it('a command waiting for a channel when the connection drops runs on the next connection (never started: retried, any command)', async () => {
    const x = new SshExecutor(sshOptions({ maxChannels: 1 }));
    const parent = await sshSessionPid(x);
    const holder = x.run(['sleep', '30']).catch((e: unknown) => e); // holds the only channel
    const waiting = x.run(['echo', 'after the drop']); // not idempotent: waits for the channel
    const killer = new SshExecutor(sshOptions());
    await killer.run(['kill', '-KILL', parent]);
    expect(await holder).toBeInstanceOf(SshConnectionError);
    expect((await waiting).stdout).toBe('after the drop\n');
    expect(x.connects).toBe(2);
    await x.close();
    await killer.close();
  });
});
