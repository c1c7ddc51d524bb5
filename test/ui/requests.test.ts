/**
 * The Requests view as app.request() sees it: the newest matching journal entries from the
 * documented API, the filters as the page's URL, the live stream of rows (from the API's journal
 * stream) and pausing it, and one request's detail pane with "copy as curl", secrets masked.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createLocalplane, type InProcessLocalplane } from '../../src/index.ts';
import { journalEntrySummarySchema, type JournalEntry, type JournalEntrySummary } from '../../src/journal/schemas.ts';
import { curlCommand } from '../../src/ui/views/requests.tsx';
import { EventStreamReader } from '../support/event-stream.ts';
import { eventually } from '../support/instance.ts';
import { CreateBucketCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { fixturesOf, inProcessApi } from '../support/in-process.ts';
import { fullKey, type FixtureWorkspace } from '../support/instance.ts';
import { s3For } from '../support/objstore.ts';
import { timestampHtml } from './support/time.ts';

const DESTINATION_SECRET = 'ui-requests-destination-secret';
const MISSING_DESTINATION = '/api/v1/bulk-exports/destinations/00000000-0000-4000-8000-000000000000';
const HTMX = { 'hx-request': 'true' };

let lp: InProcessLocalplane;
let acme: FixtureWorkspace;
let globex: FixtureWorkspace;

beforeAll(async () => {
  lp = await createLocalplane({ log: () => {} });
  const { workspaces } = await fixturesOf(lp);
  acme = workspaces.find((workspace) => workspace.tier === 'plus')!;
  globex = workspaces.find((workspace) => workspace.tier === 'enterprise')!;
});

afterAll(async () => {
  await lp?.stop();
});

beforeEach(async () => {
  await lp.reset();
});

const page = async (path: string, headers: Record<string, string> = {}, status = 200) => {
  const response = await lp.request(path, { headers });
  expect(response.status, path).toBe(status);
  return response.text();
};

/** The table's body: its rows, not the live rows' templates beside it. */
const tableBody = (html: string) => html.match(/<tbody id="request-rows".*?<\/tbody>/s)?.[0] ?? '';
/** The paths of the table's rows, top (newest) first. */
const rowPaths = (html: string) =>
  [...tableBody(html).matchAll(/<tr id="request-\d+" data-id="\d+">.*?<a href="[^"]*"[^>]*>([^<]*)<\/a>/gs)].map(
    (match) => match[1],
  );
const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const rowIds = (html: string) =>
  [...tableBody(html).matchAll(/<tr id="request-(\d+)"/g)].map((match) => Number(match[1]));

/** A few API requests of two workspaces: a list, a 404, a 401, a refused body with a secret. */
async function traffic() {
  const as = (workspace: FixtureWorkspace) => inProcessApi(lp, workspace);
  await as(acme).get('/api/v1/bulk-exports');
  await as(acme).get(MISSING_DESTINATION);
  await inProcessApi(lp).get('/v2/deployments');
  await as(globex).get('/v2/deployments?limit=1');
  await as(acme).post('/api/v1/bulk-exports/destinations', {
    display_name: 'has a secret',
    credentials: { access_key_id: 'AKIA', secret_access_key: DESTINATION_SECRET },
  });
}

const journal = async (query = '') =>
  ((await inProcessApi(lp).get(`/_localplane/requests${query}`)).body as { requests: JournalEntry[] }).requests;

