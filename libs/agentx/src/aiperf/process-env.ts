/**
 * The environment aiperf runs with in the worker's host: what a Python client needs from the worker's own
 * environment (paths, locale, proxies and CA bundles, Hugging Face cache and offline switches, aiperf's
 * own settings), then the run's variables. Everything else of the worker's environment stays out, above
 * all its credentials (TEMPORAL_API_KEY, the secrets it resolves for engines, cloud keys): aiperf is a
 * benchmark client, it needs none of them, and its logs and artifacts are written where others read.
 */
const KEPT_NAMES = new Set([
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'LANG',
  'LANGUAGE',
  'TZ',
  'TMPDIR',
  'TERM',
  'VIRTUAL_ENV',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'REQUESTS_CA_BUNDLE',
  'CURL_CA_BUNDLE',
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'NO_PROXY',
  'http_proxy',
  'https_proxy',
  'no_proxy',
  'HF_HOME',
  'HF_HUB_CACHE',
  'HF_HUB_OFFLINE',
  'HF_DATASETS_OFFLINE',
  'TRANSFORMERS_OFFLINE',
  'TRANSFORMERS_CACHE',
  'TOKENIZERS_PARALLELISM',
]);
/** Name prefixes kept: locale categories, XDG folders, aiperf's own settings. */
const KEPT_PREFIXES = ['LC_', 'XDG_', 'AIPERF_'];

/** `worker` filtered to what aiperf may see, then `run` (the run's own variables win). */
export function aiperfProcessEnv(
  worker: Readonly<Record<string, string | undefined>>,
  run: Readonly<Record<string, string>>,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(worker)) {
    if (value === undefined) continue;
    if (KEPT_NAMES.has(name) || KEPT_PREFIXES.some((p) => name.startsWith(p))) env[name] = value;
  }
  return { ...env, ...run };
}
