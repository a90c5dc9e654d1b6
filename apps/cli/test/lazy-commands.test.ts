/**
 * The CLI registers every command without loading what the commands run (apps/cli/src/main.ts): help
 * and usage errors load commander and libs/core only, and a command loads what it needs, not the
 * worker SDK. The spawned CLI's node process (the one running main.ts) lists the modules it loaded
 * when it exits.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '@infersweep/testkit/cli';

const dir = mkdtempSync(join(tmpdir(), 'infersweep-lazy-'));
const probe = join(dir, 'loaded-modules.cjs');

beforeAll(() => {
  // preloaded with --require: at exit, the process running main.ts writes every module it loaded
  writeFileSync(
    probe,
    `process.on('exit', () => {
  if (!/apps\\/cli\\/src\\/main\\.ts$/.test(process.argv[1] ?? '')) return;
  require('node:fs').writeFileSync(process.env.LOADED_MODULES_FILE, Object.keys(require.cache).join('\\n'));
});
`,
  );
});

/** Run the CLI; the packages and the workspace files (relative to the repository) its main process loaded. */
async function loaded(args: string[]): Promise<{ code: number; packages: string[]; files: string[] }> {
  const out = join(dir, `${args.join('_').replace(/[^\w-]/g, '')}.txt`);
  const r = await runCli(args, {
    env: {
      ...process.env,
      INFERSWEEP_STACK: '/stack',
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --require ${probe}`,
      LOADED_MODULES_FILE: out,
    },
    timeoutMs: 60_000,
  });
  const paths = readFileSync(out, 'utf8').split('\n');
  const packages = new Set(paths.flatMap((p) => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(p)?.[1] ?? []));
  const files = paths.flatMap((p) => /\/((?:apps|libs)\/[^/]+\/src\/.*)$/.exec(p)?.[1] ?? []);
  return { code: r.code, packages: [...packages].sort(), files: files.filter((f) => !f.includes('node_modules')) };
}

const HEAVY = ['@temporalio/client', '@temporalio/worker', 'pg', 'ssh2', 'playwright-core', 'webpack', 'zod'];

describe('the CLI loads a command only when it runs', () => {
  it.each(['--help', 'plan --help', 'schedule create --help', 'status --bogus'])(
    '`infersweep %s` loads commander and libs/core only',
    async (line) => {
      const r = await loaded(line.split(' '));
      expect(r.code).toBe(line.includes('--bogus') ? 2 : 0);
      expect(r.packages.filter((p) => HEAVY.includes(p))).toEqual([]);
      const outside = r.files.filter(
        (f) =>
          !/^(apps\/cli\/src\/(main|commands\/[\w-]+|ops\/cli|report\/axes)\.ts|libs\/core\/src\/[\w-]+\.ts)$/.test(f),
      );
      expect(outside).toEqual([]);
      // every command file was loaded (registered), none of what they run
      expect(r.files.filter((f) => f.startsWith('apps/cli/src/commands/')).length).toBeGreaterThanOrEqual(17);
    },
  );

  it('`plan` loads the orchestrator but not the worker SDK, the browser or the report', async () => {
    const r = await loaded(['plan', '--orientation', 'balanced', '--cluster', 'h200']);
    expect(r.code).toBe(0);
    expect(r.files).toContain('libs/orchestrator/src/config-file.ts');
    expect(r.packages.filter((p) => ['@temporalio/worker', 'webpack', 'playwright-core'].includes(p))).toEqual([]);
    expect(r.files.filter((f) => f.startsWith('apps/cli/src/report/') && f !== 'apps/cli/src/report/axes.ts')).toEqual(
      [],
    );
  });
});
