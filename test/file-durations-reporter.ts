import { writeFileSync } from 'node:fs';
import type { Reporter, TestModule } from 'vitest/node';

/**
 * Each test file's wall time, its hooks and its import included, written as `{ path: seconds }` to the file
 * INFERSWEEP_FILE_DURATIONS names when the run ends (test/gate.ts passes it to every lane; its gate prints the
 * per-file table from it). Vitest's JSON report spans a file's tests only: a file whose work is in `beforeAll` (the
 * real-vLLM cross-client test's two windows, ~70 s) read 0.0 s there.
 *
 * With INFERSWEEP_FILE_ERRORS, it also writes `{ path: [message, …] }`: the errors of each file's
 * suites and of the file itself (a failing `beforeAll`/`afterAll`, an import error). Vitest's JSON report
 * drops a suite's errors: a file whose `describe`'s `beforeAll` threw has an empty `message` there.
 */
export default class FileDurationsReporter implements Reporter {
  private readonly seconds: Record<string, number> = {};
  private readonly errors: Record<string, string[]> = {};

  onTestModuleEnd(m: TestModule): void {
    const d = m.diagnostic();
    const ms = d.environmentSetupDuration + d.prepareDuration + d.collectDuration + d.setupDuration + d.duration;
    this.seconds[m.moduleId] = Math.round(ms) / 1000;
    const messages = [m, ...m.children.allSuites()].flatMap((s) =>
      s.errors().map((e) => ('fullName' in s ? `${s.fullName}: ` : '') + (e.stack ?? e.message)),
    );
    if (messages.length > 0) this.errors[m.moduleId] = messages;
  }

  onTestRunEnd(): void {
    const out = process.env.INFERSWEEP_FILE_DURATIONS;
    if (out) writeFileSync(out, JSON.stringify(this.seconds, null, 2) + '\n');
    const errors = process.env.INFERSWEEP_FILE_ERRORS;
    if (errors) writeFileSync(errors, JSON.stringify(this.errors, null, 2) + '\n');
  }
}
