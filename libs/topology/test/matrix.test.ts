import { describe, expect, it } from 'vitest';
import { buildNodeCommands, checkLaunchInvariants, checkTopology, type LbMode, type Topology } from '../src/index';

/**
 * Exhaustive matrix: every TP/PP/DP/nodes combination up to 8 nodes × 8 GPUs (G ∈ {1,2,4,8}),
 * EP omitted / right / wrong, every LB mode. The oracle below is written from the rules text,
 * independently of the implementation; valid plans get every invariant checked.
 */
const engine = { modelPath: '/m', servedName: 'm', commonArgs: ['--trust-remote-code'] };
const flag = (argv: string[], f: string) => {
  const i = argv.indexOf(f);
  return i < 0 ? undefined : argv[i + 1];
};

function oracle(tp: number, pp: number, dp: number, M: number, G: number): { ok: boolean; rule?: number } {
  const R = tp * pp;
  if (tp * pp * dp !== M * G) return { ok: false, rule: 2 };
  if (R <= G) return G % R === 0 ? { ok: true } : { ok: false, rule: 3 };
  if (R % G !== 0) return { ok: false, rule: 3 };
  if (tp <= G && G % tp !== 0) return { ok: false, rule: 3 };
  if (tp > G && tp % G !== 0) return { ok: false, rule: 3 };
  return { ok: true };
}

function assertInvariants(t: Topology, lb: LbMode): void {
  const nodes = buildNodeCommands(t, engine);
  expect(checkLaunchInvariants(t, nodes, '/m')).toEqual([]);
  // Independent re-statement of the key rules.
  expect(nodes).toHaveLength(t.nodes);
  const serving = nodes.filter((n) => n.argv.includes('--port'));
  for (const n of nodes) {
    expect(n.argv.slice(0, 3)).toEqual(['vllm', 'serve', '/m']);
    expect(n.argv.includes('--enable-expert-parallel')).toBe(t.ep > 1);
    expect(n.argv.every((a) => a.length > 0)).toBe(true);
    expect(n.commonArgs).toEqual(nodes[0]!.commonArgs);
    if (n.argv.includes('--headless')) {
      expect(n.argv).not.toContain('--port');
      expect(n.argv).not.toContain('--api-server-count');
      expect(n.argv).not.toContain('--data-parallel-hybrid-lb');
      expect(n.argv).not.toContain('--data-parallel-rank');
    }
  }
  if (t.replica === 'spans-nodes') {
    nodes.forEach((n, k) => {
      expect(flag(n.argv, '--nnodes')).toBe(String(t.nodes));
      expect(flag(n.argv, '--node-rank')).toBe(String(k));
      expect(n.argv.includes('--headless')).toBe(k > 0);
      expect(n.argv).not.toContain('--data-parallel-start-rank');
    });
    expect(serving.map((n) => n.rank)).toEqual([0]);
  } else if (t.dp === 1) {
    expect(t.nodes).toBe(1);
    expect(nodes[0]!.argv).not.toContain('--nnodes');
    expect(nodes[0]!.argv.some((a) => a.startsWith('--data-parallel'))).toBe(false);
  } else if (lb === 'internal') {
    const L = t.gpusPerNode / (t.tp * t.pp);
    nodes.forEach((n, k) => {
      expect(flag(n.argv, '--data-parallel-size-local')).toBe(String(L));
      expect(flag(n.argv, '--data-parallel-start-rank')).toBe(k === 0 ? undefined : String(k * L));
      expect(n.argv.includes('--headless')).toBe(k > 0);
    });
    expect(serving.map((n) => n.rank)).toEqual([0]);
    // DP-local sizes add up to DP (the handshake otherwise stalls with no error).
    expect(nodes.reduce((s, n) => s + Number(flag(n.argv, '--data-parallel-size-local')), 0)).toBe(t.dp);
  } else {
    expect(serving).toHaveLength(t.nodes);
    expect(nodes.some((n) => n.argv.includes('--headless'))).toBe(false);
  }
}

