/**
 * Timing error that is not the server's (pure; unit-tested in bench/test/timing.test.ts). The bench's
 * tick server (bench/tick-server.ts) writes each token as content `@<send time, µs of CLOCK_MONOTONIC>`
 * and logs, per request, the send times of its first and last token; a reader's receive time of the same
 * event on the same clock gives receive − send per event.
 */

/** The send timestamp (µs) a tick-server content string carries, or null. */
export function parseSendUs(content: string): number | null {
  const at = content.indexOf('@');
  if (at < 0) return null;
  const v = Number(content.slice(at + 1));
  return Number.isFinite(v) && content.length > at + 1 ? v : null;
}

/** Tick-server log line: one request (its sequence number travels back in usage.cached_tokens). */
export interface SendLogEntry {
  seq: number;
  firstSendUs: number;
  lastSendUs: number;
  tokens: number;
}

/** What a client record gives, converted to the server's clock (µs): first and last token receive times. */
export interface ClientEventTimes {
  seq: number;
  firstRecvUs: number;
  lastRecvUs: number | null;
}

/**
 * Receive − send (ms) of the events a client's TTFT and ITL are computed from (first and last token of
 * every request), joined on the request's sequence number. Requests missing on either side are counted
 * as unmatched (a non-zero count is printed: it means records and log disagree).
 */
export function joinErrors(
  log: readonly SendLogEntry[],
  client: readonly ClientEventTimes[],
): { errorsMs: number[]; unmatched: number } {
  const bySeq = new Map(log.map((e) => [e.seq, e]));
  const errorsMs: number[] = [];
  let unmatched = 0;
  for (const c of client) {
    const s = bySeq.get(c.seq);
    if (!s) {
      unmatched++;
      continue;
    }
    errorsMs.push((c.firstRecvUs - s.firstSendUs) / 1000);
    if (c.lastRecvUs !== null && s.tokens > 1) errorsMs.push((c.lastRecvUs - s.lastSendUs) / 1000);
  }
  return { errorsMs, unmatched };
}

/**
 * A record of the AgentX client (requests.jsonl, ms on the client's performance.now() clock) as event
 * times on CLOCK_MONOTONIC µs: `offsetMs` = hrtime(ms) − performance.now() measured in that process.
 * The last token time is the one the client's ITL uses: first + ITL·(OSL − 1).
 */
export function clientEventTimes(
  rec: {
    cached_tokens: number | null;
    start_ms: number;
    ttft_ms: number | null;
    itl_ms: number | null;
    osl: number | null;
  },
  offsetMs: number,
): ClientEventTimes | null {
  if (rec.cached_tokens === null || rec.ttft_ms === null) return null;
  const first = rec.start_ms + rec.ttft_ms + offsetMs;
  const last = rec.itl_ms !== null && rec.osl !== null && rec.osl > 1 ? first + rec.itl_ms * (rec.osl - 1) : null;
  return { seq: rec.cached_tokens, firstRecvUs: first * 1000, lastRecvUs: last === null ? null : last * 1000 };
}

/**
 * aiperf's `profile_export_raw.jsonl` (`--export-level raw`): every recorded response has aiperf's receive
 * time `perf_ns` (time.perf_counter_ns: CLOCK_MONOTONIC on Linux, the tick server's clock) and its SSE
 * packets (`packets: [{name: "data", value}]`; older builds: `text`), each with the tick server's
 * `@<send µs>`. Profiling-phase records only (when the phase is given).
 */
export function aiperfRawErrors(jsonl: string): {
  errorsMs: number[];
  firstLastMs: number[];
  events: number;
  spanSeconds: number;
} {
  const errorsMs: number[] = [];
  const firstLastMs: number[] = [];
  let lo = Infinity;
  let hi = -Infinity;
  for (const line of jsonl.split('\n')) {
    if (!line.trim()) continue;
    const r = JSON.parse(line) as {
      metadata?: { benchmark_phase?: string };
      responses?: Array<{ perf_ns?: number; text?: string; packets?: Array<{ name?: string; value?: string }> }>;
    };
    if (r.metadata?.benchmark_phase && r.metadata.benchmark_phase !== 'profiling') continue;
    const mine: number[] = [];
    for (const x of r.responses ?? []) {
      if (typeof x.perf_ns !== 'number') continue;
      const recvUs = x.perf_ns / 1000;
      const texts = x.packets
        ? x.packets.filter((p) => p.name === 'data' && typeof p.value === 'string').map((p) => p.value!)
        : typeof x.text === 'string'
          ? [x.text]
          : [];
      for (const text of texts) {
        const m = /"content":"@(\d+)"/.exec(text);
        if (!m) continue;
        mine.push((recvUs - Number(m[1])) / 1000);
        lo = Math.min(lo, recvUs);
        hi = Math.max(hi, recvUs);
      }
    }
    errorsMs.push(...mine);
    firstLastMs.push(...firstAndLast(mine));
  }
  return { errorsMs, firstLastMs, events: errorsMs.length, spanSeconds: errorsMs.length > 1 ? (hi - lo) / 1e6 : 0 };
}

/** The first and the last of one response's per-event errors (the events TTFT and ITL are computed from). */
export function firstAndLast(errors: readonly number[]): number[] {
  if (errors.length === 0) return [];
  return errors.length === 1 ? [errors[0]!] : [errors[0]!, errors[errors.length - 1]!];
}
