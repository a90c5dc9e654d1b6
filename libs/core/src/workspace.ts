/**
 * Where this checkout is, and the values scripts/stack.sh writes for the running local stack.
 * Pure: computes paths and parses text; callers read the file.
 */

/**
 * The repository root, with a trailing `/` (this file is libs/core/src/workspace.ts). Plain string
 * work on import.meta.url: the `new URL(rel, import.meta.url)` form would make webpack (the
 * workflow bundle imports this lib) emit an asset chunk.
 */
export const repoRoot: string = decodeURIComponent(import.meta.url.replace(/^file:\/\//, '')).replace(
  /libs\/core\/src\/workspace\.[jt]s$/,
  '',
);

/** The sweep config and cluster profile a command uses without `--config` / `--cluster` (paths relative to the repository root). */
export const DEFAULT_CONFIG = 'configs/kimik3-fp4-h200.yaml';
export const DEFAULT_CLUSTER = 'local';

/** infersweep's state folder: $INFERSWEEP_DATA, default `<repo>/.infersweep`. */
export function dataDirOf(env: Record<string, string | undefined>): string {
  return env.INFERSWEEP_DATA ?? `${repoRoot}.infersweep`;
}

/** The file scripts/stack.sh writes (`KEY=value` lines). */
export function stackEnvFile(dataDir: string): string {
  return `${dataDir.replace(/\/+$/, '')}/stack/env`;
}

/** Parse `KEY=value` lines (an optional leading `export ` is dropped; other lines are ignored). */
export function parseStackEnv(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const i = line.indexOf('=');
    if (i > 0) out[line.slice(0, i).replace(/^export\s+/, '')] = line.slice(i + 1);
  }
  return out;
}
