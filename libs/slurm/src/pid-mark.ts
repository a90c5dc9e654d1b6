/** First stderr line of every remote command: the remote shell's pid (= its process group). */
export const PID_MARK = '__infersweep_pid=';

/**
 * A remote command's stderr up to its pid mark (pure): lines a login shell's rc files print come
 * before the mark and pass through, the mark line is consumed, and from then on stderr passes as is.
 */
export class PidMarkReader {
  /** The remote shell's pid once its mark arrived (0 for a mark without a number). */
  pid: number | undefined;
  private pending = '';

  /** The stderr text of this read to pass on ('' while it is only part of a line before the mark). */
  feed(text: string): string {
    if (this.pid !== undefined) return text;
    this.pending += text;
    let out = '';
    let nl: number;
    while (this.pid === undefined && (nl = this.pending.indexOf('\n')) >= 0) {
      const line = this.pending.slice(0, nl);
      this.pending = this.pending.slice(nl + 1);
      if (line.startsWith(PID_MARK)) this.pid = Number(line.slice(PID_MARK.length)) || 0;
      else out += `${line}\n`;
    }
    if (this.pid !== undefined) out += this.flush();
    return out;
  }

  /** What is held back: an unfinished line before the mark, when the stream closes. */
  flush(): string {
    const rest = this.pending;
    this.pending = '';
    return rest;
  }
}
