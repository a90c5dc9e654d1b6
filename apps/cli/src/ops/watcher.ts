/**
 * Live progress of a sweep until it closes or the user detaches (Ctrl-C). On a TTY: a bar per
 * ConcurrencyPoint (phase, requests done, ETA) under a header bar per sweep; otherwise plain
 * lines, one per change. The sweep runs on Temporal: detaching never stops it.
 */
import { MultiBar, Presets, type SingleBar } from 'cli-progress';
import type { PointState, SweepProgress } from '@infersweep/sweep';
import { fmtDuration, isTTY } from './cli';
import { describeSweep, type LiveDetail, type Session, type SweepView } from './temporal';
import { allocatingLine, allocationLine, liveFor, queuedFor } from './render';

export type WatchEnd = { kind: 'closed'; view: SweepView } | { kind: 'detached'; view: SweepView | undefined };

export interface WatchOptions {
  pollMs?: number;
  /** plain lines even on a TTY */
  plain?: boolean;
  write?: (line: string) => void;
  /** resolves when the user wants to detach (default: first SIGINT) */
  detach?: Promise<void>;
}

const SETTLED = new Set(['done', 'invalid', 'failed', 'skipped']);

/** Fraction of a point done, for its bar (0..1). */
export function pointFraction(pt: PointState, live: LiveDetail | undefined, now = Date.now()): number {
  if (SETTLED.has(pt.status)) return 1;
  if (pt.status !== 'running') return 0;
  if (live?.etaSeconds !== undefined && pt.startedAt) {
    const elapsed = Math.max(0, (now - Date.parse(pt.startedAt)) / 1000);
    const total = elapsed + live.etaSeconds;
    return total > 0 ? Math.min(0.99, elapsed / total) : 0;
  }
  return 0;
}

/** The text after a point's bar. */
export function pointDetail(pt: PointState, live: LiveDetail | undefined): string {
  if (pt.status === 'running') {
    const bits = [live?.phase ?? 'running'];
    if (live?.completed !== undefined) bits.push(`${live.completed} req done`);
    if (live?.inFlight !== undefined) bits.push(`${live.inFlight} in flight`);
    if (live?.etaSeconds !== undefined) bits.push(`ETA ${fmtDuration(live.etaSeconds)}`);
    if (pt.attempts > 1) bits.push(`attempt ${pt.attempts}`);
    return bits.join(' · ');
  }
  if (pt.status === 'done' || pt.status === 'invalid') {
    const s = pt.summary;
    const bits: string[] = [pt.status === 'invalid' ? 'INVALID' : 'valid'];
    if (s?.totalThroughputPerGpu !== undefined) bits.push(`${s.totalThroughputPerGpu.toFixed(1)} tok/s/GPU`);
    if (s?.interactivityP50 !== undefined) bits.push(`${s.interactivityP50.toFixed(1)} tok/s/user`);
    if (pt.status === 'invalid' && s?.reasons.length) bits.push(s.reasons.join('; '));
    return bits.join(' · ');
  }
  if (pt.status === 'failed' || pt.status === 'skipped') return pt.lastError ?? '';
  return '';
}

export function sweepHeader(p: SweepProgress, view: Pick<SweepView, 'live'> = { live: [] }): string {
  const settled = p.points.filter((x) => SETTLED.has(x.status)).length;
  const queued = queuedFor(view);
  const a = p.allocation
    ? ` · job ${p.allocation.jobId} on ${p.allocation.nodes.join(',')}`
    : queued
      ? ` · ${allocatingLine(queued).slice('allocating: '.length)}`
      : '';
  const wait = p.awaitingOperator ? ` · WAITING FOR OPERATOR: ${p.awaitingOperator.reason}` : '';
  return `${p.orientation}: ${settled}/${p.points.length} points · ${p.phase}${p.currentPoint !== undefined ? ` c=${p.currentPoint}` : ''}${a}${wait}`;
}

/** The sweeps to show: the view itself, or an `all` parent's children. */
function leaves(v: SweepView): SweepView[] {
  return v.kind === 'all' ? v.children : [v];
}

/** One plain line per change (non-TTY); running points repeat at most every `everyMs`. */
export class PlainReporter {
  private last = new Map<string, { text: string; at: number }>();
  constructor(
    private readonly write: (line: string) => void,
    private readonly everyMs = 30_000,
  ) {}

  private emit(key: string, text: string, coarse: string, now: number): void {
    const prev = this.last.get(key);
    if (prev && prev.text === coarse) return;
    if (prev && prev.text.split('|')[0] === coarse.split('|')[0] && now - prev.at < this.everyMs) return;
    this.last.set(key, { text: coarse, at: now });
    this.write(`${new Date(now).toISOString().slice(11, 19)} ${text}`);
  }

