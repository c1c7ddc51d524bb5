import { PutObjectCommand } from '@aws-sdk/client-s3';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createLocalplane } from '../../src/index.ts';
import {
  journalEntrySummarySchema,
  requestStatsResponseSchema,
  type JournalEntry,
  type JournalEntrySummary,
} from '../../src/journal/schemas.ts';
import {
  ENTRIES_PER_CHUNK,
  JOURNAL_STREAM_HEARTBEAT_MS,
  JOURNAL_STREAM_INTERVAL_MS,
  MAX_JOURNAL_STREAMS,
} from '../../src/journal/stream.ts';
import { EventStreamReader, openEventStream, type ServerSentEvent } from '../support/event-stream.ts';
import { s3For } from '../support/objstore.ts';
import { eventually, fullKey, useLocalplane, workspaceByTier } from '../support/instance.ts';

const NOW = '2026-10-04T12:00:00Z';
const MISSING_DESTINATION = '/api/v1/bulk-exports/destinations/00000000-0000-4000-8000-000000000000';

const entriesOf = (events: readonly ServerSentEvent[]) =>
  events.map((event) => JSON.parse(event.data!) as JournalEntry);

describe('the request journal stream (GET /_localplane/requests/stream)', () => {
  const ctx = useLocalplane({ freezeClock: true });
  const acme = () => ctx.api.as(workspaceByTier(ctx.fixtures, 'plus'));
  const streamUrl = (query = '') => `${ctx.instance.apiUrl}/_localplane/requests/stream${query}`;
  const journal = async (query = '') =>
    (await ctx.admin.request<{ requests: JournalEntry[] }>('GET', `/requests${query}`)).body.requests;
  const open: EventStreamReader[] = [];
  async function stream(query = '', headers: Record<string, string> = {}): Promise<EventStreamReader> {
    const { response, reader } = await openEventStream(streamUrl(query), headers);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    open.push(reader!);
    return reader!;
  }

  beforeEach(async () => {
    await ctx.admin.request('POST', '/reset');
    await ctx.admin.request('POST', '/clock/set', { body: { time: NOW } });
  });
  afterEach(async () => {
    vi.useRealTimers();
    await Promise.all(open.splice(0).map((reader) => reader.cancel()));
  });

  it('sends each entry matching the filter as it is recorded, as GET /requests gives it, from the next one on', async () => {
    await ctx.api.request('GET', '/v2/deployments');
    const reader = await stream('?source=api&status=4xx');
    await acme().get('/api/v1/bulk-exports');
    await ctx.api.request('GET', '/v2/deployments');
    await acme().get(MISSING_DESTINATION);
    const events = await reader.events(2);
    const listed = await journal('?source=api&status=4xx&since=1');
    expect(listed.map((entry) => entry.status)).toEqual([401, 404]);
    expect(events.map((event) => event.id)).toEqual(listed.map((entry) => String(entry.id)));
    expect(entriesOf(events)).toEqual(listed);
  });

  it(
    'sends what came after `since` first, and after Last-Event-ID (which wins): a client that reconnects loses ' +
      'nothing',
    async () => {
      for (let page = 1; page <= 3; page++) await acme().get(`/api/v1/bulk-exports?page=${page}`);
      const first = await stream('?since=1');
      expect((await first.events(2)).map((event) => event.id)).toEqual(['2', '3']);
      await acme().get('/api/v1/bulk-exports?page=4');
      expect((await first.events(1)).map((event) => event.id)).toEqual(['4']);
      await first.cancel();

      await acme().get('/api/v1/bulk-exports?page=5');
      await acme().get('/api/v1/bulk-exports?page=6');
      const again = await stream('?since=1', { 'Last-Event-ID': '4' });
      await acme().get('/api/v1/bulk-exports?page=7');
      expect(entriesOf(await again.events(3)).map((entry) => [entry.id, entry.query.page])).toEqual([
        [5, '5'],
        [6, '6'],
        [7, '7'],
      ]);
    },
  );

  it('replays from a `since` emulator time and filters every later entry by it', async () => {
    await acme().get('/api/v1/bulk-exports?at=noon');
    await ctx.admin.request('POST', '/clock/advance', { body: { seconds: 60 } });
    await acme().get('/api/v1/bulk-exports?at=later');
    const reader = await stream(`?since=${encodeURIComponent('2026-10-04T12:01:00Z')}`);
    await acme().get('/api/v1/bulk-exports?at=live');
    expect(entriesOf(await reader.events(2)).map((entry) => entry.query.at)).toEqual(['later', 'live']);
  });

  it(
    'after a reset says so (an event reset with id 0) and goes on from id 1; a Last-Event-ID from before the ' +
      'reset gets everything',
    async () => {
      await acme().get('/api/v1/bulk-exports?page=1');
      await acme().get('/api/v1/bulk-exports?page=2');
      const reader = await stream();
      await acme().get('/api/v1/bulk-exports?page=3');
      expect((await reader.events(1)).map((event) => event.id)).toEqual(['3']);
      await ctx.admin.request('POST', '/reset');
      expect(await reader.events(1, 'reset')).toEqual([{ id: '0', event: 'reset', data: '{}' }]);
      await acme().get('/api/v1/bulk-exports?page=after');
      expect(entriesOf(await reader.events(1)).map((entry) => [entry.id, entry.query.page])).toEqual([[1, 'after']]);

      const reconnected = await stream('', { 'Last-Event-ID': '3' });
      expect(entriesOf(await reconnected.events(1)).map((entry) => [entry.id, entry.query.page])).toEqual([
        [1, 'after'],
      ]);
    },
  );

  it('sends a comment while idle, and its timer goes when the last client goes away', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const reader = await stream();
    expect(await reader.next()).toEqual({ comment: 'localplane request journal' });
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(JOURNAL_STREAM_HEARTBEAT_MS);
    expect(await reader.next()).toEqual({ comment: 'heartbeat' });
    await reader.cancel();
    await eventually(async () => vi.getTimerCount() === 0, 'the heartbeat timer to be cleared');
  });

  it('opens no stream for a HEAD request (whose body nobody reads)', async () => {
    for (let i = 0; i <= MAX_JOURNAL_STREAMS; i++)
      expect((await fetch(streamUrl(), { method: 'HEAD' })).status).toBe(200);
    const reader = await stream();
    await acme().get('/api/v1/bulk-exports');
    expect((await reader.events(1)).map((event) => event.id)).toEqual(['1']);
  });

  it(`keeps at most ${MAX_JOURNAL_STREAMS} streams open: the next is refused with a 503 until one goes away`, async () => {
    const readers = await Promise.all(Array.from({ length: MAX_JOURNAL_STREAMS }, () => stream()));
    const refused = await fetch(streamUrl());
    expect(refused.status).toBe(503);
    expect(await refused.json()).toEqual({
      detail: `At most ${MAX_JOURNAL_STREAMS} journal streams are open at once: close one and try again`,
    });

    const head = await fetch(streamUrl(), { method: 'HEAD' });
    expect([head.status, head.headers.get('content-type')]).toEqual([200, 'text/event-stream; charset=utf-8']);

    await readers[0]!.cancel();
    const reopened = await eventually(async () => {
      const { response, reader } = await openEventStream(streamUrl());
      if (reader === null) await response.body?.cancel();
      return reader ?? undefined;
    }, 'a stream to be let go');
    open.push(reopened);
    await acme().get('/api/v1/bulk-exports');
    expect((await reopened.events(1)).map((event) => event.id)).toEqual(['1']);
  });

  it.each([
    [{ 'Last-Event-ID': 'seven' }, '', ['header', 'last-event-id']],
    [{}, '?limit=5', ['query', 'limit']],
    [{}, '?order=desc', ['query', 'order']],
    [{}, '?status=4x', ['query', 'status']],
  ])('answers a bad Last-Event-ID or filter (%j %s) with a 422', async (headers, query, loc) => {
    const response = await fetch(streamUrl(query), { headers });
    expect(response.status).toBe(422);
    expect((await response.json()).detail[0].loc).toEqual(loc);
  });
});

