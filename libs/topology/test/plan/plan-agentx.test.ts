import { describe, expect, it } from 'vitest';
import { deepMerge, planAgentx } from '../../src/plan/plan-agentx';
import { edit } from '../helpers';
import { configErrorOf, draftOf } from './fixture';

describe('planAgentx', () => {
  it("merges the cluster's AgentX override over the top-level block and its budgets over the defaults", () => {
    const d = draftOf('latency', 'local');
    const { agentx, budgets } = planAgentx(d);
    expect(agentx.profileDurationSeconds).toBe(10);
    expect(agentx.drain.deadlineSeconds).toBe(30);
    expect(budgets).toMatchObject({ startupSeconds: 60, marginPercent: 15 });
    expect(d.warnings.join('\n')).toContain('non-canonical run: profileDurationSeconds 10 s');
  });

  it('a profile shorter than the canonical minimum is refused unless marked non-canonical', () => {
    const d = draftOf('latency', 'h200', edit('profileDurationSeconds: 3600 ', 'profileDurationSeconds: 60 '));
    const e = configErrorOf(() => planAgentx(d));
    expect(e.issues.map((i) => i.path)).toEqual(['agentx.profileDurationSeconds']);
    expect(e.issues[0]!.message).toContain('set nonCanonical: true');
  });

  it("an invalid merged setting is reported at the cluster override's path", () => {
    const text = edit('      profileDurationSeconds: 10\n', '      profileDurationSeconds: -1\n');
    const e = configErrorOf(() => planAgentx(draftOf('latency', 'local', text)));
    expect(e.issues[0]!.path).toBe('clusters.local.agentx.profileDurationSeconds');
  });

  it('deepMerge merges plain objects and replaces arrays and scalars', () => {
    expect(deepMerge({ a: { b: 1, c: [1, 2] }, d: 1 }, { a: { c: [3] }, d: 2 })).toEqual({ a: { b: 1, c: [3] }, d: 2 });
  });
});
