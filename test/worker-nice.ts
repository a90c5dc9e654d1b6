import { getPriority, setPriority } from 'node:os';

/**
 * The unit project's niceness, taken by each test worker itself (a setup file of the unit project in
 * vitest.config.ts). test/gate.ts runs vitest's main process at normal priority and names the workers' niceness in
 * INFERSWEEP_WORKER_NICE: the workers, and every process a test spawns, take the CPU the integration lanes leave,
 * while the main process, which transforms every module the workers import and answers their calls, keeps its
 * share. Niced whole (`nice -n 10 npx vitest`), the main process fell so far behind beside four lanes that a worker's
 * call waited 60 s and vitest failed the run with "Timeout calling onTaskUpdate", every test passed (CI of f168fd6).
 */
const nice = Number(process.env.INFERSWEEP_WORKER_NICE ?? 0);
if (Number.isInteger(nice) && nice > getPriority()) setPriority(nice);
