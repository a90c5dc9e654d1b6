/**
 * @infersweep/core: the pure bottom layer every other lib builds on. No I/O and no Node built-ins,
 * so workflow code may import it too. Errors (one `kind`), names, hashing, the results layout, the
 * Slurm-state → allocation-end mapping, and the stack-env parser. See libs/core/README.md.
 */
export * from './errors';
export * from './names';
export * from './hash';
export * from './layout';
export * from './allocation';
export * from './workspace';
export * from './search-bounds';
export * from './quote';
export * from './attempt-class';
