import { closeSync, openSync, readFileSync, readSync } from 'node:fs';
import { availableParallelism, hostname, loadavg } from 'node:os';
import { createHistogram, type RecordableHistogram } from 'node:perf_hooks';
import type { AgentxSettings } from '@infersweep/topology';
import type { PointResult } from './result';

/** Period of the event-loop sampler, ms: each tick's lateness beyond it is one delay sample. */
export const HEALTH_TICK_MS = 10;

/** What {@link ClientHealth} measured over a profiling window (the input of the pure verdict). */
export interface HealthMeasure {
  /** Event-loop delay p99 / max, ms: how late the sampler's ticks fired. */
  delayP99Ms: number | null;
  delayMaxMs: number | null;
  /** The same ticks, each less the time the client's thread waited for a CPU meanwhile: the client's own delay. */
  ownDelayP99Ms: number | null;
  /** CPU of the client's process (user + system) over the window, in cores. */
  cpuFraction: number | null;
  /** Time the client's thread waited on the run queue (runnable, no CPU given) / wall time; null off Linux. */
  runQueueWaitFraction: number | null;
  host: { name: string; cpus: number; load1: number; stealFraction: number | null };
}

type HealthVerdict = Pick<PointResult['client_health'], 'saturated' | 'reason' | 'host_saturated' | 'host_reason'>;

const ms = (x: number): string => `${x.toFixed(2)} ms`;
const pct = (x: number): string => `${(x * 100).toFixed(0)} %`;

/**
 * The client-health verdict (pure). The client's own figures decide `client_saturated`: its CPU over
 * `maxCpuFraction` of a core, or its own event-loop delay p99 (each tick less the run-queue wait of
 * that tick) over `maxEventLoopDelayP99Ms`. A delay p99 over the limit that the client's own work does
 * not explain came from the host (the client's thread was runnable and got no CPU): `host_saturated`,
 * naming the host, its load and steal. Either makes the point invalid: its timings were read late.
 */
export function healthVerdict(m: HealthMeasure, limits: AgentxSettings['clientHealth']): HealthVerdict {
  const limit = limits.maxEventLoopDelayP99Ms;
  const client: string[] = [];
  let host: string | null = null;
  if (m.delayP99Ms !== null && m.delayP99Ms > limit) {
    const own = m.ownDelayP99Ms ?? m.delayP99Ms;
    if (own > limit) client.push(`event-loop delay p99 ${ms(m.delayP99Ms)} > ${limit} ms (own work ${ms(own)})`);
    else {
      const wait =
        m.runQueueWaitFraction === null
          ? ''
          : `, its thread waited for a CPU ${pct(m.runQueueWaitFraction)} of the window`;
      const steal = m.host.stealFraction === null ? '' : `, steal ${pct(m.host.stealFraction)}`;
      host =
        `host ${m.host.name}: the client's event-loop delay p99 ${ms(m.delayP99Ms)} > ${limit} ms, its own work ${ms(own)}` +
        `${wait}; load average ${m.host.load1.toFixed(2)} on ${m.host.cpus} CPUs${steal}`;
    }
  }
  if (m.cpuFraction !== null && m.cpuFraction > limits.maxCpuFraction)
    client.push(`client CPU ${pct(m.cpuFraction)} of a core > ${pct(limits.maxCpuFraction)}`);
  return {
    saturated: client.length > 0,
    reason: client.length ? client.join('; ') : null,
    host_saturated: host !== null,
    host_reason: host,
  };
}

/**
 * The most streamed responses, as a share of a point's, a client may have read whole before the point is invalid:
 * the share of its event-loop ticks our own client's p99 gate lets run late ({@link healthVerdict}).
 */
export const MAX_COLLAPSED_STREAM_SHARE = 0.01;

