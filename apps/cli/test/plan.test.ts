import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runCli } from '@infersweep/testkit/cli';

const root = fileURLToPath(new URL('../../..', import.meta.url));

/** The CLI as a subprocess; by default with a stack env file path (the `local` profile reads it). */
const cli = (args: string[], env: NodeJS.ProcessEnv = { ...process.env, INFERSWEEP_STACK: '/stack' }) =>
  runCli(args, { env, timeoutMs: 60_000 });

describe('infersweep plan (spawned)', () => {
  it('--json prints one plan object with the documented fields', async () => {
    const r = await cli(['plan', '--orientation', 'balanced', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const p = JSON.parse(r.stdout);
    expect(p.orientation).toBe('balanced');
    expect(p.topology).toMatchObject({ tp: 4, pp: 2, dp: 2, ep: 8, nodes: 2, gpusPerNode: 8 });
    expect(p.slurm).toMatchObject({ nodes: 2, gpusPerNode: 8 });
    expect(p.slurm.timeLimitMinutes).toBeGreaterThan(0);
    expect(p.nodes.map((n: { rank: number }) => n.rank)).toEqual([0, 1]);
    for (const n of p.nodes) {
      expect(n.argv.slice(0, 2)).toEqual(['vllm', 'serve']);
      expect(typeof n.env).toBe('object');
    }
    expect(p.endpoints).toEqual(['http://{{HEAD_ADDR}}:{{PORT}}']);
    expect(p.points).toEqual([4, 8, 16, 32]);
    expect(p.cluster).toBe('local');
  });

  it('--orientation all prints an array in config order; --points filters', async () => {
    const r = await cli(['plan', '--orientation', 'all', '--cluster', 'h200', '--json', '--points', '16,32']);
    // 16 and 32 are not in latency's list → error naming both
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("requested point 16 is not in orientation latency's concurrency list [1, 2, 4, 8]");
    const all = await cli(['plan', '--orientation', 'all', '--cluster', 'h200', '--json']);
    expect(all.code, all.stderr).toBe(0);
    const plans = JSON.parse(all.stdout);
    expect(plans.map((p: { orientation: string }) => p.orientation)).toEqual([
      'latency',
      'balanced',
      'throughput',
      'ix-latency',
      'ix-balanced',
      'pd-1p1d',
    ]);
    expect(plans[2].slurm.nodes).toBe(4);
    // every plan carries its derived engine settings and capacity numbers
    expect(plans.map((p: { engine: { settings: { maxNumSeqs: number } } }) => p.engine.settings.maxNumSeqs)).toEqual([
      8, 16, 8, 5, 8, 8,
    ]); // the ix-* arms pin InferenceX's 5 and 8
    // the disaggregated orientation is checked per role (rule 28)
    type Cap = { capacity: { checked: boolean }; disaggregation?: { roles: { capacity: { checked: boolean } }[] } };
    expect(
      plans.every((p: Cap) => p.capacity.checked || p.disaggregation!.roles.every((r) => r.capacity.checked)),
    ).toBe(true);
  }, 60_000); // two CLI spawns on a loaded 2-core host

  it('human output shows argv, env, Slurm request, derivation and warnings', async () => {
    const r = await cli(['plan', '--orientation', 'throughput', '--cluster', 'h200']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('--headless --data-parallel-start-rank 12');
    expect(r.stdout).toContain('--gres=gpu:8 --exclusive --time 667');
    expect(r.stdout).toContain('time limit import 1800 s + startup 7200 s');
    expect(r.stdout).toContain(
      'engine     gpu-memory-utilization 0.85 · max-num-seqs 8 per DP rank (⌈128 / DP 16⌉ = 8) · max-num-batched-tokens 1024 · prefix caching on',
    );
    expect(r.stdout).toMatch(/capacity {3}\[ok\] weights 101\.4 GB\/GPU, .* ~1\.23M tokens per replica .* c=128 21 %/);
    expect(r.stdout).toContain('WARNING: experimental on H200');
    expect(r.stdout).toContain("VLLM_HOST_IP='{{NODE_ADDR}}'"); // quoted by the one shell-quoting helper (libs/core/src/quote.ts)
  });

  it("a disaggregated orientation shows both roles, their capacity, every node's argv and the router (issue 35)", async () => {
    const r = await cli(['plan', '--orientation', 'pd-1p1d', '--cluster', 'h200']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('disagg     1×prefill + 1×decode (KV over NixlConnector)');
    expect(r.stdout).toMatch(
      / {2}prefill {2}1 worker\(s\) of TP8 PP2 DP1 EP1 \(off\), 2 node\(s\) each, 16 GPUs; nodes 0,1/,
    );
    expect(r.stdout).toMatch(/ {2}decode {3}1 worker\(s\) of TP8 PP2 .* nodes 2,3/);
    expect(r.stdout.match(/capacity \[ok\]/g)).toHaveLength(2);
    expect(r.stdout).toContain(
      "router     node 0: vllm-router --vllm-pd-disaggregation --prefill 'http://{{NODE_ADDR_0}}:{{PORT}}' --decode 'http://{{NODE_ADDR_2}}:{{PORT_1}}'",
    );
    for (const [k, role] of ['prefill', 'prefill', 'decode', 'decode'].entries()) {
      expect(r.stdout).toMatch(
        new RegExp(`node ${k} \\((serves HTTP|headless)\\) — ${role} worker 0\\n  argv {4}vllm serve `),
      );
    }
    expect(
      r.stdout.match(/--kv-transfer-config '\{"kv_connector":"NixlConnector","kv_role":"kv_producer"/g),
    ).toHaveLength(2);
    expect(
      r.stdout.match(/--kv-transfer-config '\{"kv_connector":"NixlConnector","kv_role":"kv_consumer"/g),
    ).toHaveLength(2);
  }, 30_000);

  it('a bad config exits non-zero with the specific error on stderr and prints no plan', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'infersweep-cli-'));
    const bad = join(dir, 'bad.yaml');
    writeFileSync(
      bad,
      readFileSync(join(root, 'configs/kimik3-fp4-h200.yaml'), 'utf8').replace('dp: 16, ep: 16', 'dp: 16, ep: 8'),
    );
    const r = await cli(['plan', '--orientation', 'throughput', '--config', bad, '--json']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain("orientations.throughput.topology.ep: 8 — vLLM's EP size is TP×DP per PP stage = 16");
    expect(r.stderr).toContain('bad.yaml');
  });

  it('unknown orientation and unset ${VAR} are errors', async () => {
    const r = await cli(['plan', '--orientation', 'nope', '--json']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      'no orientation "nope" (have: latency, balanced, throughput, ix-latency, ix-balanced, pd-1p1d)',
    );
    const env: NodeJS.ProcessEnv = { ...process.env, INFERSWEEP_DATA: '/nonexistent' };
    delete env.INFERSWEEP_STACK;
    const u = await cli(['plan', '--orientation', 'latency', '--cluster', 'local'], env);
    expect(u.code).toBe(2);
    expect(u.stderr).toContain('environment variable INFERSWEEP_STACK is not set');
    // …while a profile that needs no variables still plans.
    expect((await cli(['plan', '--orientation', 'latency', '--cluster', 'h200', '--json'], env)).code).toBe(0);
  }, 60_000); // three CLI spawns of ~7 s each on a loaded 2-core host

  it('bin/infersweep runs the same program', () => {
    const r = spawnSync(
      join(root, 'bin/infersweep'),
      ['plan', '--orientation', 'latency', '--cluster', 'h200', '--json'],
      {
        cwd: tmpdir(),
        encoding: 'utf8',
        timeout: 60_000,
      },
    );
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).topology.replica).toBe('spans-nodes');
  });
});
