import { describe, expect, it } from 'vitest';
import { numList, options, parseCell } from '../lib/args';

describe('bench options', () => {
  it('reads --key value pairs', () => {
    const o = options(['--conc', '16,64', '--no-aiperf']);
    expect(o('--conc')).toBe('16,64');
    expect(o('--duration')).toBeUndefined();
  });

  it('parses number lists and names the option and value it refuses', () => {
    expect(numList('16,64,1024')).toEqual([16, 64, 1024]);
    expect(() => numList('16,,64', '--conc')).toThrow('bench --conc: "" is not a positive number');
    expect(() => numList('16,-1', '--conc')).toThrow(/"-1" is not a positive number/);
    expect(() => numList('abc', '--rates')).toThrow(/--rates: "abc"/);
  });

  it('parses scaling cells with k and m units (1m = 1024² tokens)', () => {
    expect(parseCell('16x4k')).toEqual({ concurrency: 16, contextTokens: 4096 });
    expect(parseCell('1024x32K')).toEqual({ concurrency: 1024, contextTokens: 32768 });
    expect(parseCell('16x1m')).toEqual({ concurrency: 16, contextTokens: 1048576 });
    expect(parseCell(' 2x500 ')).toEqual({ concurrency: 2, contextTokens: 500 });
    expect(() => parseCell('16*4k')).toThrow('"16*4k" is not <concurrency>x<context>[k|m]');
    expect(() => parseCell('0x4k')).toThrow(/is not/);
  });
});
