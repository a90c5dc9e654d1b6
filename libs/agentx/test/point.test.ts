import { describe, expect, it } from 'vitest';
import { pointTiming } from '../src/point';
import { serverMetricsMissing } from '../src/profile-window';
import { serverMetricsWindow } from '../src/server/window';
import { requestRecord } from '@infersweep/testkit/records-fixture';

describe('pointTiming', () => {
  const startedAt = new Date('2026-01-01T00:00:00.000Z');
  const endedAt = new Date('2026-01-01T00:10:00.000Z');
  const origin = Date.parse('2026-01-01T00:00:01.000Z');

  it('measures the profile from its start to the last profiled request end, warmup from warmup start', () => {
    const records = [
      requestRecord({ phase: 'warmup', end_ms: 90_000 }),
      requestRecord({ phase: 'profiling', end_ms: 70_000 }),
      requestRecord({ phase: 'profiling', end_ms: 75_500 }),
    ];
    const t = pointTiming(
      { records, originWallMs: origin, warmupStartMs: 1_000, profileStartMs: 11_000, profileEndMs: 71_000 },
      60,
      startedAt,
      endedAt,
    );
    expect(t).toEqual({
      started_at: '2026-01-01T00:00:00.000Z',
      profiling_started_at: '2026-01-01T00:00:12.000Z',
      profiling_ended_at: '2026-01-01T00:01:12.000Z',
      ended_at: '2026-01-01T00:10:00.000Z',
      profile_duration_seconds: 60,
      measured_profile_seconds: 64.5,
      warmup_seconds: 10,
    });
  });

  it('a point that never profiled has no profile times and no measured window', () => {
    const t = pointTiming(
      {
        records: [requestRecord({ phase: 'warmup' })],
        originWallMs: origin,
        warmupStartMs: 0,
        profileStartMs: null,
        profileEndMs: null,
      },
      60,
      startedAt,
      endedAt,
    );
    expect([t.profiling_started_at, t.profiling_ended_at, t.measured_profile_seconds, t.warmup_seconds]).toEqual([
      null,
      null,
      null,
      null,
    ]);
  });

  it('a profile with no profiled request has no measured window', () => {
    const t = pointTiming(
      { records: [], originWallMs: origin, warmupStartMs: 0, profileStartMs: 5, profileEndMs: 9 },
      60,
      startedAt,
      endedAt,
    );
    expect(t.measured_profile_seconds).toBeNull();
    expect(t.warmup_seconds).toBe(0.005);
  });
});

describe('serverMetricsMissing', () => {
  const empty = serverMetricsWindow([], [], [], 'vllm');

  it('without metrics endpoints, says so and nothing else', () => {
    expect(serverMetricsMissing(0, empty)).toEqual(['no metrics endpoints given']);
  });

  it('names each missing counter and gauge when endpoints were scraped', () => {
    const none = {
      ...empty,
      tokens: { ...empty.tokens, prompt: null, generation: null },
      kv_cache: { ...empty.kv_cache, gpu_usage_pct: null },
    };
    expect(serverMetricsMissing(2, none)).toEqual([
      'prompt-token counter delta unavailable',
      'generation-token counter delta unavailable',
      'KV-cache usage gauge unavailable',
    ]);
  });

  it('nothing is missing when the deltas and the gauge are present', () => {
    const full = {
      ...empty,
      tokens: { ...empty.tokens, prompt: 10, generation: 5 },
      kv_cache: { ...empty.kv_cache, gpu_usage_pct: 40 },
    };
    expect(serverMetricsMissing(1, full)).toEqual([]);
  });
});
