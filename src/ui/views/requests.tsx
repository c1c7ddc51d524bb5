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
import { MAX_GLOB_LENGTH } from '../../journal/glob.ts';
import { REQUEST_SOURCES } from '../../journal/matching.ts';
import type { JournalBody, JournalBounds, JournalEntry, JournalEntrySummary } from '../../journal/schemas.ts';
import { DashboardApiError, type DashboardApi } from '../api.ts';
import { readFixtures, type FixtureWorkspace, type FixturesView } from '../fixtures.ts';
import { isFragmentRequest } from '../fragments.ts';
import { DetailList, ErrorNote, Field, HtmxForm, renderView, TableHead } from '../layout.tsx';
import { refusedForm, type FormState, refusedStatus } from '../forms.ts';
import { objectLink } from './objects.tsx';
import { EmulatorTime, Timestamp } from '../time.tsx';

const REQUESTS = '/ui/requests';
/** The view's filters, named as the API names them but `text`, which searches both bodies (`any_body_contains`). */
const FILTERS = [
  'source',
  'method',
  'path',
  'status',
  'header',
  'response_header',
  'workspace_id',
  'fault_rule',
  'text',
] as const;
const API_NAMES: Readonly<Record<string, string>> = { text: 'any_body_contains' };
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
/** How many of the newest matching requests the table shows, and at most: the page stays quick with a full journal. */
const DEFAULT_SHOWN = 100;
const MAX_SHOWN = 1000;
/** The page's cursors: `before` an id (the page of older requests), `after` an id (the page of newer ones). */
const CURSORS = ['before', 'after'] as const;

/** The view's URL query: the filters given, how many to show when not the default, and the page's cursor. */
function viewQuery(c: Context): URLSearchParams {
  const query = new URLSearchParams();
  for (const name of FILTERS) {
    const value = c.req.query(name)?.trim();
    if (value) query.set(name, value);
  }
  const limit = c.req.query('limit')?.trim();
  if (limit && limit !== String(DEFAULT_SHOWN)) query.set('limit', limit);
  for (const name of CURSORS) {
    const id = c.req.query(name)?.trim();
    if (id && /^\d+$/.test(id)) query.set(name, id);
  }
  return query;
}

const isPaged = (query: URLSearchParams) => CURSORS.some((name) => query.has(name));

/** The query of the newest page: the filters and the limit, no cursor. */
function newestPageQuery(query: URLSearchParams): URLSearchParams {
  const newest = new URLSearchParams(query);
  for (const name of CURSORS) newest.delete(name);
  return newest;
}

/** The rows a page shows: the query's `limit` when it is one the view takes (limitRefusal says), else the default. */
function shownOf(query: URLSearchParams): number {
  const limit = query.get('limit');
  return limit === null || limitRefusal(query) !== undefined ? DEFAULT_SHOWN : Number(limit);
}

/**
 * Why the view does not take the query's `limit`: above the maximum it is refused, as the API refuses one above its
 * own, rather than cut (a page cut short would pass for every match).
 */
function limitRefusal(query: URLSearchParams): string | undefined {
  const limit = query.get('limit');
  if (limit === null || (/^\d+$/.test(limit) && Number(limit) >= 1 && Number(limit) <= MAX_SHOWN)) return undefined;
  return `A page shows 1 to ${MAX_SHOWN} requests (${limit} asked); Older and Newer page through the rest`;
}

/** The journal filter the API takes for the view's query (no limit, no cursor: the caller says). */
function apiFilter(query: URLSearchParams): URLSearchParams {
  const filter = new URLSearchParams();
  for (const name of FILTERS) {
    const value = query.get(name);
    if (value) filter.set(API_NAMES[name] ?? name, value);
  }
  return filter;
}

/** GET /_localplane/requests's answer. */
type RequestsPage = { requests: JournalEntry[]; total: number; journal: JournalBounds };

const withQuery = (path: string, query: URLSearchParams) => (query.size === 0 ? path : `${path}?${query}`);
const detailPath = (id: number, query: URLSearchParams) => withQuery(`${REQUESTS}/${id}`, query);

