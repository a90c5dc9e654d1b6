import { describe, expect, it } from 'vitest';
import {
  cappedCatArgv,
  detachedArgv,
  ENROOT_IMPORT,
  imageFileName,
  importArgv,
  killLauncherArgv,
  livenessArgv,
  sallocArgv,
  sallocDetachedArgv,
  sallocLogFile,
  scancelArgv,
  squeueByNameArgv,
  squeueJobArgv,
  srunArgv,
  tailArgv,
  LOGIN_ENV,
  loginEnvOf,
  showNodesArgv,
  squeueTimesArgv,
  parseHeldSeconds,
} from '../src/index';
import { shellJoin } from '@infersweep/core';

const base = { jobName: 'infersweep-s1-a1', nodes: 2, gres: true, exclusive: true, timeLimitMinutes: 480 };

describe('command builders', () => {
  it("salloc: --no-shell, no --immediate (the queue wait is the caller's), outer timeout = grant wait + slack, gres, exclusive, time, partition", () => {
    expect(sallocArgv({ ...base, gpusPerNode: 8, partition: 'gpu', account: 'acct', grantTimeoutSeconds: 60 })).toEqual(
      [
        'timeout',
        '--signal=TERM',
        '--kill-after=10',
        '120',
        'salloc',
        '--no-shell',
        '--job-name=infersweep-s1-a1',
        '--nodes=2',
        '--time=480',
        '--gres=gpu:8',
        '--exclusive',
        '--partition=gpu',
        '--account=acct',
      ],
    );
    const noGres = sallocArgv({ ...base, gres: false, exclusive: false, gpusPerNode: 4 });
    expect(noGres).toContain('--gpus-per-node=4');
    expect(noGres).not.toContain('--exclusive');
    expect(noGres.some((a) => a.startsWith('--immediate'))).toBe(false);
    // default grant wait: hours, not the 5 minutes of the old --immediate=300
    expect(Number(noGres[3])).toBe(12 * 3600 + 60);
    expect(sallocArgv({ ...base, extraArgs: ['--qos=high'] }).at(-1)).toBe('--qos=high');
  });

  it('salloc --exclude: the quarantined nodes, each a node name; a list or pattern is refused', () => {
    expect(sallocArgv({ ...base, exclude: ['node2', 'gpu-a01.x'] })).toContain('--exclude=node2,gpu-a01.x');
    expect(sallocArgv({ ...base, exclude: [] }).some((a) => a.startsWith('--exclude'))).toBe(false);
    for (const bad of ['node[1-3]', 'a,b', '--all', 'n 1', '$(id)'])
      expect(() => sallocArgv({ ...base, exclude: [bad] })).toThrow(/not a node name/);
    // the argv reaches the login shell through the one quoting helper, one word each
    expect(shellJoin(sallocArgv({ ...base, exclude: ['node2'] }))).toContain(' --exclude=node2');
  });

  it("a job's held seconds come from slurmctld's own start and end (%S|%e), unknown ones are null", () => {
    expect(squeueTimesArgv('42')).toEqual(['squeue', '-j', '42', '-t', 'all', '-h', '-o', '%S|%e']);
    expect(parseHeldSeconds('2026-12-05T07:01:02|2026-12-05T07:03:40\n')).toBe(158);
    expect(parseHeldSeconds('2026-12-05T23:59:59|2026-12-06T00:00:09')).toBe(10);
    for (const bad of [
      'N/A|2026-12-05T07:03:40',
      '2026-12-05T07:01:02|Unknown',
      '2026-12-05T07:03:40|2026-12-05T07:01:02',
      '',
    ])
      expect(parseHeldSeconds(bad)).toBeNull();
  });

  it('detached salloc: runs under the launch script, output to its log file on the login node', () => {
    const argv = sallocDetachedArgv({ ...base, logFile: '/shared/x/salloc.log' });
    expect(argv.slice(0, 2)).toEqual(['bash', '-c']);
    expect(argv[4]).toBe('/shared/x/salloc.log');
    expect(argv.slice(5, 6)).toEqual(['timeout']);
    expect(sallocLogFile({ jobName: 'a b/c' })).toBe('/tmp/a_b_c.salloc.log');
  });

  it('liveness, kill-launcher and capped-cat argv validate their values', () => {
    const a = livenessArgv('12', [
      { pid: 99, name: 'infersweep-server1-r0' },
      { pid: 0, name: 'skipped' },
    ]);
    expect(a.slice(3)).toEqual([
      'infersweep-liveness',
      '12',
      '%i|%T|%r|%N|%L|%e|%j',
      '%i|%N|%j',
      '99',
      'infersweep-server1-r0',
    ]);
    expect(() => livenessArgv('12 x')).toThrow(TypeError);
    expect(killLauncherArgv(42, 'n').slice(3)).toEqual(['infersweep-kill', '42', 'n']);
    expect(() => killLauncherArgv(-1, 'n')).toThrow(TypeError);
    expect(cappedCatArgv('/x/y.log', 1024).slice(3)).toEqual(['infersweep-cat', '/x/y.log', '1024']);
    expect(() => cappedCatArgv('/x', 0)).toThrow(TypeError);
  });

  it('salloc rejects bad requests', () => {
    expect(() => sallocArgv({ ...base, nodes: 0 })).toThrow(TypeError);
    expect(() => sallocArgv({ ...base, timeLimitMinutes: 1.5 })).toThrow(TypeError);
    expect(() => sallocArgv({ ...base, jobName: 'a,b' })).toThrow(/comma/);
    expect(() => sallocArgv({ ...base, jobName: 'a\nb' })).toThrow(TypeError);
    expect(() => sallocArgv({ ...base, jobName: '' })).toThrow(TypeError);
  });

  it('squeue / scancel / scontrol argv validate ids', () => {
    expect(squeueJobArgv('12')).toEqual(['squeue', '-j', '12', '-t', 'all', '-h', '-o', '%i|%T|%r|%N|%L|%e|%j']);
    expect(squeueByNameArgv('n $(x)')).toEqual([
      'squeue',
      '--me',
      '--name=n $(x)',
      '-t',
      'all',
      '-h',
      '-o',
      '%i|%T|%r|%N|%L|%e|%j',
    ]);
    expect(() => squeueJobArgv('12; rm')).toThrow(TypeError);
    expect(scancelArgv('12.3')).toEqual(['scancel', '12.3']);
    expect(() => scancelArgv('')).toThrow(TypeError);
    expect(showNodesArgv(['node1', 'node2'])).toEqual(['scontrol', 'show', 'node', '-o', 'node1,node2']);
    expect(() => showNodesArgv(['node1;x'])).toThrow(TypeError);
  });

  it('srun host step: env as `env K=V` after --, login env inherited', () => {
    expect(
      srunArgv({
        jobId: '5',
        node: 'node2',
        stepName: 's',
        argv: ['vllm', 'serve'],
        env: { A: '$(x)' },
        runtime: 'host',
      }),
    ).toEqual([
      'srun',
      '--jobid=5',
      '--overlap',
      '--nodes=1',
      '--ntasks=1',
      '--nodelist=node2',
      '--job-name=s',
      '--',
      'env',
      'A=$(x)',
      'vllm',
      'serve',
    ]);
  });

  it('srun isolated host step: only the listed env and the login paths and locale (LOGIN_ENV), never ALL', () => {
    const argv = srunArgv({
      jobId: '5',
      node: 'node1',
      stepName: 's',
      argv: ['vllm'],
      env: { A: '1', PATH: '/opt/bin' },
      runtime: 'host',
      isolateEnv: true,
      loginEnv: LOGIN_ENV,
      secretNames: ['HF_TOKEN'],
    });
    const exported = argv.find((a) => a.startsWith('--export='));
    expect(exported).toBe(
      '--export=LD_LIBRARY_PATH,HOME,USER,LOGNAME,LANG,LC_ALL,TMPDIR,TZ,A,PATH,HF_TOKEN', // PATH listed once, with its set value
    );
    expect(argv.slice(0, 3)).toEqual(['env', 'A=1', 'PATH=/opt/bin']);
    // a container keeps its own paths: the login's are never exported into it
    expect(
      srunArgv({
        jobId: '5',
        node: 'node1',
        stepName: 's',
        argv: ['x'],
        env: {},
        runtime: 'pyxis',
        containerImage: 'i',
        loginEnv: LOGIN_ENV,
      }),
    ).toContain('--export=NONE');
  });

  it('a local login executor hands its commands only the login env and SLURM_* of the worker', () => {
    const env = loginEnvOf(LOGIN_ENV, {
      PATH: '/bin',
      HOME: '/home/w',
      SLURM_CONF: '/etc/slurm.conf',
      TEMPORAL_API_KEY: 'secret',
      HF_TOKEN: 'hf_secret',
      AWS_SECRET_ACCESS_KEY: 'k',
    });
    expect(env).toEqual({ PATH: '/bin', HOME: '/home/w', SLURM_CONF: '/etc/slurm.conf' });
  });

  it('srun pyxis step: container flags and --export limited to the listed names (values in srun env)', () => {
    expect(
      srunArgv({
        jobId: '5',
        node: 'node1',
        stepName: 's',
        argv: ['vllm'],
        env: { A: '1', B: '2' },
        runtime: 'pyxis',
        containerImage: '/sq/img.sqsh',
        containerMounts: ['/data:/data', '/m:/m:ro'],
      }),
    ).toEqual([
      'env',
      'A=1',
      'B=2',
      'srun',
      '--jobid=5',
      '--overlap',
      '--nodes=1',
      '--ntasks=1',
      '--nodelist=node1',
      '--job-name=s',
      '--container-image=/sq/img.sqsh',
      '--container-mounts=/data:/data,/m:/m:ro',
      '--no-container-entrypoint',
      '--container-remap-root',
      '--no-container-mount-home',
      '--export=A,B',
      '--',
      'vllm',
    ]);
    expect(
      srunArgv({
        jobId: '5',
        node: 'node1',
        stepName: 's',
        argv: ['x'],
        env: {},
        runtime: 'pyxis',
        containerImage: 'i',
      }),
    ).toContain('--export=NONE');
    expect(() =>
      srunArgv({ jobId: '5', node: 'node1', stepName: 's', argv: ['x'], env: {}, runtime: 'pyxis' }),
    ).toThrow(/containerImage/);
    expect(() =>
      srunArgv({
        jobId: '5',
        node: 'node1',
        stepName: 's',
        argv: ['x'],
        env: {},
        runtime: 'pyxis',
        containerImage: 'i',
        containerMounts: ['a,b'],
      }),
    ).toThrow(/comma/);
    expect(() =>
      srunArgv({ jobId: '5', node: 'node 1', stepName: 's', argv: ['x'], env: {}, runtime: 'host' }),
    ).toThrow(TypeError);
    expect(() => srunArgv({ jobId: '5', node: 'node1', stepName: 's', argv: [], env: {}, runtime: 'host' })).toThrow(
      TypeError,
    );
    expect(() =>
      srunArgv({ jobId: '5', node: 'node1', stepName: 's', argv: ['x'], env: { 'A B': '1' }, runtime: 'host' }),
    ).toThrow(TypeError);
  });

  it('detached launch and tail pass values as positional parameters of constant scripts', () => {
    const d = detachedArgv('/shared/l $(x).log', ['srun', 'a']);
    expect(d.slice(0, 2)).toEqual(['bash', '-c']);
    expect(d.slice(3)).toEqual(['infersweep-launch', '/shared/l $(x).log', 'srun', 'a']);
    expect(d[2]).not.toContain('$(x)');
    expect(() => detachedArgv('rel.log', ['x'])).toThrow(/absolute/);
    expect(tailArgv('/f', 20).slice(3)).toEqual(['infersweep-tail', '/f', '20']);
  });

  it('image file names are safe and distinct', () => {
    expect(imageFileName('vllm/vllm-openai:kimi-k3')).toMatch(/^vllm\+vllm-openai\+kimi-k3-[0-9a-f]{12}\.sqsh$/);
    expect(imageFileName('docker://nvcr.io#nvidia/x:1')).toMatch(/^nvcr\.io\+nvidia\+x\+1-[0-9a-f]{12}\.sqsh$/);
    expect(imageFileName('../../etc/passwd')).not.toMatch(/^\.|\//);
    expect(imageFileName('$(touch /tmp/x)')).toMatch(/^[A-Za-z0-9._+-]+$/);
    expect(imageFileName('a/b')).not.toBe(imageFileName('a+b'));
    expect(() => imageFileName(' ')).toThrow(TypeError);
  });

  it('import argv substitutes {out}/{image} and requires {out}', () => {
    const a = importArgv({
      squashPath: '/sq/i.sqsh',
      lockPath: '/sq/i.sqsh.lock',
      lockTimeoutSeconds: 30,
      tmpPath: '/sq/i.sqsh.tmp-1',
      image: 'v/x:1',
      importCommand: ENROOT_IMPORT,
    });
    expect(a.slice(3)).toEqual([
      'infersweep-image',
      '/sq/i.sqsh',
      '/sq/i.sqsh.lock',
      '30',
      '/sq/i.sqsh.tmp-1',
      'enroot',
      'import',
      '-o',
      '/sq/i.sqsh.tmp-1',
      'docker://v/x:1',
    ]);
    expect(a[2]).toMatch(/flock -w "\$wait" 9 \|\| \{.*exit 75; \}/);
    expect(() =>
      importArgv({
        squashPath: '/s',
        lockPath: '/l',
        lockTimeoutSeconds: 1,
        tmpPath: '/t',
        image: 'i',
        importCommand: ['true'],
      }),
    ).toThrow(/\{out\}/);
  });
});