describe('the Requests view at /ui/requests', () => {
  it('shows the newest requests first, live from the newest shown on, with a labelled filter form', async () => {
    await traffic();
    const html = await page('/ui/requests');
    expect(html).toContain('<a href="/ui/requests" aria-current="page">Requests</a>');
    expect(rowPaths(html)).toEqual([
      '/api/v1/bulk-exports/destinations',
      '/v2/deployments',
      '/v2/deployments',
      MISSING_DESTINATION,
      '/api/v1/bulk-exports',
    ]);
    const newest = Math.max(...rowIds(html));
    expect(html).toContain(`sse-connect="/ui/requests/stream?since=${newest}"`);
    expect(html).toContain(
      '<tbody id="request-rows" data-max-rows="100" sse-swap="requests,reset" hx-swap="afterbegin" data-row-query="" ' +
        'data-workspace-names="{',
    );
    expect(html).toContain(`&quot;${acme.id}&quot;:&quot;${acme.name}&quot;`);
    for (const label of [
      'Source',
      'Method',
      'Path glob',
      'Status or class',
      'Request header',
      'Response header',
      'Workspace',
      'Fault rule fired',
      'Text in bodies',
      'Show newest',
    ])
      expect(html).toContain(`<label>${label}<`);
    expect(html).toContain('<section id="request-detail" aria-label="Request details">');
    expect(html).not.toContain(DESTINATION_SECRET);

    const fragment = await page('/ui/requests', HTMX);
    expect(fragment.startsWith('<section id="requests-live"')).toBe(true);
    expect(rowIds(fragment)).toEqual(rowIds(html));
  });

  it(
    'filters by source, method, path, status or class, workspace, fault rule and text in either body; the URL is ' +
      'the filtered view',
    async () => {
      await traffic();
      const rule = (
        await inProcessApi(lp).post('/_localplane/fault-rules', {
          match: { path: '/api/v1/bulk-exports' },
          action: { status: 503, detail: 'injected-for-the-view' },
          count: 1,
        })
      ).body;
      await inProcessApi(lp, acme).get('/api/v1/bulk-exports');
      const filtered = async (query: string) => rowPaths(await page(`/ui/requests?${query}`));

      expect(await filtered('status=4xx')).toEqual([
        '/api/v1/bulk-exports/destinations',
        '/v2/deployments',
        MISSING_DESTINATION,
      ]);
      expect(await filtered('status=404')).toEqual([MISSING_DESTINATION]);
      expect(await filtered(`workspace_id=${globex.id}`)).toEqual(['/v2/deployments']);
      expect(await filtered('method=POST')).toEqual(['/api/v1/bulk-exports/destinations']);
      expect(await filtered('path=/v2/**')).toEqual(['/v2/deployments', '/v2/deployments']);
      expect(await filtered('source=objstore')).toEqual([]);
      expect(await filtered(`fault_rule=${rule.id}`)).toEqual(['/api/v1/bulk-exports']);
      expect(await filtered('fault_rule=any')).toEqual(['/api/v1/bulk-exports']);
      expect(await filtered('text=injected-for-the-view')).toEqual(['/api/v1/bulk-exports']);
      expect(await filtered('text=has%20a')).toEqual([]);
      expect(await filtered('text=00000000-0000-4000-8000-000000000000')).toEqual([MISSING_DESTINATION]);
      expect(await filtered('limit=2')).toEqual(['/api/v1/bulk-exports', '/api/v1/bulk-exports/destinations']);

      const html = await page(`/ui/requests?status=4xx&workspace_id=${acme.id}&fault_rule=any&limit=20`);
      expect(html).toContain(`<option value="${acme.id}" selected="">${acme.name}</option>`);
      expect(html).toContain('<option value="any" selected="">any rule</option>');
      expect(html).toContain('<input name="status" value="4xx"');
      expect(html).toContain(
        `sse-connect="/ui/requests/stream?status=4xx&amp;workspace_id=${acme.id}` +
          '&amp;fault_rule=any&amp;limit=20&amp;since=0"',
      );
      // A row's link keeps the filters: the detail page shows the same list.
      expect(await page(`/ui/requests?status=404`)).toMatch(new RegExp(`href="/ui/requests/\\d+\\?status=404"`));
    },
  );

  it("shows the API's refusal of a filter at its field, with its status, and opens no stream", async () => {
    const html = await page('/ui/requests?status=4x', {}, 422);
    // A whole page: the field as typed, marked, described by the message, with the focus.
    expect(html).toMatch(
      /<input name="status" value="4x"[^>]*id="invalid-status" aria-invalid="true"[^>]*autofocus=""/,
    );
    expect(html).toMatch(/id="invalid-status-error">String should match pattern [^<]*<\/span>/);
    expect(html).not.toContain('<p class="error" role="alert">');
    expect(html).not.toContain('sse-connect');
    // htmx (a 200: htmx treats an error status as a failure): the rows, then the form out of band, marked.
    const fragment = await page('/ui/requests?path=no-slash', HTMX);
    expect(fragment.startsWith('<section id="requests-live"')).toBe(true);
    expect(fragment).toMatch(/<form id="request-filters"[^>]*hx-swap-oob="true"/);
    expect(fragment).toContain('id="invalid-path-error">A path glob starts with / (or a wildcard)</span>');
  });

  it('filters by a request header and a response header, each refused at its field', async () => {
    await traffic();
    await inProcessApi(lp).post('/_localplane/fault-rules', {
      match: { path: '/api/v1/bulk-exports' },
      action: { status: 429, headers: { 'Retry-After': '7' } },
      count: 1,
    });
    await inProcessApi(lp, acme).get('/api/v1/bulk-exports');
    const html = await page('/ui/requests?response_header=Retry-After:7');
    expect(rowPaths(html)).toEqual(['/api/v1/bulk-exports']);
    expect(html).toContain('<label>Response header<input name="response_header" value="Retry-After:7"');
    expect(rowPaths(await page('/ui/requests?response_header=Retry-After:8'))).toEqual([]);
    // The request header's filter beside it, passed on as the API takes it.
    const keyed = (await journal(`?order=desc&header=x-api-key`)).map((entry) => entry.path);
    expect(keyed.length).toBeGreaterThan(0);
    expect(rowPaths(await page('/ui/requests?header=x-api-key'))).toEqual(keyed);

    for (const name of ['header', 'response_header']) {
      const refused = await page(`/ui/requests?${name}=:7`, {}, 422);
      expect(refused).toMatch(
        new RegExp(`<input name="${name}" value=":7"[^>]*id="invalid-${name}" aria-invalid="true"[^>]*autofocus=""`),
      );
      expect(refused).toMatch(new RegExp(`aria-describedby="invalid-${name}-error"`));
      expect(refused).toContain(`id="invalid-${name}-error">A header match is Name:value`);
      // To htmx a 200: the rows, then the form out of band with the field marked.
      const fragment = await page(`/ui/requests?${name}=:7`, HTMX);
      expect(fragment).toMatch(/<form id="request-filters"[^>]*hx-swap-oob="true"/);
      expect(fragment).toMatch(new RegExp(`<input name="${name}" value=":7"[^>]*aria-invalid="true"`));
    }
  });

  it('pauses (the stream closed, the rows kept) and resumes from the newest', async () => {
    await traffic();
    const paused = await page('/ui/requests?status=4xx&paused=1', HTMX);
    expect(paused).not.toContain('sse-connect');
    expect(paused).not.toContain('sse-swap');
    expect(paused).toContain(
      '<button type="button" aria-pressed="true" hx-get="/ui/requests?status=4xx" hx-target="#requests-live" ' +
        'hx-swap="outerHTML">Resume</button>',
    );
    expect(paused).toContain('Paused: new requests are not shown until you resume.');
    expect(paused).not.toContain('<template');
    await inProcessApi(lp).get('/v2/deployments');
    const resumed = await page('/ui/requests?status=4xx', HTMX);
    const newest = Math.max(...rowIds(resumed));
    expect(newest).toBe((await journal('?order=desc&limit=1'))[0]!.id);
    expect(resumed).toContain(`sse-connect="/ui/requests/stream?status=4xx&amp;since=${newest}"`);
    expect(resumed).toContain(
      '<button type="button" aria-pressed="false" hx-get="/ui/requests?status=4xx&amp;paused=1" ' +
        'hx-target="#requests-live" hx-swap="outerHTML">Pause</button>',
    );
    // The rows ui.js makes from the stream are clones of the server's own row, filled in: its templates are beside the
    // live table, each row's cells named for their columns.
    for (const id of ['request-row', 'request-row-other'])
      expect(resumed).toMatch(
        new RegExp(
          `<template id="${id}"><tr id="request-0" data-id="0"><td class="mono col-time">.*?` +
            '<td class="num col-ms">0.0</td></tr></template>',
        ),
      );
    expect(resumed).toContain('<span class="status-4" title="no reply was sent">499</span>');
    expect(resumed).toContain('<span class="time-pair">emulator ');
  });
});

