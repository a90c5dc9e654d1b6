/**
 * @infersweep/slurm (I/O): executors (local, SSH to the login node) with the one quoting helper
 * (shellQuote/shellJoin) for everything that reaches a shell, Slurm operations (salloc, srun steps,
 * squeue/sacct liveness, scancel) and the image import under a lock. See libs/slurm/README.md.
 */
export * from './quote';
export * from './errors';
export * from './executor';
export * from './ssh';
export * from './hostkeys';
export * from './commands';
export * from './parse';
export * from './liveness';
export * from './cluster';
export { SlurmQueries, jobTimeLeft, sleep, type JobInfo, type SlurmClusterOptions } from './queries';
export * from './allocation';
export * from './steps';
export * from './logs';
export * from './liveness-watch';
export * from './image';
export * from './files';
export * from './secrets';
