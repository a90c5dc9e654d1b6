import { describe, expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileImports, importCircles, projectImports, tsFiles, workspaceProjects } from './import-graph';
import { repoRoot } from '@infersweep/testkit/stack';

const libs = workspaceProjects()
  .filter((p) => p.startsWith('libs/'))
  .map((p) => p.slice('libs/'.length));

/** The rows `| \`libs/x\` | … | \`core\`, \`topology\` |` of the section a heading opens, as project → imports. */
function documentedImports(markdown: string, heading: string): Map<string, string[]> {
  const section = markdown.split(/^## /m).find((s) => s.startsWith(`${heading}\n`)) ?? '';
  const rows = section
    .split('\n')
    .map((line) => line.split('|').map((cell) => cell.trim()))
    .filter((cells) => /^`(libs|apps)\/[\w-]+`$/.test(cells[1] ?? ''));
  return new Map(
    rows.map((cells) => {
      const imports = cells[cells.length - 2]!;
      const names = imports === '—' ? [] : imports.split(',').map((n) => n.trim().replace(/`/g, ''));
      return [cells[1]!.replace(/`/g, ''), names.sort()];
    }),
  );
}

/** What a lib README names under `src/`: each backticked `src/…` path. */
const namedPaths = (readme: string) => [...readme.matchAll(/`(src\/[^`\s]+)`/g)].map((m) => m[1]!);

describe('workspace layout', () => {
  it.each(libs.filter((lib) => lib !== 'testkit'))('libs/%s exposes exactly one index.ts entry', (lib) => {
    const pkg = JSON.parse(readFileSync(join(repoRoot, 'libs', lib, 'package.json'), 'utf8'));
    expect(pkg.exports).toEqual({ '.': './src/index.ts' });
    expect(existsSync(join(repoRoot, 'libs', lib, 'src', 'index.ts'))).toBe(true);
  });

  it('libs/testkit exposes each src/ file as an entry of its own and has no index.ts', () => {
    const pkg = JSON.parse(readFileSync(join(repoRoot, 'libs', 'testkit', 'package.json'), 'utf8'));
    expect(pkg.exports).toEqual({ './*': './src/*.ts' });
    const paths = JSON.parse(readFileSync(join(repoRoot, 'tsconfig.base.json'), 'utf8')).compilerOptions.paths;
    expect(paths['@infersweep/testkit/*']).toEqual(['libs/testkit/src/*']);
    expect(existsSync(join(repoRoot, 'libs', 'testkit', 'src', 'index.ts'))).toBe(false);
  });

  it('libs/core and libs/topology import no I/O module', () => {
    const io = /from\s+['"](node:[^'"]+|fs|path|child_process|net|http|https|os|ssh2|undici|@temporalio\/[^'"]+)['"]/;
    const offenders = ['core', 'topology']
      .flatMap((lib) => tsFiles(join(repoRoot, 'libs', lib, 'src')))
      .filter((f) => io.test(readFileSync(f, 'utf8')));
    expect(offenders).toEqual([]);
  });

  it('no lib imports an app', () => {
    const offenders = libs
      .flatMap((lib) => tsFiles(join(repoRoot, 'libs', lib, 'src')))
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

describe('the import graph', () => {
  const graph = fileImports();

  it('has no circle among the files of libs/*/src and apps/*/src (type-only imports included)', () => {
    expect(graph.size).toBeGreaterThan(100);
    expect(importCircles(graph)).toEqual([]);
  });

  it('finds a circle when there is one (the check can fail)', () => {
    const withCircle = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts', 'd.ts']],
      ['d.ts', []],
      ['e.ts', ['e.ts']],
    ]);
    expect(importCircles(withCircle)).toEqual([['a.ts', 'b.ts', 'c.ts'], ['e.ts']]);
  });

  it("is docs/architecture.md's table of projects and their imports", () => {
    const doc = documentedImports(
      readFileSync(join(repoRoot, 'docs', 'architecture.md'), 'utf8'),
      'Projects and their imports',
    );
    expect(Object.fromEntries(doc)).toEqual(Object.fromEntries(projectImports(graph)));
  });
});

describe('lib READMEs', () => {
  it.each(libs)('libs/%s/README.md names every entry of src/ (a file, or a folder by any path in it)', (lib) => {
    const readme = readFileSync(join(repoRoot, 'libs', lib, 'README.md'), 'utf8');
    const named = namedPaths(readme);
    const unnamed = readdirSync(join(repoRoot, 'libs', lib, 'src'), { withFileTypes: true })
      .filter((e) => e.name !== 'index.ts')
      .map((e) => (e.isDirectory() ? `src/${e.name}/` : `src/${e.name}`))
      .filter((entry) => !named.some((n) => (entry.endsWith('/') ? n.startsWith(entry) : n === entry)));
    expect(unnamed).toEqual([]);
  });

  it.each(libs)('libs/%s/README.md names no src/ path that does not exist', (lib) => {
    const readme = readFileSync(join(repoRoot, 'libs', lib, 'README.md'), 'utf8');
    const missing = namedPaths(readme).filter((p) => !existsSync(join(repoRoot, 'libs', lib, p)));
    expect(missing).toEqual([]);
  });
});