describe('the stream of rows at /ui/requests/stream', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  async function open(query: string, headers: Record<string, string> = {}) {
    const response = await lp.request(`/ui/requests/stream?${query}`, { headers });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    return new EventStreamReader(response.body!);
  }

  it(
    "sends the new matching requests' summaries for ui.js to make rows of, after the `since` id or the " +
      'Last-Event-ID',
    async () => {
      await traffic();
      const [newest] = await journal('?order=desc&limit=1');
      const rows = await open(`status=4xx&since=${newest!.id}`);
      await inProcessApi(lp, acme).get('/api/v1/bulk-exports');
      await inProcessApi(lp, acme).get(MISSING_DESTINATION);
      const [event] = await rows.events(1, 'requests');
      const [missing] = await journal('?order=desc&limit=1');
      expect(event!.id).toBe(String(missing!.id));
      expect(JSON.parse(event!.data!)).toEqual([journalEntrySummarySchema.parse(missing)]);
      await rows.cancel();

      // Reconnecting, the browser says the last id it had: what came after is sent, the `since` in the URL
      // notwithstanding.
      await inProcessApi(lp).get('/v2/deployments');
      const again = await open('status=4xx&since=0', { 'last-event-id': String(missing!.id) });
      const [after] = await again.events(1, 'requests');
      expect((JSON.parse(after!.data!) as JournalEntry[]).map((entry) => entry.path)).toEqual(['/v2/deployments']);
      await again.cancel();
    },
  );

  it('sends no more of what came since its last chunk than the table shows (its limit, 100 by default)', async () => {
    await lp.reset();
    for (let n = 0; n < 120; n++) await inProcessApi(lp).get('/v2/deployments');
    const idsOf = async (rows: EventStreamReader) => {
      const [chunk] = await rows.events(1, 'requests');
      await rows.cancel();
      return (JSON.parse(chunk!.data!) as JournalEntrySummary[]).map((summary) => summary.id);
    };
    expect(await idsOf(await open('since=0'))).toEqual(Array.from({ length: 100 }, (_, n) => n + 21));
    expect(await idsOf(await open('since=0&limit=5'))).toEqual([116, 117, 118, 119, 120]);
  });

  it('sends a row saying so after a reset', async () => {
    const rows = await open('since=0');
    await lp.reset();
    const [reset] = await rows.events(1, 'reset');
    expect(reset).toEqual({
      id: '0',
      event: 'reset',
      data:
        '<tr class="journal-reset"><td colspan="8">The journal was reset here: what is above came after ' +
        'it.</td></tr>',
    });
    await rows.cancel();
  });

  it("closes the API's stream when the browser goes away", async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const rows = await open('since=0');
    expect(vi.getTimerCount()).toBe(1);
    await rows.cancel();
    await eventually(async () => vi.getTimerCount() === 0, "the API's stream to be closed");
  });
});

