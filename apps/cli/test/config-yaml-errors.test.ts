import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runCli } from '@infersweep/testkit/cli';

const shipped = readFileSync(fileURLToPath(new URL('../../../configs/kimik3-fp4-h200.yaml', import.meta.url)), 'utf8');
const dir = mkdtempSync(join(tmpdir(), 'infersweep-yaml-'));
const lineOf = (text: string, needle: string): number => text.split('\n').findIndex((l) => l.includes(needle)) + 1;

function configFile(name: string, text: string): string {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

const lol = Array.from({ length: 9 }, () => '"lol"').join(', ');
const levels = 'abcdefghi'.split('');
const bomb = levels
  .map((l, i) =>
    i === 0
      ? `${l}: &${l} [${lol}]`
      : `${l}: &${l} [${Array.from({ length: 9 }, () => `*${levels[i - 1]}`).join(', ')}]`,
  )
  .join('\n');
const duplicate = shipped.replace(
  'image: vllm/vllm-openai:kimi-k3\n',
  'image: vllm/vllm-openai:kimi-k3\nimage: other\n',
);
const unclosed = shipped.replace(
  '{ tp: 1, pp: 2, dp: 16, ep: 16, nodes: 4 }',
  '{ tp: 1, pp: 2, dp: 16, ep: 16, nodes: 4',
);

describe('a hostile YAML config is a config error (exit 2, file, line, a sentence; no JavaScript stack)', () => {
  const cases = [
    { name: 'bomb.yaml', text: bomb, line: 5, sentence: 'aliases expand this config to more than 10000 values' },
    {
      name: 'duplicate.yaml',
      text: duplicate,
      line: lineOf(duplicate, 'image: other'),
      sentence: 'Map keys must be unique',
    },
    {
      name: 'unclosed.yaml',
      text: unclosed,
      line: lineOf(unclosed, '{ tp: 1, pp: 2, dp: 16, ep: 16, nodes: 4'),
      sentence: 'the { opened on this line is not closed',
    },
  ];

  it('alias bomb, duplicate key, unclosed flow mapping', async () => {
    expect(shipped).not.toBe(duplicate);
    expect(shipped).not.toBe(unclosed);
    const runs = await Promise.all(
      cases.map((c) =>
        runCli(['plan', '--config', configFile(c.name, c.text), '--orientation', 'latency', '--cluster', 'h200'], {
          env: { ...process.env },
          timeoutMs: 60_000,
        }),
      ),
    );
    runs.forEach((r, i) => {
      const c = cases[i]!;
      expect(r.code, r.stderr).toBe(2);
      expect(r.stdout).toBe('');
      const file = join(dir, c.name);
      const line = r.stderr.split('\n').find((l) => l.includes(file));
      expect(line, r.stderr).toContain(c.sentence);
      expect(line).toMatch(new RegExp(`\\(line ${c.line}\\)$`));
      expect(r.stderr).not.toMatch(/^\s+at .+:\d+:\d+\)?$/m); // no stack frame
      expect(r.stderr).not.toMatch(/ReferenceError|TypeError|RangeError/);
    });
  }, 60_000); // three CLI spawns in parallel, ~7 s each on a loaded 2-core host
});
