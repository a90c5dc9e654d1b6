import { z } from 'zod';

/**
 * Weka-style agentic trace (the format InferenceX's corpora `semianalysisai/cc-traces-weka-*` use and
 * aiperf's `weka_trace` loader reads; field names and aliases exactly as on the wire: `in`, `out`, …).
 * One trace = one recorded agent run: ordered normal/streaming requests interleaved with subagent markers,
 * each subagent carrying its own nested requests.
 */
const requestFields = {
  /** Request timestamp, seconds from conversation start. */
  t: z.number(),
  model: z.string(),
  /** Input tokens (ISL). */
  in: z.number().int().nonnegative(),
  /** Output tokens (OSL); replayed as max_tokens with ignore_eos. */
  out: z.number().int().nonnegative(),
  /** KV-cache block identities (scope: this trace). */
  hash_ids: z.array(z.number().int()).default([]),
  input_types: z.array(z.string()).default([]),
  output_types: z.array(z.string()).default([]),
  /** Stop reason: '', 'tool_use', 'end_turn'. */
  stop: z.string().default(''),
  /** Recorded server time, seconds. */
  api_time: z.number().nullable().optional(),
  /** Client delay before this request (end-to-start), seconds. */
  think_time: z.number().nullable().optional(),
};

export const wekaNormalRequestSchema = z.object({ ...requestFields, type: z.literal('n') }).strict();
export const wekaStreamingRequestSchema = z
  .object({ ...requestFields, type: z.literal('s'), ttft: z.number().nullable().optional() })
  .strict();
export const wekaLeafRequestSchema = z.discriminatedUnion('type', [
  wekaNormalRequestSchema,
  wekaStreamingRequestSchema,
]);

export const wekaSubagentSchema = z
  .object({
    t: z.number(),
    type: z.literal('subagent'),
    agent_id: z.string(),
    subagent_type: z.string(),
    duration_ms: z.number().int().nullable().optional(),
    total_tokens: z.number().int().nullable().optional(),
    tool_use_count: z.number().int().nullable().optional(),
    /** 'completed' or 'async_launched': recorded, but the replay joins by recorded time, as aiperf (client/plan.ts subagentJoins). */
    status: z.string(),
    requests: z.array(wekaLeafRequestSchema),
    models: z.array(z.string()),
    tool_tokens: z.number().int().default(0),
    system_tokens: z.number().int().default(0),
  })
  .strict();

export const wekaEntrySchema = z.discriminatedUnion('type', [
  wekaNormalRequestSchema,
  wekaStreamingRequestSchema,
  wekaSubagentSchema,
]);

export const wekaTraceSchema = z
  .object({
    id: z.string().min(1),
    models: z.array(z.string()),
    block_size: z.number().int().positive(),
    hash_id_scope: z.literal('local'),
    tool_tokens: z.number().int().default(0),
    system_tokens: z.number().int().default(0),
    requests: z.array(wekaEntrySchema),
    totals: z.record(z.string(), z.unknown()).nullable().optional(),
  })
  .strict();

export type WekaLeafRequest = z.infer<typeof wekaLeafRequestSchema>;
export type WekaSubagent = z.infer<typeof wekaSubagentSchema>;
export type WekaEntry = z.infer<typeof wekaEntrySchema>;
export type WekaTrace = z.infer<typeof wekaTraceSchema>;
export type WekaTraceInput = z.input<typeof wekaTraceSchema>;

/** Root (parent) requests of a trace, in order; subagents excluded. */
export function rootRequests(trace: WekaTrace): WekaLeafRequest[] {
  return trace.requests.filter((r): r is WekaLeafRequest => r.type !== 'subagent');
}
