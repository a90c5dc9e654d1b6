import { ReadinessError } from '../errors';
import { BODY_LIMITS, readBodyCapped } from '../client/body';
import { checkIdleRanks, type IdleRankCheck } from './idle-ranks';
import { scrapeText } from './scrape';

export interface ReadinessResult {
  ready: boolean;
  state: 'ready' | 'not-ready' | 'failed';
  reason: string | null;
  /** One human-readable line (for heartbeats/logs). */
  detail: string;
  models: string[];
  idleRanks: IdleRankCheck;
}

/**
 * One completed request (non-streamed, 2 tokens): `rank` pins it to a DP engine with vLLM's
 * `X-data-parallel-rank` header. Returns null when the server answered with generated tokens, else why not.
 */
export async function probeCompletion(
  base: string,
  servedModel: string,
  timeoutMs: number,
  rank?: number,
  headers: Readonly<Record<string, string>> = {},
): Promise<string | null> {
  const who = rank === undefined ? '' : ` (engine ${rank})`;
  try {
    const res = await fetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: {
        ...headers,
        'content-type': 'application/json',
        ...(rank === undefined ? {} : { 'x-data-parallel-rank': String(rank) }),
      },
      body: JSON.stringify({
        model: servedModel,
        messages: [{ role: 'user', content: 'readiness probe' }],
        max_tokens: 2,
        stream: false,
      }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await readBodyCapped(res, BODY_LIMITS.small, `probe request${who}`);
    if (res.status !== 200) return `probe request${who} returned ${res.status}: ${text.slice(0, 200)}`;
    const body = JSON.parse(text) as { usage?: { completion_tokens?: number } };
    if (!((body.usage?.completion_tokens ?? 0) >= 1)) return `probe request${who} completed without generated tokens`;
    return null;
  } catch (err) {
    const code = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).name;
    return `probe request${who} failed: ${code}`;
  }
}

/**
 * One readiness probe (docs/topology-rules.md rule 19): GET /health — refused/timeout → not ready, 503 → failed,
 * 200 → then /v1/models must list the served name, then (if expectedEngines) every engine label must be
 * present on /metrics, then one request must complete — on every expected engine (pinned with
 * `X-data-parallel-rank`), since /health answered 200 for ~14 s after both engines of a CPU MoE run had
 * died (docs/vllm-cpu.md). `probe: false` skips the request. Never throws for "not ready yet"; throws
 * ReadinessError only for bad arguments.
 */
export async function checkReadiness(
  endpoint: string,
  servedModel: string,
  expectedEngines?: number[] | null,
  opts: {
    timeoutSeconds?: number;
    metricsEndpoint?: string;
    probe?: boolean;
    /** Headers of the probe request (a P/D router's prefillers: the probe takes the whole P/D path). */
    headers?: Readonly<Record<string, string>>;
  } = {},
): Promise<ReadinessResult> {
  const timeoutMs = (opts.timeoutSeconds ?? 10) * 1000;
  const base = endpoint.replace(/\/+$/, '');
  const na = checkIdleRanks([], null, 'readiness');
  const notReady = (state: 'not-ready' | 'failed', reason: string): ReadinessResult => ({
    ready: false,
    state,
    reason,
    detail: `${state}: ${reason}`,
    models: [],
    idleRanks: na,
  });
  let health: Response;
  try {
    health = await fetch(`${base}/health`, { signal: AbortSignal.timeout(timeoutMs) });
    await readBodyCapped(health, BODY_LIMITS.small, '/health');
  } catch (err) {
    const code = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).name;
    return notReady('not-ready', `/health unreachable (${code})`);
  }
  if (health.status === 503) return notReady('failed', '/health returned 503 (an engine is dead)');
  if (health.status !== 200) return notReady('not-ready', `/health returned ${health.status}`);
  let models: string[] = [];
  try {
    const res = await fetch(`${base}/v1/models`, { signal: AbortSignal.timeout(timeoutMs) });
    const body = JSON.parse(await readBodyCapped(res, BODY_LIMITS.small, '/v1/models')) as {
      data?: Array<{ id?: string }>;
    };
    models = (body.data ?? []).map((m) => m.id ?? '').filter((m) => m !== '');
  } catch (err) {
    return notReady('not-ready', `/v1/models failed: ${(err as Error).message}`);
  }
  if (!models.includes(servedModel))
    return notReady(
      'failed',
      `served model ${servedModel} not listed by /v1/models (got ${models.join(', ') || 'none'})`,
    );
  const probeTimeoutMs = Math.max(timeoutMs, 30_000);
  const probe = async (ranks: Array<number | undefined>): Promise<string | null> => {
    if (opts.probe === false) return null;
    for (const rank of ranks) {
      const why = await probeCompletion(base, servedModel, probeTimeoutMs, rank, opts.headers);
      if (why !== null) return why;
    }
    return null;
  };
  if (!expectedEngines) {
    const why = await probe([undefined]);
    if (why !== null) return { ...notReady('not-ready', why), models };
    return {
      ready: true,
      state: 'ready',
      reason: null,
      detail: 'ready',
      models,
      idleRanks: checkIdleRanks([], expectedEngines, 'readiness'),
    };
  }
  const text = await scrapeText(opts.metricsEndpoint ?? base, opts.timeoutSeconds ?? 10).catch((err: Error) => err);
  if (text instanceof Error) return { ...notReady('not-ready', text.message), models };
  const idleRanks = checkIdleRanks(text, expectedEngines, 'readiness');
  if (!idleRanks.ok) return { ...notReady('failed', idleRanks.message ?? 'engine labels missing'), models, idleRanks };
  const why = await probe(expectedEngines.length > 1 ? expectedEngines : [undefined]);
  if (why !== null) return { ...notReady('not-ready', why), models, idleRanks };
  return { ready: true, state: 'ready', reason: null, detail: 'ready', models, idleRanks };
}

/** Throwing form for callers that want one call: ReadinessError (retryable iff merely not ready yet). */
export async function assertReady(
  endpoint: string,
  servedModel: string,
  expectedEngines?: number[] | null,
): Promise<ReadinessResult> {
  const r = await checkReadiness(endpoint, servedModel, expectedEngines);
  if (r.state !== 'ready')
    throw new ReadinessError(`${endpoint}: ${r.reason ?? r.state}`, r.state === 'failed' ? 'failed' : 'not-ready', {
      endpoint,
    });
  return r;
}
