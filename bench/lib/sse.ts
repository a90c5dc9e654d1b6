/**
 * The two minimal SSE readers the client-ceiling bench compares the AgentX client with (pure, unit-tested
 * in bench/test/sse.test.ts):
 *   - NeedleCounter: counts a byte needle (`data:`, `data: [DONE]`) in a byte stream, across chunk
 *     boundaries, without decoding: the raw-socket reader's whole "parser" (the physical bound).
 *   - SseFramer: line-based SSE framing (`data:` lines, blank line ends an event, CR LF or LF), no JSON:
 *     the bare reader's parser (Node `http` + SSE framing only).
 */
export class NeedleCounter {
  count = 0;
  private carry: Buffer = Buffer.alloc(0);
  private readonly needle: Buffer;
  constructor(needle: string) {
    this.needle = Buffer.from(needle, 'latin1');
    if (this.needle.length === 0) throw new Error('NeedleCounter: empty needle');
  }
  /** Feed the next bytes; returns how many needles ended in this chunk. */
  feed(buf: Buffer): number {
    const n = this.needle.length;
    let found = 0;
    if (this.carry.length > 0) {
      // needles that start in the carried tail and end in this chunk
      const edge = Buffer.concat([this.carry, buf.subarray(0, n - 1)]);
      for (let i = edge.indexOf(this.needle); i >= 0 && i < this.carry.length; i = edge.indexOf(this.needle, i + 1))
        found++;
    }
    for (let i = buf.indexOf(this.needle); i >= 0; i = buf.indexOf(this.needle, i + n)) found++;
    const keep = Math.min(n - 1, buf.length);
    // a carried tail shorter than n-1 (tiny chunks) keeps its older bytes too
    this.carry =
      keep === n - 1
        ? Buffer.from(buf.subarray(buf.length - keep))
        : Buffer.concat([this.carry, buf]).subarray(-(n - 1));
    this.count += found;
    return found;
  }
}

/** SSE framing only: calls onEvent(data) per event (multi-line data joined by "\n"), no JSON parsing. */
export class SseFramer {
  private buf = '';
  private data: string | null = null;
  constructor(private readonly onEvent: (data: string) => void) {}
  feed(text: string): void {
    let s = this.buf.length ? this.buf + text : text;
    let start = 0;
    for (let nl = s.indexOf('\n', start); nl >= 0; nl = s.indexOf('\n', start)) {
      const end = nl > start && s.charCodeAt(nl - 1) === 13 ? nl - 1 : nl;
      if (end === start) {
        if (this.data !== null) this.onEvent(this.data);
        this.data = null;
      } else if (s.startsWith('data:', start)) {
        const v = s.slice(s.charCodeAt(start + 5) === 32 ? start + 6 : start + 5, end);
        this.data = this.data === null ? v : `${this.data}\n${v}`;
      }
      start = nl + 1;
    }
    s = s.slice(start);
    this.buf = s;
  }
}
