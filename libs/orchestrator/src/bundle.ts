import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BundleOptions } from '@temporalio/worker';

/** Where the workflow code lives (the bundler's entry). */
export const workflowsPath = fileURLToPath(new URL('./workflows/index.ts', import.meta.url));

/**
 * The workspace's package aliases (`@infersweep/<lib>` → its `src/index.ts`), read from the one list
 * in tsconfig.base.json `paths`; vitest.config.ts and the workflow bundle both use it. A wildcard
 * entry (`@infersweep/testkit/*` → `libs/testkit/src/*`) becomes a prefix alias of its folder.
 */
export function workspaceAliases(root = fileURLToPath(new URL('../../../', import.meta.url))): Record<string, string> {
  const base = JSON.parse(readFileSync(join(root, 'tsconfig.base.json'), 'utf8')) as {
    compilerOptions: { paths: Record<string, string[]> };
  };
  return Object.fromEntries(
    Object.entries(base.compilerOptions.paths).map(([name, [path]]) => [
      name.replace(/\/\*$/, ''),
      join(root, path!.replace(/\/\*$/, '')),
    ]),
  );
}

/**
 * The one webpack hook used by the worker, the bundle script and the tests: workflow code imports
 * the pure libs by their aliases, which webpack does not read from tsconfig.
 */
export function webpackConfigHook(config: Parameters<NonNullable<BundleOptions['webpackConfigHook']>>[0]) {
  config.resolve = config.resolve ?? {};
  config.resolve.alias = {
    ...(config.resolve.alias as Record<string, string> | undefined),
    ...workspaceAliases(),
  };
  return config;
}

export const bundlerOptions = { webpackConfigHook } satisfies Pick<BundleOptions, 'webpackConfigHook'>;
