/** The replay's types: its options, progress and result, and the state of one run's plays and lanes (replay.ts). */
import type { AgentxSettings } from '@infersweep/topology';
import type { RequestPhase, RequestRecord } from '../result';
import type { BlockCache } from '../trace/prompt';
import type { WekaLeafRequest, WekaTrace } from '../trace/model';
import type { TimeWeighted } from './plan';

export type Phase = 'warmup' | 'cache-pressure' | 'profiling' | 'draining' | 'done';
export interface Progress {
  phase: Phase;
  completed: number;
  inFlight: number;
  etaSeconds: number | null;
}

export interface ReplayOptions {
  traces: WekaTrace[];
  concurrency: number;
  endpoints: string[];
  model: string;
  settings: AgentxSettings;
  expectedEngines?: number[] | null;
  /** Headers sent with every request (a P/D router's prefillers). */
  requestHeaders?: Record<string, string>;
  onRecord?(r: RequestRecord): void;
  onProgress?(p: Progress): void;
  /** Called after warmup drained, before profiling starts (server snapshot, idle-rank check). May throw. */
  beforeProfile?(): Promise<void | { cancel: string }>;
  /** Called right after the profile window closes (server snapshot). */
  afterProfile?(): Promise<void>;
  signal?: AbortSignal;
}

export type Budget = (() => boolean) & { peek(): boolean };

export interface ReplayResult {
  runId: string;
  records: RequestRecord[];
  originWallMs: number;
  warmupStartMs: number;
  profileStartMs: number | null;
  profileEndMs: number | null;
  endMs: number;
  runCancelledReason: string | null;
  sessions: TimeWeighted;
  busyLanes: TimeWeighted;
  inFlight: TimeWeighted;
  playsStarted: number;
  blockCacheBlocks: number;
  /** Unusable values the server sent (non-numeric usage fields), dropped: distinct messages with counts. */
  warnings: string[];
}

export interface Play {
  lane: number;
  no: number;
  trace: WekaTrace;
  cache: BlockCache;
  marker: string;
  endpoint: string;
  dpRank: number | null;
  seen: Set<number>;
  pos: number;
  prevRoot: WekaLeafRequest | null;
  rootTurn: number;
  /** subagent chains by the entry index of the root request they are joined before (aiperf's rule) */
  pending: Map<number, Promise<void>[]>;
  background: Promise<void>[];
  /** `subagentJoins` of the trace */
  joins: Array<number | null | undefined>;
}

export interface Lane {
  index: number;
  play: Play;
  inFlight: number;
  quota: number;
}

export interface IssueInfo {
  kind: 'root' | 'subagent';
  agentId: string | null;
  turn: number;
  phase: RequestPhase;
  maxTokens: number;
  systemTokens: number;
  marker: string;
  seen: Set<number>;
}
