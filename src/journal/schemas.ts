import { z } from 'zod';
import { faultRuleRequest } from './fault-rules.ts';
import { MATCH_FIELDS, REQUEST_SOURCES } from './matching.ts';

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
  response: z.object({
    /**
     * The headers the response was given (not those Node adds for the connection: Date, Connection, Keep-Alive,
     * Transfer-Encoding), secrets masked as the request's are; none when no reply was sent.
     */
    headers: z.record(z.string(), z.string()),
    body: journalBodySchema,
  }),
  objstore: z
    .object({
      operation: z.string(),
      bucket: z.string().nullable(),
      key: z.string().nullable(),
      access_key_id: z.string().nullable(),
      error_code: z.string().nullable(),
    })
    .nullable(),
  duration_ms: z.number(),
  /** The fault rule that acted on the request, if one did. */
  fault_rule_id: z.string().nullable(),
});
export type JournalEntry = z.infer<typeof journalEntrySchema>;

/** What the journal's live list shows of an entry: GET /requests/stream?summary=true sends these. */
export const journalEntrySummarySchema = journalEntrySchema.pick({
  id: true,
  time: true,
  wall_time: true,
  source: true,
  method: true,
  path: true,
  status: true,
  workspace_id: true,
  fault_rule_id: true,
  duration_ms: true,
});
export type JournalEntrySummary = z.infer<typeof journalEntrySummarySchema>;
/** What an objstore request was about: its S3 operation, bucket and key. */
export type ObjstoreTarget = Pick<NonNullable<JournalEntry['objstore']>, 'operation' | 'bucket' | 'key'>;

const STATUS_CLASSES = ['2xx', '3xx', '4xx', '5xx'] as const;
export type StatusClass = (typeof STATUS_CLASSES)[number];

/** One minute of the wall clock in GET /_localplane/requests/stats. */
export const requestMinuteSchema = z.object({
  /** The minute's start, on the wall clock. */
  start: z.string(),
  total: z.int(),
  by_status_class: z.object(
    Object.fromEntries(STATUS_CLASSES.map((statusClass) => [statusClass, z.int()])) as Record<StatusClass, z.ZodInt>,
  ),
  by_source: z.object(
    Object.fromEntries(REQUEST_SOURCES.map((source) => [source, z.int()])) as Record<
      (typeof REQUEST_SOURCES)[number],
      z.ZodInt
    >,
  ),
});
export type RequestMinute = z.infer<typeof requestMinuteSchema>;

export const requestStatsResponseSchema = z.object({
  /** The wall clock's time the minutes end at (the requests are counted by their `wall_time`). */
  now: z.string(),
  /** Oldest first, the last one the minute under way. */
  minutes: z.array(requestMinuteSchema),
  /** The latest entries with a status of 400 or more, newest first. */
  latest_errors: z.array(journalEntrySchema),
});
export type RequestStats = z.infer<typeof requestStatsResponseSchema>;

/** The journal's bound and what it dropped: a reader's way to tell "no such request" from "no longer kept". */
export const journalBoundsSchema = z.object({
  /** How many entries the journal keeps; the oldest go first. */
  capacity: z.int(),
  /** The id of the oldest entry kept (the next id while the journal is empty). */
  first_kept_id: z.int(),
  /** Entries recorded since the last reset and no longer kept (for room, or emptied): those before first_kept_id. */
  dropped: z.int(),
});
export type JournalBounds = z.infer<typeof journalBoundsSchema>;

export const requestsResponseSchema = z.object({
  requests: z.array(journalEntrySchema),
  /** How many kept entries match the filter, `limit` aside: more than `requests` holds when the limit cut them. */
  total: z.int(),
  journal: journalBoundsSchema,
});
export const requestCountResponseSchema = z.object({ count: z.int(), journal: journalBoundsSchema });

export const faultRuleResponseSchema = faultRuleRequest.extend({
  id: z.string(),
  /** Requests the rule was checked against while it was not spent (a rule that fired first ends the checks). */
  checked: z.int(),
  fired: z.int(),
  remaining: z.int().nullable(),
});
export const faultRulesResponseSchema = z.object({ rules: z.array(faultRuleResponseSchema) });

/** A journalled request that no fault rule acted on, beside the rule closest to matching it. */
export const nearMissSchema = z.object({
  request: journalEntrySchema.pick({
    id: true,
    time: true,
    source: true,
    method: true,
    path: true,
    status: true,
    workspace_id: true,
  }),
  rule_id: z.string(),
  /**
   * The fields of the rule's match that the request missed: what it wanted and what the request had. None: the rule
   * matched but did not act (its probability, or it was spent, or a rule before it acted).
   */
  missed: z.array(z.object({ field: z.enum(MATCH_FIELDS), wanted: z.string(), got: z.string().nullable() })),
});
export const nearMissesResponseSchema = z.object({ near_misses: z.array(nearMissSchema) });
export type NearMisses = z.output<typeof nearMissesResponseSchema>;
