/**
 * The vLLM CPU plugin's Python tests (python/infersweep_vllm/tests), run in the vLLM venv that
 * scripts/setup-vllm.sh builds, reported to vitest one test per Python test. The list below is the
 * contract: a Python test that disappears or fails fails here.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { repoRoot, toolsDir } from '@infersweep/testkit/stack';

const python = join(toolsDir, 'vllm-venv', 'bin', 'python');
const EXPECTED = [
  'test_plugin.CollectivesTest.test_all_gatherv_uneven_sizes_every_dtype',
  'test_plugin.CollectivesTest.test_all_gatherv_list_and_equal_sizes',
  'test_plugin.CollectivesTest.test_reduce_scatterv_sums_and_slices_by_sizes',
  'test_plugin.ExpertMapTest.test_map_experts_zeroes_remote_experts',
  'test_plugin.ExpertMapTest.test_ep_ranks_sum_to_the_full_layer_on_vllms_cpu_kernel',
  'test_plugin.RegistrationTest.test_entry_point_is_installed',
  'test_plugin.RegistrationTest.test_register_patches_the_cpu_communicator_and_experts',
];

describe('infersweep vLLM plugin (Python, in the vLLM venv)', () => {
  const results = new Map<string, { outcome: string; detail: string }>();
  let log = '';

  beforeAll(async () => {
    if (!existsSync(python)) throw new Error(`${python} is missing: run npm run setup (scripts/setup-vllm.sh)`);
    const out = join(mkdtempSync(join(tmpdir(), 'infersweep-plugin-')), 'results.jsonl');
    // async: a blocked event loop would starve vitest's worker RPC for the minute the run takes
    const r = await promisify(execFile)(python, [join(repoRoot, 'python/infersweep_vllm/tests/run.py'), out], {
      cwd: repoRoot,
      env: { ...process.env, HF_HUB_OFFLINE: '1', VLLM_NO_USAGE_STATS: '1', DO_NOT_TRACK: '1' },
      timeout: 300_000,
      maxBuffer: 16 * 1024 * 1024,
    }).catch((err: { stdout?: string; stderr?: string; code?: number }) => err);
    log = `${r.stdout ?? ''}${r.stderr ?? ''}`.slice(-4000);
    if (!existsSync(out))
      throw new Error(`the Python test run wrote no results (exit ${'code' in r ? r.code : 0}):\n${log}`);
    for (const line of readFileSync(out, 'utf8').split('\n').filter(Boolean)) {
      const rec = JSON.parse(line) as { id: string; outcome: string; detail: string };
      results.set(rec.id, rec);
    }
  }, 320_000);

  it('runs exactly the expected tests', () => {
    expect([...results.keys()].sort(), log).toEqual([...EXPECTED].sort());
  });

  for (const id of EXPECTED) {
    it(id.split('.').slice(1).join(' › '), () => {
      const r = results.get(id);
      expect(r, `${id} did not run:\n${log}`).toBeDefined();
      expect(r!.outcome, r!.detail).toBe('ok');
    });
  }
});
