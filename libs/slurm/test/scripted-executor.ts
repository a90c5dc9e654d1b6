/** An Executor that answers each command from a function of its argv, and records what it ran (unit tests of the cluster API's parts). */
import type { Executor, RunOptions, RunResult } from '../src/index';

export type Answer = Partial<RunResult> | Error;

export class ScriptedExecutor implements Executor {
  readonly ran: string[][] = [];
  constructor(private readonly answer: (argv: string[], call: number) => Answer) {}

  describe(): string {
    return 'scripted';
  }

  async close(): Promise<void> {}

  async run(argv: string[], _opts: RunOptions = {}): Promise<RunResult> {
    this.ran.push(argv);
    const a = this.answer(argv, this.ran.length);
    if (a instanceof Error) throw a;
    return { code: 0, signal: null, stdout: '', stderr: '', durationMs: 1, ...a };
  }
}
