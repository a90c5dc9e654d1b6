import { describe, expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './stack-env';

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? sources(p) : p.endsWith('.ts') ? [p] : [];
  });
}

describe('workspace layout', () => {
  it.each(['core', 'topology', 'slurm', 'agentx', 'sweep', 'orchestrator'])(
    'libs/%s exposes exactly one index.ts entry',
    (lib) => {
      const pkg = JSON.parse(readFileSync(join(repoRoot, 'libs', lib, 'package.json'), 'utf8'));
      expect(pkg.exports).toEqual({ '.': './src/index.ts' });
      expect(existsSync(join(repoRoot, 'libs', lib, 'src', 'index.ts'))).toBe(true);
    },
  );

  it('libs/core and libs/topology import no I/O module', () => {
    const io = /from\s+['"](node:[^'"]+|fs|path|child_process|net|http|https|os|ssh2|undici|@temporalio\/[^'"]+)['"]/;
    const offenders = ['core', 'topology']
      .flatMap((lib) => sources(join(repoRoot, 'libs', lib, 'src')))
      .filter((f) => io.test(readFileSync(f, 'utf8')));
    expect(offenders).toEqual([]);
  });

  it('no lib imports an app', () => {
    const offenders = ['core', 'topology', 'slurm', 'agentx', 'sweep', 'orchestrator']
      .flatMap((lib) => sources(join(repoRoot, 'libs', lib, 'src')))
      .filter((f) => /from\s+['"][^'"]*apps\//.test(readFileSync(f, 'utf8')));
    expect(offenders).toEqual([]);
  });

  it('libs/core finds the repository root (the one repoRoot every package uses)', () => {
    expect(repoRoot.endsWith('/')).toBe(true);
    expect(JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')).name).toBe('infersweep');
  });

  it('pins every @temporalio package to one exact version', () => {
    const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8'));
    const all = { ...pkg.dependencies, ...pkg.devDependencies } as Record<string, string>;
    const versions = new Set(
      Object.entries(all)
        .filter(([n]) => n.startsWith('@temporalio/'))
        .map(([, v]) => v),
    );
    expect(versions.size).toBe(1);
    expect([...versions][0]).toMatch(/^\d+\.\d+\.\d+$/);
  });
});