type WorkspaceNames = ReadonlyMap<string, string>;
const workspaceNames = async (fixtures: Promise<FixturesView>): Promise<WorkspaceNames> =>
  new Map((await fixtures).workspaces.map((workspace) => [workspace.id, workspace.name]));

const StatusText = ({ status }: { status: number }) => (
  <span class={`status-${Math.floor(status / 100)}`} title={status === 499 ? 'no reply was sent' : undefined}>
    {status}
  </span>
);

/** A path as read: an objstore request's decoded (a key's `=` rather than `%3D`), the API's as sent. */
function readablePath(entry: JournalEntrySummary): string {
  if (entry.source !== 'objstore') return entry.path;
  try {
    return decodeURIComponent(entry.path);
  } catch {
    return entry.path;
  }
}

/** A long path or key, free to break after each `/` rather than anywhere. */
const BreakingAtSlashes = ({ text }: { text: string }) => (
  <>
    {text.split('/').map((part, index) => (
      <>
        {index > 0 && (
          <>
            /<wbr />
          </>
        )}
        {part}
      </>
    ))}
  </>
);

const faultRuleLink = (ruleId: string) => <a href={`/ui/faults#${ruleId}`}>{ruleId}</a>;

/**
 * One journal entry as a row, each cell with its column's class: its link opens the detail pane beside the table; the
 * row of the request the pane shows is marked (aria-current), here and, as the pane changes, by ui.js. The live rows
 * are clones of it that ui.js fills in (LiveRowTemplates; test/ui/requests-live-browser.test.ts compares them).
 */
function RequestRow({
  entry,
  names,
  query,
  selected = false,
}: {
  entry: JournalEntrySummary;
  names: WorkspaceNames;
  query: URLSearchParams;
  selected?: boolean;
}) {
  const href = detailPath(entry.id, query);
  const path = readablePath(entry);
  const workspace = entry.workspace_id === null ? '—' : (names.get(entry.workspace_id) ?? entry.workspace_id);
  return (
    <tr id={`request-${entry.id}`} data-id={entry.id} aria-current={selected ? 'true' : undefined}>
      <td class="mono col-time">
        <EmulatorTime at={entry.time} wall={entry.wall_time} precise />
      </td>
      <td class="col-source">{entry.source}</td>
      <td class="mono col-method">{entry.method}</td>
      <th scope="row" class="path mono">
        <a href={href} title={path} data-detail-link>
          {path}
        </a>
      </th>
      <td class="num col-status">
        <StatusText status={entry.status} />
      </td>
      <td class="col-workspace" title={workspace}>
        {workspace}
      </td>
      <td class="mono col-fault-rule">{entry.fault_rule_id === null ? '—' : faultRuleLink(entry.fault_rule_id)}</td>
      <td class="num col-ms">{entry.duration_ms.toFixed(1)}</td>
    </tr>
  );
}

const COLUMNS = ['Time', 'Source', 'Method', 'Path', 'Status', 'Workspace', 'Fault rule', 'ms'];
/** Each column's class but the path's (it takes the room the others leave): ui.css sets widths and hides by them. */
const COLUMN_CLASSES = {
  Time: 'col-time',
  Source: 'col-source',
  Method: 'col-method',
  Status: 'col-status',
  Workspace: 'col-workspace',
  'Fault rule': 'col-fault-rule',
  ms: 'col-ms',
};

/** The entries LiveRowTemplates renders: times that agree, no rule, a reply; and times apart, a rule, no reply. */
const TEMPLATE_ENTRY: JournalEntrySummary = {
  id: 0,
  time: '2000-01-01T00:00:00.000Z',
  wall_time: '2000-01-01T00:00:00.000Z',
  source: 'api',
  method: 'GET',
  path: '/',
  status: 200,
  workspace_id: null,
  fault_rule_id: null,
  duration_ms: 0,
};
const OTHER_TEMPLATE_ENTRY: JournalEntrySummary = {
  ...TEMPLATE_ENTRY,
  wall_time: '2000-01-01T01:00:00.000Z',
  status: 499,
  fault_rule_id: 'fault-rule',
};

