import type { RequestRecord } from '@infersweep/agentx';
import { mulberry32 } from '@infersweep/stats';
import type { EngineRequestSpan } from './engine-traces';

/**
 * The real-vLLM cross-client referee, pre-registered (libs/agentx/README.md "The referee"; fixed before the runs it
 * judges, never retuned after one): each client's requests read against the engine's own per-request clock.
 *
 * - **Pairing.** Every profiled, successful request is joined to the engine's span of the same request id
 *   (./engine-traces.ts): the engine's ITL of that request is decode / (completion tokens − 1), its TTFT the span's.
 *   A request without a span, or whose token count differs from the span's, fails the window (nothing unmatched is
 *   dropped).
 * - **ITL:** the ratio of the plain means, Σ client ITL / Σ engine ITL − 1, over the paired requests (the same
 *   requests on both sides, so the engine's speed cancels; no trimming: a late first-token read is what it must see).
 * - **TTFT:** the median over requests of client TTFT − engine TTFT, in ms (additive: the client's clock also holds
 *   the request's send, the API server's parsing, templating and tokenising, and the first token's delivery, none of
 *   which scales with the engine's TTFT). The median, not the mean: a client defect in TTFT (a first token read late,
 *   the wrong event timed) moves every request, while on a loaded 2-core host a stall moves one request by up to
 *   0.8 s (calibration: one such moved a 32-request window's mean excess from ~17 to 63 ms). A stall also shortens
 *   that request's ITL, which the ITL reading keeps.
 * - **Uncertainty:** a moving-block bootstrap over the requests in start order (blocks of ⌈n^⅓⌉ requests: requests
 *   in flight together share stalls), {@link BOOTSTRAP_RESAMPLES} resamples, seeded; the 90 % percentile interval.
 * - **Verdict:** a client passes iff its ITL reading is within ±{@link ITL_BOUND} and its TTFT excess within
 *   [{@link TTFT_EXCESS_MS}.min, {@link TTFT_EXCESS_MS}.max] ms, and the window was long enough to tell: each 90 %
 *   interval's half-width under half its bound (else the verdict is `inconclusive`, a failure too).
 * - **Control:** {@link INJECTED_FAULT}, applied to a real window, must fail.
 */
export const ITL_BOUND = 0.04;
export const TTFT_EXCESS_MS = { min: 0, max: 40 } as const;
const BOOTSTRAP_RESAMPLES = 2000;

/** One request read by the client and by the engine. */
export interface PairedRequest {
  id: string;
  startMs: number;
  /** output tokens */
  tokens: number;
  /** s */
  clientItl: number;
  /** s */
  engineItl: number;
  /** s */
  clientTtft: number;
  /** s */
  engineTtft: number;
}

/** A client's profiled, successful requests joined to the engine's spans by request id; a mismatch throws. */
export function pairWithEngine(records: readonly RequestRecord[], spans: ReadonlyMap<string, EngineRequestSpan>) {
  const profiled = records.filter((r) => r.phase === 'profiling' && r.ok);
  return profiled
    .map((r): PairedRequest => {
      const s = spans.get(r.id);
      if (s === undefined) throw new Error(`request ${r.id}: the engine exported no span for it`);
      if (r.itl_ms === null || r.ttft_ms === null || r.osl === null)
        throw new Error(`request ${r.id}: a successful request without TTFT, ITL or output tokens`);
      if (r.osl !== s.completionTokens || s.completionTokens < 2)
        throw new Error(`request ${r.id}: ${r.osl} output tokens by the client, ${s.completionTokens} by the engine`);
      return {
        id: r.id,
        startMs: r.start_ms,
        tokens: r.osl,
        clientItl: r.itl_ms / 1000,
        engineItl: s.decode / (s.completionTokens - 1),
        clientTtft: r.ttft_ms / 1000,
        engineTtft: s.ttft,
      };
    })
    .sort((a, b) => a.startMs - b.startMs);
}

/** The two readings over a resample of `ps` given by its indices (all of `ps` without). */
function readings(ps: readonly PairedRequest[]) {
  const client = Float64Array.from(ps, (p) => p.clientItl);
  const engine = Float64Array.from(ps, (p) => p.engineItl);
  const excess = Float64Array.from(ps, (p) => (p.clientTtft - p.engineTtft) * 1000);
  const all = Int32Array.from(ps, (_, i) => i);
  const buf = new Float64Array(ps.length);
  return {
    itl(idx: Int32Array = all): number {
      let c = 0;
      let e = 0;
      for (const i of idx) {
        c += client[i]!;
        e += engine[i]!;
      }
      return c / e - 1;
    },
    ttft(idx: Int32Array = all): number {
      for (let k = 0; k < idx.length; k++) buf[k] = excess[idx[k]!]!;
      const sorted = buf.subarray(0, idx.length).sort();
      const m = sorted.length >> 1;
      return sorted.length % 2 ? sorted[m]! : (sorted[m - 1]! + sorted[m]!) / 2;
    },
  };
}

