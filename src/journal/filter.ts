import { z } from 'zod';
import { requestTimestamp } from '../shared/validation.ts';
import { customIssue } from '../shared/errors.ts';
import { queryBoolean, queryInteger } from '../shared/validation.ts';
import { Needle } from '../shared/needle.ts';
import { globMatcher } from './glob.ts';
import {
  globText,
  headerHolds,
  headerMatch,
  headerMatchText,
  requestMatcher,
  requestMatchFields,
  type MatchableRequest,
} from './matching.ts';
import type { JournalEntry, ObjstoreTarget } from './schemas.ts';

export const MAX_JOURNAL_LIMIT = 10_000;

const STATUS_PATTERN = /^[1-5](\d\d|xx)$/i;
const statusPattern = z.string().regex(STATUS_PATTERN, 'a status is three digits (404) or a class (4xx)');

/** A sequence id (entries after it) or an ISO time (entries from it on, emulator clock). */
type Since = { id: number } | { time: number };

const sinceText = z.string().transform((text, ctx): Since => {
  if (/^\d+$/.test(text)) return { id: Number(text) };
  const parsed = requestTimestamp.safeParse(text);
  if (!parsed.success) {
    ctx.addIssue(customIssue('value_error', 'since is a sequence id or an ISO 8601 time'));
    return z.NEVER;
  }
  return { time: parsed.data };
});

/** A fault rule's id, or `any` for a request any rule acted on. */
const faultRule = z.string().regex(/^(any|fault-rule-\d+)$/);
const bodyText = z.string().min(1);

/** What the query and the JSON filters have in common beside the request match. */
const filterFields = {
  fault_rule: faultRule.optional(),
  body_contains: bodyText.optional(),
  response_body_contains: bodyText.optional(),
  any_body_contains: bodyText.optional(),
  /** Globs on an objstore request's S3 operation, bucket and key (decoded); an API request has none of them. */
  operation: globText.optional(),
  bucket: globText.optional(),
  key: globText.optional(),
};

const TARGET_FIELDS = ['operation', 'bucket', 'key'] as const;

/** The filter's fields as query parameters. */
const queryFilterFields = {
  ...requestMatchFields,
  header: headerMatchText.optional(),
  /** A response header as `header` is a request header's: `Name:value`, or `Name` for any value (as journalled). */
  response_header: headerMatchText.optional(),
  status: statusPattern.optional(),
  ...filterFields,
};

const order = z.enum(['asc', 'desc']);

/** The filter as query parameters of GET /_localplane/requests (and /count). */
export const journalQuery = z.strictObject({
  since: sinceText.optional(),
  before: queryInteger({ min: 1 }).optional(),
  limit: queryInteger({ min: 1, max: MAX_JOURNAL_LIMIT }).optional(),
  order: order.optional(),
  ...queryFilterFields,
});

/**
 * The filter as query parameters of GET /_localplane/requests/stream: it sends every matching entry in the order they
 * are recorded.
 */
export const journalStreamQuery = z.strictObject({
  since: sinceText.optional(),
  /** Each event a list of the entries' summaries (what a live list shows) instead of one whole entry. */
  summary: queryBoolean.optional(),
  /**
   * Each event holds only the newest this many of the entries recorded since the last one: a live list that shows that
   * many rows is sent no more than it shows, however fast requests come.
   */
  newest: queryInteger({ min: 1, max: MAX_JOURNAL_LIMIT }).optional(),
  ...queryFilterFields,
});

/** The filter as the JSON body of POST /_localplane/requests/find (and `lp.requests.*`). */
export const journalFind = z.strictObject({
  since: z
    .union([
      z
        .int()
        .min(0)
        .transform((id): Since => ({ id })),
      sinceText,
    ])
    .optional(),
  /** Entries with a lower sequence id only: with `limit`, the page before the oldest one seen. */
  before: z.int().min(1).optional(),
  limit: z.int().min(1).max(MAX_JOURNAL_LIMIT).optional(),
  order: order.optional(),
  ...requestMatchFields,
  // The query's `Name:value` text as well as `{name, value}`: the HTTP and code forms take the same inputs.
  header: z.union([headerMatch, headerMatchText]).optional(),
  response_header: z.union([headerMatch, headerMatchText]).optional(),
  status: z.union([z.int().min(100).max(599).transform(String), statusPattern]).optional(),
  ...filterFields,
});

