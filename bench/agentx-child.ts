/**
 * One infersweep client point in its own process (so CPU and peak RSS are the client's alone).
 * argv[2] = JSON RunPointInput; prints one JSON summary line on stdout.
 */
import { runPoint, type RunPointInput } from '@infersweep/agentx';

async function main(): Promise<void> {
  const input = JSON.parse(process.argv[2]!) as RunPointInput;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let peakRss = 0;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage.rss())), 200);
  const r = await runPoint(input);
  clearInterval(sampler);
  const cpu = process.cpuUsage(cpu0);
  const { readFileSync } = await import('node:fs');
  const recs = readFileSync(`${input.outDir}/requests.jsonl`, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { ok: boolean; osl: number | null; isl: number | null });
  const tokens = recs.reduce((s, x) => s + (x.ok ? (x.osl ?? 0) : 0), 0);
  const maxIsl = recs.reduce((m, x) => Math.max(m, x.isl ?? 0), 0);
  console.log(
    JSON.stringify({
      wallSeconds: (performance.now() - t0) / 1000,
      cpuSeconds: (cpu.user + cpu.system) / 1e6,
      maxRssBytes: Math.max(peakRss, process.resourceUsage().maxRSS * 1024),
      outputTokens: tokens,
      requests: recs.length,
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
