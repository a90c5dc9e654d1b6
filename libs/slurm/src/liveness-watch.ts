/**
 * Watching an allocation and its steps: one batched observation per interval (job, steps,
 * launchers in one round trip), judged by LivenessJudge (./liveness.ts, pure).
 */
import { livenessArgv } from './commands';
import { parseLiveness, type LivenessObservation } from './parse';
import { LivenessJudge, type LivenessJudgeOptions, type LivenessVerdict, type WatchedStep } from './liveness';
import { sleep, type SlurmQueries } from './queries';

export interface LivenessWatch {
  /** Resolves with the first loss verdict, or null once stopped. */
  readonly loss: Promise<Extract<LivenessVerdict, { kind: 'allocation-lost' | 'step-lost' }> | null>;
  /** The latest verdict (alive / unknown / loss). */
  readonly last: LivenessVerdict | undefined;
  readonly polls: number;
  /** Stop polling; resolves once the poll in flight (if any) is done. */
  stop(): Promise<void>;
}

/** One batched liveness observation (job, steps, launchers) in one round trip; no answer → both sections failed. */
export async function observe(
  q: Pick<SlurmQueries, 'exec' | 'cmdTimeout'>,
  jobId: string,
  steps: readonly WatchedStep[] = [],
): Promise<LivenessObservation> {
  const argv = livenessArgv(
    jobId,
    steps.filter((s) => s.launcherPid).map((s) => ({ pid: s.launcherPid!, name: s.stepName })),
  );
  try {
    const r = await q.exec.run(argv, { timeoutMs: q.cmdTimeout, idempotent: true });
    return parseLiveness(r.stdout, jobId);
  } catch (err) {
    const error = `liveness poll failed: ${(err as Error).message}`;
    return { job: { ok: false, error }, steps: { ok: false, error }, launchers: {} };
  }
}

/**
 * Watch an allocation and its steps: one observation per `intervalMs` (the next one starts only
 * after the previous answered: never two in flight), judged by LivenessJudge. `loss` resolves at
 * the first loss verdict; `onVerdict` sees every verdict (for progress).
 */
export function watchLiveness(
  q: Pick<SlurmQueries, 'exec' | 'cmdTimeout'>,
  jobId: string,
  steps: readonly WatchedStep[],
  opts: { intervalMs: number; judge?: LivenessJudgeOptions; onVerdict?(v: LivenessVerdict): void },
): LivenessWatch {
  const judge = new LivenessJudge(steps, opts.judge);
  const stopCtl = new AbortController();
  const state: { last: LivenessVerdict | undefined; polls: number } = { last: undefined, polls: 0 };
  const loop = async (): Promise<Extract<LivenessVerdict, { kind: 'allocation-lost' | 'step-lost' }> | null> => {
    while (!stopCtl.signal.aborted) {
      const o = await observe(q, jobId, steps);
      if (stopCtl.signal.aborted) break;
      const v = judge.observe(o);
      state.polls += 1;
      state.last = v;
      opts.onVerdict?.(v);
      if (v.kind === 'allocation-lost' || v.kind === 'step-lost') return v;
      await sleep(opts.intervalMs, stopCtl.signal);
    }
    return null;
  };
  const loss = loop();
  return {
    loss,
    get last() {
      return state.last;
    },
    get polls() {
      return state.polls;
    },
    stop: async () => {
      stopCtl.abort();
      await loss.catch(() => null);
    },
  };
}
