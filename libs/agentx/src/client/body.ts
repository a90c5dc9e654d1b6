/**
 * Response bodies a remote server controls, read with a size bound: a misbehaving or hostile server
 * (a /metrics endpoint that never ends, a /v1/models the size of the disk) costs at most the bound
 * of memory, then the read is cancelled with a {@link BodyTooLargeError}. The bounds are generous
 * multiples of what vLLM sends (its /metrics with many DP ranks is a few MB).
 */
import { InfersweepError } from '@infersweep/core';

export const BODY_LIMITS = {
  /** Prometheus text of one /metrics endpoint. */
  metrics: 32 << 20,
  /** /v1/models, a non-streamed probe completion, /health. */
  small: 1 << 20,
  /** One SSE event (a data line of a streamed completion chunk). */
  sseEvent: 1 << 20,
  /** An error body kept for the record (the rest is read and dropped). */
  errorPrefix: 4096,
} as const;

/** A body (or one SSE event) exceeded its bound: the server misbehaves; a later try may not. */
export class BodyTooLargeError extends InfersweepError {
  override readonly name = 'BodyTooLargeError';
  constructor(what: string, limit: number) {
    super(`${what}: the response exceeds ${limit} bytes; read cancelled`, { kind: 'transient', context: { limit } });
  }
}

/** The body of `res` as text, at most `limit` bytes; more cancels the read and throws {@link BodyTooLargeError}. */
export async function readBodyCapped(res: Response, limit: number, what: string): Promise<string> {
  const announced = Number(res.headers.get('content-length'));
  if (Number.isFinite(announced) && announced > limit) {
    await res.body?.cancel().catch(() => undefined);
    throw new BodyTooLargeError(what, limit);
  }
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel().catch(() => undefined);
      throw new BodyTooLargeError(what, limit);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, total).toString('utf8');
}

/** At most `limit` bytes of the body as text (an error body kept for a message); the rest is discarded as it arrives. */
export async function readBodyPrefix(res: Response, limit: number): Promise<string> {
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let kept = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (kept < limit) {
        const part = value.subarray(0, limit - kept);
        chunks.push(part);
        kept += part.byteLength;
      } else {
        await reader.cancel().catch(() => undefined);
        break;
      }
    }
  } catch {
    // a body that fails half-way still gives its prefix
  }
  return Buffer.concat(chunks, kept).toString('utf8');
}
