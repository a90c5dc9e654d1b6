/**
 * A failed attempt in the workflow: its class (read from the failure the activity interceptor
 * classified, ../activities/interceptor.ts), the decision that follows from it
 * (libs/sweep/src/attempt-decision.ts), the record status, report and history show, and the
 * quarantine of the nodes it implicates. Workflow code: deterministic; the quarantine is an activity.
 */
import { classifyAttempt, type AttemptClassification } from '@infersweep/core';
import {
  decideAttempt,
  type AttemptDecision,
  type AttemptRecord,
  type PointState,
  type SweepProgress,
} from '@infersweep/sweep';
import type { PlanInput } from '../activities/types';
import type { SweepVerbs } from './activities';
import type { ClassifiedFailure } from './failures';

/** Failed attempts kept per point (and for the setup steps), the latest last. */
const KEPT = 10;

/**
 * The class the failure carries. A failure without one (a timeout, a history recorded before
 * attempts were classified) is `unknown`, whose decision is the recovery the sweep always had.
 */
export function attemptOf(f: ClassifiedFailure): AttemptClassification {
  return f.details?.attempt ?? { class: 'unknown', rule: 'unknown', nodes: [] };
}

export interface FailedAttempt {
  seen: AttemptClassification;
  decision: AttemptDecision;
  record: AttemptRecord;
}

/** Classify, decide, and record the attempt on the point (a point attempt) or the sweep (a setup step). */
export function recordFailedAttempt(
  state: SweepProgress,
  pt: PointState,
  f: ClassifiedFailure,
  maxPointAttempts: number,
  now: string,
): FailedAttempt {
  const seen = attemptOf(f);
  const during = pt.status === 'running' ? 'point' : 'setup';
  const decision = decideAttempt({ class: seen.class, during, pointAttempts: pt.attempts, maxPointAttempts });
  const jobId = typeof f.details?.jobId === 'string' ? f.details.jobId : state.allocation?.jobId;
  const record: AttemptRecord = {
    class: seen.class,
    rule: seen.rule,
    ...(seen.evidence ? { evidence: seen.evidence } : {}),
    nodes: seen.nodes,
    action: decision.action,
    why: decision.why,
    ...(jobId ? { jobId } : {}),
    at: now,
  };
  if (during === 'point') pt.failures = [...(pt.failures ?? []), record].slice(-KEPT);
  else state.setupFailures = [...(state.setupFailures ?? []), record].slice(-KEPT);
  // the allocation the failure names (else the one held): its record carries the class
  const rec = jobId === undefined ? undefined : state.allocations.find((a) => a.jobId === jobId);
  if (rec) rec.failureClass = seen.class;
  return { seen, decision, record };
}

/**
 * The nodes a failure implicates, recorded in the worker's quarantine when its decision says so
 * (only failures classified by the interceptor name nodes). A quarantine that cannot be recorded is
 * noted and never fails the sweep.
 */
export async function quarantineSuspects(
  act: SweepVerbs,
  plan: PlanInput,
  sweepId: string,
  a: FailedAttempt,
  allocationNodes: string[] = [],
): Promise<string | undefined> {
  const { seen, decision, record } = a;
  if (decision.quarantine === 'none' || seen.nodes.length === 0) return undefined;
  try {
    const r = await act.implicateNodes({
      ...plan,
      sweepId,
      nodes: seen.nodes,
      ...(allocationNodes.length > 0 ? { allocationNodes } : {}),
      step: decision.quarantine,
      class: seen.class,
      rule: seen.rule,
      ...(seen.evidence ? { evidence: seen.evidence } : {}),
      ...(record.jobId ? { jobId: record.jobId } : {}),
    });
    record.quarantined = r.quarantined;
    return r.quarantined.length > 0
      ? `quarantined ${r.quarantined.join(', ')} (${seen.class})`
      : `a strike against ${seen.nodes.join(', ')} (${seen.class})`;
  } catch (err) {
    return `quarantine of ${seen.nodes.join(', ')} not recorded: ${err instanceof Error ? err.message : String(err)}`;
  }
}

/**
 * An invalid point whose reasons a rule classifies (zero output tokens: a "success" that generated
 * nothing) gets the class on its record, like a failed attempt, and true (its GPU time is then booked as a failed
 * attempt); other invalid points are measurements that failed a gate, not failed attempts.
 */
export function recordInvalidPoint(pt: PointState, reasons: string[], jobId: string, now: string): boolean {
  const seen = classifyAttempt({ message: reasons.join('\n') });
  if (seen.class !== 'zero-output') return false;
  const decision = decideAttempt({
    class: seen.class,
    during: 'point',
    pointAttempts: pt.attempts,
    maxPointAttempts: pt.attempts,
  });
  const record: AttemptRecord = {
    class: seen.class,
    rule: seen.rule,
    ...(seen.evidence ? { evidence: seen.evidence } : {}),
    nodes: [],
    action: decision.action,
    why: decision.why,
    jobId,
    at: now,
  };
  pt.failures = [...(pt.failures ?? []), record].slice(-KEPT);
  return true;
}
