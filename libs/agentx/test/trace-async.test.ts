/**
 * Loading traces never holds the worker's event loop (../src/trace/loader.ts loadTracesAsync): while
 * a large trace set loads, a timer (what heartbeats every activity of the worker) keeps firing;
 * the synchronous load of the same file blocks it for the whole parse. Each set is loaded once per
 * process while its files are unchanged (../src/traces.ts resolveTracesAsync).
 */
import { mkdtempSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadTraces, loadTracesAsync } from '../src/trace/loader';
import { generateTraces } from '../src/trace/generator';
import { resolveTracesAsync } from '../src/traces';

/** The longest gap between ticks of a 2 ms timer while `fn` runs. */
async function longestStall<T>(fn: () => Promise<T> | T): Promise<{ value: T; gapMs: number }> {
  let last = performance.now();
  let gapMs = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    gapMs = Math.max(gapMs, now - last);
    last = now;
  }, 2);
  await new Promise((r) => setTimeout(r, 10));
  last = performance.now();
  try {
    const value = await fn();
    await new Promise((r) => setTimeout(r, 10)); // a blocked timer fires once the load ends
    return { value, gapMs };
  } finally {
    clearInterval(timer);
  }
}

const dir = mkdtempSync(join(tmpdir(), 'traces-async-'));
const file = join(dir, 'big.jsonl');
const traces = generateTraces({ seed: 7, traces: 240, maxContextTokens: 100_000, thinkTimeScale: 1, model: 'm' });
writeFileSync(file, traces.map((t) => JSON.stringify(t)).join('\n'));

describe('trace loading and the event loop', () => {
  it('a large trace file loads with the timers still firing (sync: blocked for the whole parse)', async () => {
    const sync = await longestStall(() => loadTraces(file));
    const async = await longestStall(() => loadTracesAsync(file));
    expect(async.value).toEqual(sync.value);
    expect(sync.gapMs).toBeGreaterThan(150); // the file is large enough to matter (half of it, 120 traces, parsed in 120 ms on an idle core)
    expect(async.gapMs).toBeLessThan(sync.gapMs / 3);
  });

  it('each trace set is loaded once per process while its files are unchanged', async () => {
    const src = { kind: 'file' as const, path: file };
    const a = await resolveTracesAsync(src);
    const b = await resolveTracesAsync(src);
    expect(b.traces).toBe(a.traces);
    utimesSync(file, new Date(), new Date(Date.now() + 5000)); // the file changed: loaded again
    const c = await resolveTracesAsync(src);
    expect(c.traces).not.toBe(a.traces);
    expect(c.dataset).toEqual({
      source_type: 'file',
      loader: 'weka_trace',
      path: file,
      seed: null,
      entry_count: traces.length,
    });
  });

  it('a synthetic source with subagentProbability 0 has no subagents; by default some traces have them', async () => {
    const base = { kind: 'synthetic' as const, seed: 3, traces: 40, maxContextTokens: 20_000, thinkTimeScale: 0 };
    const subagents = (ts: { requests: { type?: string }[] }[]) =>
      ts.flatMap((t) => t.requests).filter((r) => r.type === 'subagent').length;
    expect(subagents((await resolveTracesAsync(base)).traces)).toBeGreaterThan(0);
    expect(subagents((await resolveTracesAsync({ ...base, subagentProbability: 0 })).traces)).toBe(0);
  });
});
