/**
 * One infersweep client point in its own process (so CPU and peak RSS are the client's alone).
 * argv[2] = JSON RunPointInput; prints one JSON summary line on stdout. Besides whole-process figures it
 * reports the profiling window's own CPU (profiling start → replay done, i.e. every profiled request from
 * its first byte to its record; the point's aggregation and file writes after that are excluded) and the
 * tokens of the requests profiled in it, and `hrOffsetMs` (CLOCK_MONOTONIC ms − performance.now()) so a
 * bench can put the records' times on another process's clock.
 */
import { readRequestRecords, runPoint, type RunPointInput } from '@infersweep/agentx';

/**
 * CLOCK_MONOTONIC ms − performance.now(), from the tightest of many bracketed reads: a single pair of
 * reads is off by however long the process was preempted between them (milliseconds on a loaded host).
 */
function monotonicOffsetMs(): number {
  let best = Infinity;
  let offset = 0;
  for (let i = 0; i < 2000; i++) {
    const a = performance.now();
    const hr = Number(process.hrtime.bigint()) / 1e6;
    const b = performance.now();
    if (b - a < best) {
      best = b - a;
      offset = hr - (a + b) / 2;
    }
  }
  return offset;
}

async function main(): Promise<void> {
  const input = JSON.parse(process.argv[2]!) as RunPointInput;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let peakRss = 0;
  let win: { cpu0: NodeJS.CpuUsage; t0: number } | null = null;
  let windowCpu: number | null = null;
  let windowWall: number | null = null;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage.rss())), 200);
  const r = await runPoint(input, {
    onProgress: (p) => {
      if (p.phase === 'profiling' && !win) {
        win = { cpu0: process.cpuUsage(), t0: performance.now() };
        process.stderr.write('agentx-child: profiling\n'); // bench/common.ts runClient's onProfiling
      }
      if (p.phase === 'done' && win && windowCpu === null) {
        const d = process.cpuUsage(win.cpu0);
        windowCpu = (d.user + d.system) / 1e6;
        windowWall = (performance.now() - win.t0) / 1000;
      }
    },
  });
  clearInterval(sampler);
  const cpu = process.cpuUsage(cpu0);
  const hrOffsetMs = monotonicOffsetMs();
  const recs = readRequestRecords(`${input.outDir}/requests.jsonl`);
  const tokens = recs.reduce((s, x) => s + (x.ok ? (x.osl ?? 0) : 0), 0);
  const windowTokens = recs.reduce((s, x) => s + (x.ok && x.phase === 'profiling' ? (x.osl ?? 0) : 0), 0);
  const maxIsl = recs.reduce((m, x) => Math.max(m, x.isl ?? 0), 0);
  console.log(
    JSON.stringify({
      wallSeconds: (performance.now() - t0) / 1000,
      cpuSeconds: (cpu.user + cpu.system) / 1e6,
      windowCpuSeconds: windowCpu,
      windowWallSeconds: windowWall,
      windowTokens,
      hrOffsetMs,
      maxRssBytes: Math.max(peakRss, process.resourceUsage().maxRSS * 1024),
      outputTokens: tokens,
      requests: recs.length,
      profiledRequests: recs.filter((x) => x.phase === 'profiling').length,
      errors: recs.filter((x) => !x.ok).length,
      maxIsl,
      ttftMean: r.request_metrics.latency.ttft.mean,
      itlMean: r.request_metrics.latency.itl.mean,
      sessions: r.concurrency.time_weighted_sessions,
      busyLanes: r.concurrency.time_weighted_busy_lanes,
      loopP99: r.client_health.event_loop_delay_p99_ms,
      cpuFraction: r.client_health.cpu_fraction,
      reasons: r.submission_invalid_reasons,
    }),
  );
}
main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
