import { fileURLToPath } from 'node:url';
import type { BundleOptions } from '@temporalio/worker';

/** Where the workflow code lives (the bundler's entry). */
export const workflowsPath = fileURLToPath(new URL('./workflows/index.ts', import.meta.url));

const libSrc = (lib: string) => fileURLToPath(new URL(`../../${lib}/src/index.ts`, import.meta.url));

/**
 * The one webpack hook used by the worker, the bundle script and the tests: workflow code imports
 * the pure `@infersweep/sweep` and `@infersweep/core` libs by their aliases, which webpack does not
 * read from tsconfig.
 */
export function webpackConfigHook(config: Parameters<NonNullable<BundleOptions['webpackConfigHook']>>[0]) {
  config.resolve = config.resolve ?? {};
  config.resolve.alias = {
    ...(config.resolve.alias as Record<string, string> | undefined),
    '@infersweep/sweep': libSrc('sweep'),
    '@infersweep/core': libSrc('core'),
  };
  return config;
}

export const bundlerOptions = { webpackConfigHook } satisfies Pick<BundleOptions, 'webpackConfigHook'>;
