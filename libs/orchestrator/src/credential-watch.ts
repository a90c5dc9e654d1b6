/**
 * Credential rotation for a worker's Temporal connection. The API key (TEMPORAL_API_KEY or the TOML
 * profile's `api_key`) and the TLS files (CA, client certificate and key) are read when the worker
 * connects; a site's secret manager replaces them while the worker runs (short-lived certificates,
 * an expiring key). {@link watchCredentials} re-reads them on a timer: a new API key is handed to the
 * live connection (`NativeConnection.setApiKey`), new TLS files (which a live connection cannot take)
 * stop the worker gracefully so its supervisor starts it again with them; running activities end as
 * retryable `WorkerShutdown` and resume on the next worker. The SSH key and known hosts of a login
 * host are read at each (re)connect (libs/slurm/src/ssh.ts), secrets files at each server launch.
 */
import { createHash } from 'node:crypto';
import { temporalTarget, type TemporalTarget } from './connection';
import { loadTlsConfig } from './temporal-tls';

/** How often a worker re-reads its Temporal credentials, ms. */
export const CREDENTIAL_CHECK_MS = 60_000;

export interface Credentials {
  apiKey: string | undefined;
  /** digest of the TLS files' contents (undefined: no TLS files) */
  tls: string | undefined;
}

/** The credentials a target names, read now (throws when a file cannot be read or is not PEM). */
export function readCredentials(target: TemporalTarget): Credentials {
  const tls = target.tlsFiles ? loadTlsConfig(target.tlsFiles) : undefined;
  const digest = tls
    ? createHash('sha256')
        .update(
          JSON.stringify(
            [tls.serverRootCACertificate, tls.clientCertPair?.crt, tls.clientCertPair?.key].map(
              (b) => b?.toString('base64') ?? null,
            ),
          ),
        )
        .digest('hex')
    : undefined;
  return { apiKey: target.apiKey, tls: digest };
}

export interface CredentialWatchHooks {
  /** the API key changed: give it to the connection */
  onApiKey(apiKey: string): void | Promise<void>;
  /** the TLS files changed: the connection must be made again (the worker restarts) */
  onTlsChanged(): void;
  /** a read failed (a file mid-rotation, a profile being rewritten): tried again at the next check */
  onError(err: unknown): void;
}

/**
 * Re-read the credentials of the environment `env` every `everyMs` and report changes against
 * `initial` (what the connection was made with). Returns a stop function.
 */
export function watchCredentials(
  initial: Credentials,
  hooks: CredentialWatchHooks,
  opts: { everyMs?: number; env?: NodeJS.ProcessEnv } = {},
): () => void {
  let current = initial;
  let busy = false;
  const check = async (): Promise<void> => {
    if (busy) return;
    busy = true;
    try {
      const next = readCredentials(temporalTarget(opts.env ?? process.env));
      if (next.tls !== current.tls) {
        current = next;
        hooks.onTlsChanged();
        return;
      }
      if (next.apiKey !== current.apiKey && next.apiKey !== undefined) await hooks.onApiKey(next.apiKey);
      current = next;
    } catch (err) {
      hooks.onError(err);
    } finally {
      busy = false;
    }
  };
  const timer = setInterval(() => void check(), opts.everyMs ?? CREDENTIAL_CHECK_MS);
  timer.unref();
  return () => clearInterval(timer);
}
