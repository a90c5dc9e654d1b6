import { hash32, rng, type Rng } from '../rng';
import type { WekaEntry, WekaLeafRequest, WekaSubagent, WekaTrace } from './model';

/**
 * Deterministic synthetic Weka traces with a realistic agentic shape (pure: same options → same traces):
 * a system+tools prefix, a context that grows every turn by the previous output plus a tool result
 * (log-normal, mostly small, sometimes large), short outputs, think-time gaps (mostly tool execution,
 * sometimes a human pause), compaction when the context would overflow, and occasional subagent
 * fan-out (1–3 children, mostly joined before the parent's next turn, some in the background).
 *
 * Blocks: `hash_ids` has ceil(in / block_size) entries; a request's full blocks keep the ids of the
 * previous request's context (so successive turns share prefixes block-exactly), and a partial last
 * block always gets a fresh id (its content changes when the context grows).
 */
export interface GenerateOptions {
  seed: number;
  traces: number;
  maxContextTokens: number;
  blockSize?: number;
  thinkTimeScale?: number;
  model?: string;
  /** Root requests per trace, inclusive range (default 6–40). */
  turns?: [number, number];
  /** Probability that a turn is preceded by subagent fan-out (default 0.12). */
  subagentProbability?: number;
  /** Median output tokens (default 120). */
  outputMedian?: number;
}

const clamp = (x: number, lo: number, hi: number): number => Math.max(lo, Math.min(hi, x));
const round3 = (x: number): number => Math.round(x * 1000) / 1000;
/** Head-room kept for the next output when deciding to compact. */
const margin = (max: number): number => Math.min(4000, Math.floor(max * 0.2));

class Context {
  private full: number[] = [];
  constructor(
    private readonly bs: number,
    private readonly ids: { next: number },
    public tokens = 0,
  ) {}
  /** hash_ids for the current context; full blocks stable, partial tail fresh. */
  hashIds(): number[] {
    const nFull = Math.floor(this.tokens / this.bs);
    while (this.full.length < nFull) this.full.push(this.ids.next++);
    const out = this.full.slice(0, nFull);
    if (this.tokens % this.bs !== 0) out.push(this.ids.next++);
    return out;
  }
  grow(n: number): void {
    this.tokens += n;
  }
  /** Keep the first `keepTokens` (rounded down to whole blocks), then `tail` new tokens. */
  compact(keepTokens: number, tail: number): void {
    const keepBlocks = Math.floor(keepTokens / this.bs);
    this.full = this.full.slice(0, keepBlocks);
    this.tokens = keepBlocks * this.bs + tail;
  }
}

function thinkTime(r: Rng, scale: number): number {
  const tool = clamp(r.lognormal(1.2, 1.0), 0.05, 60);
  const human = r.chance(0.08) ? clamp(r.lognormal(25, 1.0), 2, 900) : 0;
  return round3((tool + human) * scale);
}

function outputTokens(r: Rng, median: number): number {
  return Math.round(clamp(r.lognormal(median, 1.0), 1, 4000));
}

function toolResultTokens(r: Rng): number {
  return Math.round(clamp(r.lognormal(350, 1.3), 10, 16000));
}

function leaf(
  r: Rng,
  ctx: Context,
  t: number,
  out: number,
  model: string,
  stop: string,
  think: number,
): WekaLeafRequest {
  return {
    t: round3(t),
    type: 'n',
    model,
    in: ctx.tokens,
    out,
    hash_ids: ctx.hashIds(),
    input_types: ['text'],
    output_types: stop === 'tool_use' ? ['tool_use'] : ['text'],
    stop,
    api_time: round3(0.3 + out * 0.02 + r.next() * 0.2),
    think_time: think,
  };
}

