/**
 * The config-file adapter: reads a sweep config from disk, expands `${VAR}` placeholders from the
 * environment and hands the text to the pure parser in libs/topology.
 */
import { existsSync, readFileSync } from 'node:fs';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError, parseSweepConfig, type LoadedConfig } from '@infersweep/topology';

export const repoRoot = fileURLToPath(new URL('../../..', import.meta.url));
export const DEFAULT_CONFIG = 'configs/kimik3-fp4-h200.yaml';
export const DEFAULT_CLUSTER = 'local';

/**
 * Environment for placeholders: process.env over the running local stack's `.infersweep/stack/env`
 * (written by scripts/stack.sh), so `${INFERSWEEP_STACK}` works without sourcing env.sh first.
 */
export function configEnv(env: NodeJS.ProcessEnv = process.env): Record<string, string | undefined> {
  const stackEnvFile = join(env.INFERSWEEP_DATA ?? join(repoRoot, '.infersweep'), 'stack', 'env');
  const fromStack: Record<string, string> = {};
  if (existsSync(stackEnvFile)) {
    for (const line of readFileSync(stackEnvFile, 'utf8').split('\n')) {
      const i = line.indexOf('=');
      if (i > 0) fromStack[line.slice(0, i).replace(/^export\s+/, '')] = line.slice(i + 1);
    }
  }
  return { ...fromStack, ...env };
}

/** Resolve a config path: as given (relative to cwd), else relative to the repo root. */
export function resolveConfigPath(path: string, cwd = process.cwd()): string {
  if (isAbsolute(path)) return path;
  const fromCwd = resolve(cwd, path);
  return existsSync(fromCwd) ? fromCwd : resolve(repoRoot, path);
}

export interface LoadOptions {
  config?: string;
  /** Only these clusters' placeholders are expanded. */
  clusters?: string[];
  env?: NodeJS.ProcessEnv;
}

export function loadSweepConfig(opts: LoadOptions = {}): LoadedConfig {
  const given = opts.config ?? DEFAULT_CONFIG;
  const path = resolveConfigPath(given);
  const shown = relative(process.cwd(), path).startsWith('..') ? path : relative(process.cwd(), path) || given;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new ConfigError(shown, [{ path: '', value: JSON.stringify(given), message: `cannot read the config file: ${(e as Error).message}` }]);
  }
  return parseSweepConfig(text, { file: shown, env: configEnv(opts.env), ...(opts.clusters ? { clusters: opts.clusters } : {}) });
}
