/**
 * The config-file adapter: reads a sweep config from disk, expands `${VAR}` placeholders from the
 * environment and hands the text to the pure parser in libs/topology.
 */
import { existsSync, readFileSync } from 'node:fs';
import { isAbsolute, relative, resolve } from 'node:path';
import { ConfigError, parseSweepConfig, type LoadedConfig } from '@infersweep/topology';
import { DEFAULT_CONFIG, dataDirOf, parseStackEnv, repoRoot, stackEnvFile } from '@infersweep/core';

/**
 * Cluster profiles the default config does not hold, and the config that does: with the default
 * `--config`, `--cluster local-vllm` plans configs/tiny-moe-local-vllm.yaml (the bash runner's shapes at one
 * "GPU" per node on the real vLLM CPU engine; K3's 8-GPU shapes do not fit 1-core nodes).
 */
export const CLUSTER_CONFIGS: Readonly<Record<string, string>> = { 'local-vllm': 'configs/tiny-moe-local-vllm.yaml' };

/** The config file for a `--config` value (default or given) and the cluster(s) asked for. */
export function configFileFor(config: string | undefined, clusters: readonly string[] = []): string {
  const given = config ?? DEFAULT_CONFIG;
  if (given !== DEFAULT_CONFIG) return given;
  const mapped = clusters.map((c) => CLUSTER_CONFIGS[c]).find((f) => f !== undefined);
  return mapped ?? given;
}

/**
 * Environment for placeholders: process.env over the running local stack's `.infersweep/stack/env`
 * (written by scripts/stack.sh), so `${INFERSWEEP_STACK}` works without sourcing env.sh first.
 */
export function configEnv(env: NodeJS.ProcessEnv = process.env): Record<string, string | undefined> {
  const file = stackEnvFile(dataDirOf(env));
  const fromStack = existsSync(file) ? parseStackEnv(readFileSync(file, 'utf8')) : {};
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

/** A parsed config and the file text it was parsed from (what the config hash is taken of). */
export interface ConfigFile extends LoadedConfig {
  text: string;
}

/**
 * A config file's text (`given` as resolveConfigPath finds it) and its name for messages (relative to
 * the current folder when inside it); an unreadable file is a ConfigError naming it.
 */
export function readConfigText(given: string, what = 'config file'): { text: string; shown: string } {
  const path = resolveConfigPath(given);
  const shown = relative(process.cwd(), path).startsWith('..') ? path : relative(process.cwd(), path) || given;
  try {
    return { text: readFileSync(path, 'utf8'), shown };
  } catch (e) {
    throw new ConfigError(shown, [
      { path: '', value: JSON.stringify(given), message: `cannot read the ${what}: ${(e as Error).message}` },
    ]);
  }
}

export function loadSweepConfig(opts: LoadOptions = {}): ConfigFile {
  const { text, shown } = readConfigText(configFileFor(opts.config, opts.clusters));
  return {
    ...parseSweepConfig(text, {
      file: shown,
      env: configEnv(opts.env),
      ...(opts.clusters ? { clusters: opts.clusters } : {}),
    }),
    text,
  };
}
