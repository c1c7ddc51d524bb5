import { z } from 'zod';
import { faultRuleRequest } from './fault-rules.ts';
import { REQUEST_SOURCES } from './matching.ts';

/** A body kept in an entry: its text (bounded; null for binary bodies and bodies not copied), size and type. */
export const journalBodySchema = z.object({
  text: z.string().nullable(),
  /** Bytes, when known. */
  size: z.int().nullable(),
  content_type: z.string().nullable(),
  /** The text is the first JOURNAL_BODY_CHARS characters only. */
  truncated: z.boolean(),
});
export type JournalBody = z.infer<typeof journalBodySchema>;

export const journalEntrySchema = z.object({
  /** Sequence number, from 1 after each reset. */
  id: z.int(),
  /** When the request arrived, on the emulator clock. */
  time: z.string(),
  /** When the request arrived, on the wall clock. */
  wall_time: z.string(),
  source: z.enum(REQUEST_SOURCES),
  method: z.string(),
  path: z.string(),
  query: z.record(z.string(), z.union([z.string(), z.array(z.string())])),
  /** 499: no reply was sent. */
  status: z.int(),
  workspace_id: z.string().nullable(),
  request: z.object({ headers: z.record(z.string(), z.string()), body: journalBodySchema }),
  response: z.object({ body: journalBodySchema }),
  objstore: z
    .object({ operation: z.string(), bucket: z.string().nullable(), key: z.string().nullable(), access_key_id: z.string().nullable(), error_code: z.string().nullable() })
    .nullable(),
  duration_ms: z.number(),
  /** The fault rule that acted on the request, if one did. */
  fault_rule_id: z.string().nullable(),
});
export type JournalEntry = z.infer<typeof journalEntrySchema>;

export const requestsResponseSchema = z.object({ requests: z.array(journalEntrySchema) });
export const requestCountResponseSchema = z.object({ count: z.int() });

export const faultRuleResponseSchema = faultRuleRequest.extend({ id: z.string(), fired: z.int(), remaining: z.int().nullable() });
export const faultRulesResponseSchema = z.object({ rules: z.array(faultRuleResponseSchema) });
