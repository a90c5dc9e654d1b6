import { describe, expect, it } from 'vitest';
import { mean, sd } from '@infersweep/stats';
import { allocationSpeedMultiplier, scaleSimulatorLatencies } from '../src/activities/speed';

describe('the local stack’s per-allocation speed', () => {
  it('draws the same multiplier for the same seed and job, another for another job', () => {
    const speed = { seed: 7, sd: 0.05 };
    expect(allocationSpeedMultiplier(speed, '101')).toBe(allocationSpeedMultiplier(speed, '101'));
    expect(allocationSpeedMultiplier(speed, '101')).not.toBe(allocationSpeedMultiplier(speed, '102'));
    expect(allocationSpeedMultiplier({ ...speed, seed: 8 }, '101')).not.toBe(allocationSpeedMultiplier(speed, '101'));
  });

  it('is lognormal with the configured SD on the log scale (2000 job ids)', () => {
    const logs = Array.from({ length: 2000 }, (_, i) =>
      Math.log(allocationSpeedMultiplier({ seed: 1, sd: 0.05 }, String(1000 + i))),
    );
    expect(Math.abs(mean(logs))).toBeLessThan(0.005);
    expect(sd(logs)).toBeGreaterThan(0.045);
    expect(sd(logs)).toBeLessThan(0.055);
  });

  it('scales only the simulator’s latency flags, in whole microseconds', () => {
    const argv = [
      'llm-d-inference-sim',
      '--port',
      '8000',
      '--time-to-first-token',
      '20ms',
      '--inter-token-latency',
      '5ms',
      '--mode',
      'random',
    ];
    expect(scaleSimulatorLatencies(argv, 1.1)).toEqual([
      'llm-d-inference-sim',
      '--port',
      '8000',
      '--time-to-first-token',
      '22000us',
      '--inter-token-latency',
      '5500us',
      '--mode',
      'random',
    ]);
    expect(() => scaleSimulatorLatencies(['sim', '--inter-token-latency', '5s'], 2)).toThrow(
      /expected milliseconds, e.g. 20ms/,
    );
  });
});
