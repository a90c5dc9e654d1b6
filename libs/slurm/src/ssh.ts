import { readFileSync } from 'node:fs';
import { Client, type ClientChannel, type ConnectConfig } from 'ssh2';
import { tail } from '@infersweep/core';
import {
  commandLine,
  KILL_GRACE_MS,
  LocalExecutor,
  shownCommand,
  type Executor,
  type RunOptions,
  type RunResult,
} from './executor';
import { LOGIN_ENV } from './commands';
import { CommandAbortedError, CommandTimeoutError, SshConnectionError, SshHostKeyError } from './errors';
import {
  knownHostsName,
  knownKeysFor,
  parsePublicKeyLine,
  untrustedHint,
  verifyHostKey,
  type HostKeyVerdict,
  type KnownHostKeys,
} from './hostkeys';
import { PID_MARK, PidMarkReader } from './pid-mark';
import { assertSecretEnv, shellJoin } from './quote';

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
  /**
   * Channels open at once on the connection (default 8: under OpenSSH's default MaxSessions of 10,
   * with room for the kill channel of a timed-out command). A refused channel open lowers the
   * limit to what the server accepted and is retried after a back-off.
   */
  maxChannels?: number;
  /** How long a command may keep being refused a channel before it fails (default 60 s). */
  channelRefusedTimeoutMs?: number;
}

/** Default channel bound: OpenSSH's MaxSessions is 10 unless the site raised it. */
export const DEFAULT_MAX_CHANNELS = 8;

/**
 * Reads `count` lines `NAME=value` from stdin and exports them (the rest of stdin is left to the
 * command: sh's `read` takes one byte at a time from a pipe). Fixed text: values never appear in
 * it, only in the stream, so they reach the command's environment without touching an argv.
 */
export const SECRET_LOADER =
  'i=0; while [ "$i" -lt "$1" ]; do IFS= read -r kv || { echo "infersweep: secret $i of $1 missing on stdin" >&2; exit 125; }; ' +
  'case "${kv%%=*}" in ""|[!A-Za-z_]*|*[!A-Za-z0-9_]*) echo "infersweep: bad secret name" >&2; exit 125;; esac; ' +
  'export "$kv"; i=$((i+1)); done';

/**
 * The text handed to the login user's shell for one command. The login shell may be bash, csh,
 * tcsh, fish, …: it only ever sees `exec /bin/sh -c '<fixed text>' <base64>` (no newline, no
 * quote inside the quotes, nothing any of them expands), and /bin/sh decodes and runs the real
 * POSIX script: print its pid (the process group a timeout kills), export `secretCount` secrets
 * read from stdin, `exec` the command line.
 */
export function remoteShellCommand(line: string, secretCount = 0): string {
  if (!Number.isInteger(secretCount) || secretCount < 0)
    throw new TypeError(`secretCount must be a non-negative integer: ${secretCount}`);
  const script = [
    `printf '${PID_MARK}%s\\n' "$$" >&2`,
    ...(secretCount > 0 ? [`set -- ${secretCount}`, SECRET_LOADER] : []),
    `exec ${line}`,
  ].join('\n');
  const b64 = Buffer.from(script, 'utf8').toString('base64');
  return `exec /bin/sh -c 'eval "$(echo "$0" | base64 -d)"' ${b64}`;
}

class ConnectionDropped extends Error {}

/**
 * How a command whose channel closed ends: the error of the stop that killed it (timeout or abort),
 * a dropped connection when it has no exit status and the connection is gone, else its result.
 */