/**
 * The live table's rows as RequestRow renders them, for ui.js to clone and fill in from the stream's summaries (JSON,
 * not HTML: the stream stays cheap to watch): a row, and another whose cells that differ by the entry (the time pair,
 * the fired rule's link, no reply's title) ui.js takes in place of the first's.
 */
const LiveRowTemplates = ({ query }: { query: URLSearchParams }) => (
  <>
    <template id="request-row">
      <RequestRow entry={TEMPLATE_ENTRY} names={new Map()} query={query} />
    </template>
    <template id="request-row-other">
      <RequestRow entry={OTHER_TEMPLATE_ENTRY} names={new Map()} query={query} />
    </template>
  </>
);

/** After a reset the journal numbers from 1 again: the rows above this one are the new ones. */
const ResetRow = () => (
  <tr class="journal-reset">
    <td colspan={COLUMNS.length}>The journal was reset here: what is above came after it.</td>
  </tr>
);

/** Where the rows shown stand in the journal: for the line above the table and the links to other pages. */
interface PageFacts {
  /** Kept entries matching the filters, on every page. */
  matching: number;
  older: boolean;
  newer: boolean;
  journal: JournalBounds;
  /** The filter's fault rule, when it fired more often than the journal keeps requests of it. */
  rule?: { id: string; fired: number };
}

interface LiveProps {
  query: URLSearchParams;
  entries?: JournalEntry[];
  names: WorkspaceNames;
  paused: boolean;
  error?: string;
  /** The filter form's refusal at its fields, when the API (or the view, for the limit) refused the filter. */
  filterState?: FormState;
  page?: PageFacts;
  /** The request the detail pane shows, its row marked. */
  selectedId?: number;
  notice?: string;
}

const counted = (count: number) => count.toLocaleString('en-US');

/** How many rows of how many matching, and what the journal no longer holds. */
function PageNote({ shown, page }: { shown: number; page: PageFacts }) {
  const { matching, journal, rule } = page;
  return (
    <div id="requests-page-note">
      <p class="muted">
        Showing {counted(shown)} of {counted(matching)} matching.
        {journal.dropped > 0 &&
          ` Requests before #${counted(journal.first_kept_id)} were dropped (the journal keeps the last ` +
            `${counted(journal.capacity)}).`}
      </p>
      {rule !== undefined && (
        <p class="muted">
          The rule {rule.id} fired {counted(rule.fired)} times; {counted(rule.fired - matching)} of them are no longer
          in the journal.
        </p>
      )}
    </div>
  );
}

/** Links to the newest page, the page of newer and of older requests, each a page of the same size. */
function Pager({ query, entries, page }: { query: URLSearchParams; entries: JournalEntry[]; page: PageFacts }) {
  const link = (label: string, cursor?: [name: string, id: number]) => {
    const target = newestPageQuery(query);
    if (cursor) target.set(cursor[0], String(cursor[1]));
    const href = withQuery(REQUESTS, target);
    return (
      <a href={href} hx-get={href} hx-target="#requests-live" hx-swap="outerHTML" hx-push-url="true">
        {label}
      </a>
    );
  };
  const newest = entries[0]?.id;
  const oldest = entries.at(-1)?.id;
  const after = Number(query.get('after') ?? 0);
  if (!isPaged(query) && !page.older) return null;
  return (
    <nav class="pager" aria-label="Pages of requests">
      {isPaged(query) && link('Newest')}
      {page.newer && link('Newer', ['after', newest ?? Number(query.get('before')) - 1])}
      {page.older && link('Older', ['before', oldest ?? after + 1])}
    </nav>
  );
}

/**
 * The newest matching requests, newest first. Live, it takes new ones from the stream (from the
 * newest shown on, so none is missed between the page and the stream) and keeps the newest
 * `limit` rows; paused, the stream is closed and the rows stay. Resuming loads the newest again.
 */
