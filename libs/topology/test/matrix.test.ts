import { describe, expect, it } from 'vitest';
import { buildNodeCommands, checkLaunchInvariants, checkTopology, type LbMode, type Topology } from '../src/index';
import { acceptedTopology, violationsOf } from './check-result';

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
  it('every combination is classified exactly as the rules say, with invariants on each valid plan', () => {
    type Case = {
      tp: number;
      pp: number;
      dp: number;
      ep?: number;
      M: number;
      G: number;
      epWrong: boolean;
      rule?: number;
      label: string;
    };
    // the oracle sorts the combinations; each kind is then proven unconditionally
    const valid: Case[] = [];
    const invalid: Case[] = [];
    for (const G of [1, 2, 4, 8]) {
      for (let M = 1; M <= 8; M++) {
        for (let tp = 1; tp <= 16; tp++) {
          for (let pp = 1; pp <= 8; pp++) {
            for (let dp = 1; dp <= 64; dp++) {
              if (tp * pp * dp > 2 * M * G) break;
              const o = oracle(tp, pp, dp, M, G);
              for (const ep of [undefined, tp * dp, tp * dp + 1]) {
                const epWrong = ep !== undefined && ep !== tp * dp;
                const c = {
                  tp,
                  pp,
                  dp,
                  ep,
                  M,
                  G,
                  epWrong,
                  rule: o.rule,
                  label: `TP${tp} PP${pp} DP${dp} EP${ep} M${M} G${G}`,
                };
                (o.ok && !epWrong ? valid : invalid).push(c);
              }
            }
          }
        }
      }
    }
    const check = (c: Case) =>
      checkTopology({ tp: c.tp, pp: c.pp, dp: c.dp, ep: c.ep, nodes: c.M, gpusPerNode: c.G, moe: true });
    for (const c of valid) {
      const t = acceptedTopology(check(c), c.label);
      expect(t.ep, c.label).toBe(c.ep !== undefined && c.ep > 1 ? c.tp * c.dp : 1);
      expect(t.experimental.length > 0, c.label).toBe(t.replica === 'spans-nodes' && c.dp > 1);
      expect(
        t.warnings.some((w) => w.includes('TP crosses nodes')),
        c.label,
      ).toBe(c.tp > c.G);
      assertInvariants(t, 'internal');
    }
    for (const c of invalid) {
      const r = check(c);
      expect(r.ok, c.label).toBe(false);
      const v = violationsOf(r);
      // the oracle's rule (when the sizes break one) and rule 4 for a wrong EP, each with its sentence
      expect(
        v.map((x) => x.rule),
        c.label,
      ).toEqual(expect.arrayContaining([...(c.rule ? [c.rule] : []), ...(c.epWrong ? [4] : [])]));
      const gpuCount = `topology uses ${c.tp * c.pp * c.dp} GPUs but allocation has ${c.M * c.G}`;
      expect(v.find((x) => x.rule === 2)?.message ?? '', c.label).toContain(c.rule === 2 ? gpuCount : '');
      const epRule = {
        field: 'ep',
        message: expect.stringContaining(`vLLM's EP size is TP×DP per PP stage = ${c.tp * c.dp}`),
      };
      expect(v.find((x) => x.rule === 4) ?? {}, c.label).toMatchObject(c.epWrong ? epRule : {});
    }
    expect(valid.length).toBeGreaterThan(500);
    expect(invalid.length).toBeGreaterThan(5000);
  });

  it('hybrid and external LB: opt-in conditions and per-node endpoints (rule 13)', () => {
    let checked = 0;
    const accepted: { t: Topology; lbMode: LbMode }[] = [];
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
              const label = `${lbMode} ${endpoints} R${R} M${M} G${G}`;
              expect(r.ok, label).toBe(ok);
              if (ok) accepted.push({ t: acceptedTopology(r, label), lbMode });
              // a single endpoint is refused with its reason whatever else is wrong
              expect(
                violationsOf(r).some(
                  (v) => v.field === 'endpoints' && v.message.includes('single endpoint leaves the other nodes'),
                ),
                label,
              ).toBe(endpoints === 'single');
              checked++;
            }
          }
        }
      }
    }
    for (const { t, lbMode } of accepted) {
      expect(t.endpoints).toBe('per-node');
      assertInvariants(t, lbMode);
    }
    expect(accepted.length).toBeGreaterThan(10);
    expect(checked).toBeGreaterThan(100);
  });

  it('rejects non-positive sizes (rule 1) and EP on dense models (rule 5)', () => {
    for (const field of ['tp', 'pp', 'dp', 'nodes', 'gpusPerNode'] as const) {
      for (const bad of [0, -1, 1.5]) {
        const input = { tp: 1, pp: 1, dp: 1, nodes: 1, gpusPerNode: 1, moe: true, [field]: bad };
        const r = checkTopology(input);
        expect(r.ok).toBe(false);
        expect(violationsOf(r)[0]).toMatchObject({ rule: 1, field });
      }
    }
    const dense = checkTopology({ tp: 4, pp: 1, dp: 2, ep: 8, nodes: 1, gpusPerNode: 8, moe: false });
    expect(dense.ok).toBe(false);
    expect(violationsOf(dense)[0]).toMatchObject({ rule: 5, field: 'ep' });
  });
});
