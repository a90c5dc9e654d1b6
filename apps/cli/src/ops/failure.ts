/**
 * Why a sweep ended: the root cause of a closed workflow's failure. Temporal wraps what went wrong
 * in layers (WorkflowFailedError → ActivityFailure "Activity task failed" or ChildWorkflowFailure →
 * ApplicationFailure → the error the activity threw); the layers say where, the innermost says
 * why. Pure over the SDK's failure classes, so unit tests cover it.
 */
import {
  ActivityFailure,
  ApplicationFailure,
  CancelledFailure,
  ChildWorkflowFailure,
  TerminatedFailure,
  TimeoutFailure,
  WorkflowFailedError,
} from '@temporalio/client';

export interface FailureView {
  /** the innermost failure's message: the refusal with its field, value and setting; the release that failed; … */
  rootCause: string;
  /** the root cause's failure type (the error class, e.g. RefusedInputError), when it has one */
  type?: string;
  /** where: the activity (`activity prepareSweep`) or the child sweep (`sweep <id>`) that failed */
  where: string[];
  /** the other messages on the way down, outermost first, when they add something */
  via: string[];
}

/** Messages of the SDK's wrappers: they say a layer failed, never why. */
const WRAPPERS = [ActivityFailure, ChildWorkflowFailure, WorkflowFailedError];

/** Walk `cause` from the outermost failure to the innermost. */
export function failureView(e: unknown): FailureView {
  const where: string[] = [];
  const messages: { text: string; type?: string }[] = [];
  const seen = new Set<unknown>();
  for (let f: unknown = e; f instanceof Error && !seen.has(f); f = f.cause) {
    seen.add(f);
    if (f instanceof ActivityFailure) where.push(`activity ${f.activityType}`);
    else if (f instanceof ChildWorkflowFailure) where.push(`sweep ${f.execution.workflowId}`);
    if (WRAPPERS.some((w) => f instanceof w)) continue;
    const type =
      f instanceof ApplicationFailure
        ? (f.type ?? undefined)
        : f instanceof TimeoutFailure
          ? `timeout ${f.timeoutType}`
          : f instanceof TerminatedFailure
            ? 'terminated'
            : f instanceof CancelledFailure
              ? 'cancelled'
              : undefined;
    const text = f.message || type || f.name;
    if (messages.at(-1)?.text !== text) messages.push({ text, type });
  }
  const root = messages.pop() ?? { text: e instanceof Error ? e.message : String(e) };
  // an outer message the root repeats says nothing more
  const via = messages.map((m) => m.text).filter((t) => !root.text.includes(t));
  return { rootCause: root.text, ...(root.type ? { type: root.type } : {}), where, via };
}