function LiveRequests({ query, entries, names, paused, error, page, selectedId, notice }: LiveProps) {
  const shown = shownOf(query);
  const paged = isPaged(query);
  const streamQuery = new URLSearchParams(query);
  streamQuery.set('since', String(entries?.[0]?.id ?? 0));
  const pausedQuery = new URLSearchParams(query);
  pausedQuery.set('paused', '1');
  // Only the newest page is live: the rows of an older one stay as they are.
  const live = !paused && !paged && entries !== undefined;
  const toggle = paused ? withQuery(REQUESTS, query) : withQuery(REQUESTS, pausedQuery);
  return (
    <section
      id="requests-live"
      aria-labelledby="requests-heading"
      data-route="GET /_localplane/requests, GET /_localplane/requests/stream"
      {...(live ? { 'hx-ext': 'sse', 'sse-connect': withQuery(`${REQUESTS}/stream`, streamQuery) } : {})}
    >
      <div class="live-bar">
        <h2 id="requests-heading">{paged ? `${shown} older matching` : `Newest ${shown} matching`}</h2>
        {entries !== undefined && !paged && (
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
      {notice !== undefined && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      {entries !== undefined && page !== undefined && <PageNote shown={entries.length} page={page} />}
      {entries !== undefined && (
        <table class="requests" aria-labelledby="requests-heading">
          <TableHead columns={COLUMNS} numeric={['Status', 'ms']} classes={COLUMN_CLASSES} />
          <tbody
            id="request-rows"
            data-max-rows={shown}
            {...(live
              ? {
                  'sse-swap': 'requests,reset',
                  'hx-swap': 'afterbegin',
                  // What ui.js fills the stream's rows with: the rows' links keep the filters; workspaces by name.
                  'data-row-query': query.toString(),
                  'data-workspace-names': JSON.stringify(Object.fromEntries(names)),
                }
              : {})}
          >
            {entries.length === 0 && (
              <tr data-placeholder>
                <td colspan={COLUMNS.length} class="muted">
                  No request matches{live ? ' yet' : ''}.
                </td>
              </tr>
            )}
            {entries.map((entry) => (
              <RequestRow entry={entry} names={names} query={query} selected={entry.id === selectedId} />
            ))}
          </tbody>
        </table>
      )}
      {live && <LiveRowTemplates query={query} />}
      {entries !== undefined && page !== undefined && <Pager query={query} entries={entries} page={page} />}
    </section>
  );
}

function FilterForm({
  query,
  workspaces,
  rules,
  state,
  outOfBand = false,
}: {
  query: URLSearchParams;
  workspaces: FixtureWorkspace[];
  rules: FaultRuleView[];
  /** The refusal of the filter, at its fields; out of band, the form comes with the rows it refused. */
  state?: FormState;
  outOfBand?: boolean;
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
      <Field label={label}>
        <select name={name}>
          <option value="">{unfiltered}</option>
          {all.map(([value, text]) => (
            <option value={value} selected={value === current}>
              {text}
            </option>
          ))}
        </select>
      </Field>
    );
  };
  const text = (name: string, label: string, hint: string, constraints: Record<string, string | number> = {}) => (
    <Field label={label}>
      <input name={name} value={query.get(name) ?? ''} placeholder={hint} autocomplete="off" {...constraints} />
    </Field>
  );
  return (
    <HtmxForm
      id="request-filters"
      class="inline filters"
      aria-label="Filter requests"
      method="get"
      action={REQUESTS}
      replaces="#requests-live"
      state={state}
      {...(outOfBand ? { 'hx-swap-oob': 'true' } : {})}
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
      {text('path', 'Path glob', '/api/v1/**', {
        maxlength: MAX_GLOB_LENGTH,
        pattern: '(/|\\*).*',
        title: 'A path glob starts with / (or a wildcard)',
      })}
      {text('status', 'Status or class', '404 or 4xx', {
        pattern: '[1-5]([0-9]{2}|[xX]{2})',
        title: 'Three digits (404) or a class (4xx)',
      })}
      {text('header', 'Request header', 'Name:value or Name')}
      {text('response_header', 'Response header', 'Retry-After:120 or Name')}
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
      <Field label="Show newest">
        <input name="limit" type="number" min={1} max={MAX_SHOWN} value={query.get('limit') ?? String(DEFAULT_SHOWN)} />
      </Field>
      <button type="submit" class="primary">
        Filter
      </button>
    </HtmxForm>
  );
}

// ---------------------------------------------------------------------------------------------
// The detail pane: /ui/requests/<id>

/** The URL the request went to, its query as the journal keeps it (masked values masked). */
function requestUrl(entry: JournalEntry, origin: string): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(entry.query))
    for (const each of Array.isArray(value) ? value : [value]) search.append(name, each);
  return `${origin}${entry.path}${search.size > 0 ? `?${search}` : ''}`;
}

