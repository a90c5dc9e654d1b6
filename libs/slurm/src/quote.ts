/**
 * The one quoting helper. Every value that reaches a (remote) shell is built as an argv array
 * and joined by `shellJoin`; nothing else in this lib concatenates shell text from values.
 * POSIX single-quoting: inside '…' nothing is special except the closing quote, which is
 * written as '\'' . Works for any byte sequence, including newlines and NUL-free binary.
 */
export function shellQuote(value: string): string {
  if (value.includes('\0')) throw new TypeError('shellQuote: NUL byte cannot be passed through a shell');
  if (value !== '' && /^[A-Za-z0-9_@%+=:,./-]+$/.test(value)) return value;
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/** Join argv into one shell command line, every element quoted. */
export function shellJoin(argv: readonly string[]): string {
  if (argv.length === 0) throw new TypeError('shellJoin: empty argv');
  return argv.map(shellQuote).join(' ');
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** True if `name` is a valid environment variable name (names are never quoted, so they are checked). */
export function isEnvName(name: string): boolean {
  return ENV_NAME.test(name);
}

/** `env K=V … argv` as an argv array (values quoted later by shellJoin; names validated). */
export function withEnv(argv: readonly string[], env?: Readonly<Record<string, string>>): string[] {
  const entries = Object.entries(env ?? {});
  if (entries.length === 0) return [...argv];
  for (const [k] of entries) if (!isEnvName(k)) throw new TypeError(`invalid environment variable name: ${JSON.stringify(k)}`);
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
    .replace(/(^|[\s;&|(])([A-Za-z_][A-Za-z0-9_]*)=(?:'(?:[^']|'\\'')*'|"(?:[^"\\]|\\.)*"|[^\s;&|)]*)/g, '$1$2=<redacted>');
}

/** Names of secret variables: valid environment names, no duplicates. */
export function assertSecretEnv(env: Readonly<Record<string, string>>): void {
  for (const [k, v] of Object.entries(env)) {
    if (!isEnvName(k)) throw new TypeError(`invalid secret variable name: ${JSON.stringify(k)}`);
    // the value travels as one `NAME=value` line on the remote command's stdin
    if (/[\n\r\0]/.test(v)) throw new TypeError(`secret ${k}: its value contains a newline or NUL (only single-line values can be passed)`);
  }
}
