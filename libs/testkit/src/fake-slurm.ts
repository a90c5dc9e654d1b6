/**
 * A scripted Slurm behind the Executor interface, for unit tests of the cluster API's decisions
 * (what it waits for, withdraws, adopts) without a cluster. It answers the commands of
 * libs/slurm/src/commands.ts from an in-memory job table; the real-stack tests run the real ones.
 */
import type { Executor, RunOptions, RunResult } from '@infersweep/slurm';
import { JOB_FORMAT } from '@infersweep/slurm';

export interface FakeJob {
  jobId: string;
  name: string;
  state: string;
  reason: string;
  nodeList: string;
}

const ok = (stdout = ''): RunResult => ({ code: 0, signal: null, stdout, stderr: '', durationMs: 1 });

export class FakeSlurm implements Executor {
  readonly jobs: FakeJob[] = [];
  /** every command run, as argv joined by spaces */
  readonly log: string[] = [];
  /** `sinfo -N -o %N|%t` answer: node → state */
  nodeStates: Record<string, string> = { node1: 'idle', node2: 'idle' };
  /** called before each squeue by name, to move the story on (grant a job, …) */
  onPoll?: (polls: number) => void;
  private polls = 0;
  private nextId = 100;
  /** the pid a detached salloc gets; alive until the job leaves the queue or it is TERMed */
  readonly launcher = { pid: 4242, alive: false };

  describe(): string {
    return 'fake-slurm';
  }

  async close(): Promise<void> {}

  /** A job as if a salloc of this name had been submitted. */
  submit(name: string, state = 'PENDING', reason = 'Resources'): FakeJob {
    const job = { jobId: String(this.nextId++), name, state, reason, nodeList: state === 'RUNNING' ? 'node1' : '' };
    this.jobs.push(job);
    return job;
  }

  grant(job: FakeJob): void {
    Object.assign(job, { state: 'RUNNING', reason: 'None', nodeList: 'node1' });
    this.launcher.alive = false; // salloc --no-shell exits once granted
  }

  count(pattern: RegExp): number {
    return this.log.filter((l) => pattern.test(l)).length;
  }

  async run(argv: string[], _opts: RunOptions = {}): Promise<RunResult> {
    this.log.push(argv.join(' '));
    const [cmd] = argv;
    if (cmd === 'squeue') return this.squeue(argv);
    if (cmd === 'scancel') return this.scancel(argv[argv.length - 1]!);
    if (cmd === 'scontrol' && argv[1] === 'show' && argv[2] === 'hostnames') return ok(argv[3]!.split(',').join('\n'));
    if (cmd === 'sinfo')
      return ok(
        Object.entries(this.nodeStates)
          .map(([n, s]) => `${n}|${s}\n`)
          .join(''),
      );
    if (cmd === 'bash') return this.script(argv);
    throw new Error(`fake-slurm: unexpected command ${argv.join(' ')}`);
  }

  private squeue(argv: string[]): RunResult {
    const name = argv.find((a) => a.startsWith('--name='))?.slice('--name='.length);
    if (name !== undefined) this.onPoll?.(++this.polls);
    const jobId = argv.includes('-j') ? argv[argv.indexOf('-j') + 1] : undefined;
    if (argv.includes('-s')) return ok('');
    const rows = this.jobs.filter(
      (j) => (name === undefined || j.name === name) && (jobId === undefined || j.jobId === jobId),
    );
    if (jobId !== undefined && rows.length === 0)
      return { ...ok(), code: 1, stderr: 'slurm_load_jobs error: Invalid job id specified' };
    if (!argv.includes(JOB_FORMAT)) throw new Error(`fake-slurm: unexpected squeue format ${argv.join(' ')}`);
    return ok(rows.map((j) => `${j.jobId}|${j.state}|${j.reason}|${j.nodeList}|10:00|N/A|${j.name}\n`).join(''));
  }

  private scancel(id: string): RunResult {
    const job = this.jobs.find((j) => j.jobId === id);
    if (job) Object.assign(job, { state: 'CANCELLED', reason: 'None' });
    return ok();
  }

  /** The detached launch (salloc), the launcher pid check, and the launcher TERM. */
  private script(argv: string[]): RunResult {
    const tag = argv[3];
    if (tag === 'infersweep-launch') {
      const name = argv.find((a) => a.startsWith('--job-name='))?.slice('--job-name='.length);
      if (!name) throw new Error(`fake-slurm: a launch without --job-name: ${argv.join(' ')}`);
      this.submit(name);
      this.launcher.alive = true;
      return ok(`${this.launcher.pid}\n`);
    }
    if (tag === 'infersweep-pid') return ok(this.launcher.alive ? 'alive\n' : 'dead\n');
    if (tag === 'infersweep-kill') {
      // salloc withdraws its pending request on TERM
      this.launcher.alive = false;
      for (const j of this.jobs) if (j.state === 'PENDING') Object.assign(j, { state: 'CANCELLED' });
      return ok();
    }
    throw new Error(`fake-slurm: unexpected script ${argv.join(' ')}`);
  }
}