describe('the detail pane at /ui/requests/<id>', () => {
  it(
    'shows the headers, query, bodies, timings and fault rule, secrets masked, beside the list; htmx gets the pane ' +
      'alone',
    async () => {
      await inProcessApi(lp).post('/_localplane/fault-rules', {
        match: { method: 'POST' },
        action: { status: 503, detail: 'pane-fault' },
        count: 1,
      });
      await lp.request('/api/v1/bulk-exports/destinations?dry=1&tag=a&tag=b', {
        method: 'POST',
        headers: { 'x-api-key': acme.api_key, 'content-type': 'application/json', 'x-trace': "it's" },
        body: JSON.stringify({ display_name: 'x', credentials: { secret_access_key: DESTINATION_SECRET } }),
      });
      const [entry] = await journal();
      const pane = await page(`/ui/requests/${entry!.id}`, HTMX);
      expect(
        pane.startsWith(
          '<article aria-labelledby="request-title"><h2 id="request-title" class="mono" tabindex="-1">POST ' +
            '/<wbr/>api/<wbr/>v1/<wbr/>bulk-exports/<wbr/>destinations</h2>',
        ),
      ).toBe(true);
      for (const fact of [
        `<dt>Time (emulator)</dt><dd>${timestampHtml(entry!.time, true)}</dd>`,
        `<dt>Took</dt><dd>${entry!.duration_ms} ms</dd>`,
        '<dt>Status</dt><dd><span class="status-5">503</span></dd>',
        `<dt>Workspace</dt><dd>${acme.name} ${acme.id}</dd>`,
        '<dt>Fault rule</dt><dd><a href="/ui/faults#fault-rule-1">fault-rule-1</a></dd>',
        '<dt>dry</dt><dd>1</dd><dt>tag</dt><dd>a</dd><dt>tag</dt><dd>b</dd>',
        '<dt>x-api-key</dt><dd>********</dd>',
        '<dt>x-trace</dt><dd>it&#39;s</dd>',
        // JSON bodies indented.
        '<pre tabindex="0" aria-label="Response body">{\n  &quot;detail&quot;: &quot;pane-fault&quot;\n}</pre>',
      ]) {
        expect(pane).toContain(fact);
      }
      expect(pane).not.toContain(DESTINATION_SECRET);
      expect(pane).not.toContain(acme.api_key);

      const whole = await page(`/ui/requests/${entry!.id}?status=5xx`);
      expect(whole).toContain('<h1>Requests</h1>');
      expect(whole).toContain('<input name="status" value="5xx"');
      expect(rowIds(whole)).toEqual([entry!.id]);
      expect(whole).toContain(
        `<section id="request-detail" aria-label="Request details"><article aria-labelledby="request-title">`,
      );
      // The row of the request the pane shows is marked; its fault rule links to the rule on the Faults view.
      expect(whole).toContain(`<tr id="request-${entry!.id}" data-id="${entry!.id}" aria-current="true">`);
      expect(whole).toMatch(
        new RegExp(
          `<tr id="request-${entry!.id}"[^>]*>.*<td class="mono col-fault-rule"><a href="/ui/faults#fault-rule-1">`,
        ),
      );
    },
  );

  it('copies the request as curl against the server it went to, with masked secrets still masked', async () => {
    await lp.request('/api/v1/bulk-exports/destinations?tag=a&tag=b', {
      method: 'POST',
      headers: { 'x-api-key': acme.api_key, 'content-type': 'application/json', 'x-trace': "it's" },
      body: JSON.stringify({ display_name: 'x', credentials: { secret_access_key: DESTINATION_SECRET } }),
    });
    const [entry] = await journal();
    const curl =
      `curl -X POST 'http://localhost/api/v1/bulk-exports/destinations?tag=a&tag=b' -H 'content-type: ` +
      `application/json' -H 'x-api-key: ********' -H 'x-trace: it'\\''s' --data-raw '********'`;
    const pane = await page(`/ui/requests/${entry!.id}`, HTMX);
    const quoted = curl.replaceAll('&', '&amp;').replaceAll("'", '&#39;');
    expect(pane).toContain(`<button type="button" data-copy="${quoted}">Copy as curl</button>`);
    expect(pane).toContain(`<pre class="curl" tabindex="0" aria-label="The request as curl">${quoted}</pre>`);
  });

  it("answers a request the journal never held with the API's 404 in an alert", async () => {
    const pane = await page('/ui/requests/999', HTMX, 404);
    expect(pane).toBe('<p class="error" role="alert">Request 999 not found in the journal</p>');
    const whole = await page('/ui/requests/999', {}, 404);
    expect(whole).toContain('<h1>Requests</h1>');
  });

  it('copies the URL, the response body and the entry as JSON beside "Copy as curl", the first stop after the title', async () => {
    await inProcessApi(lp, acme).get('/api/v1/bulk-exports?limit=1');
    const [entry] = await journal();
    const pane = await page(`/ui/requests/${entry!.id}`, HTMX);
    const attribute = (text: string) =>
      text.replaceAll('&', '&amp;').replaceAll('"', '&quot;').replaceAll("'", '&#39;');
    expect(pane).toMatch(
      new RegExp(
        '</h2><p class="actions"><button type="button" data-copy="curl [^"]*">Copy as curl</button>' +
          escapeRegExp(
            '<button type="button" data-copy="http://localhost/api/v1/bulk-exports?limit=1">Copy URL</button>',
          ),
      ),
    );
    expect(pane).toContain(
      `<button type="button" data-copy="${attribute(entry!.response.body.text!)}">Copy response body</button>`,
    );
    expect(pane).toContain(
      `<button type="button" data-copy="${attribute(JSON.stringify(entry, null, 2))}">Copy as JSON</button>`,
    );
  });

  it("shows an objstore request's key decoded, broken at slashes, linked to the object", async () => {
    const s3 = s3For(await lp.objstoreEndpoint(), fullKey(await fixturesOf(lp)));
    const key = 'exports/export_id=4e1f/day=2026-10-04/part 0.json';
    await s3.send(new CreateBucketCommand({ Bucket: 'journal-links' }));
    await s3.send(new PutObjectCommand({ Bucket: 'journal-links', Key: key, Body: '{"a":[1,{}],"b":"x"}' }));
    const [put] = await journal('?source=objstore&method=PUT&order=desc&limit=1');
    expect(put!.path).toContain('export_id%3D4e1f');
    const html = await page('/ui/requests?source=objstore');
    expect(html).toContain(`title="/journal-links/${key}"`);
    expect(html).not.toContain('%3D');
    const pane = await page(`/ui/requests/${put!.id}`, HTMX);
    expect(pane).toContain(
      `<h2 id="request-title" class="mono" tabindex="-1">PUT /<wbr/>journal-links/<wbr/>exports/<wbr/>` +
        'export_id=4e1f/<wbr/>day=2026-10-04/<wbr/>part 0.json</h2>',
    );
    const objectHref = `/ui/objects/journal-links/object?${new URLSearchParams({ key })}`.replaceAll('&', '&amp;');
    expect(pane).toContain(
      `<dt>Key</dt><dd><a href="${objectHref}" title="The object in the object browser">exports/<wbr/>` +
        'export_id=4e1f/<wbr/>day=2026-10-04/<wbr/>part 0.json</a></dd>',
    );
    // The page it links to is the object's.
    expect(await page(objectHref.replaceAll('&amp;', '&'))).toContain('part 0.json');
  });

  it('shows JSON bodies indented by 2, strings as sent; other text as it is', async () => {
    const post = (body: string) =>
      lp.request('/api/v1/bulk-exports', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': acme.api_key },
        body,
      });
    await post('{"a": [1, {}, []],"n":1.5e3,"s":"x\\"}, [y"}');
    await post('{"not json');
    const [json, text] = await journal();
    expect(await page(`/ui/requests/${json!.id}`, HTMX)).toContain(
      '<pre tabindex="0" aria-label="Request body">{\n  &quot;a&quot;: [\n    1,\n    {},\n    []\n  ],\n  ' +
        '&quot;n&quot;: 1500,\n  &quot;s&quot;: &quot;x\\&quot;}, [y&quot;\n}</pre>',
    );
    expect(await page(`/ui/requests/${text!.id}`, HTMX)).toContain(
      '<pre tabindex="0" aria-label="Request body">{&quot;not json</pre>',
    );
  });
});

