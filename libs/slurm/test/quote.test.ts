import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { shellJoin, shellQuote, withEnv } from '../src/index';

/** What /bin/sh makes of a command line: each argument on its own, NUL-separated. */
function shArgs(line: string): string[] {
  const out = execFileSync('/bin/sh', ['-c', `printf '%s\\0' ${line}`], { encoding: 'utf8' });
  return out.split('\0').slice(0, -1);
}

const HOSTILE = [
  '$(touch /tmp/x)',
  '`touch /tmp/x`',
  'a; touch /tmp/x',
  "it's",
  '"dq"',
  'line1\nline2',
  '*',
  '~',
  '$HOME',
  '-rf',
  '',
  ' lead',
  'tab\there',
  '\\',
  "'",
  "''",
  'a|b&c>d<e',
  '!event',
];

describe('shellQuote / shellJoin', () => {
  it('leaves plain words alone and quotes everything else', () => {
    expect(shellQuote('node1')).toBe('node1');
    expect(shellQuote('--time=5')).toBe('--time=5');
    expect(shellQuote('')).toBe("''");
    expect(shellQuote("it's")).toBe(`'it'\\''s'`);
    expect(shellQuote('$(x)')).toBe(`'$(x)'`);
  });

  it('rejects NUL and empty argv', () => {
    expect(() => shellQuote('a\0b')).toThrow(TypeError);
    expect(() => shellJoin([])).toThrow(TypeError);
  });

  it('hostile strings reach the program intact and nothing runs', () => {
    const dir = mkdtempSync(join(tmpdir(), 'infersweep-quote-'));
    const marker = join(dir, 'pwned');
    const values = [...HOSTILE, ...HOSTILE.map((h) => h.replace('/tmp/x', marker))];
    expect(shArgs(shellJoin(values))).toEqual(values);
    expect(existsSync(marker)).toBe(false);
  });

  it('round-trips any string through /bin/sh (property)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.string({ unit: 'binary' }).map((s) => s.replace(/\0/g, '')),
          { minLength: 1, maxLength: 6 },
        ),
        (argv) => {
          expect(shArgs(shellJoin(argv))).toEqual(argv);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('withEnv prefixes env K=V and validates names', () => {
    expect(withEnv(['cmd', 'a'], { A: '1', B_2: '$(x)' })).toEqual(['env', 'A=1', 'B_2=$(x)', 'cmd', 'a']);
    expect(withEnv(['cmd'], {})).toEqual(['cmd']);
    expect(() => withEnv(['cmd'], { 'A;rm': '1' })).toThrow(/invalid environment variable name/);
    expect(() => withEnv(['cmd'], { '1A': '1' })).toThrow(TypeError);
  });
});
