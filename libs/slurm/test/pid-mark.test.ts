import { describe, expect, it } from 'vitest';
import { PID_MARK, PidMarkReader } from '../src/pid-mark';

describe('PidMarkReader', () => {
  it('passes rc-file lines before the mark through, consumes the mark, then passes stderr as is', () => {
    const r = new PidMarkReader();
    expect(r.feed('motd line\nwel')).toBe('motd line\n');
    expect(r.pid).toBeUndefined();
    expect(r.feed(`come\n${PID_MARK}4242\nfirst err`)).toBe('welcome\nfirst err');
    expect(r.pid).toBe(4242);
    expect(r.feed(`${PID_MARK}1\n`)).toBe(`${PID_MARK}1\n`);
    expect(r.pid).toBe(4242);
  });

  it('a mark split across reads is found once its line ends', () => {
    const r = new PidMarkReader();
    expect(r.feed(PID_MARK.slice(0, 5))).toBe('');
    expect(r.feed(`${PID_MARK.slice(5)}77`)).toBe('');
    expect(r.pid).toBeUndefined();
    expect(r.feed('\n')).toBe('');
    expect(r.pid).toBe(77);
  });

  it('a mark without a number is pid 0; an unfinished line is held until flush', () => {
    const r = new PidMarkReader();
    expect(r.feed(`${PID_MARK}x\n`)).toBe('');
    expect(r.pid).toBe(0);
    const q = new PidMarkReader();
    expect(q.feed('no newline')).toBe('');
    expect(q.flush()).toBe('no newline');
    expect(q.flush()).toBe('');
  });
});
