import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { planSweep } from '../src/index';
import { loadShipped } from './helpers';

/**
 * The ix-* orientations carry InferenceX's H200 Kimi K3 recipes exactly: every row of the recipe-facts
 * table in docs/inferencex.md (each with its InferenceX source) is checked against the planned argv and
 * env of every node, so the table and the config cannot drift apart.
 */
const doc = readFileSync(new URL('../../../docs/inferencex.md', import.meta.url), 'utf8');

interface Fact {
  orientation: string;
  kind: 'arg' | 'flag' | 'absent' | 'env' | 'points';
  name: string;
  value: string;
  source: string;
}

function recipeFacts(markdown: string): Fact[] {
  const start = markdown.indexOf('<!-- recipe-facts');
  if (start < 0) throw new Error('docs/inferencex.md has no recipe-facts table');
  const rows: Fact[] = [];
  for (const line of markdown.slice(start).split('\n').slice(3)) {
    if (!line.startsWith('|')) break;
    const [orientation, kind, name, value, source] = line
      .slice(1, -1)
      .split('|')
      .map((c) => c.trim());
    rows.push({ orientation: orientation!, kind: kind as Fact['kind'], name: name!, value: value!, source: source! });
  }
  return rows;
}

const after = (argv: readonly string[], f: string) => (argv.includes(f) ? argv[argv.indexOf(f) + 1] : undefined);

describe("ix-* orientations = InferenceX's H200 recipes (docs/inferencex.md)", () => {
  const facts = recipeFacts(doc);
  const { config } = loadShipped();
  const plans = new Map(
    ['ix-latency', 'ix-balanced'].map((o) => [o, planSweep(config, { orientation: o, cluster: 'h200' })]),
  );

  it('the table lists both orientations, every row with a source', () => {
    expect(new Set(facts.map((f) => f.orientation))).toEqual(new Set(plans.keys()));
    expect(facts.length).toBeGreaterThanOrEqual(36);
    for (const f of facts) expect(f.source, `${f.orientation} ${f.name}`).toMatch(/^[LBM] /);
  });

  /** What the plan has for one fact on one node, in the table's terms. */
  const observed = (
    f: Fact,
    n: { argv: string[]; env: Record<string, string> },
    points: number[],
  ): string | undefined => {
    switch (f.kind) {
      case 'arg':
        return after(n.argv, f.name);
      case 'flag':
        return n.argv.includes(f.name) ? '' : '(absent)';
      case 'absent':
        return n.argv.includes(f.name) ? '(present)' : '';
      case 'env':
        return n.env[f.name];
      case 'points':
        return points.join(',');
    }
  };

  it.each(['ix-latency', 'ix-balanced'])('%s: every recipe fact holds on every node', (o) => {
    const p = plans.get(o)!;
    const rows = facts.filter((x) => x.orientation === o);
    const label = (f: Fact, rank: number) => `${o} node ${rank} ${f.kind} ${f.name} (${f.source})`;
    const got = p.nodes.flatMap((n) => rows.map((f) => [label(f, n.rank), observed(f, n, p.points)]));
    const want = p.nodes.flatMap((n) => rows.map((f) => [label(f, n.rank), f.value]));
    expect(got).toEqual(want);
  });
});