describe("the journal's bound, seen from the view", () => {
  it(
    'says how many match and which requests were dropped, pages back and forth by id, and says an evicted ' +
      'request was dropped',
    { timeout: 120_000 },
    async () => {
      const rule = (
        await inProcessApi(lp).post('/_localplane/fault-rules', {
          match: { path: '/v2/deployments' },
          action: { status: 503 },
        })
      ).body as { id: string };
      for (let index = 0; index < 20_000; index++) await lp.request('/v2/deployments');

      // The API: a total matching the filter, the journal's bound and what it dropped.
      const listed = (await inProcessApi(lp).get('/_localplane/requests?order=desc&limit=2')).body;
      const bounds = { capacity: 10_000, first_kept_id: 10_001, dropped: 10_000 };
      expect({ ...listed, requests: listed.requests.map((entry: JournalEntry) => entry.id) }).toEqual({
        requests: [20_000, 19_999],
        total: 10_000,
        journal: bounds,
      });
      expect((await inProcessApi(lp).get('/_localplane/requests/count?status=503')).body).toEqual({
        count: 10_000,
        journal: bounds,
      });
      const olderPage = await inProcessApi(lp).get('/_localplane/requests?before=10004&order=desc&limit=5');
      expect(olderPage.body.requests.map((entry: JournalEntry) => entry.id)).toEqual([10_003, 10_002, 10_001]);
      expect(olderPage.body.total).toBe(3);
      const evicted = await inProcessApi(lp).get('/_localplane/requests/5');
      expect(evicted.status).toBe(404);
      expect(evicted.body).toEqual({
        detail:
          'Request 5 not found in the journal: it was dropped, with every request before 10001 (the journal keeps ' +
          'the latest 10000, and DELETE /_localplane/requests empties it)',
      });

      const newest = await page('/ui/requests');
      expect(newest).toContain(
        '<p class="muted">Showing 100 of 10,000 matching. Requests before #10,001 were dropped (the journal keeps ' +
          'the last 10,000).</p>',
      );
      expect(rowIds(newest)).toEqual(Array.from({ length: 100 }, (_, index) => 20_000 - index));
      expect(newest).toContain('href="/ui/requests?before=19901"');
      expect(newest).not.toContain('>Newer</a>');

      const older = await page('/ui/requests?before=19901');
      expect(rowIds(older)).toEqual(Array.from({ length: 100 }, (_, index) => 19_900 - index));
      expect(older).toContain('Showing 100 of 10,000 matching.');
      // An older page is not live: its rows stay as they are.
      expect(older).not.toContain('sse-connect');
      for (const [label, href] of [
        ['Newest', '/ui/requests'],
        ['Newer', '/ui/requests?after=19900'],
        ['Older', '/ui/requests?before=19801'],
      ])
        expect(older).toMatch(new RegExp(`<a href="${escapeRegExp(href)}" hx-get="[^"]*"[^>]*>${label}</a>`));
      expect(rowIds(await page('/ui/requests?after=19900'))).toEqual(
        Array.from({ length: 100 }, (_, index) => 20_000 - index),
      );
      // The oldest page kept: nothing older to go to.
      const oldest = await page('/ui/requests?before=10051');
      expect(rowIds(oldest)).toEqual(Array.from({ length: 50 }, (_, index) => 10_050 - index));
      expect(oldest).not.toContain('>Older</a>');

      // Filtering by the rule: it fired more often than the journal keeps requests.
      expect(await page(`/ui/requests?fault_rule=${rule.id}`)).toContain(
        `The rule ${rule.id} fired 20,000 times; 10,000 of them are no longer in the journal.`,
      );
      expect(await page('/ui/requests/5', HTMX, 404)).toContain(
        'Request 5 not found in the journal: it was dropped, with every request before 10001',
      );
    },
  );

  it('refuses a limit above what a page shows, as the API refuses one above its own, rather than cutting it', async () => {
    await traffic();
    const html = await page('/ui/requests?limit=5000', {}, 422);
    expect(html).toContain(
      'id="invalid-limit-error">A page shows 1 to 1000 requests (5000 asked); Older and Newer page through the ' +
        'rest</span>',
    );
    expect(html).toMatch(/<input name="limit"[^>]*value="5000"[^>]*aria-invalid="true"[^>]*autofocus=""/);
    expect(html).not.toContain('sse-connect');
    expect((await page('/ui/requests?limit=0', HTMX)).includes('(0 asked)')).toBe(true);
    const api = await inProcessApi(lp).get('/_localplane/requests?limit=10001');
    expect(api.status).toBe(422);
    expect(api.body.detail[0].loc).toEqual(['query', 'limit']);
    expect(rowPaths(await page('/ui/requests?limit=1000'))).toHaveLength(5);
  });

  it('clears the journal: the table says so and the ids go on', async () => {
    await traffic();
    const html = await page('/ui/requests');
    expect(html).toContain('action="/ui/requests/clear"');
    expect(html).toContain('hx-confirm="Empty the request journal?');
    const cleared = await lp.request('/ui/requests/clear?status=4xx', {
      method: 'POST',
      headers: { ...HTMX, 'content-type': 'application/x-www-form-urlencoded', origin: 'http://localhost' },
      body: '',
    });
    expect(cleared.status).toBe(200);
    const fragment = await cleared.text();
    expect(fragment).toContain('The journal was emptied: the requests made from now on show here.');
    expect(fragment).toContain('No request matches yet.');
    expect(await journal()).toEqual([]);
    const plain = await lp.request('/ui/requests/clear', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'http://localhost' },
      body: '',
    });
    expect(plain.status).toBe(303);
    expect(plain.headers.get('location')).toBe('/ui/requests');
    await inProcessApi(lp).get('/v2/deployments');
    expect((await journal())[0]!.id).toBe(6);
  });
});

