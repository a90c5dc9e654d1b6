/**
 * The one poll of the tests (no sleeps as synchronisation): call `check` every `everyMs` until it
 * returns a value, or fail with what was awaited once `timeoutMs` has passed.
 */

/**
 * Poll `check` until it returns a value other than undefined, null or false (that value is the
 * result) or the deadline passes. A throw counts as "not yet"; the last one is in the timeout's message.
 */
export async function until<T>(
  what: string,
  check: () => Promise<T | undefined | null | false>,
  timeoutMs = 60_000,
  everyMs = 250,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  let lastErr: unknown;
  for (;;) {
    try {
      last = await check();
      if (last !== undefined && last !== null && last !== false) return last as T;
    } catch (e) {
      lastErr = e;
    }
    if (Date.now() > deadline)
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}` +
          (lastErr ? `: ${(lastErr as Error).message}` : ` (last: ${JSON.stringify(last)})`),
      );
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
