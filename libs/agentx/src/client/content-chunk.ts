/**
 * Fast path of the streaming client's hot loop (pure; tested in libs/agentx/test/content-chunk.test.ts).
 * Nearly every SSE event of a completion is one content token; JSON.parse of each (~1.3 µs) was the
 * client's largest per-token cost in `npm run bench -- ceiling` (bench/ceiling.ts). This recognises, by
 * substring checks only, an OpenAI chat chunk whose only effect is one non-empty `content` delta: one
 * `"delta":{"content":"…` (as vLLM and llm-d-inference-sim write it), no usage object, no error, no finish
 * reason. Anything else — or anything unusual (spaces after colons, several choices, a delta that does
 * not start with content, tool calls) — answers false and takes the
 * full JSON.parse path, so a false answer is always safe. Inside a JSON string every quote is escaped,
 * so token text can never forge the `"key":` patterns checked here.
 */
const DELTA = '"delta":';
const CONTENT = '"delta":{"content":"';
const USAGE = '"usage":';
const FINISH = '"finish_reason":';

export function isPlainContentChunk(data: string): boolean {
  if (data.charCodeAt(0) !== 123 /* { */ || data.charCodeAt(data.length - 1) !== 125 /* } */) return false;
  const k = data.indexOf(CONTENT);
  if (k < 0 || data.charCodeAt(k + CONTENT.length) === 34 /* empty "" */) return false;
  if (data.indexOf(DELTA) !== k || data.indexOf(DELTA, k + CONTENT.length) >= 0) return false; // one choice
  const u = data.indexOf(USAGE);
  if (u >= 0 && !data.startsWith('null', u + USAGE.length)) return false;
  const f = data.indexOf(FINISH);
  if (f >= 0 && !data.startsWith('null', f + FINISH.length)) return false;
  return data.indexOf('"error"') < 0;
}
