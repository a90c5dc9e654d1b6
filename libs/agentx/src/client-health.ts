import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { AgentxSettings } from '@infersweep/topology';
import type { PointResult } from './result';

/** Client self-monitoring over the profiling window: event-loop delay and CPU (fraction of one core). */
export class ClientHealth {
  private readonly h = monitorEventLoopDelay({ resolution: 10 });
  private cpu0 = process.cpuUsage();
  private t0 = performance.now();
  private cpuFraction: number | null = null;
  start(): void {
    this.h.reset();
    this.h.enable();
    this.cpu0 = process.cpuUsage();
    this.t0 = performance.now();
  }
  stop(): void {
    this.h.disable();
    const d = process.cpuUsage(this.cpu0);
    const wall = (performance.now() - this.t0) * 1000;
    this.cpuFraction = wall > 0 ? (d.user + d.system) / wall : null;
  }
  result(limits: AgentxSettings['clientHealth']): PointResult['client_health'] {
    const count = this.h.count;
    // the histogram's floor is its resolution (10 ms timer): report the delay beyond it
    const p99 = count > 0 ? Math.max(0, this.h.percentile(99) / 1e6 - 10) : null;
    const max = count > 0 ? Math.max(0, this.h.max / 1e6 - 10) : null;
    const reasons: string[] = [];
    if (p99 !== null && p99 > limits.maxEventLoopDelayP99Ms)
      reasons.push(`event-loop delay p99 ${p99.toFixed(2)} ms > ${limits.maxEventLoopDelayP99Ms} ms`);
    if (this.cpuFraction !== null && this.cpuFraction > limits.maxCpuFraction)
      reasons.push(
        `client CPU ${(this.cpuFraction * 100).toFixed(0)} % of a core > ${(limits.maxCpuFraction * 100).toFixed(0)} %`,
      );
    return {
      event_loop_delay_p99_ms: p99,
      event_loop_delay_max_ms: max,
      cpu_fraction: this.cpuFraction,
      peak_rss_bytes: process.resourceUsage().maxRSS * 1024,
      saturated: reasons.length > 0,
      reason: reasons.length ? reasons.join('; ') : null,
    };
  }
  /** A point that never profiled measured nothing of the client: only its peak memory. */
  static unmeasured(): PointResult['client_health'] {
    return {
      event_loop_delay_p99_ms: null,
      event_loop_delay_max_ms: null,
      cpu_fraction: null,
      peak_rss_bytes: process.resourceUsage().maxRSS * 1024,
      saturated: false,
      reason: null,
    };
  }
}
