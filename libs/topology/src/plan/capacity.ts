import { DTYPE_BYTES, type ModelArchitecture } from '../config/schema';
import { perRank } from './engine';

/**
 * The plan's capacity check (pure): from the model's architecture numbers and the orientation's
 * topology and engine settings, estimate weight memory per GPU, the KV-cache tokens one replica holds
 * at the configured memory utilization, and compare them with each point's sessions × trace context —
 * before any GPU hour is spent. README "Capacity check" documents the formulas; they are estimates
 * (vLLM's own profile run at startup is the truth) and err towards the arithmetic a reviewer can redo.
 */

/** Usable device memory as nvidia-smi reports it (MiB), by the cluster profile's `gpu` name. */
export const GPU_MEMORY_MIB: Readonly<Record<string, number>> = {
  H100: 81_559,
  H200: 143_771,
  B200: 183_359,
  GB200: 189_471,
  B300: 275_040,
  GB300: 284_208,
};

export function gpuMemoryBytes(gpu: string): number | undefined {
  const mib = GPU_MEMORY_MIB[gpu.toUpperCase()];
  return mib === undefined ? undefined : mib * 1024 * 1024;
}

export interface CapacityInput {
  arch: ModelArchitecture;
  gpuMemoryBytes: number;
  tp: number;
  pp: number;
  dp: number;
  /** EP size when expert parallelism is on, else 1. */
  ep: number;
  gpuMemoryUtilization: number;
  /** Per DP rank (the linear-attention states of that many running sequences are resident). */
  maxNumSeqs: number;
  /** The context the server accepts (--max-model-len or the model default): vLLM refuses to start if one such request does not fit. */
  servedContextTokens: number;
  /** The longest context one session reaches in the traces. */
  traceContextTokens: number;
  points: readonly number[];
}

export interface CapacityPoint {
  concurrency: number;
  /** ⌈c / DP⌉: sessions one replica holds. */
  sessionsPerReplica: number;
  /** sessionsPerReplica × traceContextTokens. */
  tokensNeededPerReplica: number;
  /** tokensNeeded / kvTokensPerReplica (> 1: the point preempts, recomputes and queues). */
  kvDemandRatio: number;
  fits: boolean;
}

export interface CapacityEstimate {
  gpuMemoryBytes: number;
  budgetBytesPerGpu: number;
  weightBytesPerGpu: number;
  reserveBytesPerGpu: number;
  linearStateBytesPerGpu: number;
  kvPoolBytesPerGpu: number;
  /** KV bytes one token costs on one GPU (its PP stage's full-attention layers, TP-sharded for GQA). */
  kvBytesPerTokenPerGpu: number;
  /** Tokens of KV cache one DP replica holds (0 when the weights do not fit). */
  kvTokensPerReplica: number;
  /** kvTokensPerReplica / servedContextTokens. */
  fullContextRequestsPerReplica: number;
  servedContextTokens: number;
  traceContextTokens: number;
  points: CapacityPoint[];
}

const GiB = 1024 ** 3;

/** Bytes per token per layer of the full-attention KV cache on one GPU. */
export function kvBytesPerTokenPerLayer(arch: ModelArchitecture, tp: number): number {
  const b = DTYPE_BYTES[arch.kvCacheDtype];
  const a = arch.fullAttention;
  // MLA: one latent (kv_lora_rank + rope dims) per token, replicated on every TP rank.
  if (a.kind === 'mla') return (a.kvLoraRank + a.qkRopeHeadDim) * b;
  // GQA: K and V per KV head, heads split over TP ranks (replicated when TP > heads).
  return 2 * Math.ceil(a.kvHeads / Math.min(tp, a.kvHeads)) * a.headDim * b;
}

