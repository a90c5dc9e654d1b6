/**
 * The worker checks its namespace at start (../src/namespace-check.ts) on the real dev server: on a
 * fresh namespace lacking `InfersweepRegression` the production worker (apps/worker/src/main.ts,
 * a subprocess) refuses to start, exit 1, naming the attribute and the command that registers it;
 * once that very command has run, the same worker starts and polls.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { SEARCH_ATTRIBUTES } from '@infersweep/sweep';
import { repoRoot, stackEnv, temporalBinary } from '@infersweep/testkit/stack';
import { exited } from '@infersweep/testkit/sweep-harness';

const run = promisify(execFile);
const namespace = `nscheck-${randomUUID().slice(0, 8)}`;
const address = () => stackEnv().INFERSWEEP_TEMPORAL_ADDRESS;

/** The Temporal CLI against the stack's dev server (argv as a user types it, `temporal` first). */
const temporal = (argv: string[]) =>
  run(temporalBinary, [...argv.slice(1), '--address', address()], { timeout: 60_000 });

/** Retry a CLI call a new namespace may refuse for a moment (the server's namespace cache). */
async function eventually(argv: string[]): Promise<string> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      return (await temporal(argv)).stdout;
    } catch (e) {
      if (Date.now() > deadline) throw e;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

/** The production worker on `namespace`, its output collected; `startedLine` resolves once it says it polls. */
function worker() {
  const p = spawn(
    join(repoRoot, 'node_modules', '.bin', 'tsx'),
    [join(repoRoot, 'apps/worker/src/main.ts'), '--cluster', 'local', '--task-queue', `nscheck-${randomUUID()}`],
    {
      cwd: repoRoot,
      env: { ...process.env, TEMPORAL_NAMESPACE: namespace },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    },
  );
  let stderr = '';
  const startedLine = new Promise<string>((resolve) => {
    p.stderr!.on('data', (d: Buffer) => {
      stderr += d.toString();
      const line = stderr.split('\n').find((l) => l.startsWith('infersweep worker:') && l.includes(namespace));
      if (line) resolve(line);
    });
  });
  return { p, startedLine, stderr: () => stderr, exit: exited(p) };
}

beforeAll(async () => {
  await temporal(['temporal', 'operator', 'namespace', 'create', '--namespace', namespace, '--retention', '24h']);
  // every attribute but the verdict's (a namespace set up from the docs before InfersweepRegression existed)
  for (const name of Object.values(SEARCH_ATTRIBUTES).filter((n) => n !== SEARCH_ATTRIBUTES.regression))
    await eventually([
      'temporal',
      'operator',
      'search-attribute',
      'create',
      '--namespace',
      namespace,
      '--name',
      name,
      '--type',
      'Keyword',
    ]);
}, 180_000);

afterAll(async () => {
  await temporal(['temporal', 'operator', 'namespace', 'delete', '--namespace', namespace, '--yes']).catch(
    () => undefined,
  );
});

describe('a worker on a namespace without a search attribute it writes', () => {
  let command = '';

  it('refuses to start, exit 1, naming the attribute and the command that registers it', async () => {
    const w = worker();
    // a worker that starts instead is stopped and fails the test at once
    const started = await Promise.race([w.startedLine, w.exit.then(() => undefined)]);
    if (started !== undefined) process.kill(-w.p.pid!, 'SIGTERM');
    expect(started, 'the worker started polling').toBeUndefined();
    const code = await w.exit;
    const err = w.stderr();
    expect(code, err).toBe(1);
    expect(err).toContain(`namespace ${namespace} lacks search attributes`);
    expect(err).toContain('InfersweepRegression (Keyword) is not registered');
    // the registered ones are not named
    for (const n of Object.values(SEARCH_ATTRIBUTES).filter((x) => x !== SEARCH_ATTRIBUTES.regression))
      expect(err).not.toContain(n);
    command = /^\s*(temporal operator search-attribute create .*)$/m.exec(err)?.[1] ?? '';
    expect(command).toBe(
      `temporal operator search-attribute create --namespace ${namespace} --name InfersweepRegression --type Keyword`,
    );
  }, 120_000);

  it('starts once the printed command has run', async () => {
    expect(command).not.toBe('');
    await temporal(command.split(' '));
    // the server lists it (the check reads the same API)
    await expect(
      eventually(['temporal', 'operator', 'search-attribute', 'list', '--namespace', namespace]),
    ).resolves.toContain('InfersweepRegression');
    const w = worker();
    const line = await Promise.race([w.startedLine, w.exit.then((c) => `exited ${c}: ${w.stderr()}`)]);
    expect(line).toContain(`namespace ${namespace}, task queue`);
    process.kill(-w.p.pid!, 'SIGTERM');
    expect(await w.exit, w.stderr()).toBe(0);
  }, 120_000);
});
