import { describe, expect, it } from 'vitest';
import { BODY_LIMITS } from '../src/client/body';
import { ChatStream, pendingOutcome, settleOutcome } from '../src/client/chat-stream';

const sse = (data: unknown): string => `data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;
const delta = (content: string) => ({ choices: [{ delta: { content } }] });
const usage = { choices: [{ delta: {}, finish_reason: 'length' }], usage: { prompt_tokens: 12, completion_tokens: 2 } };

/** Feed reads (text, arrival ms) into a stream over a fresh outcome; return the settled outcome. */
function run(reads: Array<[string, number]>) {
  const out = pendingOutcome(100);
  const stream = new ChatStream(out);
  const fits = reads.map(([text, at]) => stream.read(text, at));
  return { out: settleOutcome(out, stream.end()), fits };
}

describe('ChatStream', () => {
  it('times tokens by the read that carried them and takes counts from usage', () => {
    const { out } = run([
      [sse(delta('a')), 150],
      [sse(delta('b')) + sse(delta('c')), 170],
      [sse(usage) + sse('[DONE]'), 180],
    ]);
    expect(out).toMatchObject({
      ok: true,
      firstTokenMs: 150,
      lastTokenMs: 170,
      contentChunks: 3,
      finishReason: 'length',
    });
    expect([out.promptTokens, out.completionTokens, out.cachedTokens, out.errorCategory]).toEqual([12, 2, null, null]);
  });

  it('counts a reasoning delta as a token and an empty delta as none', () => {
    const { out } = run([
      [
        sse({ choices: [{ delta: { content: '' } }] }) +
          sse({ choices: [{ delta: { reasoning_content: 'r' } }] }) +
          sse(usage) +
          sse('[DONE]'),
        5,
      ],
    ]);
    expect(out.contentChunks).toBe(1);
  });

  it('a stream closed before [DONE] is truncated', () => {
    expect(run([[sse(delta('a')) + sse(usage), 1]]).out).toMatchObject({
      ok: false,
      errorCategory: 'truncated_stream',
    });
  });

  it('an error event classifies by its code; unparseable data is a stream error', () => {
    const queueFull = run([[sse({ error: { message: 'queue full', code: 429 } }) + sse('[DONE]'), 1]]).out;
    expect([queueFull.errorCategory, queueFull.error]).toEqual(['rate_limit', 'queue full']);
    expect(run([[sse('{nope') + sse('[DONE]'), 1]]).out.errorCategory).toBe('stream_error');
  });

  it('a complete stream without usable usage is missing_usage, naming the dropped value', () => {
    expect(run([[sse(delta('a')) + sse('[DONE]'), 1]]).out.errorCategory).toBe('missing_usage');
    const bad = run([[sse({ usage: { prompt_tokens: 3, completion_tokens: -1 } }) + sse('[DONE]'), 1]]).out;
    expect(bad.errorCategory).toBe('missing_usage');
    expect(bad.error).toContain('usage.completion_tokens is not a token count: -1');
  });

  it('an event that grows past the SSE bound without ending does not fit', () => {
    const { fits } = run([
      ['data: ' + 'x'.repeat(BODY_LIMITS.sseEvent / 2), 1],
      ['x'.repeat(BODY_LIMITS.sseEvent / 2 + 10), 2],
    ]);
    expect(fits).toEqual([true, false]);
  });
});
