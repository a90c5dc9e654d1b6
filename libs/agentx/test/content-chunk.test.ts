import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isPlainContentChunk } from '../src/client/content-chunk';

// chunks as llm-d-inference-sim v0.10.2 and vLLM send them
const sim = (delta: object, finish: string | null = null, usage: object | null = null) =>
  JSON.stringify({
    id: 'chatcmpl-1',
    model: 'agentx-sim',
    object: 'chat.completion.chunk',
    created: 1,
    usage,
    choices: [{ index: 0, finish_reason: finish, delta }],
  });

interface Chunk {
  choices?: Array<{
    delta?: { content?: string | null; reasoning_content?: string | null };
    finish_reason?: string | null;
  }>;
  usage?: unknown;
  error?: unknown;
}
/** What the full parse path would make of a chunk: exactly one non-empty content token and nothing else. */
const plainByParse = (data: string): boolean => {
  const c = JSON.parse(data) as Chunk;
  return (
    c.error === undefined &&
    (c.usage === undefined || c.usage === null) &&
    c.choices?.length === 1 &&
    !c.choices[0]!.finish_reason &&
    typeof c.choices[0]!.delta?.content === 'string' &&
    c.choices[0]!.delta.content.length > 0
  );
};

describe('isPlainContentChunk', () => {
  it('takes a content token (vLLM and simulator shape) and nothing else', () => {
    expect(isPlainContentChunk(sim({ content: 'Testing' }))).toBe(true);
    expect(
      isPlainContentChunk(
        '{"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":" the"},"logprobs":null,"finish_reason":null}]}',
      ),
    ).toBe(true);
    expect(isPlainContentChunk(sim({ role: 'assistant' }))).toBe(false);
    expect(isPlainContentChunk(sim({ role: 'assistant', content: '' }))).toBe(false);
    expect(isPlainContentChunk(sim({}, 'length'))).toBe(false);
    expect(isPlainContentChunk(sim({ content: 'last' }, 'stop'))).toBe(false);
    expect(isPlainContentChunk(sim({ content: 'x' }, null, { prompt_tokens: 7, completion_tokens: 1 }))).toBe(false);
    expect(isPlainContentChunk('{"usage":{"prompt_tokens":7,"completion_tokens":256},"choices":[]}')).toBe(false);
    expect(isPlainContentChunk('{"error":{"message":"boom"},"choices":[{"delta":{"content":"x"}}]}')).toBe(false);
    expect(isPlainContentChunk(sim({ content: null, reasoning_content: 'think' }))).toBe(false);
    expect(isPlainContentChunk(sim({ role: 'assistant', content: 'x' }))).toBe(false); // full parse still counts it
    expect(isPlainContentChunk('{"choices":[{"delta":{}},{"delta":{"content":"x"}}]}')).toBe(false); // the client reads choices[0]
    expect(isPlainContentChunk('[DONE]')).toBe(false);
    expect(isPlainContentChunk('{"choices":[{"delta":{"content":"x"}}]')).toBe(false); // truncated: full parse reports it
  });

  it('sends anything unusual to the full parse (spaces, several choices)', () => {
    expect(isPlainContentChunk('{"choices": [{"delta": {"content": "x"}, "finish_reason": null}]}')).toBe(false);
    expect(
      isPlainContentChunk('{"choices":[{"index":0,"delta":{"content":"a"}},{"index":1,"delta":{"content":"b"}}]}'),
    ).toBe(false);
  });

  it('cannot be fooled by token text that spells the keys it looks for', () => {
    expect(isPlainContentChunk(sim({ content: '"usage":{"x":1} "finish_reason":"stop" "error" "content":"y"' }))).toBe(
      true,
    );
    expect(isPlainContentChunk(sim({ content: '"' }))).toBe(true);
  });

  it('agrees with the full parse on every JSON.stringify-shaped chunk (property)', () => {
    const text = fc.string({ maxLength: 12 });
    const chunk = fc.record(
      {
        id: fc.constant('chatcmpl-1'),
        usage: fc.oneof(fc.constant(null), fc.record({ prompt_tokens: fc.nat(), completion_tokens: fc.nat() })),
        error: fc.record({ message: text }),
        choices: fc.array(
          fc.record(
            {
              index: fc.nat(3),
              delta: fc.record(
                { content: fc.oneof(fc.constant(null), text), reasoning_content: text, role: fc.constant('assistant') },
                { requiredKeys: [] },
              ),
              finish_reason: fc.oneof(fc.constant(null), fc.constantFrom('length', 'stop')),
            },
            { requiredKeys: ['delta'] },
          ),
          { maxLength: 2 },
        ),
      },
      { requiredKeys: ['id', 'choices'] },
    );
    fc.assert(
      fc.property(chunk, (c) => {
        const data = JSON.stringify(c);
        const fast = isPlainContentChunk(data);
        const parsed = plainByParse(data);
        const contentFirst = (JSON.stringify(c.choices[0]?.delta) ?? '').startsWith('{"content":');
        // never a false positive, and every plain token whose delta starts with its content is taken
        expect({ falsePositive: fast && !parsed, missed: parsed && contentFirst && !fast }).toEqual({
          falsePositive: false,
          missed: false,
        });
      }),
      { numRuns: 2000 },
    );
  });
});
