import { systemIdleShift } from './plan';

/** Timers with the whole-system idle cap (AgentX scenario lock): see plan.systemIdleShift. */
export class IdleCappedTimers {
  private readonly sleepers = new Set<{ wake: number; resolve: () => void; timer?: NodeJS.Timeout }>();
  private inFlight = 0;
  private pendingCheck = false;
  private closed = false;
  constructor(private readonly capMs: number) {}
  sleep(ms: number): Promise<void> {
    if (ms <= 0 || this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      const s: { wake: number; resolve: () => void; timer?: NodeJS.Timeout } = {
        wake: performance.now() + ms,
        resolve,
      };
      this.sleepers.add(s);
      this.arm(s);
      this.scheduleCheck();
    });
  }
  started(): void {
    this.inFlight++;
  }
  ended(): void {
    this.inFlight--;
    if (this.inFlight === 0) this.scheduleCheck();
  }
  wakeAll(close = false): void {
    if (close) this.closed = true;
    for (const s of this.sleepers) {
      clearTimeout(s.timer);
      s.resolve();
    }
    this.sleepers.clear();
  }
  private arm(s: { wake: number; resolve: () => void; timer?: NodeJS.Timeout }): void {
    clearTimeout(s.timer);
    s.timer = setTimeout(
      () => {
        this.sleepers.delete(s);
        s.resolve();
      },
      Math.max(0, s.wake - performance.now()),
    );
  }
  /** Deferred so lanes that are ready (about to send) get to send first: "nothing in flight or ready". */
  private scheduleCheck(): void {
    if (this.pendingCheck) return;
    this.pendingCheck = true;
    setImmediate(() => {
      this.pendingCheck = false;
      const now = performance.now();
      const shift = systemIdleShift(
        now,
        [...this.sleepers].map((s) => s.wake),
        this.inFlight,
        this.capMs,
      );
      if (shift > 0)
        for (const s of this.sleepers) {
          s.wake -= shift;
          this.arm(s);
        }
    });
  }
}
