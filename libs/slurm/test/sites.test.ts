/**
 * Site realities in the pure parts of libs/slurm: job-array / het-job ids and the
 * CONFIGURING flag in squeue output, missing tools, squeue scoped to the login user, secrets named
 * in srun's --export and never valued on a command line, redacted command lines, the /bin/sh
 * wrapper every remote command goes through (run here under real sh, bash and tcsh), and
 * known_hosts entries that are refused with a reason.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  importErrorIsMissingImage,
  isPlainJobId,
  knownKeysFor,
  missingTool,
  setupErrorIn,
  parseJobLine,
  parseJobLinesTolerant,
  redactAssignments,
  remoteShellCommand,
  shellJoin,
  squeueByNameArgv,
  squeueLiveArgv,
  srunArgv,
  untrustedHint,
  withEnv,
} from '../src/index';

const K1 = 'AAAAC3NzaC1lZDI1NTE5AAAAIHh0ZXN0a2V5MXh0ZXN0a2V5MXh0ZXN0a2V5MXg=';

describe('squeue lines of a shared cluster', () => {
  it('parses job-array tasks, pending arrays and het-job components', () => {
    expect(parseJobLine('123_4|RUNNING|None|node1|1:00|N/A|someone-array').jobId).toBe('123_4');
    expect(parseJobLine('123_[1-100%5]|PENDING|Priority||1:00|N/A|someone-array').jobId).toBe('123_[1-100%5]');
    expect(parseJobLine('456+0|RUNNING|None|node2|1:00|N/A|het').jobId).toBe('456+0');
    expect(parseJobLine('456+1|RUNNING|None|node3|1:00|N/A|het').jobId).toBe('456+1');
    expect(isPlainJobId('123')).toBe(true);
    for (const id of ['123_4', '123_[1-3]', '456+0']) expect(isPlainJobId(id)).toBe(false);
  });

  it('skips, never throws on, lines it cannot parse', () => {
    const out = [
      '7|RUNNING|None|node1|1:00|N/A|infersweep-a',
      'squeue: warning: something odd',
      'x|y',
      '8_[1-2]|PENDING|None||1:00|N/A|arr',
      '',
    ].join('\n');
    const { rows, skipped } = parseJobLinesTolerant(out);
    expect(rows.map((r) => r.jobId)).toEqual(['7', '8_[1-2]']);
    expect(skipped).toEqual(['squeue: warning: something odd', 'x|y']);
  });

  it('a granted job whose nodes are still configuring is CONFIGURING, in either spelling', () => {
    expect(parseJobLine('9|CONFIGURING|None|node1|1:00|N/A|n').state).toBe('CONFIGURING');
    expect(parseJobLine('9|RUNNING+CF|None|node1|1:00|N/A|n').state).toBe('CONFIGURING');
    expect(parseJobLine('9|CANCELLED by 0|None|node1|1:00|N/A|n').state).toBe('CANCELLED');
    expect(parseJobLine('9|RUNNING|None|node1|1:00|N/A|n').state).toBe('RUNNING');
  });

  it("queries only the login user's jobs", () => {
    expect(squeueLiveArgv()).toContain('--me');
    expect(squeueByNameArgv('infersweep-x')).toContain('--me');
  });
});

describe('missing tools are setup errors naming the tool', () => {
  it('recognises how each shell and launcher says it', () => {
    expect(missingTool(127, 'sh: 1: enroot: not found\n')).toBe('enroot');
    expect(missingTool(127, 'bash: enroot: command not found\n')).toBe('enroot');
    expect(
      missingTool(
        72,
        'infersweep-image: line 11: enroot: command not found\ninfersweep-image: import command failed rc=127\n',
      ),
    ).toBe('enroot');
    expect(missingTool(1, 'enroot: Command not found.\n')).toBe('enroot');
    expect(missingTool(127, "env: 'vllm': No such file or directory\n")).toBe('vllm');
    expect(
      missingTool(
        null,
        'srun: error: node1: task 0: Exited\nslurmstepd: error: execve(): vllm: No such file or directory\n',
      ),
    ).toBe('vllm');
    expect(missingTool(127, "timeout: failed to run command 'salloc': No such file or directory\n")).toBe('salloc');
    expect(missingTool(127, 'something else\n', 'squeue')).toBe('squeue');
    expect(missingTool(1, 'curl: (28) Connection timed out\n')).toBeUndefined();
    expect(
      missingTool(72, '[ERROR] URL https://registry/v2/x/manifests/y returned error code: 404 Not Found\n'),
    ).toBeUndefined();
  });

  it("a gone step's log tail names its missing program; an engine's crash does not", () => {
    const h = { stepName: 'infersweep-server0-r0', node: 'node2' };
    const ctx = { jobId: '41', node: 'node2', step: 'readiness' };
    const err = setupErrorIn(
      'bash: line 1: infersweep-no-such-engine: command not found\nsrun: error: node2: task 0: Exited with exit code 127\n',
      h,
      ctx,
    );
    expect(err?.tool).toBe('infersweep-no-such-engine');
    expect(err?.message).toContain('step infersweep-server0-r0 on node2 failed to start');
    expect(err?.context).toMatchObject({ jobId: '41', node: 'node2', step: 'readiness' });
    expect(
      setupErrorIn(
        'RuntimeError: CUDA error: out of memory\nsrun: error: node2: task 0: Exited with exit code 1\n',
        h,
        ctx,
      ),
    ).toBeUndefined();
  });

  it('"command not found" is not "image not found"', () => {
    expect(importErrorIsMissingImage('infersweep-image: line 11: enroot: command not found')).toBe(false);
    expect(
      importErrorIsMissingImage('[ERROR] URL https://registry/v2/x/manifests/y returned error code: 404 Not Found'),
    ).toBe(true);
  });
});

describe('secrets on the way to srun', () => {
  const spec = {
    jobId: '12',
    node: 'node1',
    stepName: 'infersweep-server0-r0',
    argv: ['vllm', 'serve'],
    env: { A: '1' },
    secretNames: ['HF_TOKEN'],
  };

  it('pyxis and host runtimes alike name the secret in --export and never give it a value', () => {
    const pyxis = srunArgv({ ...spec, runtime: 'pyxis', containerImage: '/sq/x.sqsh' });
    expect(pyxis).toContain('--export=A,HF_TOKEN');
    const host = srunArgv({ ...spec, runtime: 'host' });
    expect(host).toContain('--export=ALL,HF_TOKEN');
    for (const argv of [pyxis, host]) expect(argv.some((a) => a.startsWith('HF_TOKEN='))).toBe(false);
    expect(() => srunArgv({ ...spec, runtime: 'host', secretNames: ['A'] })).toThrow(/both a plain and a secret/);
    expect(() => srunArgv({ ...spec, runtime: 'host', secretNames: ['BAD-NAME'] })).toThrow(/secret variable name/);
  });

  it('command lines in error messages show no K=V values', () => {
    const line = shellJoin(
      withEnv(['srun', '--job-name=x', '--export=A', '--', 'vllm'], { A: 'v1', B: "it's secret", C: 'a b' }),
    );
    const shown = redactAssignments(line);
    expect(shown).not.toMatch(/v1|secret|a b/);
    expect(shown).toContain('A=<redacted>');
    expect(shown).toContain('--job-name=x');
    expect(shown).toContain('--export=A');
  });
});

/** Run what the SSH executor hands a login shell, under that shell, with stdin (as sshd does: `$SHELL -c TEXT`). */
function underLoginShell(
  shell: string,
  argv: string[],
  opts: { secrets?: Record<string, string>; stdin?: string } = {},
) {
  const secrets = Object.entries(opts.secrets ?? {});
  const text = remoteShellCommand(shellJoin(argv), secrets.length);
  const input = secrets.map(([k, v]) => `${k}=${v}\n`).join('') + (opts.stdin ?? '');
  return {
    text,
    ...spawnSync(shell, ['-c', text], { input, encoding: 'utf8', env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } }),
  };
}

