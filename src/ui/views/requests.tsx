import {
  commentText,
  EVENT_STREAM_HEADERS,
  eventText,
  readEvents,
  type ServerSentEvent,
} from '../../shared/event-stream.ts';
import type { HttpBindings } from '@hono/node-server';
import { Hono, type Context } from 'hono';
import type { Child } from 'hono/jsx';
import type { FaultRuleView } from '../../journal/fault-rules.ts';
import { REQUEST_SOURCES } from '../../journal/matching.ts';
import type { JournalBody, JournalEntry } from '../../journal/schemas.ts';
import { DashboardApiError, type DashboardApi } from '../api.ts';
import { readFixtures, type FixtureWorkspace } from '../fixtures.ts';
import { DetailList, ErrorNote, HtmxForm, isFragmentRequest, renderView, TableHead } from '../layout.tsx';

const REQUESTS = '/ui/requests';
/** The view's filters, named as the API names them but `text`, which searches both bodies (`any_body_contains`). */
const FILTERS = ['source', 'method', 'path', 'status', 'workspace_id', 'fault_rule', 'text'] as const;
const API_NAMES: Readonly<Record<string, string>> = { text: 'any_body_contains' };
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
/** How many of the newest matching requests the table shows, and at most: the page stays quick with a full journal. */
const DEFAULT_SHOWN = 100;
const MAX_SHOWN = 1000;

/** The view's URL query: the filters given, and how many to show when not the default. */
function viewQuery(c: Context): URLSearchParams {
  const query = new URLSearchParams();
  for (const name of FILTERS) {
    const value = c.req.query(name)?.trim();
    if (value) query.set(name, value);
  }
  const shown = shownOf(c.req.query('limit'));
  if (shown !== DEFAULT_SHOWN) query.set('limit', String(shown));
  return query;
}

function shownOf(limit: string | undefined): number {
  const shown = Number.parseInt(limit ?? '', 10);
  return Number.isNaN(shown) ? DEFAULT_SHOWN : Math.min(Math.max(shown, 1), MAX_SHOWN);
}

/** The journal filter the API takes for the view's query (no limit: the caller says). */
function apiFilter(query: URLSearchParams): URLSearchParams {
  const filter = new URLSearchParams();
  for (const name of FILTERS) {
    const value = query.get(name);
    if (value) filter.set(API_NAMES[name] ?? name, value);
  }
  return filter;
}

const withQuery = (path: string, query: URLSearchParams) => (query.size === 0 ? path : `${path}?${query}`);
const detailPath = (id: number, query: URLSearchParams) => withQuery(`${REQUESTS}/${id}`, query);

type WorkspaceNames = ReadonlyMap<string, string>;
const workspaceNames = async (api: DashboardApi): Promise<WorkspaceNames> =>
  new Map((await readFixtures(api)).workspaces.map((workspace) => [workspace.id, workspace.name]));

/** An emulator time as the table shows it: the time of day to the millisecond (the whole time in the title). */
const TimeOfDay = ({ time }: { time: string }) => (
  <time datetime={time} title={time}>
    {time.slice(11, 23)}
  </time>
);

const StatusText = ({ status }: { status: number }) => (
  <span class={`status-${Math.floor(status / 100)}`} title={status === 499 ? 'no reply was sent' : undefined}>
    {status}
  </span>
);

/** One journal entry as a row: its link opens the detail pane beside the table. */
function RequestRow({ entry, names, query }: { entry: JournalEntry; names: WorkspaceNames; query: URLSearchParams }) {
  const href = detailPath(entry.id, query);
  return (
    <tr id={`request-${entry.id}`} data-id={entry.id}>
      <td class="mono">
        <TimeOfDay time={entry.time} />
      </td>
      <td>{entry.source}</td>
      <td class="mono">{entry.method}</td>
      <th scope="row" class="path mono">
        <a href={href} hx-get={href} hx-target="#request-detail" hx-swap="innerHTML" hx-push-url="true">
          {entry.path}
        </a>
      </th>
      <td class="num">
        <StatusText status={entry.status} />
      </td>
      <td>{entry.workspace_id === null ? '—' : (names.get(entry.workspace_id) ?? entry.workspace_id)}</td>
      <td class="mono">{entry.fault_rule_id ?? '—'}</td>
      <td class="num">{entry.duration_ms.toFixed(1)}</td>
    </tr>
  );
}

