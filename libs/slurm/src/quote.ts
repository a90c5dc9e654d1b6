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
