import { InputError, type ErrorContext } from '@infersweep/core';

/** One problem found in a sweep config: where it is, what it holds, what is allowed. */
export interface ConfigIssue {
  /** Dotted YAML path, e.g. `orientations.throughput.topology.ep`. */
  path: string;
  /** The offending value, rendered for humans (`(missing)` when absent). */
  value: string;
  /** What is wrong and what is allowed / the fix. */
  message: string;
  /** 1-based line in the YAML file, when known. */
  line?: number;
}

/** Render one issue as `file: path: value — message (line N)`. */
export function formatIssue(file: string, issue: ConfigIssue): string {
  const where = issue.path === '' ? '(top level)' : issue.path;
  const line = issue.line === undefined ? '' : ` (line ${issue.line})`;
  return `${file}: ${where}: ${issue.value} — ${issue.message}${line}`;
}

/** A config (or a plan derived from it) is invalid. Never retryable: a human has to fix the file. */
export class ConfigError extends InputError {
  readonly file: string;
  readonly issues: ConfigIssue[];

  constructor(file: string, issues: ConfigIssue[], context?: ErrorContext) {
    super(issues.map((i) => formatIssue(file, i)).join('\n'), { context: { step: 'plan', ...context } });
    this.file = file;
    this.issues = issues;
  }
}

/** Binding a plan to an allocation failed (missing address, leftover placeholder, …). */
export class BindError extends InputError {
  constructor(message: string, context?: ErrorContext) {
    super(message, { context: { step: 'bind', ...context } });
  }
}

/** Render a value for an error message: strings quoted, absent values named. */
export function showValue(v: unknown): string {
  if (v === undefined) return '(missing)';
  if (typeof v === 'string') return JSON.stringify(v);
  if (v === null) return 'null';
  if (typeof v === 'object') {
    const s = JSON.stringify(v);
    return s.length > 80 ? `${s.slice(0, 77)}...` : s;
  }
  return String(v);
}
