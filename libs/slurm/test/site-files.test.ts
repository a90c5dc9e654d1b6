/**
 * Plan-time checks of the worker-side files a cluster profile names: real files in a
 * temporary folder, checked through libs/topology's checkSiteFiles with the real filesystem probe.
 */
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, parseSweepConfig, siteFileIssues, type ConfigIssue } from '@infersweep/topology';
import { localFileProbe } from '../src/index';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const SHIPPED = 'configs/kimik3-fp4-h200.yaml';
const shipped = readFileSync(fileURLToPath(new URL(`../../../${SHIPPED}`, import.meta.url)), 'utf8');

function issuesFor(home: string, edit: (t: string) => string = (t) => t): { issues: ConfigIssue[]; text: string } {
  const text = edit(shipped);
  const { config, source } = parseSweepConfig(text, { file: SHIPPED, env: { HOME: home }, clusters: ['h200'] });
  return { issues: siteFileIssues(config, 'h200', localFileProbe, source), text };
}

const lineOf = (text: string, needle: string) => text.split('\n').findIndex((l) => l.includes(needle)) + 1;

describe('worker-side files of the h200 profile', () => {
  const home = mkdtempSync(join(tmpdir(), 'infersweep-home-'));

  it('~ is expanded explicitly; missing key and known_hosts are named with their YAML lines', () => {
    const { issues, text } = issuesFor(home);
    expect(issues.map((i) => i.path)).toEqual([
      'clusters.h200.loginHost.keyPath',
      'clusters.h200.loginHost.knownHostsPath',
    ]);
    expect(issues[0]!.value).toBe(JSON.stringify(join(home, '.ssh/infersweep_ed25519')));
    expect(issues[0]!.message).toMatch(/SSH private key does not exist .*ENOENT/);
    expect(issues[0]!.line).toBe(lineOf(text, 'keyPath: ~/.ssh/infersweep_ed25519'));
    expect(issues[1]!.line).toBe(lineOf(text, 'knownHostsPath: ~/.ssh/known_hosts'));
  });

  it('a group/world-readable private key is refused like OpenSSH does; 600 passes', () => {
    mkdirSync(join(home, '.ssh'), { recursive: true });
    writeFileSync(join(home, '.ssh/infersweep_ed25519'), 'key\n');
    writeFileSync(join(home, '.ssh/known_hosts'), 'login.h200.example.net ssh-ed25519 AAAA\n');
    chmodSync(join(home, '.ssh/infersweep_ed25519'), 0o644);
    let { issues } = issuesFor(home);
    expect(issues).toHaveLength(1);
    expect(issues[0]!.message).toMatch(/mode 0644.*refused as OpenSSH.*chmod 600/);
    chmodSync(join(home, '.ssh/infersweep_ed25519'), 0o600);
    ({ issues } = issuesFor(home));
    expect(issues).toEqual([]);
  });

  it('a secrets file must exist and be private; a directory is not a file', () => {
    const add = (path: string) => (t: string) =>
      t.replace(
        '    sharedDir: /lustre/infersweep/runs\n',
        `    sharedDir: /lustre/infersweep/runs\n    secretsFile: ${path}\n`,
      );
    writeFileSync(join(home, 'secrets.env'), 'HF_TOKEN=x\n');
    chmodSync(join(home, 'secrets.env'), 0o640);
    expect(issuesFor(home, add('~/secrets.env')).issues.map((i) => i.message)).toEqual([
      expect.stringMatching(/secrets file is accessible by group or others \(mode 0640\)/),
    ]);
    chmodSync(join(home, 'secrets.env'), 0o600);
    expect(issuesFor(home, add('~/secrets.env')).issues).toEqual([]);
    expect(issuesFor(home, add(home)).issues[0]!.message).toMatch(/is a directory/);
    expect(issuesFor(home, add('secrets.env')).issues[0]!.message).toMatch(/must be absolute or start with ~\//);
  });

  it('~user/ and a missing HOME are config errors with the line', () => {
    expect(() =>
      parseSweepConfig(shipped.replace('keyPath: ~/.ssh', 'keyPath: ~bob/.ssh'), {
        file: SHIPPED,
        env: { HOME: home },
        clusters: ['h200'],
      }),
    ).toThrow(
      /clusters\.h200\.loginHost\.keyPath: "~bob\/\.ssh\/infersweep_ed25519" — ~bob\/… \(another user's home\) is not expanded/,
    );
    const noHome = parseSweepConfig(shipped, { file: SHIPPED, env: {}, clusters: ['h200'] });
    const issues = siteFileIssues(noHome.config, 'h200', localFileProbe, noHome.source);
    expect(issues[0]!.message).toMatch(/starts with ~ but HOME is not set/);
    expect(issues[0]!.line).toBe(lineOf(shipped, 'keyPath: ~/.ssh'));
    expect(() => parseSweepConfig(shipped, { file: SHIPPED, env: { HOME: 'relative' }, clusters: ['h200'] })).toThrow(
      ConfigError,
    );
  });
});
