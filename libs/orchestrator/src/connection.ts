import { readFileSync } from 'node:fs';
import { dataDirOf, parseStackEnv, stackEnvFile } from '@infersweep/core';
import { loadTlsConfig, tlsFilesFromEnv, type TemporalTlsConfig, type TemporalTlsFiles } from './temporal-tls';

/**
 * Where Temporal is: TEMPORAL_ADDRESS (+ TEMPORAL_NAMESPACE, TEMPORAL_TLS, TEMPORAL_API_KEY, and
 * TEMPORAL_TLS_SERVER_CA_CERT_PATH, TEMPORAL_TLS_CLIENT_CERT_PATH/_KEY_PATH, TEMPORAL_TLS_SERVER_NAME
 * for a private CA and mutual TLS) for a deployed cluster; otherwise the embedded default, the
 * local dev server of scripts/stack.sh.
 */
export interface TemporalTarget {
  address: string;
  namespace: string;
  tls: boolean;
  apiKey?: string;
  /** private CA, client certificate (mTLS), server name; unset: the system's CAs */
  tlsFiles?: TemporalTlsFiles;
  /** base URL of the Web UI, for links */
  uiBase: string;
  /** true when this is the local dev server (the CLI may then start it and an in-process worker) */
  embedded: boolean;
}

export const dataDir = dataDirOf(process.env);

/** Values scripts/stack.sh wrote for the running local stack. */
export function readStackEnv(): Record<string, string> {
  try {
    return parseStackEnv(readFileSync(stackEnvFile(dataDir), 'utf8'));
  } catch {
    return {};
  }
}

export function temporalTarget(env: NodeJS.ProcessEnv = process.env): TemporalTarget {
  const namespace = env.TEMPORAL_NAMESPACE ?? 'default';
  if (env.TEMPORAL_ADDRESS) {
    const tlsFiles = tlsFilesFromEnv(env);
    return {
      address: env.TEMPORAL_ADDRESS,
      namespace,
      tls: env.TEMPORAL_TLS === 'true' || env.TEMPORAL_TLS === '1' || !!env.TEMPORAL_API_KEY || !!tlsFiles,
      apiKey: env.TEMPORAL_API_KEY,
      tlsFiles,
      uiBase: env.TEMPORAL_UI_URL ?? 'https://cloud.temporal.io',
      embedded: false,
    };
  }
  const stack = readStackEnv();
  return {
    address: stack.INFERSWEEP_TEMPORAL_ADDRESS ?? '127.0.0.1:7233',
    namespace,
    tls: false,
    uiBase: stack.INFERSWEEP_TEMPORAL_UI ?? 'http://127.0.0.1:8233',
    embedded: true,
  };
}

/** The `tls` option of Connection.connect / NativeConnection.connect for a target. */
export function connectionTls(t: TemporalTarget): TemporalTlsConfig | undefined {
  return t.tls ? loadTlsConfig(t.tlsFiles) : undefined;
}

export function workflowUiLink(t: TemporalTarget, workflowId: string, runId?: string): string {
  const base = `${t.uiBase.replace(/\/$/, '')}/namespaces/${encodeURIComponent(t.namespace)}/workflows/${encodeURIComponent(workflowId)}`;
  return runId ? `${base}/${encodeURIComponent(runId)}/history` : base;
}
