import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  budgetsSchema,
  buildNodeCommands,
  checkLaunchInvariants,
  checkTopology,
  computeTimeLimit,
  derivePorts,
  expandEnvString,
  planSweep,
  bindPlan,
  pointBudget,
  PORT_RANGES,
} from '../src/index';
import { acceptedTopology, violationsOf } from './check-result';
import { contentHash, fnv1a64, stableStringify } from '@infersweep/core';
import { loadShipped } from './helpers';

/** A random valid topology: pick G, a replica layout and a node count, derive the rest. */
const validTopology = fc
  .record({
    gExp: fc.integer({ min: 0, max: 3 }),
    tpExp: fc.integer({ min: 0, max: 4 }),
    ppExp: fc.integer({ min: 0, max: 3 }),
    replicas: fc.integer({ min: 1, max: 8 }),
    useEp: fc.boolean(),
  })
  .map(({ gExp, tpExp, ppExp, replicas, useEp }) => {
    const G = 2 ** gExp;
    const tp = 2 ** tpExp;
    const pp = 2 ** ppExp;
    const R = tp * pp;
    // within-node: nodes = replicas, dp = replicas·G/R ; spanning: dp = replicas, nodes = replicas·R/G
    const dp = R <= G ? (replicas * G) / R : replicas;
    const nodes = R <= G ? replicas : (replicas * R) / G;
    return { tp, pp, dp, nodes, gpusPerNode: G, ep: useEp ? tp * dp : undefined, moe: true };
  })
  .filter((t) => t.nodes <= 8);

const engine = { modelPath: '/models/x', servedName: 'x', commonArgs: ['--trust-remote-code'] };

describe('topology properties', () => {
  it('every valid topology yields commands satisfying all invariants', () => {
    fc.assert(
      fc.property(validTopology, (input) => {
        const t = acceptedTopology(checkTopology(input));
        const cmds = buildNodeCommands(t, engine);
        expect(checkLaunchInvariants(t, cmds, '/models/x')).toEqual([]);
        // GPUs used = GPUs allocated; EP = TP×DP when on, 1 when off.
        expect(t.gpus).toBe(t.nodes * t.gpusPerNode);
        expect(t.ep).toBe(t.expertParallel ? t.tp * t.dp : 1);
      }),
      { numRuns: 300 },
    );
  });

  it('any EP other than TP×DP is rejected on the ep field', () => {
    fc.assert(
      fc.property(validTopology, fc.integer({ min: 1, max: 256 }), (input, ep) => {
        fc.pre(ep !== input.tp * input.dp);
        const r = checkTopology({ ...input, ep });
        expect(r.ok).toBe(false);
        expect(violationsOf(r).some((v) => v.rule === 4 && v.field === 'ep')).toBe(true);
      }),
    );
  });

  it('adding or removing a node always breaks GPU tiling (rule 2)', () => {
    fc.assert(
      fc.property(validTopology, fc.constantFrom(-1, 1), (input, d) => {
        fc.pre(input.nodes + d >= 1);
        const r = checkTopology({ ...input, nodes: input.nodes + d });
        expect(r.ok).toBe(false);
        expect(violationsOf(r).some((v) => v.rule === 2)).toBe(true);
      }),
    );
  });
});

