/**
 * The boundary rule for tests and bench (eslint.config.mjs, docs/testing.md "The test kit") can fail: ESLint
 * runs on offending samples at real paths and names the rule, and the same imports by package name pass.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { ESLint } from 'eslint';
import { beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '@infersweep/testkit/stack';

let eslint: ESLint;

beforeAll(async () => {
  // @nx/enforce-module-boundaries reads the cached project graph (`npm run lint` writes it the same way)
  await new Promise<void>((resolve, reject) =>
    execFile(join(repoRoot, 'node_modules', '.bin', 'nx'), ['show', 'projects'], { cwd: repoRoot }, (err) =>
      err ? reject(err) : resolve(),
    ),
  );
  eslint = new ESLint({
    cwd: repoRoot,
    // the import rules only: no type information needed for a sample that is not on disk
    overrideConfig: {
      languageOptions: { parserOptions: { projectService: false } },
      rules: { '@typescript-eslint/no-floating-promises': 'off' },
    },
  });
}, 120_000);

/** The rules that fire on `code` as if it were the file at `path` (relative to the repository root). */
async function firing(path: string, code: string): Promise<{ rule: string | null; message: string }[]> {
  const [result] = await eslint.lintText(code, { filePath: join(repoRoot, path) });
  return result!.messages.filter((m) => m.severity === 2).map((m) => ({ rule: m.ruleId, message: m.message }));
}

describe('the boundary rule for tests and bench', () => {
  it("forbids a lib's test a relative import of another project's test helper; the test kit by name passes", async () => {
    const path = 'libs/orchestrator/test/boundary-sample.test.ts';
    expect(
      await firing(path, "import { FakeSlurm } from '../../slurm/test/fake-slurm';\nexport { FakeSlurm };\n"),
    ).toEqual([
      {
        rule: '@nx/enforce-module-boundaries',
        message: 'Projects cannot be imported by a relative or absolute path, and must begin with a npm scope',
      },
    ]);
    expect(
      await firing(path, "import { FakeSlurm } from '@infersweep/testkit/fake-slurm';\nexport { FakeSlurm };\n"),
    ).toEqual([]);
  });

  it('forbids bench and repository-level tests relative imports into libs/ and apps/', async () => {
    const bench = await firing(
      'bench/boundary-sample.ts',
      "import { startSim } from '../libs/agentx/test/sim';\nexport { startSim };\n",
    );
    expect(bench.map((m) => m.rule)).toEqual(['no-restricted-imports']);
    expect(bench[0]!.message).toContain('bench/ imports another project by its package name');
    const prod = await firing(
      'test/production/boundary-sample.ts',
      "import { storeContract } from '../../libs/history/test/store-contract';\nexport { storeContract };\n",
    );
    expect(prod.map((m) => m.rule)).toEqual(['no-restricted-imports']);
    expect(
      await firing(
        'bench/boundary-sample.ts',
        "import { startSim } from '@infersweep/testkit/sim';\nexport { startSim };\n",
      ),
    ).toEqual([]);
  });

  it('forbids every src/ file the test kit, pure or not', async () => {
    for (const path of [
      'libs/orchestrator/src/boundary-sample.ts',
      'libs/core/src/boundary-sample.ts',
      'apps/cli/src/boundary-sample.ts',
    ]) {
      const found = await firing(path, "import { until } from '@infersweep/testkit/wait';\nexport { until };\n");
      expect(found.map((m) => m.rule)).toContain('no-restricted-imports');
      expect(found.find((m) => m.rule === 'no-restricted-imports')!.message).toContain(
        'libs/testkit is for tests and bench only',
      );
    }
  });
});
