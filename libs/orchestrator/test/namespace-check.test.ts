/**
 * The worker's namespace check (../src/namespace-check.ts): which attributes it requires, what it
 * says when one is missing or mistyped, and that the scripts and docs/deploy.md that register
 * attributes list exactly the ones the workflows write (the code's list is the one source).
 */
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SEARCH_ATTRIBUTES } from '@infersweep/sweep';
import {
  cliTypeName,
  INDEXED_VALUE_TYPE,
  NamespaceSetupError,
  requiredSearchAttributes,
  searchAttributeProblems,
} from '../src/namespace-check';
import { repoRoot } from '@infersweep/testkit/stack';

const { KEYWORD, TEXT } = INDEXED_VALUE_TYPE;
const allKeyword = (): Record<string, number> =>
  Object.fromEntries(requiredSearchAttributes().map((a) => [a.name, KEYWORD]));

describe('the search attributes a worker requires', () => {
  it('are every attribute of the contract, each a Keyword', () => {
    expect(requiredSearchAttributes().map((a) => a.name)).toEqual(Object.values(SEARCH_ATTRIBUTES));
    expect(requiredSearchAttributes().every((a) => a.type === 'KEYWORD')).toBe(true);
    expect(requiredSearchAttributes().map((a) => a.name)).toContain('InfersweepRegression');
  });

  it('a namespace with all of them (and others) has no problem', () => {
    expect(searchAttributeProblems({ ...allKeyword(), SomethingElse: TEXT })).toEqual([]);
  });

  it('a missing and a mistyped attribute are both named, with the command that registers each', () => {
    const registered = allKeyword();
    delete registered.InfersweepRegression;
    registered.InfersweepStatus = TEXT;
    const problems = searchAttributeProblems(registered);
    expect(problems).toEqual([
      { name: 'InfersweepStatus', type: 'KEYWORD', registeredAs: 'TEXT' },
      { name: 'InfersweepRegression', type: 'KEYWORD' },
    ]);
    const msg = new NamespaceSetupError('team-ns', problems).message;
    expect(msg).toContain('InfersweepRegression (Keyword) is not registered');
    expect(msg).toContain('InfersweepStatus is registered as Text, not Keyword');
    expect(msg).toContain(
      'temporal operator search-attribute create --namespace team-ns --name InfersweepRegression --type Keyword',
    );
    expect(msg).toContain('temporal operator search-attribute remove --namespace team-ns --name InfersweepStatus');
  });

  it('spells types as the Temporal CLI does', () => {
    expect(cliTypeName('KEYWORD')).toBe('Keyword');
    expect(cliTypeName('KEYWORD_LIST')).toBe('KeywordList');
    expect(cliTypeName('DATETIME')).toBe('Datetime');
  });
});

describe('every place that registers or documents the attributes lists the same ones', () => {
  const names = Object.values(SEARCH_ATTRIBUTES);
  it.each(['scripts/stack.sh', 'scripts/stack-production.sh'])('%s', (script) => {
    const m = /^SEARCH_ATTRIBUTES=\(([^)]*)\)/m.exec(readFileSync(join(repoRoot, script), 'utf8'));
    expect(m, `${script} has no SEARCH_ATTRIBUTES=(…) line`).not.toBeNull();
    expect(m![1]!.trim().split(/\s+/)).toEqual(names);
  });

  it('docs/deploy.md', () => {
    const doc = readFileSync(join(repoRoot, 'docs/deploy.md'), 'utf8');
    for (const n of names)
      expect(doc).toContain(
        `temporal operator search-attribute create --namespace infersweep --name ${n} --type Keyword`,
      );
  });
});
