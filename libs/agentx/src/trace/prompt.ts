import { hash32, rng } from '../rng';
import type { WekaLeafRequest } from './model';

/**
 * Token-count-exact, block-exact synthetic prompt text.
 *
 * Every `hash_id` maps to a deterministic filler block of `block_size` words drawn from common English
 * words that are one token each in the usual BPE vocabularies (and exactly one token each in
 * llm-d-inference-sim's regex tokenizer), each preceded by one space. A request's content is the
 * concatenation of its blocks (the last one truncated to the request's remainder), so requests that
 * share a block share byte-identical prefixes. Blocks are immutable Buffers cached per trace and shared
 * by every request and every play of that trace (that is what keeps 128 × 100k-token sessions in a few
 * hundred MiB instead of a copy of the history per request).
 *
 * Wire layout (chat): [system: the first ⌊system_tokens / block_size⌋ blocks] [user: cache-bust marker +
 * the remaining blocks]. The marker sits at the start of the first user turn (aiperf `first_turn_prefix`),
 * so the system prefix stays shareable across plays while each play gets its own KV keyspace.
 */
export const FILLER_WORDS: readonly string[] = (
  'the of and to in is it that was for on are as with his they at be this from have or by one had not but ' +
  'what all were when we there can an your which their said if do will each about how up out them then she ' +
  'many some so these would other into has more her two like him see time could no make than first been its ' +
  'who now people my made over did down only way find use may water long little very after words called just ' +
  'where most know get through back much before go good new write our used me man too any day same right look ' +
  'think also around another came come work three word must because does part even place well such here take ' +
  'why things help put years different away again off went old number great tell men say small every found still ' +
  'between name should home big give air line set own under read last never us left end along while might next ' +
  'sound below saw something thought both few those always looked show large often together asked house world ' +
  'going want school important until form food keep children feet land side without boy once animals life enough ' +
  'took sometimes four head above kind began almost live page got earth need far hand high year mother light parts ' +
  'country father let night following picture being study second eyes soon times story boys since white days ever ' +
  'paper hard near sentence better best across during today others however sure means knew try told young miles'
).split(' ');

export class BlockCache {
  private readonly blocks = new Map<number, Buffer>();
  private readonly partials = new Map<string, Buffer>();
  constructor(
    readonly traceId: string,
    readonly blockSize: number,
  ) {}

  /** The filler bytes of block `hashId`, truncated to `tokens` words (≤ blockSize). */
  block(hashId: number, tokens = this.blockSize): Buffer {
    if (tokens === this.blockSize) {
      let b = this.blocks.get(hashId);
      if (!b) {
        b = fillerBlock(this.traceId, hashId, this.blockSize);
        this.blocks.set(hashId, b);
      }
      return b;
    }
    // partial tail: a prefix (in words) of the full block; not cached beyond a small bound
    const key = `${hashId}:${tokens}`;
    let p = this.partials.get(key);
    if (!p) {
      const full = this.block(hashId);
      p = full.subarray(0, wordBoundary(full, tokens));
      if (this.partials.size > 4096) this.partials.clear();
      this.partials.set(key, p);
    }
    return p;
  }

  get size(): number {
    return this.blocks.size;
  }
}

/** Byte offset after the `words`-th word of a filler buffer (" w1 w2 …"). */
function wordBoundary(buf: Buffer, words: number): number {
  let seen = 0;
  for (let i = 0; i < buf.length; i++) {
    if (buf[i] === 0x20) {
      if (seen === words) return i;
      seen++;
    }
  }
  return buf.length;
}

export function fillerBlock(traceId: string, hashId: number, tokens: number): Buffer {
  const r = rng(hash32(traceId, hashId));
  let s = '';
  for (let i = 0; i < tokens; i++) s += ' ' + FILLER_WORDS[Math.floor(r.next() * FILLER_WORDS.length)];
  return Buffer.from(s, 'latin1');
}

/**
 * The block layout of one request: which blocks (and how many words of the last one) make up its
 * `in` tokens. When the trace's hash_ids do not cover `in` (hand-made or truncated traces), extra
 * synthetic ids are derived deterministically; surplus ids are ignored.
 */
export function blockLayout(req: Pick<WekaLeafRequest, 'in' | 'hash_ids'>, blockSize: number): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  let remaining = req.in;
  let i = 0;
  while (remaining > 0) {
    const id = i < req.hash_ids.length ? req.hash_ids[i]! : -1 - hash32('extra', req.in, i);
    const n = Math.min(blockSize, remaining);
    out.push([id, n]);
    remaining -= n;
    i++;
  }
  return out;
}

export interface ChatBody {
  chunks: Buffer[];
  length: number;
}

const enc = (s: string): Buffer => Buffer.from(s, 'utf8');

/**
 * Build the streaming chat request body as a list of shared Buffers (no copy of the prompt).
 * `systemBlocks` leading blocks go to the system message; the rest follow the marker in the user message.
 */
export function buildChatBody(opts: {
  model: string;
  maxTokens: number;
  layout: Array<[number, number]>;
  cache: BlockCache;
  systemBlocks: number;
  marker: string;
  extra?: Record<string, unknown>;
}): ChatBody {
  const head = {
    model: opts.model,
    stream: true,
    stream_options: { include_usage: true },
    ignore_eos: true,
    max_tokens: opts.maxTokens,
    ...(opts.extra ?? {}),
  };
  const chunks: Buffer[] = [];
  const sys = Math.min(opts.systemBlocks, Math.max(0, opts.layout.length - 1));
  let json = JSON.stringify(head).slice(0, -1) + ',"messages":[';
  if (sys > 0) {
    chunks.push(enc(json + '{"role":"system","content":"'));
    for (let i = 0; i < sys; i++) chunks.push(opts.cache.block(opts.layout[i]![0], opts.layout[i]![1]));
    json = '"},';
  }
  chunks.push(enc(json + '{"role":"user","content":' + JSON.stringify(opts.marker).slice(0, -1)));
  for (let i = sys; i < opts.layout.length; i++) chunks.push(opts.cache.block(opts.layout[i]![0], opts.layout[i]![1]));
  chunks.push(enc('"}]}'));
  let length = 0;
  for (const c of chunks) length += c.length;
  return { chunks, length };
}
