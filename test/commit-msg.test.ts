import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '@infersweep/testkit/stack';

const hook = join(repoRoot, '.githooks', 'commit-msg');
const dir = mkdtempSync(join(tmpdir(), 'commit-msg-'));

/** Run the hook as git does: the message in a file, its path the one argument. */
function check(message: string): { status: number | null; stderr: string } {
  const file = join(dir, 'COMMIT_EDITMSG');
  writeFileSync(file, message);
  const r = spawnSync(hook, [file], { encoding: 'utf8' });
  return { status: r.status, stderr: r.stderr };
}

describe('the commit-msg hook (.githooks/commit-msg)', () => {
  it('rejects a 100-character subject, naming its length', () => {
    const r = check(`${'Refuse '.repeat(15).slice(0, 100)}\n\nWhy it changed.\n`);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('the subject is 100 characters; keep it to 72');
  });

  it('accepts a subject of exactly 72 characters (counted in characters, not bytes) and a body after a blank line', () => {
    const subject = `Refuse a grant wait past the partition limit ${'é'.repeat(72 - 45)}`;
    expect([...subject]).toHaveLength(72);
    const r = check(`${subject}\n\nThe body says why and what was measured.\n# a comment git strips\n`);
    expect(r).toEqual({ status: 0, stderr: '' });
  });

  it('rejects a body with no blank line after the subject', () => {
    const r = check('Refuse a grant wait past the partition limit\nThe body starts here.\n');
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('a blank line must separate the subject from the body');
  });

  it("ignores git's comment lines and a verbose commit's diff below the scissors line", () => {
    const scissors = '# ------------------------ >8 ------------------------';
    const r = check(`Add the commit-msg check\n# Please enter the commit message\n${scissors}\n${'x'.repeat(200)}\n`);
    expect(r).toEqual({ status: 0, stderr: '' });
  });
});
