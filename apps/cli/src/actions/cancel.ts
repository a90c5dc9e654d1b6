/** What `infersweep cancel` runs (its options are in ../commands/cancel.ts). */
import { abortUpdate } from '@infersweep/sweep';
import { out, ExitWith, EXIT } from '../ops/cli';
import { describeSweep, withSession } from '../ops/temporal';

export interface CancelOpts {
  abort?: boolean;
  reason: string;
}

export async function cancel(id: string, opts: CancelOpts): Promise<void> {
  return withSession(async (s) => {
    const view = await describeSweep(s, id, { query: false, children: false });
    if (view.status !== 'RUNNING')
      throw new ExitWith(EXIT.failure, `sweep ${id} is already ${view.status}; nothing to cancel`);
    const h = s.client.workflow.getHandle(id);
    if (opts.abort) {
      if (view.kind !== 'sweep')
        throw new ExitWith(
          EXIT.usage,
          `--abort works on one orientation's sweep; ${id} is a parent of several — cancel it without --abort (its children clean up), or abort each child`,
        );
      const p = await h.executeUpdate(abortUpdate, { args: [{ reason: opts.reason }] });
      out(`abort requested for ${id} (phase ${p.phase}); cleanup runs, then the sweep ends as aborted`);
    } else {
      await h.cancel();
      out(`cancellation requested for ${id}; the sweep captures logs and releases its allocation before it ends`);
    }
    out(`follow it: infersweep watch ${id}    (${view.uiLink})`);
  });
}