describe('a journal stream in process (app.request)', () => {
  it('ends when the instance stops, leaving no timer behind', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const lp = await createLocalplane();
    try {
      const reader = new EventStreamReader((await lp.request('/_localplane/requests/stream')).body!);
      await lp.request('/v2/deployments');
      expect(entriesOf(await reader.events(1)).map((entry) => entry.status)).toEqual([401]);
      expect(vi.getTimerCount()).toBe(1);
      await lp.stop();
      expect(await reader.next()).toBeNull();
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
      await lp.stop();
    }
  });
});

describe('a journal stream of summaries (GET /_localplane/requests/stream?summary=true)', () => {
  it('sends a burst of requests in far fewer events than requests, each entry once and in order, as its summary', async () => {
    const burst = 600;
    const lp = await createLocalplane({ log: () => {} });
    try {
      const reader = new EventStreamReader((await lp.request('/_localplane/requests/stream?summary=true')).body!);
      const began = performance.now();
      await Promise.all(Array.from({ length: burst }, (_, n) => lp.request(`/v2/deployments?n=${n}`)));
      const summaries: JournalEntrySummary[] = [];
      let events = 0;
      while (summaries.length < burst) {
        const [event] = await reader.events(1, 'requests');
        const chunk = JSON.parse(event!.data!) as JournalEntrySummary[];
        expect(event!.id).toBe(String(chunk.at(-1)!.id));
        summaries.push(...chunk);
        events++;
      }
      const elapsed = performance.now() - began;
      expect(summaries.map((summary) => summary.id)).toEqual(Array.from({ length: burst }, (_, n) => n + 1));
      // The journal is read at once, then at most once an interval, and again as the client reads what it was sent
      // while it read: a chunk or two each time, but for full ones.
      const readings = 1 + Math.ceil(elapsed / JOURNAL_STREAM_INTERVAL_MS);
      expect(events).toBeLessThanOrEqual(2 * readings + Math.ceil(burst / ENTRIES_PER_CHUNK));
      expect(events).toBeLessThan(burst / 4);
      const entries = lp.requests.list();
      expect(summaries).toEqual(entries.map((entry) => journalEntrySummarySchema.parse(entry)));
      await reader.cancel();
    } finally {
      await lp.stop();
    }
  });
});

