import { readFileSync } from 'node:fs';
import { Client, type ClientChannel, type ConnectConfig } from 'ssh2';
import { tail } from '@infersweep/topology';
import { commandLine, KILL_GRACE_MS, LocalExecutor, type Executor, type RunOptions, type RunResult } from './executor';
import { CommandAbortedError, CommandTimeoutError, SshConnectionError, SshHostKeyError } from './errors';
import { knownHostsName, knownKeysFor, parsePublicKeyLine, verifyHostKey, type HostKeyVerdict } from './hostkeys';
import { shellJoin } from './quote';

export interface SshExecutorOptions {
  host: string;
  port?: number;
  username: string;
  privateKeyPath?: string;
  privateKey?: string | Buffer;
  passphrase?: string;
  /** ssh-agent socket (e.g. process.env.SSH_AUTH_SOCK) when no key is given. */
  agent?: string;
  /** The server's OpenSSH public key line to pin. One of hostKey / knownHostsPath is required. */
  hostKey?: string;
  knownHostsPath?: string;
  keepaliveIntervalMs?: number;
  keepaliveCountMax?: number;
  readyTimeoutMs?: number;
  /** Attempts for an idempotent command whose connection dropped (default 3). */
  maxAttempts?: number;
  /** Channels open at once on the connection (sshd MaxSessions; default 16). */
  maxChannels?: number;
}

/** First stderr line of every remote command: the remote shell's pid (= its process group). */
const PID_MARK = '__infersweep_pid=';

class ConnectionDropped extends Error {}

/**
 * Commands on a login node over one multiplexed ssh2 connection. The host key must match the
 * pinned key or known_hosts (unknown or changed → SshHostKeyError). A dropped connection is
 * re-established on the next call; a command marked idempotent is re-run transparently.
 */
export class SshExecutor implements Executor {
  private client: Client | undefined;
  private connecting: Promise<Client> | undefined;
  private readonly inflight = new Set<(err: Error) => void>();
  private active = 0;
  private readonly waiters: (() => void)[] = [];
  private closed = false;
  /** How many times a connection was established (1 = never reconnected). */
  connects = 0;

  constructor(private readonly opts: SshExecutorOptions) {
    if (!opts.hostKey && !opts.knownHostsPath) throw new SshHostKeyError('SshExecutor needs hostKey or knownHostsPath: refusing to trust any host key');
  }

  describe(): string {
    return `ssh ${this.opts.username}@${this.opts.host}:${this.opts.port ?? 22}`;
  }

  async close(): Promise<void> {
    this.closed = true;
    const c = this.client;
    this.client = undefined;
    if (!c) return;
    await new Promise<void>((resolve) => {
      c.once('close', () => resolve());
      c.end();
      setTimeout(resolve, 2_000).unref();
    });
  }

  private known(): { keys: Buffer[]; revoked: Buffer[] } {
    if (this.opts.hostKey) return { keys: [parsePublicKeyLine(this.opts.hostKey).blob], revoked: [] };
    const text = readFileSync(this.opts.knownHostsPath!, 'utf8');
    return knownKeysFor(text, knownHostsName(this.opts.host, this.opts.port ?? 22));
  }

