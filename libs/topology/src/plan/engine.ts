import type { EngineSpec, OrientationEngine } from '../config/schema';

/**
 * Engine settings of one orientation, derived rather than copied (pure). The bash runner this project replaces
 * learned each of these the hard way; docs/engine-settings.md "Engine settings"
 * explains every rule:
 * - `--max-num-seqs` is per DP rank in vLLM. Unset, it is ⌈max concurrency / DP⌉ so the top point
 *   never waits in the scheduler; pinned, the plan names every point that will queue.
 * - memory utilization and batched tokens: the orientation's value, else the engine's.
 * - prefix caching and prompt-token details are explicit flags (hybrid models default caching off).
 * - PP > 1 runs vLLM's V1 model runner (`VLLM_USE_V2_MODEL_RUNNER=0`): the bash runner ran PP on V1.
 */
export interface EngineSettings {
  gpuMemoryUtilization: number;
  maxNumSeqs: number;
  maxNumSeqsSource: 'derived' | 'pinned';
  /** e.g. `⌈32 / DP 2⌉ = 16` or `pinned by orientations.balanced.engine.maxNumSeqs`. */
  maxNumSeqsDerivation: string;
  maxNumBatchedTokens: number | null;
  prefixCaching: boolean;
  promptTokensDetails: boolean;
  extraArgs: string[];
  env: Record<string, string>;
  /** Points whose per-rank share ⌈c / DP⌉ exceeds maxNumSeqs (they measure scheduler queueing). */
  queued: { concurrency: number; perRank: number }[];
}

export interface EngineSettingsInput {
  orientation: string;
  engine: Pick<
    EngineSpec,
    'gpuMemoryUtilization' | 'maxNumSeqs' | 'maxNumBatchedTokens' | 'prefixCaching' | 'promptTokensDetails' | 'env'
  >;
  override?: OrientationEngine | undefined;
  dp: number;
  pp: number;
  /** The concurrency points this deployment serves. */
  points: readonly number[];
}

export const V2_RUNNER = 'VLLM_USE_V2_MODEL_RUNNER';

export function perRank(concurrency: number, dp: number): number {
  return Math.ceil(concurrency / dp);
}

export function resolveEngineSettings(i: EngineSettingsInput): {
  settings: EngineSettings;
  warnings: string[];
  notes: string[];
} {
  const warnings: string[] = [];
  const notes: string[] = [];
  const o = i.override;
  const maxC = Math.max(...i.points);
  const derived = perRank(maxC, i.dp);
  const pinnedBy =
    o?.maxNumSeqs !== undefined
      ? `orientations.${i.orientation}.engine.maxNumSeqs`
      : i.engine.maxNumSeqs !== undefined
        ? 'engine.maxNumSeqs'
        : null;
  const pinned = o?.maxNumSeqs ?? i.engine.maxNumSeqs;
  const maxNumSeqs = pinned ?? derived;
  const queued = i.points
    .filter((c) => perRank(c, i.dp) > maxNumSeqs)
    .map((c) => ({ concurrency: c, perRank: perRank(c, i.dp) }));
  if (pinned !== undefined && queued.length > 0) {
    warnings.push(
      `--max-num-seqs ${pinned} (${pinnedBy}) is per DP rank: ${queued.map((q) => `c=${q.concurrency} puts ⌈${q.concurrency}/${i.dp}⌉ = ${q.perRank}`).join(', ')} ` +
        `sessions on a rank, so ${queued.length === 1 ? 'that point measures' : 'those points measure'} scheduler queueing; unset it to derive ${derived} (⌈${maxC} / DP ${i.dp}⌉)`,
    );
  }

  const env: Record<string, string> = { ...i.engine.env, ...(o?.env ?? {}) };
  if (i.pp > 1) {
    const own = o?.env?.[V2_RUNNER];
    if (own === '1')
      warnings.push(
        `orientations.${i.orientation}.engine.env sets ${V2_RUNNER}=1 with PP ${i.pp}: the bash runner ran PP on the V1 runner; kept as configured`,
      );
    else if (own === undefined) {
      if (env[V2_RUNNER] !== '0')
        notes.push(
          `${V2_RUNNER}=0: PP ${i.pp} runs on vLLM's V1 model runner (as the bash runner did)${env[V2_RUNNER] === undefined ? '' : ` — overrides engine.env ${V2_RUNNER}=${env[V2_RUNNER]}`}`,
        );
      env[V2_RUNNER] = '0';
    }
  }

  const prefixCaching = i.engine.prefixCaching;
  if (!prefixCaching)
    warnings.push(
      'engine.prefixCaching is false: multi-turn prefix reuse, the point of an agentic benchmark, is not measured and the cached-token gate is off',
    );
  if (prefixCaching && !i.engine.promptTokensDetails) {
    warnings.push(
      'engine.promptTokensDetails is false: responses carry no usage.prompt_tokens_details.cached_tokens, so the cached-token gate relies on the server counters alone',
    );
  }
  const settings: EngineSettings = {
    gpuMemoryUtilization: o?.gpuMemoryUtilization ?? i.engine.gpuMemoryUtilization,
    maxNumSeqs,
    maxNumSeqsSource: pinned === undefined ? 'derived' : 'pinned',
    maxNumSeqsDerivation:
      pinned === undefined
        ? `⌈${maxC} / DP ${i.dp}⌉ = ${derived}`
        : `pinned by ${pinnedBy} (derived would be ⌈${maxC} / DP ${i.dp}⌉ = ${derived})`,
    maxNumBatchedTokens: o?.maxNumBatchedTokens ?? i.engine.maxNumBatchedTokens ?? null,
    prefixCaching,
    promptTokensDetails: i.engine.promptTokensDetails,
    extraArgs: [...(o?.extraArgs ?? [])],
    env,
    queued,
  };
  return { settings, warnings, notes };
}
