/**
 * @infersweep/agentx (I/O): the AgentX agentic client, the drain gate, readiness and idle-rank checks,
 * the metrics and validity gates, the point record (pointResultSchema, pointSummary) and the aiperf
 * adapter. See libs/agentx/README.md.
 */
export * from './errors';
export * from './result';
export * from './request-records';
export * from './point';
export * from './traces';
export * from './trace/model';
export * from './trace/loader';
export * from './trace/generator';
export * from './trace/prompt';
export * from './metrics/stats';
export * from './metrics/aggregate';
export * from './metrics/validity';
export * from './server/prometheus';
export * from './server/families';
export * from './server/drain';
export * from './server/idle-ranks';
export * from './server/window';
export * from './server/spec-decode';
export * from './server/energy';
export * from './server/dcgm-sampler';
export * from './server/scrape';
export * from './server/wait-for-drain';
export * from './server/readiness';
export * from './server/readiness-all';
export * from './client/plan';
export * from './client/http';
export { BODY_LIMITS, BodyTooLargeError, readBodyCapped, readBodyPrefix } from './client/body';
export * from './aiperf/argv';
export * from './aiperf/parse';
export * from './aiperf/run';
export * from './aiperf/runner';
export * from './aiperf/process-env';
export * from './aiperf/server-metrics';
export {
  replay,
  ReplayRun,
  toRequestRecord,
  type RequestContext,
  type Progress,
  type Phase,
  type ReplayOptions,
  type ReplayResult,
} from './client/replay';
export { publishDir, readRecordFile, type StoredRecord } from './io';
export * from './export/inferencex';
export * from './client-kind';