describe('a journal stream of the newest entries (GET /_localplane/requests/stream?newest=)', () => {
  it('sends only the newest n matching entries recorded since its last write, then each new one', async () => {
    const lp = await createLocalplane({ log: () => {} });
    try {
      for (let n = 0; n < 50; n++) await lp.request('/v2/deployments');
      await lp.request('/v2/projects');
      const reader = new EventStreamReader(
        (await lp.request('/_localplane/requests/stream?summary=true&since=0&newest=3&path=/v2/deployments')).body!,
      );
      const [replay] = await reader.events(1, 'requests');
      const replayed = JSON.parse(replay!.data!) as JournalEntrySummary[];
      // Entries 1 to 50 are the deployments, 51 the projects the filter leaves out.
      expect(replayed.map((summary) => summary.id)).toEqual([48, 49, 50]);
      expect(replay!.id).toBe('50');
      await lp.request('/v2/projects');
      await lp.request('/v2/deployments');
      const [next] = await reader.events(1, 'requests');
      expect((JSON.parse(next!.data!) as JournalEntrySummary[]).map((summary) => summary.id)).toEqual([53]);
      await reader.cancel();
    } finally {
      await lp.stop();
    }
  });

  it('refuses a count outside 1 to 10,000 with a 422 detail array', async () => {
    const lp = await createLocalplane({ log: () => {} });
    try {
      for (const newest of ['0', '10001', 'x']) {
        const response = await lp.request(`/_localplane/requests/stream?newest=${newest}`);
        expect(response.status).toBe(422);
        const { detail } = (await response.json()) as { detail: { loc: string[] }[] };
        expect(detail[0]!.loc).toEqual(['query', 'newest']);
      }
    } finally {
      await lp.stop();
    }
  });
});