function subagent(
  r: Rng,
  ids: { next: number },
  bs: number,
  t: number,
  index: number,
  o: Required<Pick<GenerateOptions, 'maxContextTokens' | 'thinkTimeScale' | 'model' | 'outputMedian'>>,
): WekaSubagent {
  const system = Math.min(r.int(1200, 3000), Math.floor(o.maxContextTokens * 0.25));
  const ctx = new Context(bs, ids, system + Math.min(r.int(100, 800), Math.floor(o.maxContextTokens * 0.2)));
  const n = r.int(2, 6);
  const requests: WekaLeafRequest[] = [];
  let now = t;
  let total = 0;
  for (let i = 0; i < n; i++) {
    const out = Math.min(outputTokens(r, o.outputMedian), Math.max(1, o.maxContextTokens - ctx.tokens - 1));
    const think = i === 0 ? 0 : thinkTime(r, o.thinkTimeScale * 0.5);
    now += think;
    const req = leaf(r, ctx, now, out, o.model, i === n - 1 ? 'end_turn' : 'tool_use', think);
    requests.push(req);
    total += req.in + req.out;
    now += req.api_time ?? 0;
    const grow = out + toolResultTokens(r);
    if (ctx.tokens + grow + margin(o.maxContextTokens) > o.maxContextTokens) break;
    ctx.grow(grow);
  }
  const background = r.chance(0.2);
  return {
    t: round3(t),
    type: 'subagent',
    agent_id: `agent_${String(index).padStart(3, '0')}`,
    subagent_type: r.chance(0.6) ? 'Explore' : 'general-purpose',
    duration_ms: background ? null : Math.round((now - t) * 1000),
    total_tokens: background ? null : total,
    tool_use_count: background ? null : requests.length - 1,
    status: background ? 'async_launched' : 'completed',
    requests,
    models: [o.model],
    tool_tokens: 0,
    system_tokens: system,
  };
}

export function generateTrace(index: number, opts: GenerateOptions): WekaTrace {
  const bs = opts.blockSize ?? 64;
  const o = {
    maxContextTokens: opts.maxContextTokens,
    thinkTimeScale: opts.thinkTimeScale ?? 1,
    model: opts.model ?? 'synthetic-agent',
    outputMedian: opts.outputMedian ?? 120,
  };
  const [tLo, tHi] = opts.turns ?? [6, 40];
  const r = rng(hash32(opts.seed, 'trace', index));
  const ids = { next: 1 };
  const system = Math.min(r.int(2000, 6000), Math.floor(o.maxContextTokens * 0.25));
  const tools = Math.min(r.int(800, 3000), Math.floor(o.maxContextTokens * 0.1));
  const ctx = new Context(bs, ids, system + tools + Math.min(r.int(50, 1500), Math.floor(o.maxContextTokens * 0.3)));
  const turns = r.int(tLo, tHi);
  const requests: WekaEntry[] = [];
  let t = 0;
  let subagents = 0;
  for (let i = 0; i < turns; i++) {
    if (i > 0 && i < turns - 1 && r.chance(opts.subagentProbability ?? 0.12)) {
      const k = r.int(1, 3);
      for (let j = 0; j < k; j++) requests.push(subagent(r, ids, bs, t + j * 0.05, ++subagents, o));
    }
    const think = i === 0 ? 0 : thinkTime(r, o.thinkTimeScale);
    t += think;
    const last = i === turns - 1;
    const out = Math.min(outputTokens(r, o.outputMedian), Math.max(1, o.maxContextTokens - ctx.tokens - 1));
    const stop = last ? 'end_turn' : r.chance(0.9) ? 'tool_use' : 'end_turn';
    const req = leaf(r, ctx, t, out, o.model, stop, think);
    requests.push(req);
    t += req.api_time ?? 0;
    const grow = out + toolResultTokens(r);
    if (ctx.tokens + grow + margin(o.maxContextTokens) >= o.maxContextTokens) {
      // compaction: keep the system+tools prefix, replace history by a summary
      ctx.compact(
        system + tools,
        Math.round(o.maxContextTokens * 0.1) + Math.min(r.int(0, 500), Math.floor(o.maxContextTokens * 0.05)),
      );
    } else ctx.grow(grow);
  }
  return {
    id: `syn-${opts.seed}-${String(index).padStart(4, '0')}`,
    models: [o.model],
    block_size: bs,
    hash_id_scope: 'local',
    tool_tokens: tools,
    system_tokens: system,
    requests,
    totals: null,
  };
}

export function generateTraces(opts: GenerateOptions): WekaTrace[] {
  return Array.from({ length: opts.traces }, (_, i) => generateTrace(i, opts));
}
