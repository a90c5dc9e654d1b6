import { describe, expect, it } from 'vitest';
import { checkRecipe } from '../../src/plan/check-recipe';
import { resolveTopology } from '../../src/plan/resolve-topology';
import { edit } from '../helpers';
import { draftOf } from './fixture';

function checked(orientation: string, text?: string) {
  const d = draftOf(orientation, 'h200', text);
  checkRecipe(d, resolveTopology(d));
  return d;
}

describe('checkRecipe (rule 18)', () => {
  it('a vLLM older than the recipe needs is refused', () => {
    const d = checked('latency', edit('version: 0.27.1', 'version: 0.10.0'));
    expect(d.issues.list.map((i) => i.path)).toEqual(['engine.version']);
    expect(d.issues.list[0]!.message).toContain('kimi-k3 needs vLLM ≥');
  });

  it('DP×EP that no one validated is refused unless allowUnvalidated, then a warning', () => {
    const refused = checked('balanced', edit(/ {4}allowUnvalidated: true {3}# DP×EP[^\n]*\n/, ''));
    expect(refused.issues.list.map((i) => i.path)).toEqual(['orientations.balanced.topology.ep']);
    const allowed = checked('balanced');
    expect(allowed.issues.list).toEqual([]);
    expect(allowed.warnings.join('\n')).toContain('experimental on H200: DP2×EP8 is not a validated');
  });

  it('without a model architecture, an unset maxModelLen above the KV-safe context is a warning', () => {
    const d = checked('latency', edit(/ {2}architecture:\n(?: {4}[^\n]*\n)+/, ''));
    expect(d.warnings.join('\n')).toContain('engine.maxModelLen is not set');
  });

  it('a cluster without a recipe (the local stack) adds nothing', () => {
    const d = draftOf('latency', 'local');
    checkRecipe(d, resolveTopology(d));
    expect([d.issues.list, d.warnings, d.notes]).toEqual([[], [], []]);
  });
});
