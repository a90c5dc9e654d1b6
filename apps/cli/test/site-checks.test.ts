/**
 * `sweep` checks every worker-side path and credential before anything starts when the worker is
 * this host (the embedded dev server): the shipped h200 profile on a machine without its SSH key
 * exits 2 naming the field, the value and the YAML line, before any server starts. With a deployed
 * Temporal (TEMPORAL_ADDRESS, here a closed port) the files are the deployed worker's, checked on its
 * host at prepareSweep: the CLI only warns and goes on (exit 1: the closed port). `plan` warns.
 */
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runCli } from '@infersweep/testkit/cli';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const shipped = readFileSync(join(root, 'configs/kimik3-fp4-h200.yaml'), 'utf8');

const cli = (args: string[], env: NodeJS.ProcessEnv) => runCli(args, { env, timeoutMs: 60_000 });

describe('site checks before anything starts (spawned CLI)', { timeout: 180_000 }, () => {
  const home = mkdtempSync(join(tmpdir(), 'infersweep-cli-home-'));
  const env = {
    ...process.env,
    HOME: home,
    INFERSWEEP_STACK: '/stack',
    TEMPORAL_ADDRESS: '127.0.0.1:1',
    INFERSWEEP_DATA: join(home, 'data'),
  };
  const { TEMPORAL_ADDRESS: _deployed, ...embedded } = env;
  const keyLine = shipped.split('\n').findIndex((l) => l.includes('keyPath: ~/.ssh/infersweep_ed25519')) + 1;

  it('a missing SSH key: sweep with the embedded worker exits 2 with field, expanded value and line; plan warns and exits 0', async () => {
    const r = await cli(['sweep', '--orientation', 'latency', '--cluster', 'h200', '--detach'], embedded);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(
      `clusters.h200.loginHost.keyPath: "${home}/.ssh/infersweep_ed25519" — the SSH private key does not exist`,
    );
    expect(r.stderr).toContain(`(line ${keyLine})`);
    expect(r.stderr).not.toMatch(/temporal server|dev server|connect/i);
    const p = await cli(['plan', '--orientation', 'latency', '--cluster', 'h200'], env);
    expect(p.code, p.stderr).toBe(0);
    expect(p.stderr).toMatch(/WARNING: .*keyPath.*refuses to start/);
  });

  it('a world-readable key is refused; a relative results root is refused', async () => {
    mkdirSync(join(home, '.ssh'), { recursive: true });
    writeFileSync(join(home, '.ssh/infersweep_ed25519'), 'k\n');
    writeFileSync(join(home, '.ssh/known_hosts'), 'x ssh-ed25519 AAAA\n');
    chmodSync(join(home, '.ssh/infersweep_ed25519'), 0o644);
    const r = await cli(['sweep', '--orientation', 'latency', '--cluster', 'h200', '--detach'], embedded);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(
      /keyPath: .* accessible by group or others \(mode 0644\); refused as OpenSSH refuses an unprotected private key: chmod 600/,
    );
    const rel = await cli(['sweep', '--orientation', 'latency', '--cluster', 'h200', '--detach'], {
      ...env,
      INFERSWEEP_DATA: 'data',
    });
    expect(rel.code).toBe(2);
    expect(rel.stderr).toMatch(/INFERSWEEP_DATA="data": the results root must be an absolute path/);
  });

  it('with a deployed worker the files on the CLI host are only a warning: the worker checks its own', async () => {
    const r = await cli(['sweep', '--orientation', 'latency', '--cluster', 'h200', '--detach'], env);
    expect(r.stderr).toMatch(/WARNING \(this host; the worker checks its own before allocating\): .*keyPath/);
    expect(r.code, r.stderr).toBe(1); // it went on, to the (closed) Temporal port
  });

  it('a relative sharedDir is refused by plan and sweep alike', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'infersweep-cli-cfg-'));
    const file = join(dir, 'c.yaml');
    writeFileSync(file, shipped.replace('    sharedDir: /lustre/infersweep/runs', '    sharedDir: runs'));
    for (const cmd of ['plan', 'sweep']) {
      const r = await cli([cmd, '--config', file, '--orientation', 'latency', '--cluster', 'h200'], env);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(/clusters\.h200\.sharedDir: "runs" — must be an absolute path on the cluster/);
    }
  });
});
