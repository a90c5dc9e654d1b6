/** What `infersweep status` runs (its options are in ../commands/status.ts). */
import { out, UsageError } from '../ops/cli';
import { describeSweep, latestSweepId, withSession } from '../ops/temporal';
import { statusJson, statusText } from '../ops/render';

export async function status(id: string | undefined, opts: { json?: boolean }): Promise<void> {
  return withSession(async (s) => {
    const sweepId = id ?? (await latestSweepId(s));
    if (!sweepId)
      throw new UsageError(
        'no sweeps on this Temporal namespace yet; start one with `infersweep sweep --orientation <name>`',
      );
    const view = await describeSweep(s, sweepId);
    out(opts.json ? JSON.stringify(statusJson(view), null, 2) : statusText(view));
  });
}
