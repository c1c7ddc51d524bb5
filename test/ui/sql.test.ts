/**
 * The SQL view as app.request() sees it: the export picker over every workspace, a query's URL
 * running it (the rows as a table, the chart's columns, the CSV download's link), htmx getting
 * the result alone, DuckDB's refusals shown as alerts, and the CSV download itself.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalplane, type InProcessLocalplane } from '../../src/index.ts';
import { EXAMPLE_SQL } from '../../src/ui/views/sql.tsx';
import { fixturesOf, inProcessApi } from '../support/in-process.ts';
import {
  credentialsOf,
  fullKey,
  workspaceByTier,
  type FixturesView,
  type FixtureWorkspace,
} from '../support/instance.ts';

let lp: InProcessLocalplane;
let fixtures: FixturesView;
let completed: string;
let waiting: string;

const ONE_DAY = { start_time: '2026-10-01T00:00:00Z', end_time: '2026-10-02T00:00:00Z' };

async function startExport(workspace: FixtureWorkspace, project: string, prefix: string): Promise<string> {
  const api = inProcessApi(lp, workspace);
  const destination = await api.post('/api/v1/bulk-exports/destinations', {
    display_name: prefix,
    config: { bucket_name: fixtures.objstore.buckets[0], prefix },
    credentials: credentialsOf(fullKey(fixtures)),
  });
  expect(destination.status, destination.text).toBe(200);
  const session = workspace.sessions.find((candidate) => candidate.name === project)!;
  const created = await api.post('/api/v1/bulk-exports', {
    bulk_export_destination_id: destination.body.id,
    session_id: session.id,
    format_version: 'v2_beta',
    compression: 'snappy',
    ...ONE_DAY,
  });
  expect(created.status, created.text).toBe(200);
  return created.body.id;
}

beforeAll(async () => {
  lp = await createLocalplane({ freezeClock: true, log: () => {} });
  fixtures = await fixturesOf(lp);
  await lp.clock.set('2026-11-01T00:00:00Z');
  completed = await startExport(workspaceByTier(fixtures, 'plus'), 'support-bot-staging', 'ui-sql');
  await lp.clock.advance(0);
  // Created on the frozen clock after the advance: it has written nothing.
  waiting = await startExport(workspaceByTier(fixtures, 'enterprise'), 'research-agent', 'ui-sql-waiting');
});

afterAll(async () => {
  await lp?.stop();
});

/** As the dashboard's own pages ask: a query runs only for them. */
const page = (path: string, headers: Record<string, string> = {}) =>
  lp.request(path, { headers: { 'sec-fetch-site': 'same-origin', ...headers } });
const sqlUrl = (exportId: string, sql: string, extra: Record<string, string> = {}) =>
  `/ui/sql?${new URLSearchParams({ export_id: exportId, sql, ...extra })}`;
const api = (sql: string, exportId = completed) =>
  inProcessApi(lp).post('/_localplane/sql', { export_id: exportId, sql });