describe('topology matrix (up to 8 nodes × 8 GPUs)', () => {
  let valid = 0;
  let invalid = 0;
  it('every combination is classified exactly as the rules say, with invariants on each valid plan', () => {
    for (const G of [1, 2, 4, 8]) {
      for (let M = 1; M <= 8; M++) {
        for (let tp = 1; tp <= 16; tp++) {
          for (let pp = 1; pp <= 8; pp++) {
            for (let dp = 1; dp <= 64; dp++) {
              if (tp * pp * dp > 2 * M * G) break;
              const o = oracle(tp, pp, dp, M, G);
              for (const ep of [undefined, tp * dp, tp * dp + 1]) {
                const r = checkTopology({ tp, pp, dp, ep, nodes: M, gpusPerNode: G, moe: true });
                const epWrong = ep !== undefined && ep !== tp * dp;
                if (o.ok && !epWrong) {
                  expect(r.ok, `TP${tp} PP${pp} DP${dp} EP${ep} M${M} G${G}`).toBe(true);
                  if (!r.ok) continue;
                  expect(r.topology.ep).toBe(ep !== undefined && ep > 1 ? tp * dp : 1);
                  expect(r.topology.experimental.length > 0).toBe(r.topology.replica === 'spans-nodes' && dp > 1);
                  expect(r.topology.warnings.some((w) => w.includes('TP crosses nodes'))).toBe(tp > G);
                  assertInvariants(r.topology, 'internal');
                  valid++;
                } else {
                  expect(r.ok, `TP${tp} PP${pp} DP${dp} EP${ep} M${M} G${G}`).toBe(false);
                  if (r.ok) continue;
                  if (!o.ok) expect(r.violations.map((v) => v.rule)).toContain(o.rule);
                  if (o.rule === 2)
                    expect(r.violations.find((v) => v.rule === 2)!.message).toContain(
                      `topology uses ${tp * pp * dp} GPUs but allocation has ${M * G}`,
                    );
                  if (epWrong) {
                    const v = r.violations.find((x) => x.rule === 4)!;
                    expect(v.field).toBe('ep');
                    expect(v.message).toContain(`vLLM's EP size is TP×DP per PP stage = ${tp * dp}`);
                  }
                  invalid++;
                }
              }
            }
          }
        }
      }
    }
    expect(valid).toBeGreaterThan(500);
    expect(invalid).toBeGreaterThan(5000);
  });

  it('hybrid and external LB: opt-in conditions and per-node endpoints (rule 13)', () => {
    let checked = 0;
    for (const G of [2, 4, 8]) {
      for (let M = 1; M <= 8; M++) {
        for (let R = 1; R <= G; R *= 2) {
          const dp = (M * G) / R;
          const L = G / R;
          for (const lbMode of ['hybrid', 'external'] as const) {
            for (const endpoints of ['single', 'per-node', undefined] as const) {
              const r = checkTopology({ tp: R, pp: 1, dp, nodes: M, gpusPerNode: G, lbMode, endpoints, moe: true });
              const modeOk = dp >= 2 && (lbMode === 'hybrid' ? L >= 2 && L < dp : L === 1);
              const ok = modeOk && endpoints !== 'single';
              expect(r.ok, `${lbMode} ${endpoints} R${R} M${M} G${G}`).toBe(ok);
              if (r.ok) {
                expect(r.topology.endpoints).toBe('per-node');
                assertInvariants(r.topology, lbMode);
              } else if (endpoints === 'single') {
                expect(
                  r.violations.some((v) => v.field === 'endpoints' && v.message.includes('single endpoint leaves the other nodes')),
                ).toBe(true);
              }
              checked++;
            }
          }
        }
      }
    }
    expect(checked).toBeGreaterThan(100);
  });

  it('rejects non-positive sizes (rule 1) and EP on dense models (rule 5)', () => {
    for (const field of ['tp', 'pp', 'dp', 'nodes', 'gpusPerNode'] as const) {
      for (const bad of [0, -1, 1.5]) {
        const input = { tp: 1, pp: 1, dp: 1, nodes: 1, gpusPerNode: 1, moe: true, [field]: bad };
        const r = checkTopology(input);
        expect(r.ok).toBe(false);
        if (!r.ok) expect(r.violations[0]).toMatchObject({ rule: 1, field });
      }
    }
    const dense = checkTopology({ tp: 4, pp: 1, dp: 2, ep: 8, nodes: 1, gpusPerNode: 8, moe: false });
    expect(dense.ok).toBe(false);
    if (!dense.ok) expect(dense.violations[0]).toMatchObject({ rule: 5, field: 'ep' });
  });
});