/** ITL: Σ client / Σ engine − 1 (a fraction). */
export function itlReading(ps: readonly PairedRequest[]): number {
  return readings(ps).itl();
}

/** TTFT: the median of client − engine (ms). */
export function ttftExcessMs(ps: readonly PairedRequest[]): number {
  return readings(ps).ttft();
}

/**
 * A moving-block bootstrap's 90 % percentile interval of `stat` over n items in their order: each resample draws blocks
 * of `block` consecutive indices with replacement until it holds n, and `stat` reads the resample's indices;
 * `resamples` draws from `seed`.
 */
export function blockBootstrap90(
  n: number,
  stat: (indices: Int32Array) => number,
  opts: { block: number; resamples: number; seed: number },
): { lo: number; hi: number } {
  const b = Math.max(1, Math.min(opts.block, n));
  const rand = mulberry32(opts.seed);
  const values = new Float64Array(opts.resamples);
  const idx = new Int32Array(n);
  for (let k = 0; k < opts.resamples; k++) {
    let i = 0;
    while (i < n) {
      const start = Math.floor(rand() * (n - b + 1));
      for (let j = 0; j < b && i < n; j++) idx[i++] = start + j;
    }
    values[k] = stat(idx);
  }
  values.sort();
  const at = (q: number): number => values[Math.min(values.length - 1, Math.floor(q * values.length))]!;
  return { lo: at(0.05), hi: at(0.95) };
}

export interface Reading {
  value: number;
  lo: number;
  hi: number;
  /** the 90 % interval's half-width over half the bound: under 1 means the window was long enough to tell */
  precision: number;
  within: boolean;
}

export interface RefereeVerdict {
  requests: number;
  /** fraction */
  itl: Reading;
  /** ms */
  ttft: Reading;
  verdict: 'pass' | 'fail' | 'inconclusive';
  line: string;
}

/** One client's window judged by the pre-registered referee (see the module comment). */
export function referee(ps: readonly PairedRequest[], seed = 1): RefereeVerdict {
  if (ps.length < 10) throw new Error(`the referee needs at least 10 paired requests, got ${ps.length}`);
  const opts = { block: Math.ceil(Math.cbrt(ps.length)), resamples: BOOTSTRAP_RESAMPLES, seed };
  const r = readings(ps);
  const read = (stat: (idx?: Int32Array) => number, min: number, max: number, bound: number): Reading => {
    const value = stat();
    const { lo, hi } = blockBootstrap90(ps.length, stat, opts);
    return { value, lo, hi, precision: (hi - lo) / 2 / (bound / 2), within: value >= min && value <= max };
  };
  const itl = read(r.itl, -ITL_BOUND, ITL_BOUND, ITL_BOUND);
  const ttft = read(r.ttft, TTFT_EXCESS_MS.min, TTFT_EXCESS_MS.max, TTFT_EXCESS_MS.max);
  const verdict =
    !itl.within || !ttft.within ? 'fail' : itl.precision >= 1 || ttft.precision >= 1 ? 'inconclusive' : 'pass';
  const pc = (x: number): string => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(2)} %`;
  const ms = (x: number): string => `${x >= 0 ? '+' : ''}${x.toFixed(1)} ms`;
  const line =
    `${verdict}: ${ps.length} requests; ITL ${pc(itl.value)} [${pc(itl.lo)}, ${pc(itl.hi)}] (bound ±${ITL_BOUND * 100} %), ` +
    `TTFT ${ms(ttft.value)} [${ms(ttft.lo)}, ${ms(ttft.hi)}] (bound ${TTFT_EXCESS_MS.min}..${TTFT_EXCESS_MS.max} ms)`;
  return { requests: ps.length, itl, ttft, verdict, line };
}

/**
 * The fault-injection control, pre-registered with the referee: a client whose ITL reads 8 % high and whose every
 * first token is read 100 ms late. The real-vLLM test applies it to our window ({@link withInjectedFault}) and the
 * referee must fail it, and each part alone.
 */
export const INJECTED_FAULT = { itlBias: 0.08, lateFirstMs: 100 } as const;

/**
 * A real window's paired requests as a faulty client would have read them: ITL × (1 + `itlBias`), and the first token
 * read `lateFirstMs` late (TTFT + late; the last token's time unchanged, so ITL − late / (tokens − 1) first).
 */
export function withInjectedFault(
  ps: readonly PairedRequest[],
  fault: { itlBias: number; lateFirstMs: number },
): PairedRequest[] {
  const late = fault.lateFirstMs / 1000;
  return ps.map((p) => ({
    ...p,
    clientItl: (p.clientItl - late / (p.tokens - 1)) * (1 + fault.itlBias),
    clientTtft: p.clientTtft + late,
  }));
}