describe('the SQL view at /ui/sql', () => {
  it(
    'offers the exports of every workspace, the newest completed one picked, and the example query over runs, not ' +
      'yet run',
    async () => {
      const response = await page('/ui/sql');
      expect(response.status).toBe(200);
      const html = await response.text();
      expect(html).toContain('<a href="/ui/sql" aria-current="page">SQL</a>');
      for (const workspace of ['plus', 'enterprise'])
        expect(html).toContain(`<optgroup label="${workspaceByTier(fixtures, workspace).name} · `);
      expect(html).toMatch(new RegExp(`<option value="${completed}" selected="">support-bot-staging · Completed · `));
      expect(html).toMatch(new RegExp(`<option value="${waiting}">research-agent · Created · `));
      expect(html).toContain(
        `<textarea name="sql" rows="6" spellcheck="false">${EXAMPLE_SQL.replaceAll("'", '&#39;')}</textarea>`,
      );
      // The Run button is disabled while a query runs; Cancel shows only then; Ctrl+Enter is the button's shortcut.
      expect(html).toContain(
        '<form id="sql-form" hx-disabled-elt="find .run-query" method="get" action="/ui/sql" hx-get="/ui/sql" ' +
          'hx-target="#sql-result"',
      );
      expect(html).toContain(
        '<button type="submit" class="primary run-query" aria-keyshortcuts="Control+Enter" ' +
          'data-route="POST /_localplane/sql">',
      );
      expect(html).toContain('<button type="button" class="when-busy" data-sql-cancel="true">Cancel</button>');
      // The schema beside the editor: the view's columns with their types, each a button putting its name in the query.
      const schema = html.slice(html.indexOf('<section id="sql-schema"'), html.indexOf('</section>'));
      expect(schema).toContain('<summary class="mono">runs</summary>');
      const columns = [
        ...schema.matchAll(/data-sql-insert="([^"]+)"[^>]*>[^<]*<\/button> <span class="muted mono">([^<]+)</g),
      ];
      const described = (await api('SELECT * FROM runs LIMIT 0')).body.columns as { name: string; type: string }[];
      expect(columns.map(([, name, type]) => ({ name, type }))).toEqual(described);
      expect(described.map((column) => column.name)).toEqual(expect.arrayContaining(['name', 'start_time', 'status']));
      // The history, filled by the browser.
      expect(html).toContain('<section id="sql-history" aria-labelledby="history-heading" hidden="">');
      expect(html).not.toContain('<table');
      // uPlot for the chart.
      expect(html).toContain('/ui/assets/uPlot.iife.min.js');
    },
  );

  it.each([
    ['a link or an image on another site', { 'sec-fetch-site': 'cross-site' }],
    ['a typed or bookmarked address', { 'sec-fetch-site': 'none' }],
    ['a client that is no browser', { 'sec-fetch-site': '' }],
  ])('shows the query its URL names, and runs none, for %s', async (_, headers) => {
    const sql = "SELECT length(repeat('x', 10)) AS n";
    const response = await page(sqlUrl(completed, sql), headers);
    expect(response.status).toBe(200);
    const html = await response.text();
    expect(html).toContain(
      `<textarea name="sql" rows="6" spellcheck="false">${sql.replaceAll("'", '&#39;')}</textarea>`,
    );
    expect(html).not.toContain('<table');
    const csv = await page(`/ui/sql.csv?${new URLSearchParams({ export_id: completed, sql })}`, headers);
    expect(csv.status).toBe(403);
    // From the dashboard's own page, the same URLs run it.
    expect(await (await page(sqlUrl(completed, sql))).text()).toContain('<table');
    expect((await page(`/ui/sql.csv?${new URLSearchParams({ export_id: completed, sql })}`)).status).toBe(200);
  });

  it(
    'runs the query its URL names: the rows as the API answers them, each column with its type, and the chart of ' +
      'one column against another',
    async () => {
      const sql =
        "SELECT date_trunc('hour', start_time) AS hour, count(*) AS runs, min(name) AS first_name FROM runs GROUP " +
        'BY ALL ORDER BY hour';
      const answer = (await api(sql)).body;
      const response = await page(sqlUrl(completed, sql));
      expect(response.status).toBe(200);
      const html = await response.text();
      expect(html).toContain(
        `<textarea name="sql" rows="6" spellcheck="false">${sql.replaceAll("'", '&#39;')}</textarea>`,
      );
      expect(html).toContain(`<p role="status">${answer.row_count} rows in `);
      expect(html).toContain('<th scope="col">hour<div class="muted mono">TIMESTAMP WITH TIME ZONE</div></th>');
      expect(html).toContain('<th scope="col" class="num">runs<div class="muted mono">BIGINT</div></th>');
      const cells = [...html.matchAll(/<td class="num">(\d+)<\/td>/g)].map((match) => match[1]);
      expect(cells).toEqual(answer.rows.map((row: string[]) => row[1]));
      expect(html).toContain(
        `href="/ui/sql.csv?${new URLSearchParams({ export_id: completed, sql })}" download`.replaceAll('&', '&amp;'),
      );

      // The chart: x the time column (in epoch seconds), y the first number; a text column is offered on x only.
      const columns = JSON.parse(
        html
          .match(/data-columns="([^"]*)"/)![1]!
          .replaceAll('&quot;', '"')
          .replaceAll('&#39;', "'")
          .replaceAll('&amp;', '&'),
      );
      expect(columns.map((column: { name: string; kind: string }) => [column.name, column.kind])).toEqual([
        ['(row)', 'number'],
        ['hour', 'time'],
        ['runs', 'number'],
        ['first_name', 'category'],
      ]);
      expect(columns[3].values).toEqual(answer.rows.map((row: string[]) => row[2]));
      expect(columns[1].values[0]).toBe(Date.parse('2026-10-01T00:00:00Z') / 1000);
      expect(columns[2].values).toEqual(answer.rows.map((row: string[]) => Number(row[1])));
      expect(html).toMatch(
        /<select name="x" form="sql-form" data-axis="x">.*<option value="hour" selected="">hour<\/option>/s,
      );
      expect(html).toMatch(
        /<select name="y" form="sql-form" data-axis="y"><option value="runs" selected="">runs<\/option><\/select>/,
      );
    },
  );

  it('keeps the chart columns the URL picks', async () => {
    const html = await (
      await page(
        sqlUrl(
          completed,
          'SELECT count(*) AS runs, sum(total_tokens) AS tokens FROM runs GROUP BY name ORDER BY runs',
          { x: 'runs', y: 'tokens' },
        ),
      )
    ).text();
    expect(html).toMatch(/<option value="runs" selected="">runs<\/option>/);
    expect(html).toMatch(/<select name="y"[^>]*>.*<option value="tokens" selected="">tokens<\/option>/s);
  });

  it('charts a result without a time column by its first text column, as bars, not against the row number', async () => {
    const sql = 'SELECT status, count(*) AS runs FROM runs GROUP BY status ORDER BY runs DESC';
    const html = await (await page(sqlUrl(completed, sql))).text();
    expect(html).toMatch(
      /<select name="x" form="sql-form" data-axis="x">.*<option value="status" selected="">status</s,
    );
    expect(html).toMatch(/<option value="\(row\)">row number<\/option>/);
  });

  it('answers htmx with the result alone, and the schema of its export out of band', async () => {
    const fragment = await (await page(sqlUrl(completed, 'SELECT 1 AS one'), { 'hx-request': 'true' })).text();
    expect(fragment.startsWith('<div id="sql-result">')).toBe(true);
    expect(fragment).toContain('<section id="sql-schema" aria-labelledby="schema-heading" hx-swap-oob="true">');
    expect(fragment).not.toContain('<html');
    expect(fragment).not.toContain('<textarea');
    expect(fragment).toContain('<p role="status">1 row in ');
  });

  it(
    "shows the API's refusal of the SQL at the SQL field (DuckDB's first line, a file outside the objstore), an " +
      'export without files as an alert',
    async () => {
      const cases: [string, string, string][] = [
        [
          completed,
          'SELECT nope FROM runs',
          'Binder Error: Referenced column &quot;nope&quot; not found in FROM clause!',
        ],
        [
          completed,
          "SELECT * FROM read_csv('/etc/passwd')",
          'Permission Error: Cannot access file &quot;/etc/passwd&quot; - file system operations are disabled by ' +
            'configuration',
        ],
        [waiting, 'SELECT count(*) FROM runs', `Bulk export ${waiting} has no Parquet files in the objstore`],
      ];
      for (const [exportId, sql, detail] of cases) {
        const whole = await page(sqlUrl(exportId, sql));
        expect(whole.status, sql).toBe(exportId === waiting ? 409 : 400);
        const html = await whole.text();
        expect(html).toContain(detail);
        if (exportId === waiting) expect(html).toContain('<p class="error" role="alert">');
        // A whole page marks the SQL field, typed as sent, and gives it the focus.
        else expect(html).toMatch(/<textarea name="sql"[^>]*aria-invalid="true"[^>]*autofocus="">SELECT/);
        // htmx swaps in only what a success brings; a refused SQL brings the form out of band, marked.
        const fragment = await page(sqlUrl(exportId, sql), { 'hx-request': 'true' });
        expect(fragment.status).toBe(200);
        const text = await fragment.text();
        expect(text).toContain(detail);
        if (exportId !== waiting) expect(text).toMatch(/<form id="sql-form"[^>]*hx-swap-oob="true"/);
      }
    },
  );

  it('says where to make an export when there is none', async () => {
    const empty = await createLocalplane({ log: () => {} });
    try {
      const html = await (await empty.request('/ui/sql')).text();
      expect(html).toContain(
        'No exports yet: create one in <a href="/ui/exports">Exports</a>, then query its files here.',
      );
      expect(html).not.toContain('<form id="sql-form"');
    } finally {
      await empty.stop();
    }
  });
});