/** A shell word: single-quoted, a quote inside closed, escaped and reopened. */
const shellWord = (word: string) => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`);

/** Headers curl sets itself, or that describe the connection rather than the request. */
const CURL_SETS = new Set(['host', 'content-length', 'connection', 'transfer-encoding', 'accept-encoding']);

/**
 * The request as a curl command line, against the server it went to: headers and body as the
 * journal keeps them, so masked secrets stay masked (`********`) and a body not kept is said so.
 */
export function curlCommand(entry: JournalEntry, origin: string): string {
  const words = ['curl'];
  if (entry.method !== 'GET') words.push('-X', entry.method);
  words.push(shellWord(requestUrl(entry, origin)));
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

/**
 * JSON text indented by 2, token by token: numbers, escapes and the order of keys stay as sent (a parse and
 * stringify would round big numbers).
 */
function indentJson(text: string): string {
  let out = '';
  let depth = 0;
  const newline = () => `\n${'  '.repeat(depth)}`;
  for (let index = 0; index < text.length; index++) {
    const char = text[index]!;
    if (char === '"') {
      const end = stringEnd(text, index);
      out += text.slice(index, end);
      index = end - 1;
    } else if (char === '{' || char === '[') {
      const rest = text.slice(index + 1).trimStart();
      if (rest.startsWith(char === '{' ? '}' : ']')) {
        out += char === '{' ? '{}' : '[]';
        index = text.length - rest.length;
      } else {
        depth++;
        out += char + newline();
      }
    } else if (char === '}' || char === ']') {
      depth--;
      out += newline() + char;
    } else if (char === ',') out += `,${newline()}`;
    else if (char === ':') out += ': ';
    else if (!/\s/.test(char)) out += char;
  }
  return out;
}

/** The index after the JSON string starting at `start` (its opening quote). */
function stringEnd(text: string, start: number): number {
  for (let index = start + 1; index < text.length; index++) {
    if (text[index] === '\\') index++;
    else if (text[index] === '"') return index + 1;
  }
  return text.length;
}

/** A body's text as shown: a whole JSON object or array indented by 2, anything else as kept. */
function shownText(body: JournalBody & { text: string }): string {
  if (body.truncated || !/^\s*[[{]/.test(body.text)) return body.text;
  try {
    JSON.parse(body.text);
  } catch {
    return body.text;
  }
  return indentJson(body.text);
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
          {shownText({ ...body, text: body.text })}
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

function RequestDetail({ entry, names, origin }: { entry: JournalEntry; names: WorkspaceNames; origin: string }) {
  const curl = curlCommand(entry, origin);
  const query = Object.entries(entry.query).flatMap(([name, value]) =>
    (Array.isArray(value) ? value : [value]).map((each): [string, string] => [name, each]),
  );
  const facts: [string, unknown][] = [
    ['Id', entry.id],
    ['Time (emulator)', <Timestamp at={entry.time} precise />],
    ['Wall time', <Timestamp at={entry.wall_time} precise />],
    ['Took', `${entry.duration_ms} ms`],
    ['Source', entry.source],
    ['Status', <StatusText status={entry.status} />],
    [
      'Workspace',
      entry.workspace_id === null ? '—' : `${names.get(entry.workspace_id) ?? ''} ${entry.workspace_id}`.trim(),
    ],
    ['Fault rule', entry.fault_rule_id === null ? 'none fired' : faultRuleLink(entry.fault_rule_id)],
  ];
  if (entry.objstore !== null) {
    const { operation, bucket, key, access_key_id, error_code } = entry.objstore;
    facts.push(
      ['Operation', operation],
      ['Bucket', bucket ?? '—'],
      [
        'Key',
        key === null ? (
          '—'
        ) : bucket === null ? (
          <BreakingAtSlashes text={key} />
        ) : (
          <a href={objectLink(bucket, key)} title="The object in the object browser">
            <BreakingAtSlashes text={key} />
          </a>
        ),
      ],
      ['Access key id', access_key_id ?? '—'],
      ['Error code', error_code ?? '—'],
    );
  }
  return (
    <article aria-labelledby="request-title">
      {/* Focused when the pane loads (ui.js): the copy buttons are the next stops of Tab. */}
      <h2 id="request-title" class="mono" tabindex={-1}>
        {entry.method} <BreakingAtSlashes text={readablePath(entry)} />
      </h2>
      <p class="actions">
        <button type="button" data-copy={curl}>
          Copy as curl
        </button>
        <button type="button" data-copy={requestUrl(entry, origin)}>
          Copy URL
        </button>
        {entry.response.body.text !== null && entry.response.body.text !== '' && (
          <button type="button" data-copy={entry.response.body.text}>
            Copy response body
          </button>
        )}
        <button type="button" data-copy={JSON.stringify(entry, null, 2)}>
          Copy as JSON
        </button>
      </p>
      <DetailList pairs={facts} />
      <pre class="curl" tabindex={0} aria-label="The request as curl">
        {curl}
      </pre>
      <NameValues label="Query" pairs={query} />
      <NameValues label="Request headers" pairs={Object.entries(entry.request.headers)} />
      <NameValues label="Response headers" pairs={Object.entries(entry.response.headers)} />
      <BodyView label="Request body" body={entry.request.body} />
      <BodyView label="Response body" body={entry.response.body} />
    </article>
  );
}

const DETAIL_HINT = <p class="muted">Choose a request to see its headers, query, bodies and timings.</p>;

const JOURNAL_EMPTIED = 'The journal was emptied: the requests made from now on show here.';
const CONFIRM_CLEAR = 'Empty the request journal? Every request it holds is dropped (ids go on from where they are).';

/** Empties the journal (DELETE /_localplane/requests) after a confirmation; the table shows what is left. */
const ClearJournalForm = ({ query }: { query: URLSearchParams }) => (
  <HtmxForm
    class="inline"
    action={withQuery(`${REQUESTS}/clear`, query)}
    replaces="#requests-live"
    hx-confirm={CONFIRM_CLEAR}
    aria-label="Clear the journal"
    data-route="DELETE /_localplane/requests"
  >
    <button type="submit" class="danger">
      Clear the journal
    </button>
  </HtmxForm>
);

// ---------------------------------------------------------------------------------------------
// The live rows: the API's journal stream of summaries, which ui.js makes into the table's rows (LiveRowTemplates).

/**
 * The API's journal events for the page: its chunks of entry summaries as they are (ui.js makes
 * them rows, as RequestRow does), a reset as the row saying so, for htmx's sse extension to put
 * at the top. Ids go through, so a reconnecting browser's Last-Event-ID is the API's.
 * Cancelling, or `clientGone`, cancels the API's stream.
 */
function liveEvents(upstream: ReadableStream<Uint8Array>, clientGone: AbortSignal): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const transform = (event: ServerSentEvent, controller: TransformStreamDefaultController<Uint8Array>) => {
    if (event.comment !== undefined) controller.enqueue(encoder.encode(commentText(event.comment)));
    else if (event.event === 'requests')
      controller.enqueue(encoder.encode(eventText({ id: event.id, event: 'requests', data: event.data! })));
    else if (event.event === 'reset')
      controller.enqueue(encoder.encode(eventText({ id: event.id, event: 'reset', data: String(<ResetRow />) })));
  };
  const events = upstream.pipeThrough(readEvents()).pipeThrough(new TransformStream({ transform })).getReader();
  // The client's going ends the events (and lets the API's stream go) without an error to log.
  clientGone.addEventListener('abort', () => void events.cancel(), { once: true });
  return new ReadableStream({
    async pull(controller) {
      const { done, value } = await events.read();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    cancel: (reason) => events.cancel(reason),
  });
}

// ---------------------------------------------------------------------------------------------

/** /ui/requests: the request journal, newest first and live, filtered; /ui/requests/<id>: one request beside it. */
export function requestsView(api: DashboardApi) {
  const app = new Hono();

  /**
   * The page's rows, newest first (the newest matching entries, or those before or after a cursor), where they stand,
   * or the refusal of the filter or the limit (its status on the page). `fixtures`: the page's one read of them.
   */
  const loadLive = async (c: Context, query: URLSearchParams, fixtures = readFixtures(api)): Promise<LiveProps> => {
    const paused = c.req.query('paused') === '1';
    const names = await workspaceNames(fixtures);
    /** The refusal at the filter's fields; what is about none of them in the rows' alert. */
    const refusedFilter = (status: number, error: unknown): LiveProps => {
      c.status(refusedStatus(c, status) as 400);
      const { state } = refusedForm(error, Object.fromEntries(query));
      return { query, names, paused, error: state.error, filterState: state.fieldErrors ? state : undefined };
    };
    const limitError = limitRefusal(query);
    if (limitError !== undefined)
      return refusedFilter(422, new DashboardApiError(422, limitError, [{ loc: ['query', 'limit'], msg: limitError }]));
    const filter = apiFilter(query);
    filter.set('limit', String(shownOf(query)));
    const after = query.get('after');
    const before = query.get('before');
    // Newer rows: the first ones after the cursor, oldest first; older: the newest before it.
    if (after !== null) filter.set('since', after);
    else filter.set('order', 'desc');
    if (after === null && before !== null) filter.set('before', before);
    try {
      const [listed, unpaged, rule] = await Promise.all([
        api.get<RequestsPage>(`/_localplane/requests?${filter}`),
        isPaged(query) ? api.get<{ count: number }>(`/_localplane/requests/count?${apiFilter(query)}`) : undefined,
        filteredRule(query),
      ]);
      const entries = after === null ? listed.requests : [...listed.requests].reverse();
      const matching = unpaged?.count ?? listed.total;
      const beyond = listed.total > entries.length;
      const page: PageFacts = {
        matching,
        older: after === null ? beyond : true,
        newer: after === null ? before !== null : beyond,
        journal: listed.journal,
        rule: rule !== undefined && rule.fired > matching ? rule : undefined,
      };
      return { query, entries, names, paused, page };
    } catch (refused) {
      if (!(refused instanceof DashboardApiError) || refused.status >= 500) throw refused;
      return refusedFilter(refused.status, refused);
    }
  };

  /** The fault rule the view filters on when it filters on nothing else: its count of firings is comparable. */
  const filteredRule = async (query: URLSearchParams): Promise<FaultRuleView | undefined> => {
    const ruleId = query.get('fault_rule');
    if (ruleId === null || ruleId === 'any' || apiFilter(query).size !== 1) return undefined;
    const { rules } = await api.get<{ rules: FaultRuleView[] }>('/_localplane/fault-rules');
    return rules.find((rule) => rule.id === ruleId);
  };

  /** The whole page: the filters, the table and the detail pane (of the request `selectedId`, its row marked). */
  const renderPage = async (c: Context, fixtures: Promise<FixturesView>, detail: Child, selectedId?: number) => {
    const query = viewQuery(c);
    const [live, { workspaces }, { rules }] = await Promise.all([
      loadLive(c, query, fixtures),
      fixtures,
      api.get<{ rules: FaultRuleView[] }>('/_localplane/fault-rules'),
    ]);
    return renderView(c, {
      title: 'Requests',
      active: 'requests',
      children: (
        <>
          <FilterForm query={query} workspaces={workspaces} rules={rules} state={live.filterState} />
          <ClearJournalForm query={query} />
          <div class="split requests-split" data-route="GET /_localplane/requests/:request_id">
            <LiveRequests {...live} selectedId={selectedId} />
            <section id="request-detail" aria-label="Request details">
              {detail}
            </section>
          </div>
        </>
      ),
    });
  };

  /** One entry's details, or the API's word that the journal no longer keeps it (its status on the page). */
  const loadDetail = async (c: Context, id: string, fixtures: Promise<FixturesView>): Promise<Child> => {
    try {
      const [entry, names, health] = await Promise.all([
        api.get<JournalEntry>(`/_localplane/requests/${encodeURIComponent(id)}`),
        workspaceNames(fixtures),
        api.get<{ objstore_url: string | null }>('/_localplane/health'),
      ]);
      const origin = entry.source === 'objstore' ? (health.objstore_url ?? '') : new URL(c.req.url).origin;
      return <RequestDetail entry={entry} names={names} origin={origin} />;
    } catch (refused) {
      if (!(refused instanceof DashboardApiError) || refused.status >= 500) throw refused;
      c.status(refused.status as 404);
      return <ErrorNote message={refused.detail} />;
    }
  };

  app.get('/', async (c) => {
    const fixtures = readFixtures(api);
    if (isFragmentRequest(c)) {
      const query = viewQuery(c);
      const live = await loadLive(c, query, fixtures);
      if (!live.filterState) return c.html(<LiveRequests {...live} />);
      // A refused filter: the form comes back out of band, each refusal at its field.
      const [{ workspaces }, { rules }] = await Promise.all([
        fixtures,
        api.get<{ rules: FaultRuleView[] }>('/_localplane/fault-rules'),
      ]);
      return c.html(
        <>
          <LiveRequests {...live} />
          <FilterForm query={query} workspaces={workspaces} rules={rules} state={live.filterState} outOfBand />
        </>,
      );
    }
    return renderPage(c, fixtures, DETAIL_HINT);
  });

  app.get('/stream', async (c) => {
    const query = viewQuery(c);
    const filter = apiFilter(query);
    filter.set('summary', 'true');
    // The table keeps its newest rows only: in a burst the stream sends no more than those.
    filter.set('newest', String(shownOf(query)));
    const since = c.req.query('since');
    if (since) filter.set('since', since);
    const lastEventId = c.req.header('last-event-id');
    const upstream = await api.raw('GET', `/_localplane/requests/stream?${filter}`, {
      headers: lastEventId ? { 'last-event-id': lastEventId } : {},
    });
    if (!upstream.ok || upstream.body === null) return upstream;
    // A browser that ends its side of the connection has gone: the server would keep the half-open connection for a
    // reply with no end.
    const clientGone = new AbortController();
    (c.env as Partial<HttpBindings> | undefined)?.incoming?.socket.once('end', () => clientGone.abort());
    return new Response(liveEvents(upstream.body, clientGone.signal), { headers: EVENT_STREAM_HEADERS });
  });

  // A plain form's post is answered with the view (a redirect), htmx's with the table.
  app.post('/clear', async (c) => {
    const query = newestPageQuery(viewQuery(c));
    await api.json('DELETE', '/_localplane/requests');
    if (!isFragmentRequest(c)) return c.redirect(withQuery(REQUESTS, query), 303);
    return c.html(<LiveRequests {...await loadLive(c, query)} notice={JOURNAL_EMPTIED} />);
  });

  app.get('/:request_id', async (c) => {
    const requestId = c.req.param('request_id');
    const fixtures = readFixtures(api);
    const detail = await loadDetail(c, requestId, fixtures);
    if (isFragmentRequest(c)) return c.html(<>{detail}</>);
    return renderPage(c, fixtures, detail, Number(requestId));
  });

  return app;
}
