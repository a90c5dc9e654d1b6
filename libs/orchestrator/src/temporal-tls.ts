import { readFileSync } from 'node:fs';
import { loadClientConfigProfile, type ClientConfigTLS, type ConfigDataSource } from '@temporalio/envconfig';
import { InfersweepError } from '@infersweep/core';

/**
 * TLS to a deployed Temporal frontend, as Temporal's own clients configure it: the TEMPORAL_TLS_*
 * variables or a TOML profile, read by @temporalio/envconfig; a private CA, a client certificate for
 * mutual TLS and a server-name override. With none of them set, TLS (when on) trusts the system's CAs.
 * scripts/stack-production.sh writes them for its throwaway CA (docs/deploy.md). This file adds
 * what envconfig leaves out: a half-configured client certificate and a file that is not PEM are
 * refused with the variable named, before a connection fails on them.
 */
export interface TemporalTlsFiles {
  /** TEMPORAL_TLS_SERVER_CA_CERT_PATH: PEM of the CA that signed the frontend's certificate */
  serverCaCertPath?: string;
  /** TEMPORAL_TLS_CLIENT_CERT_PATH / TEMPORAL_TLS_CLIENT_KEY_PATH: the client certificate (mTLS) */
  clientCertPath?: string;
  clientKeyPath?: string;
  /** TEMPORAL_TLS_SERVER_NAME: the name the frontend's certificate is checked against */
  serverName?: string;
}

/** The TLS options @temporalio/client's Connection and @temporalio/worker's NativeConnection take. */
export interface TemporalTlsConfig {
  serverRootCACertificate?: Buffer;
  clientCertPair?: { crt: Buffer; key: Buffer };
  serverNameOverride?: string;
}

/** A TLS variable that cannot work as set: names the variable, its value and the fix (not retryable). */
export class TemporalTlsConfigError extends InfersweepError {
  constructor(
    readonly field: string,
    readonly value: string,
    message: string,
  ) {
    super(message, { kind: 'fatal', context: { step: 'connect', field, value } });
  }
}

const nonEmpty = (v: string | undefined): string | undefined => (v && v.trim() !== '' ? v : undefined);

/** The environment as @temporalio/envconfig takes it: unset variables left out. */
export function definedEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined));
}

/** Read (not load) the TLS settings of the environment alone (no profile file). */
export function tlsFilesFromEnv(env: NodeJS.ProcessEnv): TemporalTlsFiles | undefined {
  return tlsFilesOf(loadClientConfigProfile({ overrideEnvVars: definedEnv(env), disableFile: true }).tls);
}

/** A file setting: its path, blank counting as unset. Inline PEM (`…_DATA`) is refused: name a file. */
function pathOf(variable: string, source: ConfigDataSource | undefined): string | undefined {
  if (source !== undefined && !('path' in source))
    throw new TemporalTlsConfigError(
      variable.replace(/_PATH$/, '_DATA'),
      '(inline PEM)',
      `${variable.replace(/_PATH$/, '_DATA')} (or its *_data profile key) is not supported: write the PEM to a file and set ${variable}`,
    );
  return nonEmpty(source?.path);
}

/** The TLS files of envconfig's TLS settings (environment over profile); a half-configured client certificate is an error. */
export function tlsFilesOf(tls: ClientConfigTLS | undefined): TemporalTlsFiles | undefined {
  const files: TemporalTlsFiles = {
    serverCaCertPath: pathOf('TEMPORAL_TLS_SERVER_CA_CERT_PATH', tls?.serverCACert),
    clientCertPath: pathOf('TEMPORAL_TLS_CLIENT_CERT_PATH', tls?.clientCert),
    clientKeyPath: pathOf('TEMPORAL_TLS_CLIENT_KEY_PATH', tls?.clientKey),
    serverName: nonEmpty(tls?.serverName),
  };
  if (files.clientCertPath && !files.clientKeyPath)
    throw new TemporalTlsConfigError(
      'TEMPORAL_TLS_CLIENT_KEY_PATH',
      '',
      `TEMPORAL_TLS_CLIENT_CERT_PATH=${files.clientCertPath} is set but TEMPORAL_TLS_CLIENT_KEY_PATH is not: set it to the client certificate's private key (PEM)`,
    );
  if (files.clientKeyPath && !files.clientCertPath)
    throw new TemporalTlsConfigError(
      'TEMPORAL_TLS_CLIENT_CERT_PATH',
      '',
      `TEMPORAL_TLS_CLIENT_KEY_PATH=${files.clientKeyPath} is set but TEMPORAL_TLS_CLIENT_CERT_PATH is not: set it to the client certificate (PEM) that goes with the key`,
    );
  return Object.values(files).some((v) => v !== undefined) ? files : undefined;
}

function readPem(field: string, path: string, what: string): Buffer {
  let data: Buffer;
  try {
    data = readFileSync(path);
  } catch (err) {
    throw new TemporalTlsConfigError(
      field,
      path,
      `${field}=${path}: cannot read the ${what} (${(err as Error).message}); point it at a readable PEM file`,
    );
  }
  if (!data.toString('utf8').includes('-----BEGIN '))
    throw new TemporalTlsConfigError(
      field,
      path,
      `${field}=${path}: not a PEM file (no "-----BEGIN" line); point it at the ${what} in PEM form`,
    );
  return data;
}

/** Load the files into the SDK's TLS options (an empty object: system CAs, no client certificate). */
export function loadTlsConfig(files: TemporalTlsFiles | undefined): TemporalTlsConfig {
  if (!files) return {};
  return {
    ...(files.serverCaCertPath
      ? {
          serverRootCACertificate: readPem(
            'TEMPORAL_TLS_SERVER_CA_CERT_PATH',
            files.serverCaCertPath,
            'server CA certificate',
          ),
        }
      : {}),
    ...(files.clientCertPath && files.clientKeyPath
      ? {
          clientCertPair: {
            crt: readPem('TEMPORAL_TLS_CLIENT_CERT_PATH', files.clientCertPath, 'client certificate'),
            key: readPem('TEMPORAL_TLS_CLIENT_KEY_PATH', files.clientKeyPath, 'client key'),
          },
        }
      : {}),
    ...(files.serverName ? { serverNameOverride: files.serverName } : {}),
  };
}
