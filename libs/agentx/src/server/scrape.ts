import { ScrapeError } from '../errors';
import { BODY_LIMITS, BodyTooLargeError, readBodyCapped, readBodyPrefix } from '../client/body';

/** Normalise a metrics endpoint: a base URL gets `/metrics` appended; a URL with a path is kept. */
export function metricsUrl(endpoint: string): string {
  const u = new URL(endpoint);
  if (u.pathname === '/' || u.pathname === '') u.pathname = '/metrics';
  return u.toString();
}

/** GET /metrics with a hard timeout. Throws ScrapeError (retryable) on refusal, timeout or non-200. */
export async function scrapeText(endpoint: string, timeoutSeconds: number, signal?: AbortSignal): Promise<string> {
  const url = metricsUrl(endpoint);
  const timeout = AbortSignal.timeout(Math.max(1, Math.round(timeoutSeconds * 1000)));
  const sig = signal ? AbortSignal.any([signal, timeout]) : timeout;
  let res: Response;
  try {
    res = await fetch(url, { signal: sig });
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause;
    throw new ScrapeError(
      `scrape ${url} failed: ${cause?.code ?? (err as Error).name}: ${(err as Error).message}`,
      { endpoint: url },
      err,
    );
  }
  if (res.status !== 200) {
    const body = await readBodyPrefix(res, 500);
    throw new ScrapeError(`scrape ${url}: HTTP ${res.status}`, { endpoint: url, logTail: body });
  }
  try {
    return await readBodyCapped(res, BODY_LIMITS.metrics, `scrape ${url}`);
  } catch (err) {
    if (err instanceof BodyTooLargeError) throw new ScrapeError(err.message, { endpoint: url }, err);
    throw new ScrapeError(`scrape ${url}: body read failed: ${(err as Error).message}`, { endpoint: url }, err);
  }
}