describe('every remote command runs under /bin/sh whatever the login shell', () => {
  const shells = ['/bin/sh', '/bin/bash', '/usr/bin/tcsh'];

  it('tcsh is installed (scripts/setup-sites.sh)', () => {
    expect(existsSync('/usr/bin/tcsh')).toBe(true);
  });

  it('the text a login shell sees has no newline and nothing csh, tcsh or fish would expand', () => {
    const text = remoteShellCommand(shellJoin(['bash', '-c', 'a=$1\necho "$a" !x `y` $(z)', 'n', "it's"]), 2);
    expect(text).not.toMatch(/\n/);
    expect(text).toMatch(/^exec \/bin\/sh -c 'eval "\$\(echo "\$0" \| base64 -d\)"' [A-Za-z0-9+/=]+$/);
  });

  for (const shell of shells) {
    it(`${shell}: hostile argv and multi-line scripts arrive intact, the pid marker comes first, stdin follows the secrets`, () => {
      const hostile = ["it's", '$HOME', '`id`', '!1', 'a\nb', '"q"', '*', '~', '{a,b}', '%1', ''];
      const r = underLoginShell(
        shell,
        ['/bin/sh', '-c', 'printf "%s\\0" "$@" "S=$SECRET_A/$SECRET_B"; cat', 'x', ...hostile],
        {
          secrets: { SECRET_A: "va l'ue $x `y`", SECRET_B: 'b=c' },
          stdin: 'rest of stdin\n',
        },
      );
      // rc files of the login shell may print first; the marker is the first line of /bin/sh
      expect(r.stderr).toMatch(/(^|\n)__infersweep_pid=\d+\n/);
      expect(r.stdout.split('\0')).toEqual([...hostile, "S=va l'ue $x `y`/b=c", 'rest of stdin\n']);
      expect(r.status).toBe(0);
      // the values never appear in what the login shell (and `ps`) sees
      expect(r.text).not.toContain('va l');
    });

    it(`${shell}: the exit code is the command's`, () => {
      expect(underLoginShell(shell, ['/bin/sh', '-c', 'exit 7']).status).toBe(7);
    });
  }

  it('a missing secret line fails closed (exit 125) instead of running without it', () => {
    const text = remoteShellCommand(shellJoin(['true']), 2);
    const r = spawnSync('/bin/sh', ['-c', text], { input: 'ONLY_ONE=x\n', encoding: 'utf8' });
    expect(r.status).toBe(125);
  });
});

describe('known_hosts entries infersweep does not honour are refused with the reason', () => {
  it('@cert-authority (SSH host certificates) and wildcards never vouch for a key, and the refusal says why', () => {
    const text = [`@cert-authority *.example.net ssh-ed25519 ${K1}`, `*.other.net ssh-ed25519 ${K1}`].join('\n');
    const ca = knownKeysFor(text, 'login.example.net');
    expect(ca.keys).toEqual([]);
    expect(ca.untrusted.certAuthority).toBe(1);
    expect(untrustedHint(ca, 'login.example.net', 22)).toMatch(
      /@cert-authority.*cannot verify.*ssh-keyscan -p 22 login\.example\.net/,
    );
    const wild = knownKeysFor(text, '[login.other.net]:2222');
    expect(wild.keys).toEqual([]);
    expect(untrustedHint(wild, 'login.other.net', 2222)).toMatch(/wildcard/);
    // an exact-name @cert-authority line is not a key either
    expect(knownKeysFor(`@cert-authority login.example.net ssh-ed25519 ${K1}`, 'login.example.net').keys).toEqual([]);
    expect(untrustedHint(knownKeysFor('', 'h'), 'h', 22)).toBe('');
  });
});
