import { DTYPE_BYTES, type ModelArchitecture } from '../config/schema';
import { perRank } from './engine';

/**
 * The plan's capacity check (pure): from the model's architecture numbers and the orientation's
 * topology and engine settings, estimate weight memory per GPU, the KV-cache tokens one replica holds
 * at the configured memory utilization, and compare them with each point's sessions × trace context —
 * before any GPU hour is spent. docs/engine-settings.md "Capacity check" documents the formulas; they are estimates
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
  /** min(sessionsPerReplica, max-num-seqs) × traceContextTokens: the running sessions at their full trace context. */
  tokensNeededPerReplica: number;
  /** tokensNeeded / kvTokensPerReplica (> 1: on paper the sessions' contexts do not all fit at once). */
  kvDemandRatio: number;
  /** Not flagged: neither thrashing nor overcommitted beyond what varying session contexts absorb (see judgement below). */
  fits: boolean;
}

/**
 * The judgement of a point, calibrated on InferenceX's Kimi K3 H200 history (docs/inferencex.md,
 * "Capacity check against InferenceX"):
 * - thrash: ≥ 2 running sessions on a replica that holds fewer than THRASH_CONTEXTS full trace contexts —
 *   two long sessions cannot be in flight together, a preempted long request is recomputed from scratch,
 *   and the point misses its drain deadline (InferenceX's TP1/PP2/DP16 arm: 1.16 contexts per replica,
 *   c32 = 2 sessions flaky, c64/c128 failed; c16 = 1 session ran);
 * - overcommitted: the running sessions at full trace context need more than OVERCOMMIT × the pool.
 *   Sessions replay traces from different positions, so their contexts differ and some overcommitment
 *   runs: InferenceX ran TP16×DP2 at c12 (5 running of 6, 1.7× on paper) and TP8×DP4 at c16 (1.5×).
 */
export const THRASH_CONTEXTS = 1.5;
export const OVERCOMMIT = 2;

/**
 * The longest context one session reaches in the traces the client replays: aiperf's public corpus reaches
 * the native context (InferenceX's 1M-context `…_062126` loader) or 256 000 tokens (`…_256k`); synthetic
 * traces their cap; trace files are judged at the served context. Never more than the served context.
 */
export function replayedTraceContext(
  agentx: {
    client: 'infersweep' | 'aiperf';
    aiperf: { traces: 'public' | 'configured'; publicDataset?: string | undefined };
    traces: { kind: 'synthetic'; maxContextTokens: number } | { kind: 'file' };
  },
  servedContextTokens: number,
): number {
  if (agentx.client === 'aiperf' && agentx.aiperf.traces === 'public') {
    const corpus = agentx.aiperf.publicDataset?.endsWith('_256k') ? 256_000 : 1_048_576;
    return Math.min(corpus, servedContextTokens);
  }
  return agentx.traces.kind === 'synthetic'
    ? Math.min(agentx.traces.maxContextTokens, servedContextTokens)
    : servedContextTokens;
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
  const kvPoolBytesPerGpu = Math.max(
    0,
    budgetBytesPerGpu - weightBytesPerGpu - reserveBytesPerGpu - linearStateBytesPerGpu,
  );
  const kvBytesPerTokenPerGpu = Math.ceil(a.fullAttention.layers / i.pp) * kvBytesPerTokenPerLayer(a, i.tp);
  // every GPU of a replica holds the same tokens (its own layers/heads of them): the pool of one GPU bounds the replica
  const kvTokensPerReplica = Math.floor(kvPoolBytesPerGpu / kvBytesPerTokenPerGpu);
  const contextsPerReplica = kvTokensPerReplica / i.traceContextTokens;
  const points = i.points.map((c) => {
    const sessionsPerReplica = perRank(c, i.dp);
    // vLLM runs at most max-num-seqs sequences per DP rank; the others wait without holding KV blocks
    const running = Math.min(sessionsPerReplica, i.maxNumSeqs);
    const tokensNeededPerReplica = running * i.traceContextTokens;
    const kvDemandRatio = kvTokensPerReplica > 0 ? tokensNeededPerReplica / kvTokensPerReplica : Infinity;
    const thrash = running >= 2 && contextsPerReplica < THRASH_CONTEXTS;
    const fits = running <= 1 ? kvDemandRatio <= 1 : !thrash && kvDemandRatio <= OVERCOMMIT;
    return { concurrency: c, sessionsPerReplica, tokensNeededPerReplica, kvDemandRatio, fits };
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
    const contexts = e.kvTokensPerReplica / e.traceContextTokens;
    warnings.push(
      `capacity: ${over.map((p) => `c=${p.concurrency} runs ${tok(p.tokensNeededPerReplica / e.traceContextTokens)} sessions × ${tok(e.traceContextTokens)} = ${tok(p.tokensNeededPerReplica)} KV tokens per replica (${p.kvDemandRatio.toFixed(1)}× the ~${tok(e.kvTokensPerReplica)} it holds)`).join('; ')} — ` +
        (contexts < THRASH_CONTEXTS
          ? `a replica holds ${contexts.toFixed(2)} full trace contexts (< ${THRASH_CONTEXTS}): two long sessions preempt each other and the point is likely to miss its drain deadline`
          : `more than ${OVERCOMMIT}× the pool at full trace context: those points preempt and recompute, measuring queueing`) +
        ` (orientation ${orientation})`,
    );
  }
  return { verdict: problems.length > 0 ? 'refuse' : warnings.length > 0 ? 'warn' : 'ok', problems, warnings };
}

/** One line for `plan` output. */
export function describeCapacity(e: CapacityEstimate): string {
  return (
    `weights ${gb(e.weightBytesPerGpu)}/GPU, budget ${gb(e.budgetBytesPerGpu)}/GPU, reserve ${gb(e.reserveBytesPerGpu)}, linear state ${gb(e.linearStateBytesPerGpu)} → ` +
    `KV pool ${gb(e.kvPoolBytesPerGpu)}/GPU = ~${tok(e.kvTokensPerReplica)} tokens per replica (${e.fullContextRequestsPerReplica.toFixed(2)} × the ${tok(e.servedContextTokens)} served context); ` +
    `per point (running sessions/replica × ${tok(e.traceContextTokens)} trace context): ` +
    e.points.map((p) => `c=${p.concurrency} ${(p.kvDemandRatio * 100).toFixed(0)} %${p.fits ? '' : ' OVER'}`).join(', ')
  );
}
