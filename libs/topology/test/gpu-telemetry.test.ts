/** GPU telemetry is a cluster setting (the nodes' DCGM exporters), carried by the plan only when set. */
import { describe, expect, it } from 'vitest';
import { ConfigError, parseSweepConfig, planContentHash, planSweep } from '../src/index';
import { edit, SHIPPED, shippedText, stackEnv } from './helpers';

const SHARED = '    sharedDir: /lustre/infersweep/runs\n';
const withTelemetry = (block: string) => edit(SHARED, `${SHARED}    gpuTelemetry: ${block}\n`);

function refusal(text: string): string[] {
  try {
    parseSweepConfig(text, { file: SHIPPED, env: stackEnv });
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as ConfigError).issues.map((i) => `${i.path}: ${i.message}`);
  }
  throw new Error('the config parsed');
}

describe('clusters.<name>.gpuTelemetry', () => {
  it('the exporter port reaches the plan with the default 1 s interval, in the plan hash', () => {
    const { config, source } = parseSweepConfig(withTelemetry('{ dcgmExporterPort: 9400 }'), {
      file: SHIPPED,
      env: stackEnv,
    });
    const plan = planSweep(config, { orientation: 'latency', cluster: 'h200', source });
    expect(plan.gpuTelemetry).toEqual({ dcgmExporterPort: 9400, intervalSeconds: 1 });
    expect(planContentHash(plan)).toBe(plan.planHash);
    const { config: plain } = parseSweepConfig(shippedText, { file: SHIPPED, env: stackEnv });
    const before = planSweep(plain, { orientation: 'latency', cluster: 'h200' });
    expect(plan.planHash).not.toBe(before.planHash);
  });

  it('without it the plan has no gpuTelemetry and its hash is the content hash of a plan without one', () => {
    const { config } = parseSweepConfig(shippedText, { file: SHIPPED, env: stackEnv });
    const plan = planSweep(config, { orientation: 'latency', cluster: 'h200' });
    expect(plan).not.toHaveProperty('gpuTelemetry');
    expect(planContentHash(plan)).toBe(plan.planHash);
  });

  it('an interval of 3 s or more (gaps that invalidate power) is refused, naming the field', () => {
    expect(refusal(withTelemetry('{ dcgmExporterPort: 9400, intervalSeconds: 5 }'))).toEqual([
      expect.stringMatching(/^clusters\.h200\.gpuTelemetry\.intervalSeconds: .*3 s or more.*use e\.g\. 1/),
    ]);
  });

  it('a port outside 1-65535 or an unknown key is refused, naming the field', () => {
    expect(refusal(withTelemetry('{ dcgmExporterPort: 70000 }'))).toEqual([
      expect.stringMatching(/^clusters\.h200\.gpuTelemetry\.dcgmExporterPort: /),
    ]);
    expect(refusal(withTelemetry('{ dcgmExporterPort: 9400, nvidiaSmi: true }'))).toEqual([
      expect.stringMatching(/^clusters\.h200\.gpuTelemetry\.nvidiaSmi: unknown key/),
    ]);
  });

  it('with aiperf as the client the plan warns that its points get no energy', () => {
    const text = withTelemetry('{ dcgmExporterPort: 9400 }').replace(/^agentx:\n/m, 'agentx:\n  client: aiperf\n');
    const { config, source } = parseSweepConfig(text, { file: SHIPPED, env: stackEnv });
    const plan = planSweep(config, { orientation: 'latency', cluster: 'h200', source });
    expect(plan.agentx.client).toBe('aiperf');
    expect(plan.warnings).toContain(
      'gpuTelemetry is set but agentx.client is aiperf: its points get no energy (only the infersweep client samples the DCGM exporters)',
    );
  });
});
