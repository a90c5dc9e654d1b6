import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NeedleCounter, SseFramer } from '../lib/sse';

const stream = (n: number): string => {
  let s = '';
  for (let i = 0; i < n; i++) s += `data: {"choices":[{"delta":{"content":"w${i}"}}]}\n\n`;
  return `${s}data: [DONE]\n\n`;
};

/** Split a string into chunks at the given cut points. */
const cut = (s: string, cuts: number[]): string[] => {
  const at = [...new Set(cuts.map((c) => c % (s.length + 1)))].sort((a, b) => a - b);
  const out: string[] = [];
  let prev = 0;
  for (const c of at) {
    out.push(s.slice(prev, c));
    prev = c;
  }
  out.push(s.slice(prev));
  return out;
};

describe('NeedleCounter', () => {
  it('counts needles in one buffer and returns how many ended in each chunk', () => {
    const c = new NeedleCounter('data:');
    expect(c.feed(Buffer.from(stream(3)))).toBe(4);
    expect(c.count).toBe(4);
  });

  it('counts a needle split across two, three and one-byte chunks exactly once', () => {
    const c = new NeedleCounter('data: [DONE]');
    for (const ch of 'xx data: [DONE]\n\n') c.feed(Buffer.from(ch));
    expect(c.count).toBe(1);
    const d = new NeedleCounter('data:');
    expect(d.feed(Buffer.from('dat'))).toBe(0);
    expect(d.feed(Buffer.from('a'))).toBe(0);
    expect(d.feed(Buffer.from(':x data:'))).toBe(2);
  });

  it('finds every frame whatever the chunking (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 40 }), fc.array(fc.nat(4000), { maxLength: 30 }), (n, cuts) => {
        const frames = new NeedleCounter('data:');
        const done = new NeedleCounter('data: [DONE]');
        for (const part of cut(stream(n), cuts)) {
          frames.feed(Buffer.from(part));
          done.feed(Buffer.from(part));
        }
        return frames.count === n + 1 && done.count === 1;
      }),
    );
  });

  it('refuses an empty needle', () => {
    expect(() => new NeedleCounter('')).toThrow(/empty needle/);
  });
});

describe('SseFramer', () => {
  it('emits one event per blank-line-terminated block, LF or CR LF, with multi-line data joined', () => {
    const got: string[] = [];
    const f = new SseFramer((d) => got.push(d));
    f.feed('data: a\r\n\r\ndata:b\ndata: c\n\n: comment\n\nevent: x\ndata: d\n\n');
    expect(got).toEqual(['a', 'b\nc', 'd']);
  });

  it('yields the same events whatever the chunking (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 30 }), fc.array(fc.nat(3000), { maxLength: 30 }), (n, cuts) => {
        const got: string[] = [];
        const f = new SseFramer((d) => got.push(d));
        for (const part of cut(stream(n), cuts)) f.feed(part);
        return (
          got.length === n + 1 &&
          got[n] === '[DONE]' &&
          (n === 0 || got[n - 1] === `{"choices":[{"delta":{"content":"w${n - 1}"}}]}`)
        );
      }),
    );
  });

  it('holds back an event until its blank line arrives', () => {
    const got: string[] = [];
    const f = new SseFramer((d) => got.push(d));
    f.feed('data: x\n');
    expect(got).toEqual([]);
    f.feed('\n');
    expect(got).toEqual(['x']);
  });
});
