import { EVENT_STREAM_HEADERS } from '../shared/event-stream.ts';
import type { HttpBindings } from '@hono/node-server';
import type { Context } from 'hono';
import { z } from 'zod';
import { httpError, notFoundError } from '../openapi/errors.ts';
import { OpenApiHono } from '../openapi/routes.ts';
import { HttpError, notFound, toValidationDetails, ValidationFailed } from '../shared/errors.ts';
import { queryInteger } from '../shared/validation.ts';
import { faultRuleParams, faultRuleRequest, type FaultRules } from './fault-rules.ts';
import { DEFAULT_NEAR_MISSES, MAX_NEAR_MISSES, nearMisses, nearMissesQuery } from './near-misses.ts';
import { journalFind, journalQuery, journalStreamQuery, MAX_JOURNAL_LIMIT, type JournalFilter } from './filter.ts';
import type { RequestJournal } from './journal.ts';
import { objstoreJournal, objstoreJournalSchema } from './objstore-journal.ts';
import {
  faultRuleResponseSchema,
  journalEntrySchema,
  faultRulesResponseSchema,
  type JournalBounds,
  nearMissesResponseSchema,
  requestCountResponseSchema,
  requestsResponseSchema,
  requestStatsResponseSchema,
} from './schemas.ts';
import { requestStats, requestStatsQuery } from './stats.ts';
import {
  ENTRIES_PER_CHUNK,
  JOURNAL_STREAM_HEARTBEAT_MS,
  JOURNAL_STREAM_INTERVAL_MS,
  MAX_JOURNAL_STREAMS,
  type JournalStreams,
} from './stream.ts';

export interface JournalRouteDeps {
  journal: RequestJournal;
  streams: JournalStreams;
  faultRules: FaultRules;
}

const TOO_MANY_STREAMS = `At most ${MAX_JOURNAL_STREAMS} journal streams are open at once: close one and try again`;

const STREAM_DESCRIPTION =
  `Server-sent events: each journal entry matching the filter as it is recorded, as ` +
  `\`id: <sequence id>\`, \`event: request\`, \`data: <the entry as GET /requests gives ` +
  `it>\`. \`since\` (or the Last-Event-ID header a reconnecting client sends, which ` +
  `wins) sends the entries after it first; without either the stream starts with the ` +
  `next entry. After a reset (ids from 1 again) an \`event: reset\` with \`id: 0\`. A ` +
  `comment line every ${JOURNAL_STREAM_HEARTBEAT_MS / 1000} s while idle. At ` +
  `most ${MAX_JOURNAL_STREAMS} streams at once. With \`summary=true\` (what a live list reads), an \`event: ` +
  `requests\` instead, its data a JSON list of up to ${ENTRIES_PER_CHUNK} entries' summaries (id, time, wall_time, ` +
  `source, method, path, status, workspace_id, fault_rule_id, duration_ms), oldest first, its id the last one's. ` +
  `Entries go out at once after a quiet spell, then at most every ${JOURNAL_STREAM_INTERVAL_MS} ms: a burst of ` +
  `requests comes in a few chunks. \`newest=<n>\` (1–${MAX_JOURNAL_LIMIT}) sends only the newest n of the entries ` +
  `recorded since the last event (a live list showing n rows needs no more): a burst costs a stream n entries a ` +
  `write, not every entry.`;

const requestParams = z.object({ request_id: queryInteger({ min: 1 }) });

const lastEventIdHeader = z.object({ 'last-event-id': queryInteger({ min: 0 }) });

/** The sequence id a reconnecting EventSource sends; undefined when none (or empty: no event seen). */
function lastEventId(c: Context): number | undefined {
  const value = c.req.header('last-event-id');
  if (value === undefined || value === '') return undefined;
  const input = { 'last-event-id': value };
  const parsed = lastEventIdHeader.safeParse(input);
  if (!parsed.success) throw new ValidationFailed(toValidationDetails(parsed.error, 'header', input));
  return parsed.data['last-event-id'];
}

const journalBounds = (journal: RequestJournal): JournalBounds => ({
  capacity: journal.capacity,
  first_kept_id: journal.firstKeptId,
  dropped: journal.firstKeptId - 1,
});

function journalPage(journal: RequestJournal, filter: JournalFilter) {
  const { entries, total } = journal.page(filter);
  return { requests: entries, total, journal: journalBounds(journal) };
}

/** Why the journal has no entry of that id: dropped (an id below the oldest kept) or never recorded. */
function missingRequestDetail(journal: RequestJournal, id: number): string {
  const { capacity, firstKeptId } = journal;
  if (id >= firstKeptId) return `Request ${id} not found in the journal`;
  return (
    `Request ${id} not found in the journal: it was dropped, with every request before ${firstKeptId} ` +
    `(the journal keeps the latest ${capacity}, and DELETE /_localplane/requests empties it)`
  );
}

const requestsResponse = {
  status: 200,
  description: 'The matching requests, oldest first (newest first with order=desc)',
  schema: requestsResponseSchema,
};
const emptied = { status: 204, description: 'Emptied' };