export function estimateCapacity(i: CapacityInput): CapacityEstimate {
  const a = i.arch;
  const expertShards = i.pp * (i.ep > 1 ? i.ep : i.tp);
  const weightBytesPerGpu = a.expertWeightBytes / expertShards + (a.weightBytes - a.expertWeightBytes) / (i.pp * i.tp);
  const budgetBytesPerGpu = i.gpuMemoryBytes * i.gpuMemoryUtilization;
  const reserveBytesPerGpu = a.runtimeReserveGiB * GiB;
  const lin = a.linearAttention;
  // linear-attention state: per running sequence and layer of this PP stage, heads split over TP
  const linearStateBytesPerGpu =
    lin === undefined ? 0 : (i.maxNumSeqs * Math.ceil(lin.layers / i.pp) * lin.stateBytesPerSequencePerLayer) / i.tp;
  const kvPoolBytesPerGpu = Math.max(0, budgetBytesPerGpu - weightBytesPerGpu - reserveBytesPerGpu - linearStateBytesPerGpu);
  const kvBytesPerTokenPerGpu = Math.ceil(a.fullAttention.layers / i.pp) * kvBytesPerTokenPerLayer(a, i.tp);
  // every GPU of a replica holds the same tokens (its own layers/heads of them): the pool of one GPU bounds the replica
  const kvTokensPerReplica = Math.floor(kvPoolBytesPerGpu / kvBytesPerTokenPerGpu);
  const points = i.points.map((c) => {
    const sessionsPerReplica = perRank(c, i.dp);
    const tokensNeededPerReplica = sessionsPerReplica * i.traceContextTokens;
    const kvDemandRatio = kvTokensPerReplica > 0 ? tokensNeededPerReplica / kvTokensPerReplica : Infinity;
    return { concurrency: c, sessionsPerReplica, tokensNeededPerReplica, kvDemandRatio, fits: kvDemandRatio <= 1 };
  });
  return {
    gpuMemoryBytes: i.gpuMemoryBytes,
    budgetBytesPerGpu,
    weightBytesPerGpu,
    reserveBytesPerGpu,
    linearStateBytesPerGpu,
    kvPoolBytesPerGpu,
    kvBytesPerTokenPerGpu,
    kvTokensPerReplica,
    fullContextRequestsPerReplica: kvTokensPerReplica / i.servedContextTokens,
    servedContextTokens: i.servedContextTokens,
    traceContextTokens: i.traceContextTokens,
    points,
  };
}

export type CapacityVerdict = 'ok' | 'warn' | 'refuse';

const gb = (b: number) => `${(b / 1e9).toFixed(1)} GB`;
const tok = (n: number) => (n >= 1e6 ? `${(n / 1e6).toFixed(2)}M` : n >= 1e3 ? `${(n / 1e3).toFixed(1)}k` : String(n));

/**
 * Judge an estimate: `refuse` when the weights leave no KV pool or one request of the served context
 * does not fit (vLLM refuses to start), `warn` when a point's sessions × trace context exceed a replica's
 * KV (it preempts and measures queueing), else `ok`. Messages carry the numbers.
 */
export function judgeCapacity(
  e: CapacityEstimate,
  orientation: string,
): { verdict: CapacityVerdict; problems: string[]; warnings: string[] } {
  const problems: string[] = [];
  const warnings: string[] = [];
  if (e.kvPoolBytesPerGpu <= 0) {
    problems.push(
      `orientation ${orientation}: weights ${gb(e.weightBytesPerGpu)} + reserve ${gb(e.reserveBytesPerGpu)} + linear-attention state ${gb(e.linearStateBytesPerGpu)} per GPU exceed the ${gb(e.budgetBytesPerGpu)} budget ` +
        `(gpu-memory-utilization × ${gb(e.gpuMemoryBytes)}): no KV cache left; raise the memory utilization or spread the weights over more GPUs`,
    );
  } else if (e.kvTokensPerReplica < e.servedContextTokens) {
    problems.push(
      `orientation ${orientation}: one replica holds ~${tok(e.kvTokensPerReplica)} KV tokens, less than one request of the served context (${tok(e.servedContextTokens)}): ` +
        `vLLM refuses to start; set engine.maxModelLen ≤ ${e.kvTokensPerReplica} or give the replica more memory`,
    );
  }
  const over = e.points.filter((p) => !p.fits);
  if (problems.length === 0 && over.length > 0) {
    warnings.push(
      `capacity: ${over.map((p) => `c=${p.concurrency} needs ${p.sessionsPerReplica} × ${tok(e.traceContextTokens)} = ${tok(p.tokensNeededPerReplica)} KV tokens per replica (${p.kvDemandRatio.toFixed(1)}× the ~${tok(e.kvTokensPerReplica)} it holds)`).join('; ')} — ` +
        `at full trace context those points preempt and recompute, measuring queueing (orientation ${orientation})`,
    );
  }
  return { verdict: problems.length > 0 ? 'refuse' : warnings.length > 0 ? 'warn' : 'ok', problems, warnings };
}

/** One line for `plan` output. */
export function describeCapacity(e: CapacityEstimate): string {
  return (
    `weights ${gb(e.weightBytesPerGpu)}/GPU, budget ${gb(e.budgetBytesPerGpu)}/GPU, reserve ${gb(e.reserveBytesPerGpu)}, linear state ${gb(e.linearStateBytesPerGpu)} → ` +
    `KV pool ${gb(e.kvPoolBytesPerGpu)}/GPU = ~${tok(e.kvTokensPerReplica)} tokens per replica (${e.fullContextRequestsPerReplica.toFixed(2)} × the ${tok(e.servedContextTokens)} served context); ` +
    `per point (sessions/replica × ${tok(e.traceContextTokens)} trace context): ` +
    e.points.map((p) => `c=${p.concurrency} ${(p.kvDemandRatio * 100).toFixed(0)} %${p.fits ? '' : ' OVER'}`).join(', ')
  );
}