  private connect(): Promise<Client> {
    if (this.client) return Promise.resolve(this.client);
    if (this.closed) return Promise.reject(new SshConnectionError(`${this.describe()}: executor closed`));
    if (this.connecting) return this.connecting;
    const context = { host: this.opts.host, port: this.opts.port ?? 22 };
    this.connecting = new Promise<Client>((resolve, reject) => {
      const c = new Client();
      let verdict: HostKeyVerdict | undefined;
      let known: ReturnType<SshExecutor['known']>;
      try {
        known = this.known();
      } catch (err) {
        reject(new SshHostKeyError(`${this.describe()}: cannot read the pinned host key: ${(err as Error).message}`, { context, cause: err }));
        return;
      }
      const cfg: ConnectConfig = {
        host: this.opts.host,
        port: this.opts.port ?? 22,
        username: this.opts.username,
        keepaliveInterval: this.opts.keepaliveIntervalMs ?? 10_000,
        keepaliveCountMax: this.opts.keepaliveCountMax ?? 3,
        readyTimeout: this.opts.readyTimeoutMs ?? 20_000,
        hostVerifier: (key: Buffer) => {
          verdict = verifyHostKey(key, known);
          return verdict.ok;
        },
      };
      if (this.opts.privateKey) cfg.privateKey = this.opts.privateKey;
      else if (this.opts.privateKeyPath) cfg.privateKey = readFileSync(this.opts.privateKeyPath);
      if (this.opts.passphrase) cfg.passphrase = this.opts.passphrase;
      if (this.opts.agent) cfg.agent = this.opts.agent;
      let ready = false;
      c.on('ready', () => {
        ready = true;
        this.client = c;
        this.connects += 1;
        resolve(c);
      });
      c.on('error', (err) => {
        if (ready) return; // a post-ready error is followed by 'close'
        if (verdict && !verdict.ok) {
          reject(new SshHostKeyError(`${this.describe()}: host key ${verdict.why}, refusing to connect`, { context: { ...context, why: verdict.why }, cause: err }));
        } else {
          reject(new SshConnectionError(`${this.describe()}: ${err.message}`, { context, cause: err }));
        }
      });
      c.on('close', () => {
        if (this.client === c) this.client = undefined;
        if (!ready) reject(new SshConnectionError(`${this.describe()}: connection closed during handshake`, { context }));
        for (const fail of [...this.inflight]) fail(new ConnectionDropped('connection dropped'));
      });
      c.connect(cfg);
    }).finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  private async acquire(): Promise<void> {
    const max = this.opts.maxChannels ?? 16;
    while (this.active >= max) await new Promise<void>((r) => this.waiters.push(r));
    this.active += 1;
  }

  private release(): void {
    this.active -= 1;
    this.waiters.shift()?.();
  }

  async run(argv: string[], opts: RunOptions = {}): Promise<RunResult> {
    const line = commandLine(argv, opts.env);
    const attempts = opts.idempotent ? (this.opts.maxAttempts ?? 3) : 1;
    let lastErr: unknown;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      const client = await this.connect();
      await this.acquire();
      try {
        return await this.execOnce(client, line, opts);
      } catch (err) {
        if (!(err instanceof ConnectionDropped)) throw err;
        lastErr = err;
      } finally {
        this.release();
      }
    }
    throw new SshConnectionError(`${this.describe()}: connection dropped while running: ${line}`, {
      context: { command: line, mayHaveRun: true, attempts },
      cause: lastErr,
    });
  }

  /** Kill a remote process group by its leader pid (best effort, on a fresh channel). */
  private async killRemoteGroup(pid: number, sig: 'TERM' | 'KILL'): Promise<void> {
    const c = this.client;
    if (!c) return;
    await new Promise<void>((resolve) => {
      c.exec(shellJoin(['kill', `-${sig}`, '--', `-${pid}`]), (err, stream) => {
        if (err) return resolve();
        stream.on('close', () => resolve()).resume();
        stream.stderr.resume();
      });
    });
  }

