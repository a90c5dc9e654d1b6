import { readFileSync } from 'node:fs';
import { loadClientConfigProfile } from '@temporalio/envconfig';
import { dataDirOf, parseStackEnv, stackEnvFile } from '@infersweep/core';
import { definedEnv, loadTlsConfig, tlsFilesOf, type TemporalTlsConfig, type TemporalTlsFiles } from './temporal-tls';

/**
 * Where Temporal is: a deployed cluster when an address is configured the way Temporal's CLI and
 * SDKs read it (@temporalio/envconfig: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY,
 * TEMPORAL_TLS, TEMPORAL_TLS_SERVER_CA_CERT_PATH, TEMPORAL_TLS_CLIENT_CERT_PATH/_KEY_PATH,
 * TEMPORAL_TLS_SERVER_NAME, over a TOML profile chosen by TEMPORAL_CONFIG_FILE and
 * TEMPORAL_PROFILE); otherwise the embedded default, the local dev server of scripts/stack.sh.
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
  const profile = loadClientConfigProfile({ overrideEnvVars: definedEnv(env) });
  const namespace = profile.namespace ?? 'default';
  if (profile.address) {
    const tlsFiles = tlsFilesOf(profile.tls);
    const disabled = profile.tls?.disabled;
    return {
      address: profile.address,
      namespace,
      // as envconfig decides: TEMPORAL_TLS=true/1 turns TLS on, false/0 off; else an API key or a TLS file turns it on
      tls: disabled === undefined ? !!profile.apiKey || !!tlsFiles : !disabled,
      apiKey: profile.apiKey,
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
