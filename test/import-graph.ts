/**
 * The workspace's import graph, read from the sources (not from Nx's cache): every import, export-from
 * and `import()` of every `.ts` file under `libs/<name>/src` and `apps/<name>/src`, type-only imports
 * included (they tie files together as much as any other). `@infersweep/<lib>` resolves to the lib's
 * `src/index.ts`, a relative specifier to the file or folder index it names; packages are left out.
 * test/workspace.test.ts checks it has no circles and that docs/architecture.md draws it.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { repoRoot } from '@infersweep/testkit/stack';

/** `libs/core`, `apps/cli`, …: every folder of libs/ and apps/ with a `src/`, sorted. */
export function workspaceProjects(root = repoRoot): string[] {
  return ['apps', 'libs']
    .flatMap((kind) => readdirSync(join(root, kind)).map((name) => `${kind}/${name}`))
    .filter((p) => existsSync(join(root, p, 'src')))
    .sort();
}

/** Every `.ts` file under a folder (absolute paths). */
export function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? tsFiles(p) : p.endsWith('.ts') ? [p] : [];
  });
}

function resolveImport(root: string, from: string, spec: string): string | undefined {
  const lib = /^@infersweep\/([^/]+)$/.exec(spec);
  const base = lib
    ? join(root, 'libs', lib[1]!, 'src', 'index')
    : spec.startsWith('.')
      ? resolve(dirname(from), spec.replace(/\.js$/, ''))
      : undefined;
  if (base === undefined) return undefined;
  const file = [`${base}.ts`, join(base, 'index.ts')].find((f) => existsSync(f));
  if (!file) throw new Error(`${relative(root, from)}: cannot resolve the import '${spec}'`);
  return file;
}

/** File → the files it imports, as paths relative to the repository root. */
export function fileImports(root = repoRoot): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const project of workspaceProjects(root)) {
    for (const file of tsFiles(join(root, project, 'src'))) {
      const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
      const targets = importedFiles.flatMap((i) => resolveImport(root, file, i.fileName) ?? []);
      graph.set(relative(root, file), [...new Set(targets.map((t) => relative(root, t)))].sort());
    }
  }
  return graph;
}

/** Every import circle: the strongly connected components with more than one file, or a file importing itself. */
export function importCircles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || graph.get(v)?.includes(v)) circles.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return circles;
}

const projectOf = (file: string) => file.split('/').slice(0, 2).join('/');

/** Project → the libs (by name: `core`, `topology`, …) its sources import, sorted; itself left out. */
export function projectImports(graph: ReadonlyMap<string, readonly string[]>): Map<string, string[]> {
  const out = new Map<string, Set<string>>();
  for (const [file, targets] of graph) {
    const from = projectOf(file);
    const deps = out.get(from) ?? new Set<string>();
    out.set(from, deps);
    for (const to of targets.map(projectOf)) if (to !== from) deps.add(to.replace(/^libs\//, ''));
  }
  return new Map([...out].sort(([a], [b]) => a.localeCompare(b)).map(([p, deps]) => [p, [...deps].sort()]));
}
