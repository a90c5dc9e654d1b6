import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Where Temporal is: TEMPORAL_ADDRESS (+ TEMPORAL_NAMESPACE, TEMPORAL_TLS, TEMPORAL_API_KEY) for a
 * deployed cluster; otherwise the embedded default, the local dev server of scripts/stack.sh.
 */
export interface TemporalTarget {
  address: string;
  namespace: string;
  tls: boolean;
  apiKey?: string;
  /** base URL of the Web UI, for links */
  uiBase: string;
  /** true when this is the local dev server (the CLI may then start it and an in-process worker) */
  embedded: boolean;
}

export const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
export const dataDir = process.env.INFERSWEEP_DATA ?? join(repoRoot, '.infersweep');

/** Values scripts/stack.sh wrote for the running local stack. */
export function readStackEnv(): Record<string, string> {
  try {
    const out: Record<string, string> = {};
    for (const line of readFileSync(join(dataDir, 'stack', 'env'), 'utf8').split('\n')) {
      const i = line.indexOf('=');
      if (i > 0) out[line.slice(0, i)] = line.slice(i + 1);
    }
    return out;
  } catch {
    return {};
  }
}

export function temporalTarget(env: NodeJS.ProcessEnv = process.env): TemporalTarget {
  const namespace = env.TEMPORAL_NAMESPACE ?? 'default';
  if (env.TEMPORAL_ADDRESS) {
    return {
      address: env.TEMPORAL_ADDRESS,
      namespace,
      tls: env.TEMPORAL_TLS === 'true' || env.TEMPORAL_TLS === '1' || !!env.TEMPORAL_API_KEY,
      apiKey: env.TEMPORAL_API_KEY,
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

export function workflowUiLink(t: TemporalTarget, workflowId: string, runId?: string): string {
  const base = `${t.uiBase.replace(/\/$/, '')}/namespaces/${encodeURIComponent(t.namespace)}/workflows/${encodeURIComponent(workflowId)}`;
  return runId ? `${base}/${encodeURIComponent(runId)}/history` : base;
}