/** /_localplane/requests (the request journal, /objstore/journal a view of it) and /_localplane/fault-rules. */
export function journalRoutes({ journal, streams, faultRules }: JournalRouteDeps) {
  const app = new OpenApiHono('admin');

  app.openapi(
    {
      method: 'get',
      path: '/requests',
      summary: 'The request journal of the API and the objstore, filtered',
      query: journalQuery,
      response: requestsResponse,
    },
    (c, { query }) => c.json(journalPage(journal, query)),
  );
  app.openapi(
    {
      method: 'get',
      path: '/requests/count',
      summary: 'How many journaled requests match the filter',
      query: journalQuery,
      response: { status: 200, description: 'The count', schema: requestCountResponseSchema },
    },
    (c, { query }) => c.json({ count: journal.count(query), journal: journalBounds(journal) }),
  );
  app.openapi(
    {
      method: 'get',
      path: '/requests/stream',
      summary: 'The request journal as it is recorded, filtered: server-sent events',
      description: STREAM_DESCRIPTION,
      query: journalStreamQuery,
      response: { status: 200, description: 'The event stream', contentType: 'text/event-stream' },
      errors: [httpError(503, 'Too many streams are open', { too_many_streams: TOO_MANY_STREAMS })],
    },
    (c, { query }) => {
      const resumeAfter = lastEventId(c);
      // HEAD is answered by this route too, and the body dropped unread (never cancelled): no stream for it.
      if (c.req.method === 'HEAD') return new Response(null, { headers: EVENT_STREAM_HEADERS });
      const connection = (c.env as Partial<HttpBindings> | undefined)?.incoming?.socket;
      const { summary, newest, ...filter } = query;
      const body = streams.open(
        resumeAfter === undefined ? filter : { ...filter, since: { id: resumeAfter } },
        connection,
        summary ? 'summaries' : 'entries',
        newest,
      );
      if (body === null) throw new HttpError(503, TOO_MANY_STREAMS);
      return new Response(body, { headers: EVENT_STREAM_HEADERS });
    },
  );
  app.openapi(
    {
      method: 'get',
      path: '/requests/stats',
      summary: 'Requests per minute of the wall clock by status class and by source, and the latest errors',
      query: requestStatsQuery,
      response: {
        status: 200,
        description: 'The minutes, oldest first, and the errors, newest first',
        schema: requestStatsResponseSchema,
      },
    },
    (c, { query }) => c.json(requestStats(journal, Date.now(), query)),
  );
  app.openapi(
    {
      method: 'get',
      path: '/requests/:request_id',
      summary: 'One journal entry by its sequence id',
      params: requestParams,
      response: { status: 200, description: 'The entry', schema: journalEntrySchema },
      errors: [notFoundError('Request', 'Request 7 not found in the journal')],
    },
    (c, { params }) => {
      const entry = journal.get(params.request_id);
      if (entry === undefined) throw notFound(missingRequestDetail(journal, params.request_id));
      return c.json(entry);
    },
  );
  app.openapi(
    {
      method: 'post',
      path: '/requests/find',
      summary: "The journaled requests matching a filter sent as JSON (WireMock's find)",
      body: journalFind,
      response: requestsResponse,
    },
    (c, { body }) => c.json(journalPage(journal, body)),
  );
  app.openapi({ method: 'delete', path: '/requests', summary: 'Empty the request journal', response: emptied }, (c) => {
    journal.clear();
    return c.body(null, 204);
  });
  app.openapi(
    {
      method: 'get',
      path: '/objstore/journal',
      summary: "The objstore's requests, oldest first: an alias of GET /requests?source=objstore in the older shape",
      response: { status: 200, description: 'The journal', schema: objstoreJournalSchema },
    },
    (c) => c.json(objstoreJournal(journal)),
  );

  app.openapi(
    {
      method: 'get',
      path: '/fault-rules',
      summary: 'The fault rules, with how often each fired',
      response: { status: 200, description: 'The rules', schema: faultRulesResponseSchema },
    },
    (c) => c.json({ rules: faultRules.list() }),
  );
  app.openapi(
    {
      method: 'get',
      path: '/fault-rules/near-misses',
      summary:
        'Journalled requests no fault rule acted on, each beside the rule closest to matching it and the fields it ' +
        'missed',
      description:
        `WireMock's near misses: for a rule that never fires, which of its match fields the requests ` +
        `missed (a path glob against the path as sent and as decoded). Oldest first, after \`since\` ` +
        `(a sequence id), at most \`limit\` (default ${DEFAULT_NEAR_MISSES}, at ` +
        `most ${MAX_NEAR_MISSES}); none while there are no rules.`,
      query: nearMissesQuery,
      response: { status: 200, description: 'The near misses', schema: nearMissesResponseSchema },
    },
    (c, { query }) => c.json(nearMisses(journal, faultRules, query)),
  );
  app.openapi(
    {
      method: 'post',
      path: '/fault-rules',
      summary: 'Add a fault rule: requests it matches fail, slow down, lose their connection or get an empty reply',
      body: faultRuleRequest,
      response: { status: 201, description: 'The rule', schema: faultRuleResponseSchema },
    },
    (c, { body }) => c.json(faultRules.add(body), 201),
  );
  app.openapi(
    { method: 'delete', path: '/fault-rules', summary: 'Remove every fault rule', response: emptied },
    (c) => {
      faultRules.clear();
      return c.body(null, 204);
    },
  );
  app.openapi(
    {
      method: 'delete',
      path: '/fault-rules/:rule_id',
      summary: 'Remove one fault rule',
      params: faultRuleParams,
      response: { status: 204, description: 'Removed' },
      errors: [notFoundError('Fault rule', 'Fault rule fault-rule-7 not found')],
    },
    (c, { params }) => {
      if (!faultRules.remove(params.rule_id)) throw notFound(`Fault rule ${params.rule_id} not found`);
      return c.body(null, 204);
    },
  );

  return app;
}
