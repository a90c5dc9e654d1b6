/**
 * @infersweep/topology (pure): the sweep config schema (zod), the topology rules that turn an
 * orientation into one `vllm serve` command per node, the launch plan and its time limits.
 * "rule N" in this library's comments is rule N of docs/topology-rules.md. See libs/topology/README.md.
 */
export * from './config/agentx';
export * from './config/errors';
export * from './config/env';
export * from './config/schema';
export * from './config/search';
export * from './config/replicates';
export * from './config/disagg';
export * from './config/snapshot';
export * from './config/files';
export { parseSweepConfig, type LoadedConfig } from './config/parse';
export * from './topology/validate';
export * from './topology/commands';
export * as placeholders from './topology/placeholders';
export { cpuDifferences, cpuLaunch, removeFlag } from './topology/cpu';
export * from './topology/recipes';
export * from './topology/disagg';
export * from './plan/schema';
export * from './plan/timelimit';
export * from './plan/engine';
export * from './plan/capacity';
export { planSweep } from './plan/plan';
export { planContentHash } from './plan/assemble-plan';
export { bindPlan, derivePorts, PORT_RANGES, WORKER_PORT_STRIDE } from './plan/bind';
export { launchedExecutables } from './plan/launches';
