import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import protobuf from 'protobufjs';

/**
 * vLLM's per-request timings (vLLM 0.32 v1/engine/output_processor.py `do_tracing`): with `--otlp-traces-endpoint`
 * the API server exports one OpenTelemetry span `llm_request` per finished request, whose attributes are the engine's
 * own clock for that request — the only per-request engine timing vLLM exports (its /metrics are histograms over all
 * requests, its responses carry no timings). The request id is `chatcmpl-` + the request's `X-Request-Id` header,
 * which both clients send (aiperf its `x_request_id`, infersweep its record id), so each span joins one request record.
 */
export interface EngineRequestSpan {
  /** the client's request id (the span's `gen_ai.request.id` without vLLM's `chatcmpl-` prefix) */
  id: string;
  /** engine TTFT (s): arrival at the engine front end → first token out of the output processor */
  ttft: number;
  /** s waiting for the scheduler */
  queue: number;
  /** s from scheduled to the first token (engine-core clock) */
  prefill: number;
  /** s from the first to the last token (engine-core clock): the engine's ITL is decode / (tokens − 1) */
  decode: number;
  /** s from arrival to the finishing iteration */
  e2e: number;
  promptTokens: number;
  completionTokens: number;
}

/** The part of OTLP/HTTP's ExportTraceServiceRequest (opentelemetry-proto trace/v1) that holds span attributes. */
const OTLP = protobuf
  .parse(
    `
syntax = "proto3";
package otlp;
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
message ResourceSpans { repeated ScopeSpans scope_spans = 2; }
message ScopeSpans { repeated Span spans = 2; }
message Span { string name = 5; repeated KeyValue attributes = 9; }
message KeyValue { string key = 1; AnyValue value = 2; }
message AnyValue { oneof value { string string_value = 1; bool bool_value = 2; int64 int_value = 3; double double_value = 4; } }
`,
  )
  .root.lookupType('otlp.ExportTraceServiceRequest');

type Attr = { key: string; value?: { stringValue?: string; intValue?: number; doubleValue?: number } };
type Decoded = { resourceSpans?: { scopeSpans?: { spans?: { name: string; attributes?: Attr[] }[] }[] }[] };

/** One OTLP/HTTP protobuf export → the `llm_request` spans in it (pure). A span missing a timing throws. */
export function decodeRequestSpans(body: Uint8Array): EngineRequestSpan[] {
  const msg = OTLP.toObject(OTLP.decode(body), { longs: Number }) as Decoded;
  const spans: EngineRequestSpan[] = [];
  for (const rs of msg.resourceSpans ?? [])
    for (const ss of rs.scopeSpans ?? [])
      for (const span of ss.spans ?? []) {
        if (span.name !== 'llm_request') continue;
        const a = new Map((span.attributes ?? []).map((kv) => [kv.key, kv.value]));
        const num = (key: string): number => {
          const v = a.get(`gen_ai.${key}`);
          const x = v?.doubleValue ?? v?.intValue;
          if (typeof x !== 'number') throw new Error(`an llm_request span without gen_ai.${key}`);
          return x;
        };
        const id = a.get('gen_ai.request.id')?.stringValue;
        if (id === undefined) throw new Error('an llm_request span without gen_ai.request.id');
        spans.push({
          id: id.replace(/^chatcmpl-/, ''),
          ttft: num('latency.time_to_first_token'),
          queue: num('latency.time_in_queue'),
          prefill: num('latency.time_in_model_prefill'),
          decode: num('latency.time_in_model_decode'),
          e2e: num('latency.e2e'),
          promptTokens: num('usage.prompt_tokens'),
          completionTokens: num('usage.completion_tokens'),
        });
      }
  return spans;
}

/** A loopback OTLP/HTTP receiver collecting vLLM's `llm_request` spans, and every raw export it received. */
export interface EngineTraceSink {
  /** the URL for vLLM's `--otlp-traces-endpoint` (with OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/protobuf) */
  endpoint: string;
  spans(): EngineRequestSpan[];
  /**
   * The spans of requests `ids`, once all have arrived (the exporter batches: OTEL_BSP_SCHEDULE_DELAY); throws naming
   * the missing ones after `timeoutMs`.
   */
  spansOf(ids: readonly string[], timeoutMs?: number): Promise<Map<string, EngineRequestSpan>>;
  close(): Promise<void>;
}

export async function startTraceSink(): Promise<EngineTraceSink> {
  const received: EngineRequestSpan[] = [];
  let arrived: () => void = () => {};
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        received.push(...decodeRequestSpans(Buffer.concat(chunks)));
        res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
      } catch (e) {
        res.writeHead(400).end(String(e));
      }
      arrived();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const byId = (): Map<string, EngineRequestSpan> => new Map(received.map((s) => [s.id, s]));
  return {
    endpoint: `http://127.0.0.1:${port}/v1/traces`,
    spans: () => [...received],
    async spansOf(ids, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const all = byId();
        const missing = ids.filter((id) => !all.has(id));
        if (missing.length === 0) return new Map(ids.map((id) => [id, all.get(id)!]));
        const left = deadline - Date.now();
        if (left <= 0)
          throw new Error(
            `the engine exported no llm_request span for ${missing.length} of ${ids.length} requests within ` +
              `${timeoutMs} ms (first: ${missing.slice(0, 3).join(', ')})`,
          );
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, Math.min(left, 1000));
          arrived = () => {
            clearTimeout(t);
            resolve();
          };
        });
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
