import { Hono, type Context } from 'hono';
import type { ExportResponse } from '../../bulk-exports/schemas.ts';
import type { SqlResponse } from '../../warehouse/schemas.ts';
import { DashboardApiError, type DashboardApi } from '../api.ts';
import { readFixtures } from '../fixtures.ts';
import { refusal, refusedAt, refusedForm, refusedStatus, type FormState, type FormValues } from '../forms.ts';
import { ErrorNote, Field, HtmxForm, renderView } from '../layout.tsx';

const SQL = '/ui/sql';

/** What the query box holds to begin with: runs per hour, which charts as a line over time. */
export const EXAMPLE_SQL = `SELECT date_trunc('hour', start_time) AS hour, count(*) AS runs, sum(total_tokens) AS tokens
FROM runs
GROUP BY ALL
ORDER BY hour`;

/** A cell shows at most this much of its text; the CSV download holds all of it. */
const CELL_CHARACTERS = 300;
/** The chart's x option that is no column: each row's number. */
const ROW_NUMBER = '(row)';

const NUMERIC_TYPE = /^(U?(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT)|FLOAT|DOUBLE|DECIMAL)\b/;
const TIME_TYPE = /^(DATE|TIMESTAMP)\b/;
/** Columns whose values name categories: charted as a bar a value. */
const CATEGORY_TYPE = /^(VARCHAR|BOOLEAN|ENUM|UUID)\b/;
/** The query that reads the view's columns and their types (the schema beside the editor). */
const SCHEMA_SQL = 'SELECT * FROM runs LIMIT 0';

interface ExportChoice {
  id: string;
  label: string;
  status: string;
  createdAt: string;
}

/**
 * Every workspace's exports (newest 100 of each), grouped by workspace; a workspace whose plan has no exports has none.
 */
async function exportChoices(api: DashboardApi): Promise<{ workspace: string; exports: ExportChoice[] }[]> {
  const fixtures = await readFixtures(api);
  return Promise.all(
    fixtures.workspaces.map(async (workspace) => {
      const exports = await api
        .get<ExportResponse[]>('/api/v1/bulk-exports?limit=100', { workspaceId: workspace.id })
        .catch((error: unknown) => {
          if (error instanceof DashboardApiError && error.status === 403) return [];
          throw error;
        });
      return {
        workspace: workspace.name,
        exports: exports.map((row) => {
          const project = row.all_experiments
            ? 'all experiments'
            : (workspace.sessions.find((session) => session.id === row.session_id)?.name ?? row.session_id);
          return {
            id: row.id,
            status: row.status,
            createdAt: row.created_at,
            label:
              `${project} · ${row.status} · ${row.created_at.slice(0, 16).replace('T', ' ')} ` +
              `· ${row.id.slice(0, 8)}`,
          };
        }),
      };
    }),
  );
}

/** The newest completed export, else the newest: what the picker offers when the URL names none. */
function defaultExport(groups: { exports: ExportChoice[] }[]): string | undefined {
  const all = groups.flatMap((group) => group.exports).sort((a, b) => b.createdAt.localeCompare(a.createdAt));
  return (all.find((choice) => choice.status === 'Completed') ?? all[0])?.id;
}

/** The picker lists this many of the newest exports (and the chosen one); any other is typed by its id. */
const PICKER_EXPORTS = 20;

/**
 * The picker's groups: the newest PICKER_EXPORTS exports of every workspace and the chosen one, by workspace and
 * status, newest first in each.
 */
function pickerGroups(groups: { workspace: string; exports: ExportChoice[] }[], chosen: string) {
  const all = groups
    .flatMap((group) => group.exports.map((choice) => ({ ...choice, workspace: group.workspace })))
    .sort((a, b) => b.createdAt.localeCompare(a.createdAt));
  const shown = all.filter((choice, index) => index < PICKER_EXPORTS || choice.id === chosen);
  const byGroup = new Map<string, ExportChoice[]>();
  for (const choice of shown) {
    const label = `${choice.workspace} · ${choice.status}`;
    byGroup.set(label, [...(byGroup.get(label) ?? []), choice]);
  }
  return { groups: [...byGroup], total: all.length, shown: shown.length };
}