  update(view: SweepView, now = Date.now()): void {
    for (const leaf of leaves(view)) {
      const p = leaf.progress;
      if (!p) {
        if (leaf.progressNote)
          this.emit(`${leaf.workflowId}:note`, `${leaf.workflowId}: ${leaf.progressNote}`, leaf.progressNote, now);
        continue;
      }
      const queued = queuedFor(leaf);
      this.emit(
        `${p.sweepId}:header`,
        sweepHeader(p, leaf),
        // a change of Slurm's state or pending reason is a change (a line now); the growing wait is not
        `${p.phase}${queued ? ` ${queued.jobId} ${queued.state} ${queued.reason}` : ''}|${p.currentPoint}|${p.allocation?.jobId}`,
        now,
      );
      for (const a of p.allocations)
        this.emit(
          `${p.sweepId}:alloc:${a.attempt}`,
          `${p.orientation} allocation ${allocationLine(a)}`,
          `${a.jobId}|${a.nodes.join(',')}|${a.ended}`,
          now,
        );
      for (const pt of p.points) {
        const live = liveFor(leaf, pt.concurrency);
        const coarse = `${pt.status}|${live?.phase}|${live?.completed}`;
        this.emit(
          `${p.sweepId}:c${pt.concurrency}`,
          `${p.orientation} c=${pt.concurrency} ${pt.status}${pointDetail(pt, live) ? ` · ${pointDetail(pt, live)}` : ''}`,
          coarse,
          now,
        );
      }
    }
  }
}

/** Bars on a TTY: one header bar per sweep, one bar per point. */
class BarReporter {
  private readonly multi = new MultiBar(
    {
      format: ' {label} {bar} {detail}',
      barsize: 24,
      hideCursor: true,
      clearOnComplete: false,
      stopOnComplete: false,
      forceRedraw: true,
      autopadding: true,
    },
    Presets.shades_classic,
  );
  private readonly bars = new Map<string, SingleBar>();

  private bar(key: string, total: number, label: string): SingleBar {
    let b = this.bars.get(key);
    if (!b) {
      b = this.multi.create(total, 0, { label, detail: '' });
      this.bars.set(key, b);
    }
    return b;
  }

  update(view: SweepView, now = Date.now()): void {
    for (const leaf of leaves(view)) {
      const p = leaf.progress;
      if (!p) continue;
      const settled = p.points.filter((x) => SETTLED.has(x.status)).length;
      this.bar(`${p.sweepId}:header`, p.points.length, p.orientation.padEnd(12).slice(0, 12)).update(settled, {
        label: p.orientation.padEnd(12).slice(0, 12),
        detail: sweepHeader(p, leaf).slice(p.orientation.length + 2),
      });
      for (const pt of p.points) {
        const live = liveFor(leaf, pt.concurrency);
        const label = `  c=${pt.concurrency}`.padEnd(12);
        this.bar(`${p.sweepId}:c${pt.concurrency}`, 1000, label).update(
          Math.round(pointFraction(pt, live, now) * 1000),
          {
            label,
            detail: `${pt.status.padEnd(8)} ${pointDetail(pt, live)}`.slice(0, 120),
          },
        );
      }
    }
  }

  log(line: string): void {
    this.multi.log(`${line}\n`);
  }

  stop(): void {
    this.multi.stop();
  }
}

/** Watch until the sweep closes (returns its final view) or the user detaches. */
export async function watchSweep(s: Session, id: string, opts: WatchOptions = {}): Promise<WatchEnd> {
  const write = opts.write ?? ((l: string) => process.stdout.write(`${l}\n`));
  const tty = !opts.plain && isTTY();
  const pollMs = opts.pollMs ?? (tty ? 1000 : 2000);
  let detached = false;
  let onSigint: (() => void) | undefined;
  const detach =
    opts.detach ??
    new Promise<void>((resolve) => {
      onSigint = () => resolve();
      process.once('SIGINT', onSigint);
    });
  void detach.then(() => {
    detached = true;
  });
  const bars = tty ? new BarReporter() : undefined;
  const plain = tty ? undefined : new PlainReporter(write);
  let view: SweepView | undefined;
  let failures = 0;
  try {
    while (!detached) {
      try {
        view = await describeSweep(s, id, { queryTimeoutMs: 5000 });
        failures = 0;
      } catch (e) {
        if (++failures >= 5) throw e;
      }
      if (view) {
        if (bars) bars.update(view);
        else plain!.update(view);
        if (view.status !== 'RUNNING') return { kind: 'closed', view };
      }
      await Promise.race([new Promise((r) => setTimeout(r, pollMs)), detach]);
    }
    return { kind: 'detached', view };
  } finally {
    bars?.stop();
    if (onSigint) process.removeListener('SIGINT', onSigint);
  }
}
