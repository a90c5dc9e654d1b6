/** The snapshot config (libs/topology/src/config/snapshot.ts): defaults, and every refusal naming field, value and fix. */
import { describe, expect, it } from 'vitest';
import { ConfigError, parseSnapshotConfig } from '@infersweep/topology';

const FILE = 'snapshots/weekly.yaml';
const minimal = `name: weekly
matrix:
  - config: configs/local.yaml
    clusters: [east, west]
`;

function issuesOf(text: string): { path: string; value: string; message: string; line?: number }[] {
  try {
    parseSnapshotConfig(text, FILE);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as ConfigError).issues;
  }
  throw new Error('the config was accepted');
}

describe('parseSnapshotConfig', () => {
  it('fills the defaults: a 24 h window, retry every 30 min, retry-later, 3 attempts, one cell per cluster at a time, all orientations', () => {
    expect(parseSnapshotConfig(minimal, FILE)).toEqual({
      name: 'weekly',
      windowSeconds: 86_400,
      retryEverySeconds: 1800,
      unavailableAfterSeconds: 60,
      policy: 'retry-later',
      maxCellAttempts: 3,
      cellsPerCluster: 1,
      matrix: [{ config: 'configs/local.yaml', orientations: 'all', clusters: ['east', 'west'] }],
    });
  });

  it('keeps a row policy, orientations and points', () => {
    const c = parseSnapshotConfig(
      `${minimal}  - config: b.yaml\n    orientations: [balanced]\n    clusters: [h200]\n    points: [8, 16]\n    policy: operator\n`,
      FILE,
    );
    expect(c.matrix[1]).toEqual({
      config: 'b.yaml',
      orientations: ['balanced'],
      clusters: ['h200'],
      points: [8, 16],
      policy: 'operator',
    });
  });

  it.each([
    [
      'an unknown policy',
      `policy: later\n${minimal}`,
      'policy',
      '"later"',
      /must be one of "re-place", "retry-later", "operator"/,
      1,
    ],
    ['a window of 0', `windowSeconds: 0\n${minimal}`, 'windowSeconds', '0', /seconds > 0, e.g. 1800/, 1],
    [
      'a retry no shorter than the window',
      `windowSeconds: 600\nretryEverySeconds: 600\n${minimal}`,
      'retryEverySeconds',
      '600',
      /shorter than windowSeconds/,
      2,
    ],
    [
      'more than 200 tries per window',
      `windowSeconds: 86400\nretryEverySeconds: 60\n${minimal}`,
      'retryEverySeconds',
      '60',
      /windowSeconds \/ retryEverySeconds must be at most 200, .* raise retryEverySeconds/,
      2,
    ],
    [
      'an unknown key',
      `windw: 5\n${minimal}`,
      'windw',
      '5',
      /unknown key "windw" \(allowed here: name, windowSeconds/,
      1,
    ],
    ['a name with a space', minimal.replace('weekly', 'my week'), 'name', '"my week"', /part of the workflow id/, 1],
    ['no matrix rows', 'name: w\nmatrix: []\n', 'matrix', '[]', /at least one row/, 2],
    [
      'a row without clusters',
      'name: w\nmatrix:\n  - config: a.yaml\n',
      'matrix[0].clusters',
      '(missing)',
      /required/,
      3,
    ],
    [
      'an empty orientation list',
      'name: w\nmatrix:\n  - config: a.yaml\n    orientations: []\n    clusters: [e]\n',
      'matrix[0].orientations',
      '[]',
      /does not match any allowed form|at least one orientation/,
      4,
    ],
    ['maxCellAttempts 0', `maxCellAttempts: 0\n${minimal}`, 'maxCellAttempts', '0', /at least 1/, 1],
  ])('refuses %s, naming the field, the value and the fix', (_what, text, path, value, message, line) => {
    const issues = issuesOf(text);
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatchObject({ path, value, line });
    expect(issues[0]!.message).toMatch(message);
  });

  it('refuses a document that is not a mapping, and YAML syntax errors', () => {
    expect(issuesOf('- a\n- b\n')[0]!.message).toMatch(/a snapshot config is a YAML mapping/);
    expect(issuesOf('name: [\n')[0]!.path).toBe('');
  });
});