const COLUMNS = ['Time', 'Source', 'Method', 'Path', 'Status', 'Workspace', 'Fault rule', 'ms'];

/** After a reset the journal numbers from 1 again: the rows above this one are the new ones. */
const ResetRow = () => (
  <tr class="journal-reset">
    <td colspan={COLUMNS.length}>The journal was reset here: what is above came after it.</td>
  </tr>
);

interface LiveProps {
  query: URLSearchParams;
  entries?: JournalEntry[];
  names: WorkspaceNames;
  paused: boolean;
  error?: string;
}

/**
 * The newest matching requests, newest first. Live, it takes new ones from the stream (from the
 * newest shown on, so none is missed between the page and the stream) and keeps the newest
 * `limit` rows; paused, the stream is closed and the rows stay. Resuming loads the newest again.
 */
function LiveRequests({ query, entries, names, paused, error }: LiveProps) {
  const shown = shownOf(query.get('limit') ?? undefined);
  const streamQuery = new URLSearchParams(query);
  streamQuery.set('since', String(entries?.[0]?.id ?? 0));
  const pausedQuery = new URLSearchParams(query);
  pausedQuery.set('paused', '1');
  const live = !paused && entries !== undefined;
  const toggle = paused ? withQuery(REQUESTS, query) : withQuery(REQUESTS, pausedQuery);
  return (
    <section
      id="requests-live"
      aria-labelledby="requests-heading"
      {...(live ? { 'hx-ext': 'sse', 'sse-connect': withQuery(`${REQUESTS}/stream`, streamQuery) } : {})}
    >
      <div class="live-bar">
        <h2 id="requests-heading">Newest {shown} matching</h2>
        {entries !== undefined && (
          <>
            <p role="status" class="muted">
              {paused
                ? 'Paused: new requests are not shown until you resume.'
                : 'Live: new requests appear at the top.'}
            </p>
            <button
              type="button"
              aria-pressed={paused ? 'true' : 'false'}
              hx-get={toggle}
              hx-target="#requests-live"
              hx-swap="outerHTML"
            >
              {paused ? 'Resume' : 'Pause'}
            </button>
          </>
        )}
      </div>
      {error !== undefined && <ErrorNote message={error} />}
      {entries !== undefined && (
        <table class="requests" aria-labelledby="requests-heading">
          <TableHead columns={COLUMNS} numeric={['Status', 'ms']} />
          <tbody
            id="request-rows"
            data-max-rows={shown}
            {...(live ? { 'sse-swap': 'request,reset', 'hx-swap': 'afterbegin' } : {})}
          >
            {entries.length === 0 && (
              <tr data-placeholder>
                <td colspan={COLUMNS.length} class="muted">
                  No request matches{live ? ' yet' : ''}.
                </td>
              </tr>
            )}
            {entries.map((entry) => (
              <RequestRow entry={entry} names={names} query={query} />
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function FilterForm({
  query,
  workspaces,
  rules,
}: {
  query: URLSearchParams;
  workspaces: FixtureWorkspace[];
  rules: FaultRuleView[];
}) {
  const choice = (
    name: string,
    label: string,
    options: readonly (readonly [value: string, label: string])[],
    unfiltered = 'any',
  ) => {
    const current = query.get(name) ?? '';
    // A value the list does not hold (a rule deleted since) stays selectable, so the form says what the URL filters on.
    const all =
      current !== '' && !options.some(([value]) => value === current)
        ? [...options, [current, current] as const]
        : options;
    return (
      <label>
        {label}
        <select name={name}>
          <option value="">{unfiltered}</option>
          {all.map(([value, text]) => (
            <option value={value} selected={value === current}>
              {text}
            </option>
          ))}
        </select>
      </label>
    );
  };
  const text = (name: string, label: string, hint: string) => (
    <label>
      {label}
      <input name={name} value={query.get(name) ?? ''} placeholder={hint} autocomplete="off" />
    </label>
  );
  return (
    <HtmxForm
      class="inline filters"
      aria-label="Filter requests"
      method="get"
      action={REQUESTS}
      replaces="#requests-live"
    >
      {choice(
        'source',
        'Source',
        REQUEST_SOURCES.map((source) => [source, source] as const),
      )}
      {choice(
        'method',
        'Method',
        METHODS.map((method) => [method, method] as const),
      )}
      {text('path', 'Path glob', '/api/v1/**')}
      {text('status', 'Status or class', '404 or 4xx')}
      {choice(
        'workspace_id',
        'Workspace',
        workspaces.map((workspace) => [workspace.id, workspace.name] as const),
      )}
      {choice(
        'fault_rule',
        'Fault rule fired',
        [['any', 'any rule'], ...rules.map((rule) => [rule.id, rule.id] as const)],
        'any or none',
      )}
      {text('text', 'Text in bodies', 'request or response')}
      <label>
        Show newest
        <input name="limit" type="number" min={1} max={MAX_SHOWN} value={query.get('limit') ?? String(DEFAULT_SHOWN)} />
      </label>
      <button type="submit" class="primary">
        Filter
      </button>
    </HtmxForm>
  );
}

// ---------------------------------------------------------------------------------------------
// The detail pane: /ui/requests/<id>

/** A shell word: single-quoted, a quote inside closed, escaped and reopened. */
const shellWord = (word: string) => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`);

/** Headers curl sets itself, or that describe the connection rather than the request. */
const CURL_SETS = new Set(['host', 'content-length', 'connection', 'transfer-encoding', 'accept-encoding']);

/**
 * The request as a curl command line, against the server it went to: headers and body as the
 * journal keeps them, so masked secrets stay masked (`********`) and a body not kept is said so.
 */
export function curlCommand(entry: JournalEntry, origin: string): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(entry.query))
    for (const each of Array.isArray(value) ? value : [value]) search.append(name, each);
  const words = ['curl'];
  if (entry.method !== 'GET') words.push('-X', entry.method);
  words.push(shellWord(`${origin}${entry.path}${search.size > 0 ? `?${search}` : ''}`));
  for (const [name, value] of Object.entries(entry.request.headers))
    if (!CURL_SETS.has(name)) words.push('-H', shellWord(`${name}: ${value}`));
  const { body } = entry.request;
  if (body.text !== null && body.text !== '') words.push('--data-raw', shellWord(body.text));
  const line = words.join(' ');
  if (body.text !== null && body.truncated)
    return `${line} # the body is cut to its first 8 KiB, as the journal keeps it`;
  if (body.text === null && body.size !== null && body.size > 0)
    return `${line} # the body (${body.size} bytes) is not in the journal`;
  return line;
}

function BodyView({ label, body }: { label: string; body: JournalBody }) {
  const facts = [
    body.content_type,
    body.size === null ? 'size unknown' : `${body.size} bytes`,
    body.truncated ? 'first 8 KiB shown' : null,
  ]
    .filter(Boolean)
    .join(' · ');
  return (
    <>
      <h3>{label}</h3>
      <p class="muted">{facts}</p>
      {body.text !== null && body.text !== '' ? (
        // Scrolled when long: focusable, so the keyboard scrolls it too.
        <pre tabindex={0} aria-label={label}>
          {body.text}
        </pre>
      ) : (
        <p class="muted">{body.size ? 'Binary, or not kept in the journal.' : 'Empty.'}</p>
      )}
    </>
  );
}

function NameValues({ label, pairs }: { label: string; pairs: [string, string][] }) {
  return (
    <>
      <h3>{label}</h3>
      {pairs.length === 0 ? <p class="muted">None.</p> : <DetailList pairs={pairs} mono />}
    </>
  );
}

function RequestDetail({ entry, names, curl }: { entry: JournalEntry; names: WorkspaceNames; curl: string }) {
  const query = Object.entries(entry.query).flatMap(([name, value]) =>
    (Array.isArray(value) ? value : [value]).map((each): [string, string] => [name, each]),
  );
  const facts: [string, unknown][] = [
    ['Id', entry.id],
    ['Time (emulator)', entry.time],
    ['Wall time', entry.wall_time],
    ['Took', `${entry.duration_ms} ms`],
    ['Source', entry.source],
    ['Status', <StatusText status={entry.status} />],
    [
      'Workspace',
      entry.workspace_id === null ? '—' : `${names.get(entry.workspace_id) ?? ''} ${entry.workspace_id}`.trim(),
    ],
    [
      'Fault rule',
      entry.fault_rule_id === null ? (
        'none fired'
      ) : (
        <a href={`/ui/faults#${entry.fault_rule_id}`}>{entry.fault_rule_id}</a>
      ),
    ],
  ];
  if (entry.objstore !== null) {
    const { operation, bucket, key, access_key_id, error_code } = entry.objstore;
    facts.push(
      ['Operation', operation],
      ['Bucket', bucket ?? '—'],
      ['Key', key ?? '—'],
      ['Access key id', access_key_id ?? '—'],
      ['Error code', error_code ?? '—'],
    );
  }
  return (
    <article aria-labelledby="request-title">
      <h2 id="request-title" class="mono">
        {entry.method} {entry.path}
      </h2>
      <DetailList pairs={facts} />
      <p>
        <button type="button" data-copy={curl}>
          Copy as curl
        </button>
      </p>
      <pre class="curl" tabindex={0} aria-label="The request as curl">
        {curl}
      </pre>
      <NameValues label="Query" pairs={query} />
      <NameValues label="Request headers" pairs={Object.entries(entry.request.headers)} />
      <BodyView label="Request body" body={entry.request.body} />
      <BodyView label="Response body" body={entry.response.body} />
    </article>
  );
}

const DETAIL_HINT = <p class="muted">Choose a request to see its headers, query, bodies and timings.</p>;

// ---------------------------------------------------------------------------------------------
// The stream of rows: the API's journal stream, each entry rendered as the table's row.

/**
 * The API's journal events (one JSON entry each) as events of table rows, for htmx's sse
 * extension to put in place; ids go through, so a reconnecting browser's Last-Event-ID is the
 * API's. Cancelling, or `clientGone`, cancels the API's stream.
 */
function rowEvents(
  upstream: ReadableStream<Uint8Array>,
  row: (entry: JournalEntry) => string,
  clientGone: AbortSignal,
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const transform = (event: ServerSentEvent, controller: TransformStreamDefaultController<Uint8Array>) => {
    if (event.comment !== undefined) controller.enqueue(encoder.encode(commentText(event.comment)));
    else if (event.event === 'request')
      controller.enqueue(
        encoder.encode(
          eventText({ id: event.id, event: 'request', data: row(JSON.parse(event.data!) as JournalEntry) }),
        ),
      );
    else if (event.event === 'reset')
      controller.enqueue(encoder.encode(eventText({ id: event.id, event: 'reset', data: String(<ResetRow />) })));
  };
  const rows = upstream.pipeThrough(readEvents()).pipeThrough(new TransformStream({ transform })).getReader();
  // The client's going ends the rows (and lets the API's stream go) without an error to log.
  clientGone.addEventListener('abort', () => void rows.cancel(), { once: true });
  return new ReadableStream({
    async pull(controller) {
      const { done, value } = await rows.read();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    cancel: (reason) => rows.cancel(reason),
  });
}

// ---------------------------------------------------------------------------------------------

/** /ui/requests: the request journal, newest first and live, filtered; /ui/requests/<id>: one request beside it. */
export function requestsView(api: DashboardApi) {
  const app = new Hono();

  /** The table's part: the newest matching entries, or the API's refusal of the filter (its status on the page). */
  const loadLive = async (c: Context, query: URLSearchParams): Promise<LiveProps> => {
    const filter = apiFilter(query);
    filter.set('order', 'desc');
    filter.set('limit', String(shownOf(query.get('limit') ?? undefined)));
    const paused = c.req.query('paused') === '1';
    const names = await workspaceNames(api);
    try {
      const { requests } = await api.get<{ requests: JournalEntry[] }>(`/_localplane/requests?${filter}`);
      return { query, entries: requests, names, paused };
    } catch (refused) {
      if (!(refused instanceof DashboardApiError) || refused.status >= 500) throw refused;
      c.status(refused.status as 400);
      return { query, names, paused, error: refused.detail };
    }
  };

  /** The whole page: the filters, the table and the detail pane. */
  const renderPage = async (c: Context, detail: Child) => {
    const query = viewQuery(c);
    const [live, fixtures, { rules }] = await Promise.all([
      loadLive(c, query),
      readFixtures(api),
      api.get<{ rules: FaultRuleView[] }>('/_localplane/fault-rules'),
    ]);
    return renderView(c, {
      title: 'Requests',
      active: 'requests',
      children: (
        <>
          <FilterForm query={query} workspaces={fixtures.workspaces} rules={rules} />
          <div class="split">
            <LiveRequests {...live} />
            <section id="request-detail" aria-label="Request details">
              {detail}
            </section>
          </div>
        </>
      ),
    });
  };

  /** One entry's details, or the API's word that the journal no longer keeps it (its status on the page). */
  const loadDetail = async (c: Context, id: string): Promise<Child> => {
    try {
      const [entry, names, health] = await Promise.all([
        api.get<JournalEntry>(`/_localplane/requests/${encodeURIComponent(id)}`),
        workspaceNames(api),
        api.get<{ objstore_url: string | null }>('/_localplane/health'),
      ]);
      const origin = entry.source === 'objstore' ? (health.objstore_url ?? '') : new URL(c.req.url).origin;
      return <RequestDetail entry={entry} names={names} curl={curlCommand(entry, origin)} />;
    } catch (refused) {
      if (!(refused instanceof DashboardApiError) || refused.status >= 500) throw refused;
      c.status(refused.status as 404);
      return <ErrorNote message={refused.detail} />;
    }
  };

  app.get('/', async (c) => {
    if (isFragmentRequest(c)) return c.html(<LiveRequests {...await loadLive(c, viewQuery(c))} />);
    return renderPage(c, DETAIL_HINT);
  });

  app.get('/stream', async (c) => {
    const query = viewQuery(c);
    const filter = apiFilter(query);
    const since = c.req.query('since');
    if (since) filter.set('since', since);
    const lastEventId = c.req.header('last-event-id');
    const upstream = await api.raw('GET', `/_localplane/requests/stream?${filter}`, {
      headers: lastEventId ? { 'last-event-id': lastEventId } : {},
    });
    if (!upstream.ok || upstream.body === null) return upstream;
    const names = await workspaceNames(api);
    // A browser that ends its side of the connection has gone: the server would keep the half-open connection for a
    // reply with no end.
    const clientGone = new AbortController();
    (c.env as Partial<HttpBindings> | undefined)?.incoming?.socket.once('end', () => clientGone.abort());
    return new Response(
      rowEvents(
        upstream.body,
        (entry) => String(<RequestRow entry={entry} names={names} query={query} />),
        clientGone.signal,
      ),
      { headers: EVENT_STREAM_HEADERS },
    );
  });

  app.get('/:request_id', async (c) => {
    const detail = await loadDetail(c, c.req.param('request_id'));
    if (isFragmentRequest(c)) return c.html(<>{detail}</>);
    return renderPage(c, detail);
  });

  return app;
}
