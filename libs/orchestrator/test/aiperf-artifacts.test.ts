/**
 * The copy-back of aiperf's artifacts from the head node (../src/activities/aiperf-step.ts): the
 * listing comes from shared storage that code of the sweep input can write, so a hostile name (a
 * `..` segment, an absolute path, a newline that splits one name into two, a symlinked folder in the
 * local point folder) never makes the worker write outside the point's artifact folder.
 */
import { mkdirSync, mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { artifactNames, localArtifactPath } from '../src/activities/aiperf-step';

const listing = (...names: string[]) => names.map((n) => `${n}\0`).join('');

describe('aiperf artifact names from the head node', () => {
  it('keeps the text artifacts aiperf writes, nested or not, and nothing else', () => {
    const { names, refused } = artifactNames(
      listing('profile_export_aiperf.json', 'profile_export.jsonl', 'logs/aiperf.log', 'inputs.bin', 'x.csv'),
    );
    expect(names).toEqual(['profile_export_aiperf.json', 'profile_export.jsonl', 'logs/aiperf.log', 'x.csv']);
    expect(refused).toEqual([]);
  });

  it('refuses names that lead out of the folder: `..`, absolute, empty or dot segments, control characters', () => {
    const hostile = [
      '../../../../home/worker/.infersweep/history-settings.json',
      'a/../../b.json',
      '/etc/infersweep/settings.json',
      'a//b.json',
      './a.json',
      // one file whose name holds a newline: newline-separated output read it as a second, traversing name
      'x\n../../../../target.json',
      'a\\..\\..\\b.json',
    ];
    const { names, refused } = artifactNames(listing('ok.json', ...hostile));
    expect(names).toEqual(['ok.json']);
    expect(refused).toEqual(hostile);
  });

  it('a symlinked folder inside the local artifact folder cannot lead out; a plain nested path is kept', async () => {
    const root = mkdtempSync(join(tmpdir(), 'infersweep-artifacts-'));
    const local = join(root, 'aiperf_artifacts');
    const outside = join(root, 'outside');
    mkdirSync(local, { recursive: true });
    mkdirSync(outside);
    symlinkSync(outside, join(local, 'sub'));
    await expect(localArtifactPath(local, 'sub/result.json')).rejects.toThrow(/outside .* \(through a symlink\)/);
    await expect(localArtifactPath(local, '../outside/result.json')).rejects.toThrow(/outside/);
    await expect(localArtifactPath(local, 'logs/aiperf.log')).resolves.toBe(join(local, 'logs', 'aiperf.log'));
  });
});
