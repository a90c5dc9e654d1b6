import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseSweepConfig, planSweep } from '@infersweep/topology';
import { renderPlan } from '../src/actions/plan';

const file = new URL('../../../configs/kimik3-fp4-h200.yaml', import.meta.url);
const shipped = readFileSync(file, 'utf8');
const env = { INFERSWEEP_STACK: '/stack', HOME: '/home/op' };
const planOf = (text: string) => {
  const { config, source } = parseSweepConfig(text, { file: file.pathname, env });
  return planSweep(config, { orientation: 'latency', cluster: 'h200', source });
};

describe('infersweep plan: the GPU telemetry line', () => {
  it("names the exporter's port and interval when the profile sets gpuTelemetry; no line without it", () => {
    const shared = '    sharedDir: /lustre/infersweep/runs\n';
    expect(shipped).toContain(shared);
    const withIt = shipped.replace(
      shared,
      `${shared}    gpuTelemetry: { dcgmExporterPort: 9400, intervalSeconds: 0.5 }\n`,
    );
    expect(renderPlan(planOf(withIt))).toContain(
      'telemetry  DCGM exporter http://<node>:9400/metrics every 0.5 s over each profile window',
    );
    expect(renderPlan(planOf(shipped))).not.toContain('telemetry');
  });
});
