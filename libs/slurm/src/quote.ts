/** The one quoting helper lives in libs/core (quote.ts); this lib builds its command lines with it. */
export { shellJoin, shellQuote } from '@infersweep/core';

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** True if `name` is a valid environment variable name (names are never quoted, so they are checked). */
export function isEnvName(name: string): boolean {
  return ENV_NAME.test(name);
}

/** `env K=V … argv` as an argv array (values quoted later by shellJoin; names validated). */
export function withEnv(argv: readonly string[], env?: Readonly<Record<string, string>>): string[] {
  const entries = Object.entries(env ?? {});
  if (entries.length === 0) return [...argv];
  for (const [k] of entries)
    if (!isEnvName(k)) throw new TypeError(`invalid environment variable name: ${JSON.stringify(k)}`);
  return ['env', ...entries.map(([k, v]) => `${k}=${v}`), ...argv];
}

/**
 * An error message or log line with every `NAME=value` assignment (as `env K=V …` writes them,
 * quoted or not) shown as `NAME=<redacted>`: command lines in errors never carry values. Flags
 * (`--job-name=x`) are left as they are.
 */
export function redactAssignments(text: string): string {
  return text
    .replace(/(^|[\s;&|(])'([A-Za-z_][A-Za-z0-9_]*)=(?:[^']|'\\'')*'/g, '$1$2=<redacted>') // shellQuote'd as one token
    .replace(
      /(^|[\s;&|(])([A-Za-z_][A-Za-z0-9_]*)=(?:'(?:[^']|'\\'')*'|"(?:[^"\\]|\\.)*"|[^\s;&|)]*)/g,
      '$1$2=<redacted>',
    );
}

/** Names of secret variables: valid environment names, no duplicates. */
export function assertSecretEnv(env: Readonly<Record<string, string>>): void {
  for (const [k, v] of Object.entries(env)) {
    if (!isEnvName(k)) throw new TypeError(`invalid secret variable name: ${JSON.stringify(k)}`);
    // the value travels as one `NAME=value` line on the remote command's stdin
    if (/[\n\r\0]/.test(v))
      throw new TypeError(`secret ${k}: its value contains a newline or NUL (only single-line values can be passed)`);
  }
}
