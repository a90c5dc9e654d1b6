/**
 * The one shell-quoting helper. Every value that reaches a shell (ssh's remote command, srun lines,
 * benchmark_command.txt, the argv `plan` prints) is built as an argv array and joined by
 * `shellJoin`; nothing concatenates shell text from values. POSIX single-quoting: inside '…'
 * nothing is special except the closing quote, written as '\'' . Works for any byte sequence,
 * newlines included, except NUL (which no shell argument can hold).
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