describe('curl command lines', () => {
  const entry = (changes: Partial<JournalEntry['request']['body']>, method = 'PUT'): JournalEntry => ({
    id: 1,
    time: '2026-10-04T12:00:00.000000+00:00',
    wall_time: '2026-10-04T12:00:00.000Z',
    source: 'objstore',
    method,
    path: '/exports/a%20b.parquet',
    query: { 'X-Amz-Signature': '********' },
    status: 200,
    workspace_id: null,
    request: {
      headers: {
        host: 'localhost:9401',
        authorization: 'AWS4-HMAC-SHA256 Credential=AK/x, SignedHeaders=host, Signature=********',
      },
      body: { text: null, size: null, content_type: null, truncated: false, ...changes },
    },
    response: { headers: {}, body: { text: null, size: 0, content_type: null, truncated: false } },
    objstore: null,
    duration_ms: 1,
    fault_rule_id: null,
  });

  it('say when the body is not in the journal or cut, and leave out what curl sets itself', () => {
    expect(
      curlCommand(entry({ size: 20_000, content_type: 'application/octet-stream' }), 'http://127.0.0.1:9401'),
    ).toBe(
      `curl -X PUT 'http://127.0.0.1:9401/exports/a%20b.parquet?X-Amz-Signature=********' -H 'authorization: ` +
        `AWS4-HMAC-SHA256 Credential=AK/x, SignedHeaders=host, Signature=********' # the body (20000 bytes) is not ` +
        `in the journal`,
    );
    expect(curlCommand(entry({ text: 'x'.repeat(3), size: 9000, truncated: true }, 'GET'), 'http://h')).toBe(
      `curl 'http://h/exports/a%20b.parquet?X-Amz-Signature=********' -H 'authorization: AWS4-HMAC-SHA256 ` +
        `Credential=AK/x, SignedHeaders=host, Signature=********' --data-raw xxx # the body is cut to its first 8 ` +
        `KiB, as the journal keeps it`,
    );
  });
});