/**
 * Streams the client read whole (pure): profiled, successful requests of two or more output tokens whose first and
 * last content the client timestamped at the same instant (ITL exactly 0). A client that stamps each transport read,
 * as aiperf 0.13 does (aiperf/transports/aiohttp_client.py `tracked_content_stream`: one `perf_counter_ns` per
 * `iter_any` read, shared by every SSE message in it; `http_req_chunks_received` counts those reads), reads a whole
 * response in one read when its event loop was blocked for the response's decode: that request's TTFT then reads its
 * E2E latency and its ITL 0, wrong numbers in the point's distributions. Measured 2026-12-05 on the real vLLM CPU
 * engine, aiperf alone on a quiet 2-core host: 6 of 122 responses of 96 tokens read whole (TTFT 0.89–1.05 s against
 * the engine's 0.09–0.29 s), libs/agentx/README.md "The referee". Over {@link MAX_COLLAPSED_STREAM_SHARE} of the
 * streamed responses → `client_saturated`; fewer, but any → a warning (never silent). Our own client stamps each SSE
 * event and has the event-loop gate above.
 */
export function collapsedStreams(
  records: readonly { phase: string; ok: boolean; osl: number | null; itl_ms: number | null }[],
): { collapsed: number; streamed: number; reason: string | null; warning: string | null } {
  const streamed = records.filter((r) => r.phase === 'profiling' && r.ok && r.osl !== null && r.osl >= 2);
  const collapsed = streamed.filter((r) => r.itl_ms === 0).length;
  if (collapsed === 0) return { collapsed, streamed: streamed.length, reason: null, warning: null };
  const text =
    `${collapsed} of ${streamed.length} streamed responses read whole (≥ 2 output tokens in one read, ITL 0, TTFT = ` +
    `E2E): the client's reads stalled`;
  const over = collapsed / streamed.length > MAX_COLLAPSED_STREAM_SHARE;
  return {
    collapsed,
    streamed: streamed.length,
    reason: over ? `${text} (> ${MAX_COLLAPSED_STREAM_SHARE * 100} %)` : null,
    warning: over ? null : `collapsed_streams: ${text} (≤ ${MAX_COLLAPSED_STREAM_SHARE * 100} %, the point stands)`,
  };
}

/**
 * This thread's scheduler counters (Linux `/proc/thread-self/schedstat`: ns on a CPU, ns waiting on
 * the run queue), read with one pread per call; null where the file does not exist.
 */
class ThreadSchedstat {
  private readonly buf = Buffer.alloc(96);
  private constructor(private fd: number | null) {}
  static open(): ThreadSchedstat {
    try {
      return new ThreadSchedstat(openSync('/proc/thread-self/schedstat', 'r'));
    } catch {
      return new ThreadSchedstat(null);
    }
  }
  /** ns waited on the run queue so far, or null. */
  waitNs(): number | null {
    if (this.fd === null) return null;
    try {
      const n = readSync(this.fd, this.buf, 0, this.buf.length, 0);
      const wait = Number(this.buf.toString('latin1', 0, n).split(' ')[1]);
      return Number.isFinite(wait) ? wait : null;
    } catch {
      return null;
    }
  }
  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }
}

/** The host's steal and total CPU jiffies so far (`/proc/stat`), or null off Linux. */
function hostJiffies(): { steal: number; total: number } | null {
  try {
    const cpu = readFileSync('/proc/stat', 'latin1').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    return { steal: cpu[7] ?? 0, total: cpu.slice(0, 8).reduce((a, b) => a + b, 0) };
  } catch {
    return null;
  }
}

/**
 * Client self-monitoring over the profiling window, of the process the client runs in (a point's
 * client runs in its own process: libs/agentx/src/client-process.ts): CPU of the process, and an
 * event-loop sampler that fires every {@link HEALTH_TICK_MS} ms and records each tick's lateness, in
 * full and less the run-queue wait of the thread during that tick (the client's own delay).
 * `concurrentPoints` is the most points the worker ran at once during the window (told by the parent).
 */