describe('ports, binding, hashing, env expansion, time limits', () => {
  it('ports are distinct, in their ranges, and deterministic per job id', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.bigInt({ min: 1n, max: 10n ** 12n }).map(String),
          fc.string({ minLength: 1 }).filter((s) => s.trim() !== ''),
        ),
        (jobId) => {
          const p = derivePorts(jobId);
          expect(derivePorts(jobId)).toEqual(p);
          expect(new Set([p.port, p.dpRpcPort, p.masterPort, p.routerPort]).size).toBe(4);
          for (const k of ['port', 'dpRpcPort', 'masterPort', 'routerPort'] as const) {
            expect(p[k]).toBeGreaterThanOrEqual(PORT_RANGES[k].base);
            expect(p[k]).toBeLessThan(PORT_RANGES[k].base + PORT_RANGES[k].size);
          }
        },
      ),
    );
    expect(derivePorts('1001').port).not.toBe(derivePorts('1002').port);
  });

  it('binding any shipped plan to any allocation leaves no placeholder and no empty value', () => {
    const { config, source } = loadShipped();
    const plans = ['h200', 'local'].flatMap((cluster) =>
      ['latency', 'balanced', 'throughput'].map((orientation) => planSweep(config, { orientation, cluster, source })),
    );
    const host = fc.stringMatching(/^[a-z][a-z0-9-]{0,12}$/);
    fc.assert(
      fc.property(
        fc.constantFrom(...plans),
        fc.integer({ min: 1, max: 99999999 }),
        fc.array(host, { minLength: 4, maxLength: 4 }),
        (plan, jobId, names) => {
          const nodes = names.slice(0, plan.slurm.nodes);
          const b = bindPlan(plan, { jobId: String(jobId), nodes, headAddress: nodes[0]! });
          const all = [
            ...b.endpoints,
            ...b.nodes.flatMap((n) => [...n.argv, ...n.launchArgv, ...Object.values(n.env)]),
          ];
          for (const s of all) {
            expect(s).not.toMatch(/\{\{[A-Z0-9_]+\}\}/);
            expect(s.trim()).not.toBe('');
          }
          expect(b.nodes.map((n) => n.env.VLLM_HOST_IP)).toEqual(nodes);
        },
      ),
      { numRuns: 100 },
    );
  });

  it('stableStringify ignores key order; contentHash changes with content', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (obj) => {
        const reversed = Object.fromEntries(Object.entries(obj).reverse());
        expect(stableStringify(reversed)).toBe(stableStringify(obj));
        expect(JSON.parse(stableStringify(obj))).toEqual(JSON.parse(JSON.stringify(obj)));
        expect(contentHash({ ...obj, __extra: 1 })).not.toBe(contentHash(obj));
      }),
    );
    // FNV-1a 64 reference vectors.
    expect(fnv1a64('')).toBe('cbf29ce484222325');
    expect(fnv1a64('a')).toBe('af63dc4c8601ec8c');
    expect(fnv1a64('foobar')).toBe('85944171f73967e8');
  });

  it('${VAR} expansion: all set → no placeholder left; unset → named', () => {
    const name = fc.stringMatching(/^[A-Z_][A-Z0-9_]{0,8}$/);
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(
            name,
            fc.string({ minLength: 1 }).filter((v) => !v.includes('$')),
          ),
          { minLength: 1, maxLength: 4 },
        ),
        fc.string().filter((s) => !s.includes('$')),
        (vars, glue) => {
          const env = Object.fromEntries(vars);
          const text = vars.map(([k]) => `\${${k}}`).join(glue);
          const r = expandEnvString(text, env);
          expect(r.problems).toEqual([]);
          expect(r.value).toBe(vars.map(([k]) => env[k]).join(glue));
          const missing = expandEnvString(`${text}\${NOT_SET_X}`, env);
          expect(missing.problems.map((p) => p.variable)).toEqual(['NOT_SET_X']);
        },
      ),
    );
    expect(expandEnvString('$${HOME}', {}).value).toBe('${HOME}');
    expect(expandEnvString('${PORT_X:-2222}', {}).value).toBe('2222');
    expect(expandEnvString('${PORT_X:-2222}', { PORT_X: '' }).value).toBe('2222');
    expect(expandEnvString('${PORT_X:-2222}', { PORT_X: '2225' }).value).toBe('2225');
    expect(expandEnvString('${PORT_X}', {}).problems[0]?.variable).toBe('PORT_X');
  });

  it('time limit covers the budget plus margin and grows with every point', () => {
    const budgets = budgetsSchema.parse({});
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 512 }), { minLength: 1, maxLength: 8 }),
        fc.integer({ min: 1, max: 7200 }),
        fc.constantFrom('shared-server', 'server-per-point', 'allocation-per-point') as fc.Arbitrary<
          'shared-server' | 'server-per-point' | 'allocation-per-point'
        >,
        (conc, profile, policy) => {
          const pts = conc.map((c) => pointBudget(c, budgets, profile, 1800));
          const t = computeTimeLimit(budgets, pts, policy);
          expect(t.minutes * 60).toBeGreaterThanOrEqual(t.baseSeconds + t.marginSeconds);
          expect(t.marginSeconds).toBeGreaterThanOrEqual(Math.max(600, t.baseSeconds * 0.15) - 1e-9);
          expect(t.derivation).toContain(`→ ${t.minutes} min`);
          const more = computeTimeLimit(budgets, [...pts, pointBudget(1, budgets, profile, 1800)], policy);
          // one more point: the same limit for an allocation per point, a longer one otherwise
          expect(Math.sign(more.minutes - t.minutes)).toBe(policy === 'allocation-per-point' ? 0 : 1);
        },
      ),
    );
  });
});