describe('the CSV download at /ui/sql.csv', () => {
  it("is the query's rows as CSV: a header, quoted cells where they need it, NULL empty", async () => {
    const sql =
      `SELECT * FROM (VALUES (1, 'plain', NULL), (2, 'a, "quoted"' || chr(10) || 'line', [1, 2])) AS ` +
      `t(n, text, list) ORDER BY n`;
    const response = await page(`/ui/sql.csv?${new URLSearchParams({ export_id: completed, sql })}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(response.headers.get('content-disposition')).toBe(
      `attachment; filename="localplane-sql-${completed.slice(0, 8)}.csv"`,
    );
    expect(await response.text()).toBe('n,text,list\r\n1,plain,\r\n2,"a, ""quoted""\nline","[1,2]"\r\n');
  });

  it('holds as many rows as the API answers', async () => {
    const csv = await (
      await page(`/ui/sql.csv?${new URLSearchParams({ export_id: completed, sql: 'SELECT id FROM runs ORDER BY id' })}`)
    ).text();
    const { body } = await api('SELECT id FROM runs ORDER BY id');
    expect(csv.trimEnd().split('\r\n')).toEqual(['id', ...body.rows.map((row: string[]) => row[0])]);
  });

  it("answers a refused query with the API's status and its detail as an alert", async () => {
    const response = await page(`/ui/sql.csv?${new URLSearchParams({ export_id: completed, sql: 'SET threads = 1' })}`);
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await response.text()).toContain(
      '<p class="error" role="alert">Only a SELECT statement runs here (read-only), not SET</p>',
    );
  });
});
