// The worker app's public surface: the CLI embeds a worker (the embedded default) and starts sweeps.
export * from './worker';
export * from './temporal-env';
export * from './client';
export type * from './activities/types';