describe('request stats (GET /_localplane/requests/stats)', () => {
  const ctx = useLocalplane({ freezeClock: true });
  const acme = () => ctx.api.as(workspaceByTier(ctx.fixtures, 'plus'));
  const stats = async (query = '') => {
    const response = await ctx.admin.request('GET', `/requests/stats${query}`);
    expect(response.status, response.text).toBe(200);
    return requestStatsResponseSchema.parse(response.body);
  };
  const counts = (api: number, objstore: number, classes: Partial<Record<'2xx' | '3xx' | '4xx' | '5xx', number>>) => ({
    total: api + objstore,
    by_status_class: { '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0, ...classes },
    by_source: { api, objstore },
  });

  beforeEach(async () => {
    await ctx.admin.request('POST', '/reset');
    await ctx.admin.request('POST', '/clock/set', { body: { time: '2026-10-04T12:00:30Z' } });
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  it(
    'counts requests per minute of the wall clock by status class and by source, however far the emulator clock ' +
      'moved, and gives the latest errors newest first',
    async () => {
      vi.useFakeTimers({ toFake: ['Date'], now: new Date('2026-11-29T10:00:30Z') });
      await acme().get('/api/v1/bulk-exports');
      await ctx.api.request('GET', '/v2/deployments');
      await ctx.admin.request('POST', '/clock/advance', { body: { seconds: 2 * 3600 } });
      vi.setSystemTime(new Date('2026-11-29T10:01:30Z'));
      const client = s3For(ctx.instance.objstoreUrl, fullKey(ctx.fixtures));
      await client.send(
        new PutObjectCommand({ Bucket: ctx.fixtures.objstore.buckets[0]!, Key: 'stats/a.txt', Body: 'a' }),
      );
      client.destroy();
      await acme().get(MISSING_DESTINATION);

      const { now, minutes, latest_errors } = await stats('?minutes=3');
      expect(now).toBe('2026-11-29T10:01:30.000000+00:00');
      expect(minutes).toEqual([
        { start: '2026-11-29T09:59:00.000000+00:00', ...counts(0, 0, {}) },
        { start: '2026-11-29T10:00:00.000000+00:00', ...counts(2, 0, { '2xx': 1, '4xx': 1 }) },
        { start: '2026-11-29T10:01:00.000000+00:00', ...counts(1, 1, { '2xx': 1, '4xx': 1 }) },
      ]);
      expect(latest_errors.map((entry) => [entry.status, entry.path])).toEqual([
        [404, MISSING_DESTINATION],
        [401, '/v2/deployments'],
      ]);
      expect(latest_errors[0]).toEqual((await ctx.admin.request('GET', `/requests/${latest_errors[0]!.id}`)).body);

      expect((await stats()).minutes).toHaveLength(15);
      expect((await stats('?minutes=1&errors=1')).latest_errors.map((entry) => entry.status)).toEqual([404]);
      await ctx.admin.request('POST', '/clock/advance', { body: { seconds: 3600 } });
      expect((await stats('?minutes=2')).minutes.map((minute) => minute.total)).toEqual([2, 2]);
      vi.setSystemTime(new Date('2026-11-29T11:01:30Z'));
      expect((await stats('?minutes=60')).minutes.every((minute) => minute.total === 0)).toBe(true);
    },
  );

  it.each([
    ['?minutes=0', 'minutes'],
    ['?minutes=1441', 'minutes'],
    ['?errors=101', 'errors'],
    ['?source=api', 'source'],
  ])('answers %s with a 422 at %s', async (query, field) => {
    const response = await ctx.admin.request('GET', `/requests/stats${query}`);
    expect(response.status, response.text).toBe(422);
    expect(response.body.detail[0].loc).toEqual(['query', field]);
  });
});