export type JournalFilter = z.output<typeof journalFind>;
/** What callers of the programmatic API write. */
export type JournalFilterInput = z.input<typeof journalFind>;

/** The fields that page through the journal rather than choose entries (but a `since` time chooses them). */
const PAGING_FIELDS: ReadonlySet<string> = new Set(['since', 'before', 'limit', 'order']);

/** Whether the filter only pages: every kept entry in its id range matches it. */
export function onlyPages(filter: JournalFilter): boolean {
  const { since } = filter;
  return (
    (since === undefined || 'id' in since) &&
    Object.entries(filter).every(([name, value]) => value === undefined || PAGING_FIELDS.has(name))
  );
}

/**
 * A journalled request as the filters read it: what was recorded with it, its bodies' text and its entry (made when a
 * filter reads the headers).
 */
export interface FilterableEntry extends MatchableRequest {
  readonly id: number;
  /** `entry.time` in emulator microseconds. */
  readonly micros: number;
  readonly status: number;
  readonly fault_rule_id: string | null;
  /** An objstore request's operation, bucket and key; null for the API's. */
  readonly target: ObjstoreTarget | null;
  bodyHolds(part: 'request' | 'response', needle: Needle): boolean;
  /** A response header by its name (any case), as journalled; undefined when not sent. */
  responseHeader(name: string): string | undefined;
  entry(): JournalEntry;
}

const statusTest = (status: string | undefined): ((status: number) => boolean) | null => {
  if (status === undefined) return null;
  if (!status.toLowerCase().endsWith('xx')) return (actual) => actual === Number(status);
  const statusClass = Number(status[0]);
  return (actual) => Math.floor(actual / 100) === statusClass;
};

const needleOf = (text: string | undefined) => (text === undefined ? undefined : new Needle(text));

/** A test of an objstore request's target against the filter's globs on it; null when the filter has none. */
function targetTest(filter: JournalFilter): ((target: ObjstoreTarget | null) => boolean) | null {
  const tests = TARGET_FIELDS.flatMap((field) => {
    const glob = filter[field];
    return glob === undefined ? [] : [{ field, matches: globMatcher(glob) }];
  });
  if (tests.length === 0) return null;
  return (target) =>
    target !== null && tests.every(({ field, matches }) => target[field] !== null && matches(target[field]));
}

/**
 * A compiled test of a kept entry against a filter (`limit` and `order` are the journal's).
 * The summary's fields are tested first: the entry is made only when they hold and a filter
 * reads its headers or bodies.
 */
export function entryMatcher(filter: JournalFilter): (kept: FilterableEntry) => boolean {
  const matchesRequest = requestMatcher(filter);
  const { since, before, fault_rule: faultRuleId, response_header: responseHeader } = filter;
  const statusHolds = statusTest(filter.status);
  const targetHolds = targetTest(filter);
  const [inRequest, inResponse, inEither] = [
    filter.body_contains,
    filter.response_body_contains,
    filter.any_body_contains,
  ].map(needleOf);
  return (kept) => {
    return (
      (since === undefined || ('id' in since ? kept.id > since.id : kept.micros >= since.time)) &&
      (before === undefined || kept.id < before) &&
      (statusHolds === null || statusHolds(kept.status)) &&
      (faultRuleId === undefined ||
        (faultRuleId === 'any' ? kept.fault_rule_id !== null : kept.fault_rule_id === faultRuleId)) &&
      (targetHolds === null || targetHolds(kept.target)) &&
      matchesRequest(kept) &&
      (responseHeader === undefined || headerHolds(responseHeader, kept.responseHeader(responseHeader.name))) &&
      (inRequest === undefined || kept.bodyHolds('request', inRequest)) &&
      (inResponse === undefined || kept.bodyHolds('response', inResponse)) &&
      (inEither === undefined || kept.bodyHolds('request', inEither) || kept.bodyHolds('response', inEither))
    );
  };
}
