import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode } from '@temporalio/worker';
import { dataDirOf } from '@infersweep/core';
import { bundlerOptions, workflowsPath } from '@infersweep/orchestrator';

/** The environment variable naming a prebuilt workflow bundle (apps/worker/src/main.ts and the test harnesses read it). */
export const WORKFLOW_BUNDLE_ENV = 'INFERSWEEP_WORKFLOW_BUNDLE';

/**
 * Build the workflow bundle once per test run, from the checked-out sources, and name it in
 * {@link WORKFLOW_BUNDLE_ENV}: the test workers (libs/testkit/src/sweep-harness.ts), the workers the
 * tests spawn (they inherit the variable) and the history replays load it instead of running webpack
 * each. A bundle named by the caller (test/gate.ts builds one for all its lanes) is reused.
 */
export async function ensureWorkflowBundle(): Promise<string> {
  const given = process.env[WORKFLOW_BUNDLE_ENV];
  if (given && existsSync(given)) return given;
  const t0 = Date.now();
  const { code } = await bundleWorkflowCode({
    workflowsPath,
    ...bundlerOptions,
    logger: { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} } as never,
  });
  const dir = join(dataDirOf(process.env), 'test');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'workflow-bundle.js');
  writeFileSync(`${file}.${process.pid}`, code);
  renameSync(`${file}.${process.pid}`, file);
  process.env[WORKFLOW_BUNDLE_ENV] = file;
  console.error(`[global-setup] workflow bundle built in ${((Date.now() - t0) / 1000).toFixed(1)} s: ${file}`);
  return file;
}

/**
 * Integration tests need the local stack: bring it up if `status` says any part is down. `vitest list` runs no test
 * but its files read the stack's env as they load, so it needs a stack up and starts none: a count of the tests must
 * not take another run's slot (a `vitest list` once started slot 0's stack under a running CI and failed its start).
 */
export default async function setup(): Promise<void> {
  const script = fileURLToPath(new URL('../scripts/stack.sh', import.meta.url));
  try {
    execFileSync('bash', [script, 'status'], { stdio: 'ignore' });
  } catch {
    if (process.argv.slice(2).includes('list'))
      throw new Error(
        `vitest list: the local stack of slot ${process.env.INFERSWEEP_STACK_SLOT ?? 0} is not up, and listing starts none; ` +
          'bring one up on a slot of your own first: INFERSWEEP_STACK_SLOT=1 INFERSWEEP_DATA=$PWD/.infersweep-1 bash scripts/stack.sh up',
      );
    execFileSync('bash', [script, 'up'], { stdio: 'inherit' });
  }
  await ensureWorkflowBundle();
}