/** The export picker: a select of the newest exports, grouped, and a field taking any export's id instead. */
function ExportPicker({
  groups,
  exportId,
  typed,
}: {
  groups: { workspace: string; exports: ExportChoice[] }[];
  exportId: string;
  typed?: string;
}) {
  const picker = pickerGroups(groups, exportId);
  return (
    <div class="inline">
      <Field label={`Export${picker.total > picker.shown ? ` (the newest ${picker.shown} of ${picker.total})` : ''}`}>
        <select name="export_id">
          {picker.groups.map(([label, choices]) => (
            <optgroup label={label}>
              {choices.map((choice) => (
                <option value={choice.id} selected={choice.id === exportId}>
                  {choice.label}
                </option>
              ))}
            </optgroup>
          ))}
        </select>
      </Field>
      <Field label="or an export id">
        <input
          name="typed_export_id"
          value={typed}
          class="mono"
          size={36}
          placeholder="any export's id"
          autocomplete="off"
        />
      </Field>
    </div>
  );
}

const queryUrl = (path: string, exportId: string, sql: string) =>
  `${path}?${new URLSearchParams({ export_id: exportId, sql })}`;

const cellText = (value: unknown) =>
  value === null || value === undefined ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value);

/** A result as CSV (RFC 4180): a header of the column names, a line per row; NULL is an empty cell. */
export function resultCsv(result: SqlResponse): string {
  const field = (text: string) => (/[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text);
  const line = (cells: string[]) => `${cells.map(field).join(',')}\r\n`;
  return line(result.columns.map((column) => column.name)) + result.rows.map((row) => line(row.map(cellText))).join('');
}

/** DuckDB's text of a DATE or TIMESTAMP (`2026-10-01 00:00:13.037+00`; UTC when it names no zone) in epoch seconds. */
function epochSeconds(text: string): number | null {
  const iso = text.replace(' ', 'T').replace(/([+-]\d\d)$/, '$1:00');
  const zoned = !iso.includes('T') || /(Z|[+-]\d\d:\d\d)$/i.test(iso) ? iso : `${iso}Z`;
  const ms = Date.parse(zoned);
  return Number.isNaN(ms) ? null : ms / 1000;
}

type ChartColumn =
  | { name: string; kind: 'number' | 'time'; values: (number | null)[] }
  | { name: string; kind: 'category'; values: (string | null)[] };

/**
 * The columns a chart can draw: numbers, and on x dates and times (as epoch seconds) and categories (text, drawn as
 * bars); the row number first.
 */
function chartColumns(result: SqlResponse): ChartColumn[] {
  const number = (value: unknown) => {
    const parsed = typeof value === 'number' ? value : typeof value === 'string' ? Number(value) : NaN;
    return Number.isFinite(parsed) ? parsed : null;
  };
  const columns: ChartColumn[] = [
    { name: ROW_NUMBER, kind: 'number', values: result.rows.map((_, index) => index + 1) },
  ];
  result.columns.forEach(({ name, type }, index) => {
    if (NUMERIC_TYPE.test(type))
      columns.push({ name, kind: 'number', values: result.rows.map((row) => number(row[index])) });
    else if (TIME_TYPE.test(type))
      columns.push({
        name,
        kind: 'time',
        values: result.rows.map((row) => (typeof row[index] === 'string' ? epochSeconds(row[index]) : null)),
      });
    else if (CATEGORY_TYPE.test(type))
      columns.push({
        name,
        kind: 'category',
        values: result.rows.map((row) => (row[index] === null ? null : cellText(row[index]))),
      });
  });
  return columns;
}

/** One column against another: x and y picked from the result's columns (drawn by ui.js, which redraws on a change). */
function Chart({ result, x, y }: { result: SqlResponse; x?: string; y?: string }) {
  const columns = chartColumns(result);
  const numbers = columns.filter((column) => column.kind === 'number' && column.name !== ROW_NUMBER);
  if (numbers.length === 0 || result.rows.length === 0) return <p class="muted">No numeric column to chart.</p>;
  const xColumn =
    columns.find((column) => column.name === x) ??
    columns.find((column) => column.kind === 'time') ??
    columns.find((column) => column.kind === 'category') ??
    columns[0]!;
  const yColumn =
    numbers.find((column) => column.name === y) ?? numbers.find((column) => column !== xColumn) ?? numbers[0]!;
  return (
    <section class="sql-chart" data-xy-chart aria-labelledby="chart-heading">
      <h2 id="chart-heading">Chart</h2>
      <div class="inline">
        <Field label="x axis">
          <select name="x" form="sql-form" data-axis="x">
            {columns.map((column) => (
              <option value={column.name} selected={column === xColumn}>
                {column.name === ROW_NUMBER ? 'row number' : column.name}
              </option>
            ))}
          </select>
        </Field>
        <Field label="y axis">
          <select name="y" form="sql-form" data-axis="y">
            {numbers.map((column) => (
              <option value={column.name} selected={column === yColumn}>
                {column.name}
              </option>
            ))}
          </select>
        </Field>
      </div>
      <figure
        class="chart"
        role="img"
        aria-label="The chosen y column against the x column, from the table below"
        data-columns={JSON.stringify(columns)}
      ></figure>
    </section>
  );
}

function ResultTable({ result }: { result: SqlResponse }) {
  const numeric = result.columns.map((column) => NUMERIC_TYPE.test(column.type));
  return (
    <div class="scroll-x">
      <table aria-labelledby="result-heading" class="sql-rows">
        <thead>
          <tr>
            {result.columns.map((column, index) => (
              <th scope="col" class={numeric[index] ? 'num' : undefined}>
                {column.name}
                <div class="muted mono">{column.type}</div>
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {result.rows.map((row) => (
            <tr>
              {row.map((value, index) => {
                const text = cellText(value);
                const cut = text.length > CELL_CHARACTERS;
                return (
                  <td class={numeric[index] ? 'num' : undefined} title={cut ? text.slice(0, 2000) : undefined}>
                    {value === null ? (
                      <span class="muted">NULL</span>
                    ) : cut ? (
                      `${text.slice(0, CELL_CHARACTERS)}…`
                    ) : (
                      text
                    )}
                  </td>
                );
              })}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

interface SqlOutcome {
  exportId: string;
  sql: string;
  result?: SqlResponse;
  error?: string;
}

function Result({ outcome, x, y }: { outcome: SqlOutcome | null; x?: string; y?: string }) {
  if (!outcome) {
    return (
      <div id="sql-result">
        <p class="muted">
          Run the query to see its rows. Its URL, with the export and the SQL in it, can be shared: opened, it shows the
          query, which runs from the Run query button.
        </p>
        {/* The chart's columns a shared URL picks, until the run's own pickers replace this part. */}
        {x !== undefined && <input type="hidden" name="x" form="sql-form" value={x} />}
        {y !== undefined && <input type="hidden" name="y" form="sql-form" value={y} />}
      </div>
    );
  }
  const { result, error } = outcome;
  return (
    <div id="sql-result">
      {error && <ErrorNote message={error} />}
      {result && (
        <>
          <h2 id="result-heading">Result</h2>
          <p role="status">
            {result.row_count.toLocaleString('en')} {result.row_count === 1 ? 'row' : 'rows'}
            {result.truncated &&
              ` (the first ${result.row_limit.toLocaleString('en')}: sql_row_limit cut the result)`}{' '}
            in {result.elapsed_ms} ms ·{' '}
            <a href={queryUrl(`${SQL}.csv`, outcome.exportId, outcome.sql)} download>
              Download CSV
            </a>{' '}
            · <a href={queryUrl(SQL, outcome.exportId, outcome.sql)}>Link to this query</a>
          </p>
          <Chart result={result} x={x} y={y} />
          <ResultTable result={result} />
        </>
      )}
    </div>
  );
}

/**
 * Runs the query through POST /_localplane/sql; a refusal (a bad query, no files, another query running) is the
 * outcome's error.
 */
async function runQuery(
  api: DashboardApi,
  exportId: string,
  sql: string,
): Promise<{ outcome: SqlOutcome; status: number; refused?: unknown }> {
  try {
    const result = await api.json<SqlResponse>('POST', '/_localplane/sql', { body: { export_id: exportId, sql } });
    return { outcome: { exportId, sql, result }, status: 200 };
  } catch (error) {
    const { status, detail } = refusal(error);
    return { outcome: { exportId, sql, error: detail }, status, refused: error };
  }
}

/**
 * The query form's state after the API refused its query, when the refusal is about a field: a statement DuckDB or
 * the API refuses (400) is about the SQL, an export not found (404) about the export; a 422 at the fields it names.
 * Another query running, an export without files: about no field (the result's alert).
 */
function refusedQuery(status: number, refused: unknown, values: FormValues): FormState | undefined {
  const exportField = values.typed_export_id ? 'typed_export_id' : 'export_id';
  if (status === 400) return refusedAt('sql', refused, values).state;
  if (status === 404) return refusedAt(exportField, refused, values).state;
  if (status === 422) {
    const { state } = refusedForm(refused, values);
    return state.fieldErrors && Object.keys(state.fieldErrors).length > 0 ? state : undefined;
  }
  return undefined;
}

/** The query form: the export, the SQL; out of band, it brings a refusal at its field. */
function QueryForm({
  groups,
  exportId,
  typed,
  sql,
  state,
  outOfBand = false,
}: {
  groups: { workspace: string; exports: ExportChoice[] }[];
  exportId: string;
  typed?: string;
  sql?: string;
  state?: FormState;
  outOfBand?: boolean;
}) {
  return (
    <HtmxForm
      id="sql-form"
      method="get"
      action={SQL}
      replaces="#sql-result"
      hx-disabled-elt="find .run-query"
      state={state}
      {...(outOfBand ? { 'hx-swap-oob': 'true' } : {})}
    >
      <ExportPicker groups={groups} exportId={exportId} typed={typed} />
      <Field label="SQL over the view runs (the export's runs, with its Hive partition keys)">
        <textarea name="sql" rows={6} spellcheck={false}>
          {sql ?? EXAMPLE_SQL}
        </textarea>
      </Field>
      <div class="inline">
        <button
          type="submit"
          class="primary run-query"
          aria-keyshortcuts="Control+Enter"
          data-route="POST /_localplane/sql"
        >
          <span class="when-idle">Run query</span>
          <span class="when-busy">Running…</span>
        </button>
        <button type="button" class="when-busy" data-sql-cancel>
          Cancel
        </button>
        <span class="muted">
          Ctrl+Enter runs it. One SELECT, read-only; at most sql_row_limit rows and sql_time_limit_seconds (
          <a href="/ui/state#limits">the limits</a>, PATCH /_localplane/config).
        </span>
      </div>
    </HtmxForm>
  );
}

/**
 * The view's columns and their types (a query of no rows over the export), each a button that puts its name into the
 * query; out of band, it follows a run's export. The queries run before (ui.js keeps them in the browser) go under it.
 */
function Schema({ schema, outOfBand = false }: { schema: SqlOutcome; outOfBand?: boolean }) {
  return (
    <section id="sql-schema" aria-labelledby="schema-heading" {...(outOfBand ? { 'hx-swap-oob': 'true' } : {})}>
      <h2 id="schema-heading">Schema</h2>
      {schema.result ? (
        <details open>
          <summary class="mono">runs</summary>
          <ul class="schema-columns">
            {schema.result.columns.map((column) => (
              <li>
                <button type="button" class="mono" data-sql-insert={column.name} title="Put the name in the query">
                  {column.name}
                </button>{' '}
                <span class="muted mono">{column.type}</span>
              </li>
            ))}
          </ul>
        </details>
      ) : (
        <p class="muted">{schema.error}</p>
      )}
    </section>
  );
}

/**
 * Whether the browser sent the request from a page of the dashboard's own origin: only then does a
 * URL run its query. A link or an image on another site (Sec-Fetch-Site: cross-site), a typed or
 * bookmarked URL (none) and a client that is no browser (no header) get the query shown, not run.
 */
const fromThisPage = (c: Context) => c.req.header('sec-fetch-site') === 'same-origin';

/**
 * /ui/sql: SQL over an export's Parquet files with the `runs` view (POST /_localplane/sql), its
 * rows as a table and a chart; `?export_id=&sql=` runs it, so a query's URL can be shared.
 * /ui/sql.csv: the same query's rows as a CSV download.
 */
const NOT_FROM_THIS_PAGE = 'A query runs from the SQL page of this dashboard only: open /ui/sql and press Run query.';

export function sqlView(api: DashboardApi) {
  const app = new Hono();

  app.get('/sql', async (c: Context) => {
    const groups = await exportChoices(api);
    // An id typed into the picker's field wins over the list's choice.
    const typed = c.req.query('typed_export_id')?.trim() || undefined;
    const exportId = typed ?? c.req.query('export_id') ?? defaultExport(groups);
    const sql = c.req.query('sql');
    const asked = exportId !== undefined && sql !== undefined && sql.trim() !== '';
    const ran = asked && fromThisPage(c) ? await runQuery(api, exportId, sql) : null;
    // After the query: the API runs one at a time.
    const schema = exportId === undefined ? undefined : (await runQuery(api, exportId, SCHEMA_SQL)).outcome;
    c.status(refusedStatus(c, ran?.status ?? 200) as 200);
    const values = { export_id: c.req.query('export_id') ?? '', typed_export_id: typed ?? '', sql: sql ?? '' };
    const state = ran?.refused === undefined ? undefined : refusedQuery(ran.status, ran.refused, values);
    // A refusal shown at its field is not repeated in the result.
    const outcome = state && ran ? { ...ran.outcome, error: undefined } : (ran?.outcome ?? null);
    const result = <Result outcome={outcome} x={c.req.query('x')} y={c.req.query('y')} />;
    const form = (outOfBand: boolean) =>
      exportId !== undefined && (
        <QueryForm groups={groups} exportId={exportId} typed={typed} sql={sql} state={state} outOfBand={outOfBand} />
      );
    return renderView(c, {
      title: 'SQL',
      active: 'sql',
      charts: true,
      fragment: (
        <>
          {result}
          {schema && <Schema schema={schema} outOfBand />}
          {state && form(true)}
        </>
      ),
      children:
        exportId === undefined ? (
          <p class="muted">
            No exports yet: create one in <a href="/ui/exports">Exports</a>, then query its files here.
          </p>
        ) : (
          <>
            {form(false)}
            <aside class="sql-side" aria-label="Schema and history">
              {schema && <Schema schema={schema} />}
              <section id="sql-history" aria-labelledby="history-heading" hidden>
                <h2 id="history-heading">History</h2>
                <ol></ol>
              </section>
            </aside>
            {result}
          </>
        ),
    });
  });

  app.get('/sql.csv', async (c: Context) => {
    const exportId = c.req.query('export_id') ?? '';
    if (!fromThisPage(c)) {
      c.status(403);
      return renderView(c, { title: 'SQL', active: 'sql', children: <ErrorNote message={NOT_FROM_THIS_PAGE} /> });
    }
    const { outcome, status } = await runQuery(api, exportId, c.req.query('sql') ?? '');
    if (!outcome.result) {
      c.status(status as 400);
      return renderView(c, { title: 'SQL', active: 'sql', children: <ErrorNote message={outcome.error!} /> });
    }
    c.header('content-type', 'text/csv; charset=utf-8');
    c.header('content-disposition', `attachment; filename="localplane-sql-${exportId.slice(0, 8)}.csv"`);
    return c.body(resultCsv(outcome.result));
  });

  return app;
}