export class ClientHealth {
  private delay: RecordableHistogram = createHistogram();
  private own: RecordableHistogram = createHistogram();
  private timer: NodeJS.Timeout | undefined;
  private sched: ThreadSchedstat | null = null;
  private cpu0 = process.cpuUsage();
  private t0 = 0;
  private wait0: number | null = null;
  private jiffies0: ReturnType<typeof hostJiffies> = null;
  private measure: HealthMeasure | null = null;
  private peers: number | null = null;
  private peersMax: number | null = null;

  /** The number of points the worker runs now (this one included); the window keeps its maximum. */
  setConcurrentPoints(n: number): void {
    this.peers = n;
    if (this.timer !== undefined) this.peersMax = Math.max(this.peersMax ?? 0, n);
  }

  start(): void {
    this.delay = createHistogram();
    this.own = createHistogram();
    this.sched = ThreadSchedstat.open();
    this.wait0 = this.sched.waitNs();
    this.jiffies0 = hostJiffies();
    this.cpu0 = process.cpuUsage();
    this.t0 = performance.now();
    this.peersMax = this.peers;
    let prev = this.t0;
    let prevWait = this.wait0;
    const tick = (): void => {
      const now = performance.now();
      const wait = this.sched?.waitNs() ?? null;
      const late = Math.max(0, now - prev - HEALTH_TICK_MS);
      const waited = wait !== null && prevWait !== null ? (wait - prevWait) / 1e6 : 0;
      // histograms take integers ≥ 1: µs + 1
      this.delay.record(Math.round(late * 1000) + 1);
      this.own.record(Math.round(Math.max(0, late - waited) * 1000) + 1);
      prev = now;
      prevWait = wait;
      this.timer = setTimeout(tick, HEALTH_TICK_MS);
    };
    this.timer = setTimeout(tick, HEALTH_TICK_MS);
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const wallMs = performance.now() - this.t0;
    const d = process.cpuUsage(this.cpu0);
    const wait = this.sched?.waitNs() ?? null;
    this.sched?.close();
    const j = hostJiffies();
    const jiffies = j && this.jiffies0 && j.total > this.jiffies0.total ? j : null;
    const p99 = (h: RecordableHistogram): number | null => (h.count > 0 ? (h.percentile(99) - 1) / 1000 : null);
    this.measure = {
      delayP99Ms: p99(this.delay),
      delayMaxMs: this.delay.count > 0 ? (this.delay.max - 1) / 1000 : null,
      ownDelayP99Ms: p99(this.own),
      cpuFraction: wallMs > 0 ? (d.user + d.system) / 1000 / wallMs : null,
      runQueueWaitFraction:
        wait !== null && this.wait0 !== null && wallMs > 0 ? (wait - this.wait0) / 1e6 / wallMs : null,
      host: {
        name: hostname(),
        cpus: availableParallelism(),
        load1: loadavg()[0]!,
        stealFraction: jiffies ? (jiffies.steal - this.jiffies0!.steal) / (jiffies.total - this.jiffies0!.total) : null,
      },
    };
  }

  result(limits: AgentxSettings['clientHealth']): PointResult['client_health'] {
    const m = this.measure;
    if (!m) return ClientHealth.unmeasured();
    return {
      event_loop_delay_p99_ms: m.delayP99Ms,
      event_loop_delay_max_ms: m.delayMaxMs,
      own_event_loop_delay_p99_ms: m.ownDelayP99Ms,
      cpu_fraction: m.cpuFraction,
      run_queue_wait_fraction: m.runQueueWaitFraction,
      peak_rss_bytes: process.resourceUsage().maxRSS * 1024,
      concurrent_points_max: this.peersMax,
      host: {
        name: m.host.name,
        cpus: m.host.cpus,
        load_average_1m: m.host.load1,
        steal_fraction: m.host.stealFraction,
      },
      ...healthVerdict(m, limits),
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