  private execOnce(client: Client, line: string, opts: RunOptions): Promise<RunResult> {
    const started = Date.now();
    return new Promise<RunResult>((resolve, reject) => {
      if (opts.signal?.aborted) return reject(new CommandAbortedError(`aborted before start: ${line}`));
      let stdout = '';
      let stderr = '';
      let pending = '';
      let pid: number | undefined;
      let code: number | null = null;
      let signal: string | null = null;
      let killedFor: 'timeout' | 'abort' | undefined;
      let settled = false;
      let channel: ClientChannel | undefined;
      const finish = (fn: () => void): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        opts.signal?.removeEventListener('abort', onAbort);
        this.inflight.delete(onDrop);
        fn();
      };
      const onDrop = (err: Error): void => finish(() => reject(err));
      this.inflight.add(onDrop);
      const stop = (why: 'timeout' | 'abort'): void => {
        if (killedFor) return;
        killedFor = why;
        if (pid) {
          void this.killRemoteGroup(pid, 'TERM');
          setTimeout(() => void this.killRemoteGroup(pid!, 'KILL').finally(() => channel?.close()), KILL_GRACE_MS).unref();
        } else channel?.close();
      };
      const timer = opts.timeoutMs ? setTimeout(() => stop('timeout'), opts.timeoutMs) : undefined;
      const onAbort = (): void => stop('abort');
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      const wrapped = `printf '${PID_MARK}%s\\n' "$$" >&2; exec ${line}`;
      client.exec(wrapped, (err, stream) => {
        if (err) {
          // channel refused (e.g. connection going away): a drop as far as retry is concerned
          return finish(() => reject(new ConnectionDropped(err.message)));
        }
        channel = stream;
        stream.setEncoding('utf8');
        stream.stderr.setEncoding('utf8');
        stream.on('data', (d: string) => {
          stdout += d;
          opts.onStdout?.(d);
        });
        stream.stderr.on('data', (d: string) => {
          if (pid === undefined) {
            pending += d;
            const nl = pending.indexOf('\n');
            if (nl < 0) return;
            const first = pending.slice(0, nl);
            d = pending.slice(nl + 1);
            pending = '';
            pid = first.startsWith(PID_MARK) ? Number(first.slice(PID_MARK.length)) : 0;
            if (!pid) d = `${first}\n${d}`;
            if (killedFor) stop(killedFor);
            if (!d) return;
          }
          stderr += d;
          opts.onStderr?.(d);
        });
        stream.on('exit', (c: number | null, s?: string) => {
          code = c ?? null;
          signal = s ?? null;
        });
        stream.on('close', () => {
          const durationMs = Date.now() - started;
          if (pending) stderr += pending;
          const context = { logTail: tail(stderr || stdout), command: line, durationMs, host: this.opts.host };
          if (killedFor === 'timeout') return finish(() => reject(new CommandTimeoutError(`timed out after ${opts.timeoutMs} ms: ${line}`, { context })));
          if (killedFor === 'abort') return finish(() => reject(new CommandAbortedError(`aborted: ${line}`, { context })));
          if (code === null && signal === null && !this.client) return finish(() => reject(new ConnectionDropped('connection dropped')));
          finish(() => resolve({ code, signal, stdout, stderr, durationMs }));
        });
        if (opts.stdin) stream.end(opts.stdin);
        else stream.end();
      });
    });
  }
}

export type ExecutorProfile =
  | { kind: 'local' }
  | ({ kind: 'ssh' } & SshExecutorOptions);

/** Data-driven factory: a plain options object → an Executor. */
export function executorFor(profile: ExecutorProfile): Executor {
  if (profile.kind === 'local') return new LocalExecutor();
  const { kind: _kind, ...ssh } = profile;
  return new SshExecutor(ssh);
}

/** The login host of a cluster profile (same shape as the config's `loginHost`). */
export type LoginHostProfile =
  | { local: true }
  | { host: string; port?: number; user: string; keyPath?: string; hostKey?: string; knownHostsPath?: string };

/**
 * Executor for a cluster profile: `{ loginHost: { local: true } }` → LocalExecutor, otherwise
 * SSH with the pinned key (a public key line, or the path of a .pub file holding one) or
 * known_hosts; key file auth, else ssh-agent (SSH_AUTH_SOCK).
 */
export function executorForProfile(profile: { loginHost: LoginHostProfile }, extra: Partial<SshExecutorOptions> = {}): Executor {
  const h = profile.loginHost;
  if ('local' in h) return new LocalExecutor();
  const hostKey = h.hostKey && !/^(ssh-|ecdsa-|sk-)\S+\s+\S+/.test(h.hostKey.trim()) ? readFileSync(h.hostKey, 'utf8') : h.hostKey;
  return new SshExecutor({
    host: h.host,
    port: h.port ?? 22,
    username: h.user,
    privateKeyPath: h.keyPath,
    agent: h.keyPath ? undefined : process.env.SSH_AUTH_SOCK,
    hostKey,
    knownHostsPath: h.knownHostsPath,
    ...extra,
  });
}
