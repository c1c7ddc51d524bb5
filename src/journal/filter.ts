import { z } from 'zod';
import { requestTimestamp } from '../shared/validation.ts';
import { customIssue } from '../shared/errors.ts';
import { queryInteger } from '../shared/validation.ts';
import type { JournalEntry } from './schemas.ts';
import { headerMatchText, requestMatcher, requestMatchFields, type MatchableRequest } from './matching.ts';

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

/** The filter as query parameters of GET /_localplane/requests (and /count). */
export const journalQuery = z.strictObject({
  since: sinceText.optional(),
  limit: queryInteger({ min: 1, max: MAX_JOURNAL_LIMIT }).optional(),
  ...requestMatchFields,
  header: headerMatchText.optional(),
  status: statusPattern.optional(),
  body_contains: z.string().min(1).optional(),
});

/** The filter as the JSON body of POST /_localplane/requests/find (and `lp.requests.*`). */
export const journalFind = z.strictObject({
  since: z.union([z.int().min(0).transform((id): Since => ({ id })), sinceText]).optional(),
  limit: z.int().min(1).max(MAX_JOURNAL_LIMIT).optional(),
  ...requestMatchFields,
  status: z.union([z.int().min(100).max(599).transform(String), statusPattern]).optional(),
  body_contains: z.string().min(1).optional(),
});

export type JournalFilter = z.output<typeof journalFind>;
/** What callers of the programmatic API write. */
export type JournalFilterInput = z.input<typeof journalFind>;

/** The entry's request as the shared matchers see it (its headers as journalled, secrets masked). */
export const matchableEntry = (entry: JournalEntry): MatchableRequest => ({
  source: entry.source,
  method: entry.method,
  path: entry.path,
  workspaceId: () => entry.workspace_id,
  header: (name) => entry.request.headers[name.toLowerCase()],
});

/** A compiled test of an entry (arrived at `micros` on the emulator clock) against a filter; `limit` is applied by the journal. */
export function entryMatcher(filter: JournalFilter): (entry: JournalEntry, micros: number) => boolean {
  const matchesRequest = requestMatcher(filter);
  const { since, status, body_contains: needle } = filter;
  const statusClass = status?.toLowerCase().endsWith('xx') ? Number(status[0]) : null;
  return (entry, micros) =>
    (since === undefined || ('id' in since ? entry.id > since.id : micros >= since.time)) &&
    (status === undefined || (statusClass === null ? entry.status === Number(status) : Math.floor(entry.status / 100) === statusClass)) &&
    (needle === undefined || (entry.request.body.text?.includes(needle) ?? false)) &&
    matchesRequest(matchableEntry(entry));
}