function closedOutcome(
  r: RunResult,
  how: {
    shown: string;
    killedFor: 'timeout' | 'abort' | undefined;
    timeoutMs: number | undefined;
    host: string;
    connected: boolean;
  },
): RunResult | Error {
  const context = { logTail: tail(r.stderr || r.stdout), command: how.shown, durationMs: r.durationMs, host: how.host };
  if (how.killedFor === 'timeout')
    return new CommandTimeoutError(`timed out after ${how.timeoutMs} ms: ${how.shown}`, { context });
  if (how.killedFor === 'abort') return new CommandAbortedError(`aborted: ${how.shown}`, { context });
  if (r.code === null && r.signal === null && !how.connected) return new ConnectionDropped('connection dropped');
  return r;
}
/** The connection closed before the channel was opened (ssh2's synchronous "Not connected"): the command never started. */
class NotConnected extends Error {}
/** The server refused to open a channel (MaxSessions reached): the command never started. */
class ChannelRefused extends Error {}

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
  private limit: number;
  private okSinceRefusal = 0;
  private readonly waiters: (() => void)[] = [];
  /** Channel opens the server refused (each one backed off and retried). */
  refusals = 0;
  /** Most channels this executor held open at once. */
  peakChannels = 0;
  private closed = false;
  /** How many times a connection was established (1 = never reconnected). */
  connects = 0;

  constructor(private readonly opts: SshExecutorOptions) {
    if (!opts.hostKey && !opts.knownHostsPath)
      throw new SshHostKeyError('SshExecutor needs hostKey or knownHostsPath: refusing to trust any host key');
    this.limit = Math.max(1, opts.maxChannels ?? DEFAULT_MAX_CHANNELS);
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

  private known(): Pick<KnownHostKeys, 'keys' | 'revoked'> & Partial<Pick<KnownHostKeys, 'untrusted'>> {
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
        reject(
          new SshHostKeyError(`${this.describe()}: cannot read the pinned host key: ${(err as Error).message}`, {
            context,
            cause: err,
          }),
        );
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
          const hint = verdict.why === 'unknown' ? untrustedHint(known, this.opts.host, this.opts.port ?? 22) : '';
          reject(
            new SshHostKeyError(`${this.describe()}: host key ${verdict.why}, refusing to connect${hint}`, {
              context: { ...context, why: verdict.why },
              cause: err,
            }),
          );
        } else {
          reject(new SshConnectionError(`${this.describe()}: ${err.message}`, { context, cause: err }));
        }
      });
      c.on('close', () => {
        if (this.client === c) this.client = undefined;
        if (!ready)
          reject(new SshConnectionError(`${this.describe()}: connection closed during handshake`, { context }));
        for (const fail of [...this.inflight]) fail(new ConnectionDropped('connection dropped'));
      });
      c.connect(cfg);
    }).finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  private async acquire(): Promise<void> {
    while (this.active >= this.limit) await new Promise<void>((r) => this.waiters.push(r));
    this.active += 1;
    this.peakChannels = Math.max(this.peakChannels, this.active);
  }

  private release(): void {
    this.active -= 1;
    if (this.active < this.limit) this.waiters.shift()?.();
  }

  /** The server refused a channel while `active` were open: it accepts fewer; grow back slowly after successes. */
  private refused(): void {
    this.refusals += 1;
    this.okSinceRefusal = 0;
    this.limit = Math.max(1, Math.min(this.limit, this.active - 1));
  }

  private succeeded(): void {
    const max = Math.max(1, this.opts.maxChannels ?? DEFAULT_MAX_CHANNELS);
    if (this.limit < max && ++this.okSinceRefusal >= 50) {
      this.okSinceRefusal = 0;
      this.limit += 1;
      this.waiters.shift()?.();
    }
  }

  async run(argv: string[], opts: RunOptions = {}): Promise<RunResult> {
    const line = commandLine(argv, opts.env);
    if (opts.secretEnv) assertSecretEnv(opts.secretEnv);
    const attempts = opts.idempotent ? (this.opts.maxAttempts ?? 3) : 1;
    const refusedDeadline = Date.now() + (this.opts.channelRefusedTimeoutMs ?? 60_000);
    let lastErr: unknown;
    for (let attempt = 1, refusals = 0; attempt <= attempts;) {
      // a channel first, then the connection: a wait for a channel can outlast the connection it began on
      await this.acquire();
      let backoff = 0;
      try {
        const client = await this.connect();
        const r = await this.execOnce(client, line, opts);
        this.succeeded();
        return r;
      } catch (err) {
        if (err instanceof NotConnected && Date.now() < refusedDeadline) {
          // never started (the connection went away under us): reconnect and run it, for any command
          backoff = Math.min(2_000, 50 * 2 ** refusals++);
          lastErr = err;
          continue;
        }
        if (err instanceof ChannelRefused && Date.now() < refusedDeadline) {
          // never started: safe to retry for any command, and it does not use up an attempt
          this.refused();
          backoff = Math.min(2_000, 50 * 2 ** refusals++);
          lastErr = err;
          continue;
        }
        if (!(err instanceof ConnectionDropped)) throw err;
        lastErr = err;
        attempt += 1;
      } finally {
        this.release();
        if (backoff) await new Promise((r) => setTimeout(r, backoff));
      }
    }
    throw new SshConnectionError(`${this.describe()}: connection dropped while running: ${shownCommand(line)}`, {
      context: { command: shownCommand(line), mayHaveRun: true, attempts },
      cause: lastErr,
    });
  }

  /** Kill a remote process group by its leader pid (best effort, on a fresh channel). */
  private async killRemoteGroup(pid: number, sig: 'TERM' | 'KILL'): Promise<void> {
    const c = this.client;
    if (!c) return;
    await new Promise<void>((resolve) => {
      c.exec(remoteShellCommand(shellJoin(['kill', `-${sig}`, '--', `-${pid}`])), (err, stream) => {
        if (err) return resolve();
        stream.on('close', () => resolve()).resume();
        stream.stderr.resume();
      });
    });
  }

  /** TERM the remote group, KILL it after the grace and close the channel; without a pid, close the channel. */
  private stopRemote(pid: number | undefined, channel: ClientChannel | undefined): void {
    if (!pid) {
      channel?.close();
      return;
    }
    void this.killRemoteGroup(pid, 'TERM');
    setTimeout(() => void this.killRemoteGroup(pid, 'KILL').finally(() => channel?.close()), KILL_GRACE_MS).unref();
  }

  /** A channel that did not open: refused by a live connection (MaxSessions: back off and retry), else the connection is going away. */
  private openFailure(client: Client, err: Error): Error {
    const live = this.client === client && /open failure|open failed|prohibited/i.test(err.message);
    return live ? new ChannelRefused(err.message) : new ConnectionDropped(err.message);
  }

  private execOnce(client: Client, line: string, opts: RunOptions): Promise<RunResult> {
    const started = Date.now();
    const shown = shownCommand(line);
    return new Promise<RunResult>((resolve, reject) => {
      if (opts.signal?.aborted) return reject(new CommandAbortedError(`aborted before start: ${shown}`));
      let stdout = '';
      let stderr = '';
      const marks = new PidMarkReader();
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
        this.stopRemote(marks.pid, channel);
      };
      const timer = opts.timeoutMs ? setTimeout(() => stop('timeout'), opts.timeoutMs) : undefined;
      const onAbort = (): void => stop('abort');
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      const secrets = Object.entries(opts.secretEnv ?? {});
      const wrapped = remoteShellCommand(line, secrets.length);
      const stdin = secrets.map(([k, v]) => `${k}=${v}\n`).join('') + (opts.stdin ?? '');
      const opened = (err: Error | undefined, stream: ClientChannel): void => {
        if (err) return finish(() => reject(this.openFailure(client, err)));
        channel = stream;
        stream.setEncoding('utf8');
        stream.stderr.setEncoding('utf8');
        stream.on('data', (d: string) => {
          if (opts.collectStdout !== false) stdout += d;
          opts.onStdout?.(d);
        });
        stream.stderr.on('data', (d: string) => {
          const awaited = marks.pid === undefined;
          d = marks.feed(d);
          // a stop asked for before the pid was known kills the group now
          if (awaited && marks.pid !== undefined && killedFor) stop(killedFor);
          if (!d) return;
          stderr += d;
          opts.onStderr?.(d);
        });
        stream.on('exit', (c: number | null, s?: string) => {
          code = c ?? null;
          signal = s ?? null;
        });
        stream.on('close', () => {
          stderr += marks.flush();
          const ended = { code, signal, stdout, stderr, durationMs: Date.now() - started };
          const r = closedOutcome(ended, {
            shown,
            killedFor,
            timeoutMs: opts.timeoutMs,
            host: this.opts.host,
            connected: !!this.client,
          });
          finish(() => (r instanceof Error ? reject(r) : resolve(r)));
        });
        stream.end(stdin || undefined);
      };
      try {
        client.exec(wrapped, opened);
      } catch (err) {
        // ssh2 throws "Not connected" synchronously when the connection closed since it was handed out
        if (this.client === client) this.client = undefined;
        finish(() => reject(new NotConnected((err as Error).message)));
      }
    });
  }
}

export type ExecutorProfile = { kind: 'local' } | ({ kind: 'ssh' } & SshExecutorOptions);

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
export function executorForProfile(
  profile: { loginHost: LoginHostProfile },
  extra: Partial<SshExecutorOptions> = {},
): Executor {
  const h = profile.loginHost;
  if ('local' in h) return new LocalExecutor('/bin/sh', LOGIN_ENV);
  const hostKey =
    h.hostKey && !/^(ssh-|ecdsa-|sk-)\S+\s+\S+/.test(h.hostKey.trim()) ? readFileSync(h.hostKey, 'utf8') : h.hostKey;
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
