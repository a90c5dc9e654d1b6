import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { dcgmCaptures } from '@infersweep/testkit/dcgm-captures';
import {
  dcgmCounterEnergy,
  dcgmPointEnergy,
  dcgmPowerSamples,
  dollarsPerMillionTokens,
  energyMetrics,
  inferencexPowerFields,
  integrateEnergy,
  parseDcgmExposition,
  parseNvidiaSmiPower,
  pointEnergy,
  pointEnergySchema,
  type PowerSample,
} from '@infersweep/agentx';

const data = (f: string) => readFileSync(new URL(`./data/${f}`, import.meta.url), 'utf8');
/** data/dcgm-exporter-scrapes.txt: timed DCGM expositions of a known power profile (its header). */
const scrapes = data('dcgm-exporter-scrapes.txt')
  .split(/^# scrape t=(\d+) host=(\S+)\n/m)
  .slice(1)
  .reduce<{ t: number; host: string; text: string }[]>((acc, x, i, all) => {
    if (i % 3 === 0) acc.push({ t: Number(x), host: all[i + 1]!, text: all[i + 2]! });
    return acc;
  }, []);
const window = { start: 1002.5, end: 1007.5 };

describe("DCGM exporter exposition (NVIDIA/dcgm-exporter's format)", () => {
  it('parses power (W) and the energy counter (mJ → J) per whole GPU, leaving MIG instances out', () => {
    expect(scrapes).toHaveLength(11);
    expect(parseDcgmExposition(scrapes[10]!.text, 'fallback')).toEqual([
      { gpu: 'node1/0', uuid: 'GPU-604ac76c-d9cf-fef3-62e9-d92044ab6e52', watts: 200, energyJ: 5_000_000 + 1500 },
      { gpu: 'node1/1', uuid: 'GPU-34319582-d595-d1c7-d1d2-179bcfa61660', watts: 300, energyJ: 7_000_000 + 3000 },
    ]);
  });

  it('integrates exactly the window: 750 J + 1500 J over [1002.5, 1007.5], power valid', () => {
    const e = integrateEnergy(dcgmPowerSamples(scrapes), window, 2);
    expect(e.power_valid).toBe(true);
    expect(e.invalid_reasons).toEqual([]);
    expect(e.per_gpu_j['node1/0']).toBeCloseTo(750, 9);
    expect(e.per_gpu_j['node1/1']).toBeCloseTo(1500, 9);
    expect(e.total_j).toBeCloseTo(2250, 9);
    expect(e.avg_total_power_w).toBeCloseTo(450, 9);
    // the counters bracket whole scrapes (1002 → 1008 here), so they cross-check, not replace, the integral
    const c = dcgmCounterEnergy(parseDcgmExposition(scrapes[2]!.text, 'n'), parseDcgmExposition(scrapes[8]!.text, 'n'));
    expect(c['node1/1']).toBeCloseTo(6 * 300, 6);
    expect(c['node1/0']).toBeCloseTo(6 * 150, 6);
  });

  it("power_valid's reasons are InferenceX's: not bracketed, gap > 3 s, too few samples, GPU count, no samples", () => {
    const all = dcgmPowerSamples(scrapes);
    expect(integrateEnergy(all, { start: 999, end: 1005 }, 2)).toMatchObject({
      power_valid: false,
      invalid_reasons: ['benchmark_window_not_bracketed'],
      total_j: null,
    });
    const gappy = all.filter((s) => s.gpu !== 'node1/1' || s.t < 1003 || s.t > 1006);
    expect(integrateEnergy(gappy, window, 2)).toMatchObject({
      power_valid: false,
      invalid_reasons: ['sampling_gap_exceeded'],
    });
    // the integral over a gap is still computed, the gate says it cannot be trusted
    expect(integrateEnergy(gappy, window, 2).total_j).toBeCloseTo(2250, 9);
    expect(integrateEnergy(all, window, 8).invalid_reasons).toEqual(['expected_gpu_count_mismatch']);
    const one: PowerSample[] = [{ gpu: 'a/0', t: 1000, watts: 1 }];
    expect(integrateEnergy(one, window).invalid_reasons).toEqual(['insufficient_power_samples']);
    expect(integrateEnergy([], window, 2)).toMatchObject({
      power_valid: false,
      invalid_reasons: ['no_usable_power_samples'],
      total_j: null,
    });
  });
});

/** data/dcgm-exporter-captures.txt: real single scrapes, one per `# capture name=<id> host=<node>` section. */
const captures = dcgmCaptures();

describe('real DCGM exporter captures (data/dcgm-exporter-captures.txt, sources in its sections)', () => {
  it("DataDog's recorded Tesla T4 scrape: 8.969 W and 128996013 mJ on its Hostname, the other 16 series ignored", () => {
    const t4 = captures.t4!;
    expect(parseDcgmExposition(t4.text, t4.host)).toEqual([
      { gpu: '424773df46e0/0', uuid: 'GPU-20c56d28-0da5-6d26-a36a-e7af1ce2586e', watts: 8.969, energyJ: 128996.013 },
    ]);
  });

  it("NVIDIA's documented A100 scrape with a MIG instance: 409.692 W, 319159391 mJ, the GPU_I_ID series not a GPU", () => {
    const a100 = captures['a100-mig']!;
    expect(parseDcgmExposition(a100.text, a100.host)).toEqual([
      { gpu: 'ub20-a100-k8s/0', uuid: 'GPU-34319582-d595-d1c7-d1d2-179bcfa61660', watts: 409.692, energyJ: 319159.391 },
    ]);
  });

  it('one scrape per GPU is no window: the gate refuses it, and an unchanged counter gives 0 J', () => {
    const t4 = captures.t4!;
    const samples = dcgmPowerSamples([{ t: 100, host: t4.host, text: t4.text }]);
    expect(samples).toEqual([{ gpu: '424773df46e0/0', t: 100, watts: 8.969 }]);
    expect(integrateEnergy(samples, { start: 100, end: 101 }, 1)).toMatchObject({
      power_valid: false,
      invalid_reasons: ['insufficient_power_samples'],
      total_j: null,
    });
    const r = parseDcgmExposition(t4.text, t4.host);
    expect(dcgmCounterEnergy(r, r)).toEqual({ '424773df46e0/0': 0 });
    // two nodes' captures are two GPUs; a deployment of 8 makes the count wrong, not a smaller total
    const both = dcgmPowerSamples(
      Object.values(captures).flatMap((c) => [100, 101].map((t) => ({ t, host: c.host, text: c.text }))),
    );
    expect(integrateEnergy(both, { start: 100, end: 101 }, 8).invalid_reasons).toEqual(['expected_gpu_count_mismatch']);
  });
});

/**
 * data/nvidia-smi-b200-power.csv: three 1-s samples of 8 B200s from InferenceX's nvidia-smi monitor (its header).
 * Known integrals, by hand from the rows (trapezoids, 1 s apart: (p0 + 2·p1 + p2) / 2 J over [19.279, 21.279]):
 * GPU 0 = (380.42 + 2·336.61 + 337.18) / 2 = 695.41 J; GPUs 0-7 = 695.41, 714.875, 691.14, 708.82, 696.175,
 * 708.355, 689.61, 693.515 J, 5597.9 J in all (2798.95 W). Over the inner window [19.779, 20.779] the edges are
 * interpolated: GPU 0 = 0.5·(358.515 + 336.61)/2 + 0.5·(336.61 + 336.895)/2 = 342.1575 J.
 */
const b200Csv = data('nvidia-smi-b200-power.csv')
  .split('\n')
  .filter((l) => !l.startsWith('#'))
  .join('\n');
const b200T0 = Date.parse('2026-09-08T07:20:19.279Z') / 1000;

describe('a real nvidia-smi capture: 8 B200s, 3 samples (data/nvidia-smi-b200-power.csv)', () => {
  it('is the unchanged retained excerpt (the sha256 its provenance records)', () => {
    expect(createHash('sha256').update(b200Csv).digest('hex')).toBe(
      '833cf864da4618579deeeda89b3ddde6dbf8b7b32b7877fda643f18411ee3481',
    );
  });

  it("parses InferenceX's full query (units on every column): 24 samples, GPU 0 at 380.42, 336.61, 337.18 W", () => {
    const s = parseNvidiaSmiPower(b200Csv, 'b200');
    expect(s).toHaveLength(24);
    expect(new Set(s.map((x) => x.gpu)).size).toBe(8);
    expect(s.filter((x) => x.gpu === 'b200/0')).toEqual([
      { gpu: 'b200/0', t: b200T0, watts: 380.42 },
      { gpu: 'b200/0', t: b200T0 + 1, watts: 336.61 },
      { gpu: 'b200/0', t: b200T0 + 2, watts: 337.18 },
    ]);
  });

  it('integrates to the known per-GPU joules over the whole span and over an inner window', () => {
    const s = parseNvidiaSmiPower(b200Csv, 'b200');
    const whole = integrateEnergy(s, { start: b200T0, end: b200T0 + 2 }, 8);
    expect(whole.power_valid).toBe(true);
    const known = [695.41, 714.875, 691.14, 708.82, 696.175, 708.355, 689.61, 693.515];
    known.forEach((j, g) => expect(whole.per_gpu_j[`b200/${g}`]).toBeCloseTo(j, 6));
    expect(whole.total_j).toBeCloseTo(5597.9, 6);
    expect(whole.avg_total_power_w).toBeCloseTo(2798.95, 6);
    const inner = integrateEnergy(s, { start: b200T0 + 0.5, end: b200T0 + 1.5 }, 8);
    expect(inner.power_valid).toBe(true);
    expect(inner.per_gpu_j['b200/0']).toBeCloseTo(342.1575, 6);
  });

  it('the energy block of a point on it: J/token, tokens/s/MW and $/M tokens from the known 5597.9 J', () => {
    const e = pointEnergy({
      source: 'nvidia-smi',
      samples: parseNvidiaSmiPower(b200Csv, 'b200'),
      window: { start: b200T0, end: b200T0 + 2 },
      gpus: 8,
      tokens: { input: 8000, output: 2000, requests: 4 },
      pricePerGpuHour: 6,
    });
    expect(e.power_valid).toBe(true);
    expect(e.metrics!.total_gpu_energy_j).toBeCloseTo(5597.9, 6);
    expect(e.metrics!.joules_per_total_token).toBeCloseTo(0.55979, 9);
    expect(e.metrics!.joules_per_output_token).toBeCloseTo(2.79895, 9);
    // 10,000 tokens in 2 s at 2798.95 W: 5000 tok/s / 0.00279895 MW
    expect(e.metrics!.tokens_per_second_per_mw).toBeCloseTo(5000 / 0.00279895, 3);
    // 8 GPUs × 2 s at $6/GPU-hour = $0.02666… for 10,000 tokens → $2.666… per M
    expect(e.dollars_per_million_tokens).toBeCloseTo(8 / 3, 9);
  });

  it('a window reaching past the last sample, or a GPU missing from the allocation, is not valid', () => {
    const s = parseNvidiaSmiPower(b200Csv, 'b200');
    expect(integrateEnergy(s, { start: b200T0, end: b200T0 + 3 }, 8).invalid_reasons).toEqual([
      'benchmark_window_not_bracketed',
    ]);
    expect(
      integrateEnergy(
        s.filter((x) => x.gpu !== 'b200/7'),
        { start: b200T0, end: b200T0 + 2 },
        8,
      ).invalid_reasons,
    ).toEqual(['expected_gpu_count_mismatch']);
  });
});

describe('nvidia-smi --query-gpu=…power.draw --format=csv', () => {
  it('with timestamp and index columns', () => {
    const csv =
      'timestamp, index, power.draw [W]\n2026/12/05 07:00:00.000, 0, 123.45 W\n2026/12/05 07:00:00.000, 1, [N/A]\n2026/12/05 07:00:01.500, 0, 130.00 W\n';
    const t0 = Date.parse('2026-12-05T07:00:00Z') / 1000;
    expect(parseNvidiaSmiPower(csv, 'node2')).toEqual([
      { gpu: 'node2/0', t: t0, watts: 123.45 },
      { gpu: 'node2/0', t: t0 + 1.5, watts: 130 },
    ]);
  });

  it("the bare power.draw query: one row per GPU in index order at the sampler's time", () => {
    expect(parseNvidiaSmiPower('power.draw [W]\n75.21 W\n80.00 W\n', 'n', 42)).toEqual([
      { gpu: 'n/0', t: 42, watts: 75.21 },
      { gpu: 'n/1', t: 42, watts: 80 },
    ]);
    expect(() => parseNvidiaSmiPower('index, temperature.gpu\n0, 40\n', 'n', 1)).toThrow(/power\.draw/);
  });
});

describe('energy per token, tokens/s/MW and $/M tokens', () => {
  const e = integrateEnergy(dcgmPowerSamples(scrapes), window, 2);

  it("InferenceX's per-token fields, per role on a P/D deployment, and tokens/s per MW", () => {
    const m = energyMetrics(
      e,
      { input: 9000, output: 1000, requests: 10 },
      { 'node1/0': 'prefill', 'node1/1': 'decode' },
    )!;
    expect(m.total_gpu_energy_j).toBeCloseTo(2250, 9);
    expect(m.avg_power_w).toBeCloseTo(225, 9);
    expect(m.joules_per_total_token).toBeCloseTo(0.225, 9);
    expect(m.joules_per_output_token).toBeCloseTo(2.25, 9);
    expect(m.joules_per_input_token).toBeCloseTo(0.25, 9);
    expect(m.joules_per_successful_query).toBeCloseTo(225, 9);
    expect(m.prefill_joules_per_input_token).toBeCloseTo(750 / 9000, 9);
    expect(m.decode_joules_per_output_token).toBeCloseTo(1.5, 9);
    // 10,000 tokens in 5 s at 450 W: 2000 tok/s / 0.00045 MW
    expect(m.tokens_per_second_per_mw).toBeCloseTo(2000 / 0.00045, 3);
  });

  it('no number from an invalid window or without tokens', () => {
    const invalid = integrateEnergy(dcgmPowerSamples(scrapes), window, 8);
    expect(energyMetrics(invalid, { input: 1, output: 1, requests: 1 })).toBeNull();
    expect(energyMetrics(e, { input: 10, output: 0, requests: 1 })).toBeNull();
  });

  it("$/M tokens: GPU-hours held for the window at the price table's rate over the tokens", () => {
    // 32 GPUs × 3600 s at $3.50/GPU-hour = $112 for 2,000,000 tokens → $56 per M
    expect(dollarsPerMillionTokens(3.5, 32, 3600, 2_000_000)).toBeCloseTo(56, 9);
    expect(dollarsPerMillionTokens(undefined, 32, 3600, 1)).toBeNull();
    expect(dollarsPerMillionTokens(3.5, 32, 3600, 0)).toBeNull();
  });
});

describe("the record's energy block and InferenceX's power fields", () => {
  const tokens = { input: 9000, output: 1000, requests: 10 };
  const samples = dcgmPowerSamples(scrapes);

  it("pointEnergy: the window integral per GPU and per role, the metrics and $/M tokens at the worker's price", () => {
    const e = pointEnergy({
      source: 'dcgm',
      samples,
      window,
      gpus: 2,
      tokens,
      roles: { 'node1/0': 'prefill', 'node1/1': 'decode' },
      pricePerGpuHour: 3.6,
    });
    expect(pointEnergySchema.parse(e)).toEqual(e);
    expect(e.power_valid).toBe(true);
    expect(e.per_role_j!.prefill).toBeCloseTo(750, 9);
    expect(e.per_role_j!.decode).toBeCloseTo(1500, 9);
    expect(e.metrics!.joules_per_total_token).toBeCloseTo(0.225, 9);
    // 2 GPUs × 5 s at $3.60/h = $0.01 for 10,000 tokens → $1 per M
    expect(e.dollars_per_million_tokens).toBeCloseTo(1, 9);
    expect(pointEnergy({ source: 'dcgm', samples, window, gpus: 2, tokens }).dollars_per_million_tokens).toBeNull();
  });

  it("InferenceX's patch, as its _patch_power_result writes it (run at 843c6254f on the same metrics)", () => {
    const e = pointEnergy({ source: 'dcgm', samples, window, gpus: 2, tokens });
    // InferenceX utils/aggregate_power.py _patch_power_result(power_valid=True, metrics=the seven keys below):
    // {"power_metric_schema_version": 2, "power_valid": 1, "avg_power_w": 225.0, "avg_total_gpu_power_w": 450.0,
    //  "total_gpu_energy_j": 2250.0, "joules_per_successful_query": 225.0, "joules_per_input_token": 0.25,
    //  "joules_per_output_token": 2.25, "joules_per_total_token": 0.225}; invalid: version and power_valid 0 only
    expect(inferencexPowerFields(e)).toEqual({
      power_metric_schema_version: 2,
      power_valid: 1,
      avg_power_w: 225,
      avg_total_gpu_power_w: 450,
      total_gpu_energy_j: 2250,
      joules_per_successful_query: 225,
      joules_per_input_token: 0.25,
      joules_per_output_token: 2.25,
      joules_per_total_token: 0.225,
    });
    const invalid = pointEnergy({ source: 'dcgm', samples, window, gpus: 8, tokens });
    expect(inferencexPowerFields(invalid)).toEqual({ power_metric_schema_version: 2, power_valid: 0 });
  });
});

describe('dcgmPointEnergy: timed scrapes of the allocation nodes, a failed scrape never bridged', () => {
  // the recorded T4 scrape taken at 100, 101 and 102 s: a constant 8.969 W, 17.938 J over [100, 102]
  const t4 = captures.t4!;
  const at = (t: number) => ({ t, host: t4.host, text: t4.text });
  const base = { window: { start: 100, end: 102 }, gpus: 1, tokens: { input: 10, output: 10, requests: 1 } };

  it('integrates the scrapes like pointEnergy', () => {
    const e = dcgmPointEnergy({ ...base, scrapes: [at(100), at(101), at(102)] });
    expect(e).toEqual(pointEnergy({ ...base, source: 'dcgm', samples: dcgmPowerSamples([at(100), at(101), at(102)]) }));
    expect(e.power_valid).toBe(true);
    expect(e.per_gpu_j['424773df46e0/0']).toBeCloseTo(17.938, 9);
  });

  it('a failed or unparseable scrape makes power invalid with its reason, though the 2-s gap alone would pass', () => {
    const failed = dcgmPointEnergy({
      ...base,
      scrapes: [at(100), { t: 101, host: 'node7', error: 'connect ECONNREFUSED 10.0.0.7:9400' }, at(102)],
    });
    expect(failed).toMatchObject({
      power_valid: false,
      invalid_reasons: ['dcgm_scrape_failed: node7 at 101: connect ECONNREFUSED 10.0.0.7:9400'],
      metrics: null,
    });
    // the integral over the gap stays in per_gpu_j; the gate says it cannot be trusted
    expect(failed.per_gpu_j['424773df46e0/0']).toBeCloseTo(17.938, 9);
    expect(dcgmPointEnergy({ ...base, scrapes: [at(100), at(102)] }).power_valid).toBe(true);
    const garbled = dcgmPointEnergy({ ...base, scrapes: [at(100), { t: 101, host: 'n', text: '{oops' }, at(102)] });
    expect(garbled.power_valid).toBe(false);
    expect(garbled.invalid_reasons).toEqual([expect.stringMatching(/^dcgm_scrape_failed: n at 101: /)]);
  });
});

describe('dcgmPointEnergy on a P/D deployment: each GPU takes the role of the node whose exporter reported it', () => {
  // the timed scrapes as node1 (prefill) and the same profile as node2 (decode): 2250 J each over the window
  const node2 = scrapes.map((s) => ({
    ...s,
    host: 'node2',
    text: s.text.replaceAll('Hostname="node1"', 'Hostname="node2"'),
  }));
  const base = {
    window,
    gpus: 4,
    tokens: { input: 9000, output: 1000, requests: 10 },
    scrapes: [...scrapes, ...node2],
  };

  it('splits the joules and the per-token metrics by role (InferenceX aggregate_power_multinode.py)', () => {
    const e = dcgmPointEnergy({ ...base, nodeRoles: { node1: 'prefill', node2: 'decode' } });
    expect(pointEnergySchema.parse(e)).toEqual(e);
    expect(e.power_valid).toBe(true);
    expect(e.per_role_j!.prefill).toBeCloseTo(2250, 9);
    expect(e.per_role_j!.decode).toBeCloseTo(2250, 9);
    expect(e.metrics!.prefill_joules_per_input_token).toBeCloseTo(2250 / 9000, 12);
    expect(e.metrics!.decode_joules_per_output_token).toBeCloseTo(2250 / 1000, 12);
    expect(e.per_role_unavailable).toBeUndefined();
  });

  it('a GPU of a node without one role: no split, said why; the energy itself stands', () => {
    const e = dcgmPointEnergy({ ...base, nodeRoles: { node1: 'prefill' } });
    expect(e.power_valid).toBe(true);
    expect(e.metrics!.total_gpu_energy_j).toBeCloseTo(4500, 9);
    expect(e.per_role_j).toBeUndefined();
    expect(e.metrics!.prefill_joules_per_input_token).toBeUndefined();
    expect(e.per_role_unavailable).toBe('GPU node2/0 reported by node2, which hold no one role');
  });

  it('one GPU reported by nodes of both roles (one exporter for both): no split', () => {
    const shared = node2.map((s) => ({ ...s, text: scrapes.find((x) => x.t === s.t)!.text }));
    const e = dcgmPointEnergy({
      ...base,
      gpus: 2,
      scrapes: [...scrapes, ...shared],
      nodeRoles: { node1: 'prefill', node2: 'decode' },
    });
    expect(e.per_role_j).toBeUndefined();
    expect(e.per_role_unavailable).toBe('GPU node1/0 reported by node1, node2, which hold both roles');
  });

  it('an aggregated deployment has neither a split nor a reason for none', () => {
    const e = dcgmPointEnergy({ ...base });
    expect('per_role_j' in e || 'per_role_unavailable' in e).toBe(false);
  });
});
