/**
 * The KV-cache pool as InferenceX reads it (pure): vLLM logs "GPU KV cache size: N tokens" once per
 * engine core at startup, tagged `(EngineCore_DP<r> pid=…)` under data parallelism. Per log file the last
 * value of each engine tag counts once (a repeated line is not double-counted); untagged lines are summed;
 * the files (one per node) are summed. Null when no file has such a line.
 * (InferenceX utils/agentic/aggregation/backends/vllm.py `kv_cache_pool_tokens_from_server_log` and
 * server_log_metrics.py `sum_server_log_capacities` @ 843c6254f; checked by its test
 * `test_processor_reads_gpu_kv_cache_capacity_from_server_log`: DP0 twice at 5,000,000 + DP1 at 6,500,000
 * = 11,500,000.)
 *
 * For a hybrid model (Kimi K3: MLA + linear-attention groups) this differs from `num_gpu_blocks ×
 * block_size` of `vllm:cache_config_info`, which the point record keeps as its own cross-check.
 */
const ENGINE_TAG = /\((EngineCore(?:_DP\d+)?)\s+pid=\d+\)/;
const KV_SIZE = /GPU KV cache size:\s*([\d,]+)\s*tokens/;

export function kvPoolTokensFromServerLog(text: string): number | null {
  const perEngine = new Map<string, number>();
  let bare = 0;
  let bareFound = false;
  for (const line of text.split('\n')) {
    const m = KV_SIZE.exec(line);
    if (!m) continue;
    const tokens = Number(m[1]!.replace(/,/g, ''));
    if (!Number.isFinite(tokens) || tokens <= 0) continue;
    const tag = ENGINE_TAG.exec(line);
    if (tag) perEngine.set(tag[1]!, tokens);
    else {
      bare += tokens;
      bareFound = true;
    }
  }
  if (perEngine.size > 0) return [...perEngine.values()].reduce((a, v) => a + v, 0);
  return bareFound ? bare : null;
}

/** Σ over the server's log files (one per node); null when none reports a size. */
export function kvPoolTokensFromServerLogs(texts: readonly string[]): number | null {
  let total = 0;
  let found = false;
  for (const t of texts) {
    const v = kvPoolTokensFromServerLog(t);
    if (v === null) continue;
    total += v;
    found = true;
  }
  return found ? total : null;
}
