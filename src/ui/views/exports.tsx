import { Hono, type Context } from 'hono';
import {
  COMPRESSIONS,
  FORMAT_VERSIONS,
  MAX_INTERVAL_HOURS,
  type DestinationResponse,
  type ExportResponse,
  type RunResponse,
} from '../../bulk-exports/schemas.ts';
import { EXPORT_STATUSES, isTerminalStatus } from '../../bulk-exports/statuses.ts';
import type { ObjectsPage } from '../../objstore/browser-routes.ts';
import { DashboardApiError, type DashboardApi } from '../api.ts';
import type { FixturesView } from '../../admin/schemas.ts';
import { readFixtures, type FixtureWorkspace } from '../fixtures.ts';
import {
  formValues,
  optionalNumber,
  optionalText,
  refusal,
  refusedAt,
  refusedForm,
  refusedStatus,
  type FormState,
  type FormValues,
} from '../forms.ts';
import { isFragmentRequest } from '../fragments.ts';
import { CountField, DetailList, ErrorNote, Field, HtmxForm, Options, renderView, TableHead } from '../layout.tsx';
import { formatBytes, KeyText } from './objects.tsx';
import { Timestamp } from '../time.tsx';
import { ArmedExportRunKnobs, ExportRunKnobForm, exportRunKnobRequest, type ArmedKnobs } from './faults.tsx';

const EXPORTS = '/ui/exports';
const exportsUrl = (workspaceId: string) => `${EXPORTS}?workspace_id=${workspaceId}`;
const exportUrl = (workspaceId: string, exportId: string) => `${EXPORTS}/${exportId}?workspace_id=${workspaceId}`;
const API = '/api/v1/bulk-exports';

/** Created and Running move on by themselves (on a running clock): their pages refresh until they end. */
const isActive = (status: string) => status === 'Created' || status === 'Running';

/**
 * Where a file an export run lists lies in the objstore: `<bucket>/<key>`, or the key alone when the destination leaves
 * the bucket out of its paths.
 */
function objectOf(file: string, destination: DestinationResponse | null): { bucket: string; key: string } {
  if (destination && !destination.config.include_bucket_in_prefix)
    return { bucket: destination.config.bucket_name ?? '', key: file };
  const slash = file.indexOf('/');
  return { bucket: file.slice(0, slash), key: file.slice(slash + 1) };
}

const bucketSearchUrl = (bucket: string, search: string) =>
  `/ui/objects/${encodeURIComponent(bucket)}?${new URLSearchParams({ search })}`;

const objectUrl = ({ bucket, key }: { bucket: string; key: string }) =>
  `/ui/objects/${encodeURIComponent(bucket)}/object?key=${encodeURIComponent(key)}`;

const Status = ({ status }: { status: string }) => (
  <span
    class={`badge export-status ${isTerminalStatus(status) ? (status === 'Completed' ? 'done' : 'failed') : 'active'}`}
  >
    {status}
  </span>
);

const Window = ({ start, end }: { start: string; end: string | null }) => (
  <span class="mono">
    <Timestamp at={start} /> → {end ? <Timestamp at={end} /> : 'on'}
  </span>
);

function projectName(exportRow: ExportResponse, workspace: FixtureWorkspace | undefined) {
  if (exportRow.all_experiments) return 'all experiments';
  return workspace?.sessions.find((session) => session.id === exportRow.session_id)?.name ?? exportRow.session_id;
}

const WORKSPACE_HINT = 'Bulk exports need a workspace on the plus or enterprise tier.';

interface WorkspaceForms {
  destination?: FormState;
  export?: FormState;
  /** A destination's delete or rotation, its id in values.destination_id. */
  destinationAction?: FormState;
}

interface WorkspaceProps {
  workspace: FixtureWorkspace;
  fixtures: FixturesView;
  destinations: DestinationResponse[];
  exports: ExportResponse[];
  forms: WorkspaceForms;
  query: ListQuery;
}

const PAGE_SIZE = 20;
const CHILDREN_PAGE_SIZE = 10;

/** What the list shows: its filters, order and page, and the recurring export whose children are paged. */
interface ListQuery {
  status: string;
  destinationId: string;
  sort: 'newest' | 'oldest';
  page: number;
  childrenOf: string;
  childrenPage: number;
}

const pageNumber = (text: string | undefined) => Math.max(1, Number.parseInt(text ?? '', 10) || 1);

const DEFAULT_QUERY: ListQuery = {
  status: '',
  destinationId: '',
  sort: 'newest',
  page: 1,
  childrenOf: '',
  childrenPage: 1,
};

function listQueryOf(c: Context): ListQuery {
  return {
    status: c.req.query('status') ?? '',
    destinationId: c.req.query('destination_id') ?? '',
    sort: c.req.query('sort') === 'oldest' ? 'oldest' : 'newest',
    page: pageNumber(c.req.query('page')),
    childrenOf: c.req.query('children_of') ?? '',
    childrenPage: pageNumber(c.req.query('children_page')),
  };
}

/** The list's URL for a query, the defaults left out. */
function listUrl(workspaceId: string, query: ListQuery): string {
  const search = new URLSearchParams({ workspace_id: workspaceId });
  if (query.status) search.set('status', query.status);
  if (query.destinationId) search.set('destination_id', query.destinationId);
  if (query.sort !== 'newest') search.set('sort', query.sort);
  if (query.page > 1) search.set('page', String(query.page));
  if (query.childrenOf) {
    search.set('children_of', query.childrenOf);
    if (query.childrenPage > 1) search.set('children_page', String(query.childrenPage));
  }
  return `${EXPORTS}?${search}`;
}

const windowText = (row: Pick<ExportResponse, 'start_time' | 'end_time' | 'interval_hours'>) => {
  const minute = (time: string) => time.slice(0, 16).replace('T', ' ');
  return row.end_time
    ? `${minute(row.start_time)} → ${minute(row.end_time)}`
    : `from ${minute(row.start_time)}, every ${row.interval_hours} h`;
};

/** An export as a person knows it: where it goes, what it exports and which window. */
function exportName(row: ExportResponse, destinations: DestinationResponse[], workspace: FixtureWorkspace | undefined) {
  const destination =
    destinations.find((candidate) => candidate.id === row.bulk_export_destination_id)?.display_name ??
    'deleted destination';
  return `${destination} · ${projectName(row, workspace)} · ${windowText(row)}`;
}

/** Counts by status, most first: "50 Completed · 8 Failed". */
function statusCounts(rows: readonly { status: string }[]): string {
  const counts = new Map<string, number>();
  for (const row of rows) counts.set(row.status, (counts.get(row.status) ?? 0) + 1);
  return [...counts]
    .sort((a, b) => b[1] - a[1])
    .map(([status, count]) => `${count} ${status}`)
    .join(' · ');
}

/** Every export of the workspace, newest first, read a thousand (the API's most) at a time. */
async function allExports(api: DashboardApi, workspaceId: string): Promise<ExportResponse[]> {
  const exports: ExportResponse[] = [];
  for (;;) {
    const page = await api.get<ExportResponse[]>(`${API}?limit=1000&offset=${exports.length}`, { workspaceId });
    exports.push(...page);
    if (page.length < 1000) return exports;
  }
}

/** Previous and next links of a paged list, with where it is. */
function Pager({
  page,
  pages,
  link,
  label,
}: {
  page: number;
  pages: number;
  link: (page: number) => string;
  label: string;
}) {
  if (pages <= 1) return null;
  return (
    <nav class="pager" aria-label={label}>
      {page > 1 ? <a href={link(page - 1)}>Previous</a> : <span class="muted">Previous</span>}
      <span>
        Page {page} of {pages}
      </span>
      {page < pages ? <a href={link(page + 1)}>Next</a> : <span class="muted">Next</span>}
    </nav>
  );
}

const ExportLink = ({ row, name }: { row: ExportResponse; name: string }) => (
  <>
    <a href={exportUrl(row.tenant_id, row.id)}>{name}</a>
    <div class="muted mono">{row.id}</div>
  </>
);

/** A recurring export's child exports, collapsed: their counts by status, and a page of them when opened. */
function ChildExports({
  parent,
  children,
  query,
}: {
  parent: ExportResponse;
  children: ExportResponse[];
  query: ListQuery;
}) {
  const shown = query.status ? children.filter((child) => child.status === query.status) : children;
  const open = query.childrenOf === parent.id;
  const pages = Math.max(1, Math.ceil(shown.length / CHILDREN_PAGE_SIZE));
  const page = open ? Math.min(query.childrenPage, pages) : 1;
  const link = (childrenPage: number) =>
    `${listUrl(parent.tenant_id, { ...query, childrenOf: parent.id, childrenPage })}#children-${parent.id}`;
  return (
    <details class="children" id={`children-${parent.id}`} open={open}>
      <summary>
        {children.length === 1 ? '1 child export' : `${children.length} child exports`}: {statusCounts(children)}
      </summary>
      {query.status && (
        <p class="muted">
          {shown.length} {query.status}
        </p>
      )}
      <table aria-label={`Child exports of ${parent.id}`}>
        <TableHead columns={['Window (UTC)', 'Status', 'Created']} />
        <tbody>
          {shown.slice((page - 1) * CHILDREN_PAGE_SIZE, page * CHILDREN_PAGE_SIZE).map((child) => (
            <tr>
              <th scope="row">
                <a href={exportUrl(child.tenant_id, child.id)}>{windowText(child)}</a>
                <div class="muted mono">{child.id}</div>
              </th>
              <td>
                <Status status={child.status} />
              </td>
              <td class="mono">
                <Timestamp at={child.created_at} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <Pager page={page} pages={pages} link={link} label="Pages of child exports" />
    </details>
  );
}

function ExportFilters({
  workspace,
  destinations,
  query,
}: {
  workspace: FixtureWorkspace;
  destinations: DestinationResponse[];
  query: ListQuery;
}) {
  return (
    <HtmxForm method="get" action={EXPORTS} replaces="#exports-workspace" class="inline" aria-label="Filter exports">
      <input type="hidden" name="workspace_id" value={workspace.id} />
      <Field label="Status">
        <select name="status">
          <Options choices={EXPORT_STATUSES} selected={query.status} any="any" />
        </select>
      </Field>
      <Field label="Destination">
        <select name="destination_id">
          <option value="">any</option>
          {destinations.map((destination) => (
            <option value={destination.id} selected={destination.id === query.destinationId}>
              {destination.display_name}
            </option>
          ))}
        </select>
      </Field>
      <Field label="Order">
        <select name="sort">
          <option value="newest">newest first</option>
          <option value="oldest" selected={query.sort === 'oldest'}>
            oldest first
          </option>
        </select>
      </Field>
      <button type="submit">Show</button>
    </HtmxForm>
  );
}

/**
 * The workspace's exports a page at a time, filtered by status and destination, in order of creation; a recurring
 * export's child exports are collapsed under it. The API pages but does not filter, so the view reads them all and
 * filters and pages here.
 */
function ExportList({
  workspace,
  destinations,
  exports,
  query,
}: Pick<WorkspaceProps, 'workspace' | 'destinations' | 'exports' | 'query'>) {
  const ids = new Set(exports.map((row) => row.id));
  const childrenOf = new Map<string, ExportResponse[]>();
  for (const row of exports) {
    if (row.source_bulk_export_id && ids.has(row.source_bulk_export_id))
      childrenOf.set(row.source_bulk_export_id, [...(childrenOf.get(row.source_bulk_export_id) ?? []), row]);
  }
  const matching = exports.filter(
    (row) =>
      !(row.source_bulk_export_id && ids.has(row.source_bulk_export_id)) &&
      (!query.destinationId || row.bulk_export_destination_id === query.destinationId) &&
      (!query.status ||
        row.status === query.status ||
        (childrenOf.get(row.id) ?? []).some((child) => child.status === query.status)),
  );
  if (query.sort === 'oldest') matching.reverse();
  const pages = Math.max(1, Math.ceil(matching.length / PAGE_SIZE));
  const page = Math.min(query.page, pages);
  const shown = matching.slice((page - 1) * PAGE_SIZE, page * PAGE_SIZE);
  const polling = shown.some(
    (row) => isActive(row.status) || (childrenOf.get(row.id) ?? []).some((child) => isActive(child.status)),
  )
    ? {
        'hx-get': listUrl(workspace.id, query),
        'hx-trigger': 'every 1s',
        'hx-select': '#export-list',
        'hx-swap': 'outerHTML',
      }
    : {};
  const filtered = query.status !== '' || query.destinationId !== '';
  return (
    <div id="export-list" {...polling} data-route="GET /api/v1/bulk-exports">
      {exports.length === 0 ? (
        <p class="muted">No exports in {workspace.name} yet.</p>
      ) : (
        <>
          <p class="muted">
            {matching.length} {filtered ? 'matching ' : ''}
            {matching.length === 1 ? 'export' : 'exports'}
            {childrenOf.size > 0 && ', child exports under their recurring export'}
            {filtered && (
              <>
                {' · '}
                <a href={exportsUrl(workspace.id)}>show all</a>
              </>
            )}
          </p>
          <table aria-labelledby="exports-heading" class="exports">
            <TableHead columns={['Export', 'Status', 'Created']} />
            {shown.map((row) => {
              const children = childrenOf.get(row.id) ?? [];
              return (
                <tbody>
                  <tr>
                    <th scope="row">
                      <ExportLink row={row} name={exportName(row, destinations, workspace)} />
                    </th>
                    <td>
                      <Status status={row.status} />
                    </td>
                    <td class="mono">
                      <Timestamp at={row.created_at} />
                    </td>
                  </tr>
                  {children.length > 0 && (
                    <tr>
                      <td colspan={3}>
                        <ChildExports parent={row} children={children} query={query} />
                      </td>
                    </tr>
                  )}
                </tbody>
              );
            })}
          </table>
          <Pager
            page={page}
            pages={pages}
            link={(next) => listUrl(workspace.id, { ...query, page: next })}
            label="Pages of exports"
          />
        </>
      )}
    </div>
  );
}

function DestinationForm({
  workspace,
  fixtures,
  state = {},
}: {
  workspace: FixtureWorkspace;
  fixtures: FixturesView;
  state?: FormState;
}) {
  const values = state.values ?? {};
  const action = `${EXPORTS}/destinations?workspace_id=${workspace.id}`;
  return (
    <HtmxForm
      action={action}
      replaces="#exports-workspace"
      aria-labelledby="new-destination-heading"
      state={state}
      data-route="POST /api/v1/bulk-exports/destinations"
    >
      <h3 id="new-destination-heading">New destination</h3>
      <div class="inline">
        <Field label="Name">
          <input
            name="display_name"
            required
            pattern="[a-zA-Z0-9_ '\-]+"
            title="Letters, digits, spaces, - _ and '"
            value={values.display_name ?? 'local objstore'}
          />
        </Field>
        <Field label="Bucket">
          <select name="bucket_name">
            {fixtures.objstore.buckets.map((bucket) => (
              <option selected={bucket === values.bucket_name}>{bucket}</option>
            ))}
          </select>
        </Field>
        <Field label="Prefix">
          <input name="prefix" maxlength={2048} value={values.prefix ?? 'traces'} />
        </Field>
        <Field label="Endpoint URL (blank: the embedded objstore)">
          <input name="endpoint_url" type="url" maxlength={2048} value={values.endpoint_url} />
        </Field>
        <Field label="Access key id">
          <select name="access_key_id">
            {fixtures.objstore.keys.map((key) => (
              <option selected={key.access_key_id === values.access_key_id}>{key.access_key_id}</option>
            ))}
          </select>
        </Field>
        <Field label="Secret access key (blank: the fixture key's own)">
          <input name="secret_access_key" type="password" maxlength={2048} autocomplete="off" />
        </Field>
        <button type="submit">Create destination</button>
      </div>
      {state.error && <ErrorNote message={state.error} />}
    </HtmxForm>
  );
}

/** A day of the workspace's first tracing project's data, so that the form's defaults export something at once. */
function defaultWindow(workspace: FixtureWorkspace): { start: string; end: string } {
  const first = workspace.sessions.find((session) => session.first_run_start_time)?.first_run_start_time;
  const start = first ? new Date(`${first.slice(0, 10)}T00:00:00Z`) : new Date(Date.UTC(2026, 9, 1));
  const end = new Date(start.getTime() + 86_400_000);
  const local = (date: Date) => date.toISOString().slice(0, 16);
  return { start: local(start), end: local(end) };
}

const ALL_EXPERIMENTS = 'all';

function ExportForm({
  workspace,
  destinations,
  state = {},
}: {
  workspace: FixtureWorkspace;
  destinations: DestinationResponse[];
  state?: FormState;
}) {
  const values = state.values ?? {};
  const action = `${EXPORTS}?workspace_id=${workspace.id}`;
  const window = defaultWindow(workspace);
  return (
    <HtmxForm
      action={action}
      replaces="#exports-workspace"
      aria-labelledby="new-export-heading"
      state={state}
      data-route="POST /api/v1/bulk-exports"
    >
      <h2 id="new-export-heading">New export</h2>
      {destinations.length === 0 ? (
        <p class="muted">Create a destination first.</p>
      ) : (
        <div class="inline">
          <Field label="Destination">
            <select name="bulk_export_destination_id">
              {destinations.map((destination) => (
                <option value={destination.id} selected={destination.id === values.bulk_export_destination_id}>
                  {destination.display_name}
                </option>
              ))}
            </select>
          </Field>
          <Field label="Tracing project">
            <select name="session_id">
              {workspace.sessions.map((session) => (
                <option value={session.id} selected={session.id === values.session_id}>
                  {session.name}
                </option>
              ))}
              <option value={ALL_EXPERIMENTS} selected={values.session_id === ALL_EXPERIMENTS}>
                all experiments
              </option>
            </select>
          </Field>
          {/* A datetime-local field sends a naive date-time, which the API reads as UTC. */}
          <Field label="Start (UTC)">
            <input name="start_time" type="datetime-local" required value={values.start_time ?? window.start} />
          </Field>
          <Field label="End (UTC; blank for a recurring export)">
            <input name="end_time" type="datetime-local" value={values.end_time ?? window.end} />
          </Field>
          <CountField
            label="Every hours (recurring)"
            name="interval_hours"
            max={MAX_INTERVAL_HOURS}
            value={values.interval_hours}
          />
          <Field label="Filter">
            <input name="filter" value={values.filter} placeholder="eq(is_root, true)" />
          </Field>
          <Field label="Format version">
            <select name="format_version">
              {FORMAT_VERSIONS.map((version) => (
                <option selected={version === (values.format_version ?? 'v2_beta')}>{version}</option>
              ))}
            </select>
          </Field>
          <Field label="Compression">
            <select name="compression">
              {COMPRESSIONS.map((compression) => (
                <option selected={compression === (values.compression ?? 'snappy')}>{compression}</option>
              ))}
            </select>
          </Field>
          <Field label="Fields (comma-separated; blank: all)">
            <input name="export_fields" value={values.export_fields} />
          </Field>
          <button type="submit" class="primary">
            Create export
          </button>
        </div>
      )}
      {state.error && <ErrorNote message={state.error} />}
    </HtmxForm>
  );
}

/** A destination's delete and key rotation; the API's refusal of either shows under them. */
function DestinationActions({
  destination,
  workspace,
  fixtures,
  state,
}: {
  destination: DestinationResponse;
  workspace: FixtureWorkspace;
  fixtures: FixturesView;
  state?: FormState;
}) {
  const action = (verb: string) => `${EXPORTS}/destinations/${destination.id}/${verb}?workspace_id=${workspace.id}`;
  const values = state?.values?.destination_id === destination.id ? state.values : {};
  // Only the rotation sends a key id.
  const rotating = values.access_key_id !== undefined;
  return (
    <div class="actions">
      <HtmxForm
        action={action('delete')}
        replaces="#exports-workspace"
        hx-confirm={`Delete the destination ${destination.display_name}?`}
        data-route="DELETE /api/v1/bulk-exports/destinations/:destination_id"
      >
        <input type="hidden" name="destination_id" value={destination.id} />
        <button type="submit" class="danger" aria-label={`Delete ${destination.display_name}`}>
          Delete
        </button>
      </HtmxForm>
      <details open={rotating}>
        <summary>Rotate key pair</summary>
        <HtmxForm
          action={action('rotate')}
          replaces="#exports-workspace"
          state={rotating ? state : undefined}
          aria-label={`Rotate ${destination.display_name}'s key pair`}
          data-route="PATCH /api/v1/bulk-exports/destinations/:destination_id"
        >
          <input type="hidden" name="destination_id" value={destination.id} />
          <div class="inline">
            <Field label="Access key id">
              <select name="access_key_id">
                {fixtures.objstore.keys.map((key) => (
                  <option selected={key.access_key_id === values.access_key_id}>{key.access_key_id}</option>
                ))}
              </select>
            </Field>
            <Field label="Secret access key (blank: the fixture key's own)">
              <input name="secret_access_key" type="password" autocomplete="off" />
            </Field>
            <button type="submit">Rotate</button>
          </div>
        </HtmxForm>
      </details>
      {values.destination_id && state?.error && <ErrorNote message={state.error} />}
    </div>
  );
}

function Destinations({
  workspace,
  fixtures,
  destinations,
  forms,
}: Pick<WorkspaceProps, 'workspace' | 'fixtures' | 'destinations' | 'forms'>) {
  if (destinations.length === 0) return <p class="muted">No destinations in {workspace.name} yet.</p>;
  return (
    <table aria-labelledby="destinations-heading" class="destinations">
      <TableHead columns={['Name', 'Bucket and prefix', 'Endpoint', 'Created', 'Actions']} />
      <tbody>
        {destinations.map((destination) => (
          <tr id={`destination-${destination.id}`}>
            <th scope="row">
              {destination.display_name}
              <div class="muted mono">{destination.id}</div>
              <a href={listUrl(workspace.id, { ...DEFAULT_QUERY, destinationId: destination.id })}>its exports</a>
            </th>
            <td class="mono">
              {destination.config.bucket_name}/{destination.config.prefix}
            </td>
            <td class="mono">{destination.config.endpoint_url ?? 'the embedded objstore'}</td>
            <td class="mono">
              <Timestamp at={destination.created_at} />
            </td>
            <td>
              <DestinationActions
                destination={destination}
                workspace={workspace}
                fixtures={fixtures}
                state={forms.destinationAction}
              />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function WorkspaceExports(props: WorkspaceProps) {
  const { workspace, fixtures, destinations, forms } = props;
  return (
    <div id="exports-workspace">
      <ExportForm workspace={workspace} destinations={destinations} state={forms.export} />
      <h2 id="exports-heading">Exports</h2>
      <ExportFilters workspace={workspace} destinations={destinations} query={props.query} />
      <ExportList {...props} />
      <h2 id="destinations-heading" data-route="GET /api/v1/bulk-exports/destinations">
        Destinations
      </h2>
      <Destinations {...props} />
      <DestinationForm workspace={workspace} fixtures={fixtures} state={forms.destination} />
    </div>
  );
}

function ExportRunKnobs({ knobs, state }: { knobs: ArmedKnobs['export_runs']; state?: FormState }) {
  return (
    <section id="export-run-knobs" aria-labelledby="export-run-knobs-heading">
      <h2 id="export-run-knobs-heading">Export-run knobs</h2>
      <ArmedExportRunKnobs knobs={knobs} />
      <ExportRunKnobForm action={`${EXPORTS}/knobs`} replaces="#export-run-knobs" state={state} />
    </section>
  );
}

/** A file's name; for an export of all experiments after its tracing project's, which only its folder tells. */
function fileLabel(key: string, projects: FixtureWorkspace['sessions'] | null): string {
  const name = key.slice(key.lastIndexOf('/') + 1);
  const projectId = projects && key.match(/(?:^|\/)session_id=([^/]+)\//)?.[1];
  if (!projectId) return name;
  return `${projects.find((project) => project.id === projectId)?.name ?? projectId}/${name}`;
}

/** A run's attempts' errors, identical consecutive ones as one: its first and last attempt and how many. */
export function errorGroups(errors: Record<string, string>) {
  const groups: { first: string; last: string; count: number; message: string }[] = [];
  for (const [attempt, message] of Object.entries(errors)) {
    const previous = groups.at(-1);
    if (previous?.message === message) {
      previous.last = attempt;
      previous.count++;
    } else groups.push({ first: attempt, last: attempt, count: 1, message });
  }
  return groups;
}

interface RunsProps {
  runs: RunResponse[];
  destination: DestinationResponse | null;
  workspaceId: string;
  /** Runs of the child exports of a recurring export: each names its export. */
  ofChildren: boolean;
  /** The workspace's tracing projects, for an export of all experiments. */
  projects: FixtureWorkspace['sessions'] | null;
}

function Runs({ runs, destination, workspaceId, ofChildren, projects }: RunsProps) {
  return (
    <table aria-labelledby="runs-heading">
      <TableHead
        columns={[
          ...(ofChildren ? ['Export'] : []),
          'Run (UTC day)',
          'Status',
          'Retries',
          'Rows',
          'Files',
          'Errors',
          'Finished',
        ]}
        numeric={['Retries', 'Rows']}
      />
      <tbody>
        {runs.map((run) => (
          <tr id={`run-${run.id}`}>
            {ofChildren && (
              <td class="mono">
                <a href={exportUrl(workspaceId, run.bulk_export_id)}>{run.bulk_export_id.slice(0, 8)}</a>
              </td>
            )}
            <th scope="row">
              <Window start={run.start_time} end={run.end_time} />
            </th>
            <td>
              <Status status={run.status} />
            </td>
            <td class="num">{run.retry_number}</td>
            <td class="num">{(run.metadata.result?.rows_written ?? 0).toLocaleString('en')}</td>
            <td>
              <ul class="files">
                {(run.metadata.result?.exported_files ?? []).map((file) => {
                  const object = objectOf(file, destination);
                  return (
                    <li>
                      <a href={objectUrl(object)} class="mono" title={object.key}>
                        {fileLabel(object.key, projects)}
                      </a>
                    </li>
                  );
                })}
              </ul>
            </td>
            <td>
              {run.errors && (
                <dl class="run-errors">
                  {errorGroups(run.errors).map(({ first, last, count, message }) => (
                    <>
                      <dt>{count === 1 ? first : `${first} – ${last}`}</dt>
                      <dd>
                        {message}
                        {count > 1 && <span class="badge">× {count}</span>}
                      </dd>
                    </>
                  ))}
                </dl>
              )}
            </td>
            <td class="mono">{run.finished_at && <Timestamp at={run.finished_at} />}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

type StoredObject = ObjectsPage['objects'][number];

/** The objects under an export's folder in the objstore, read through the admin API's object browser. */
interface StoredFiles {
  exportId: string;
  bucket: string;
  objects: StoredObject[];
}

const fileCount = (count: number) => (count === 1 ? '1 file' : `${count} files`);
const RUN_STATUS_WORDS: Record<string, string> = {
  Cancelled: 'a cancelled run',
  Failed: 'a failed run',
  TimedOut: 'a timed-out run',
  Running: 'a running run',
  Created: 'a run not yet started',
  Completed: 'a completed run',
};

/**
 * What the objstore holds under the export's folder beside what its runs count: a file a run wrote but does not list
 * (a cancelled run's, say) is named with the run it came from, and a listed file gone from the bucket is said too.
 */
function StoredFilesNote({
  stored,
  runs,
  destination,
}: {
  stored: StoredFiles;
  runs: RunResponse[];
  destination: DestinationResponse | null;
}) {
  const counted = new Set(
    runs.flatMap((run) => (run.metadata.result?.exported_files ?? []).map((file) => objectOf(file, destination).key)),
  );
  const uncounted = stored.objects.filter((object) => !counted.has(object.key));
  const storedKeys = new Set(stored.objects.map((object) => object.key));
  const missing = [...counted].filter((key) => !storedKeys.has(key));
  const runOf = (key: string) =>
    runs.find(
      (run) => run.metadata.result && key.startsWith(objectOf(run.metadata.result.export_path, destination).key),
    );
  const bySource = new Map<string, StoredObject[]>();
  for (const object of uncounted) {
    const status = runOf(object.key)?.status;
    const source = (status && RUN_STATUS_WORDS[status]) ?? 'no run the export lists';
    bySource.set(source, [...(bySource.get(source) ?? []), object]);
  }
  const bytes = (objects: StoredObject[]) => formatBytes(objects.reduce((sum, object) => sum + object.size, 0));
  return (
    <section aria-labelledby="stored-heading">
      <h2 id="stored-heading">In the bucket</h2>
      <p>
        {fileCount(stored.objects.length)} ({bytes(stored.objects)}) under the export's folder in{' '}
        <a href={bucketSearchUrl(stored.bucket, `export_id=${stored.exportId}/`)}>{stored.bucket}</a>
        {uncounted.length === 0 && missing.length === 0 && ": the export's counts hold them all."}
      </p>
      {[...bySource].map(([source, objects]) => (
        <div class="notice-warn" role="note">
          <p>
            {fileCount(objects.length)} ({bytes(objects)}) from {source} {objects.length === 1 ? 'is' : 'are'} in the
            bucket; the export's counts do not include {objects.length === 1 ? 'it' : 'them'}.
          </p>
          <ul class="files">
            {objects.map((object) => (
              <li>
                <a href={objectUrl({ bucket: stored.bucket, key: object.key })} class="mono">
                  <KeyText text={object.key} />
                </a>{' '}
                <span class="muted">{formatBytes(object.size)}</span>
              </li>
            ))}
          </ul>
        </div>
      ))}
      {missing.length > 0 && (
        <p class="notice-warn" role="note">
          {fileCount(missing.length)} the export lists {missing.length === 1 ? 'is' : 'are'} no longer in the bucket.
        </p>
      )}
    </section>
  );
}

interface ExportLiveProps extends RunsProps {
  exportRow: ExportResponse;
  stored: StoredFiles | null;
  error?: string;
}

/**
 * What changes while an export runs; it refreshes itself every second until the export and its
 * runs have ended. Polled rather than streamed: the API has no stream of export changes, and a
 * poll is one in-process read of the export and its runs, made only while a page shows one moving.
 */
function ExportLive({ exportRow, stored, error, ...runsProps }: ExportLiveProps) {
  const { runs, workspaceId, ofChildren } = runsProps;
  const url = exportUrl(workspaceId, exportRow.id);
  const live = isActive(exportRow.status) || runs.some((run) => isActive(run.status));
  const polling = live ? { 'hx-get': url, 'hx-trigger': 'every 1s', 'hx-swap': 'outerHTML' } : {};
  const done = runs.filter((run) => isTerminalStatus(run.status)).length;
  const rows = runs.reduce((sum, run) => sum + (run.metadata.result?.rows_written ?? 0), 0);
  const files = runs.reduce((sum, run) => sum + (run.metadata.result?.exported_files.length ?? 0), 0);
  const cancelUrl = `${EXPORTS}/${exportRow.id}/cancel?workspace_id=${workspaceId}`;
  return (
    <div id="export-live" {...polling}>
      <section
        class="cards"
        aria-label="Progress"
        data-route="GET /api/v1/bulk-exports/:bulk_export_id, GET /api/v1/bulk-exports/:bulk_export_id/runs"
      >
        <div class="card">
          <h2>Status</h2>
          <div class="figure" role="status">
            <Status status={exportRow.status} />
          </div>
          <div class="muted">
            {live ? (
              'refreshing every second'
            ) : exportRow.finished_at ? (
              <>
                finished <Timestamp at={exportRow.finished_at} />
              </>
            ) : (
              ''
            )}
          </div>
        </div>
        <div class="card">
          <h2>{ofChildren ? 'Runs of child exports done' : 'Runs done'}</h2>
          <div class="figure">
            {done} of {runs.length}
          </div>
          <progress max={Math.max(runs.length, 1)} value={done} aria-label="Runs done"></progress>
        </div>
        <div class="card">
          <h2>Rows written</h2>
          <div class="figure">{rows.toLocaleString('en')}</div>
          <div class="muted">in {files === 1 ? '1 file' : `${files} files`}</div>
        </div>
      </section>
      {stored && <StoredFilesNote stored={stored} runs={runs} destination={runsProps.destination} />}
      {!isTerminalStatus(exportRow.status) && (
        <HtmxForm
          action={cancelUrl}
          replaces="#export-live"
          class="inline"
          data-route="PATCH /api/v1/bulk-exports/:bulk_export_id"
        >
          <button type="submit" class="danger" id="cancel-export">
            Cancel export
          </button>
        </HtmxForm>
      )}
      {error && <ErrorNote message={error} />}
      <h2 id="runs-heading">{ofChildren ? 'Runs of its child exports' : 'Runs'}</h2>
      {runs.length === 0 ? (
        <p class="muted">{ofChildren ? 'No child export has been spawned yet.' : 'No runs.'}</p>
      ) : (
        <Runs {...runsProps} />
      )}
    </div>
  );
}

function ExportDetails({
  exportRow,
  destination,
  workspace,
}: {
  exportRow: ExportResponse;
  destination: DestinationResponse | null;
  workspace: FixtureWorkspace | undefined;
}) {
  const destinationLink = `${exportsUrl(exportRow.tenant_id)}#destination-${exportRow.bulk_export_destination_id}`;
  const details: [string, unknown][] = [
    ['Tracing project', projectName(exportRow, workspace) ?? ''],
    ['Window (UTC)', `${exportRow.start_time} → ${exportRow.end_time ?? `every ${exportRow.interval_hours} h`}`],
    [
      'Destination',
      destination ? (
        <>
          <a href={destinationLink}>{destination.display_name}</a>:{' '}
          <a href={bucketSearchUrl(destination.config.bucket_name ?? '', `export_id=${exportRow.id}/`)} class="mono">
            {destination.config.bucket_name}/{destination.config.prefix}
          </a>
        </>
      ) : (
        `${exportRow.bulk_export_destination_id} (deleted)`
      ),
    ],
    ['Format', `${exportRow.format} ${exportRow.format_version}, ${exportRow.compression}`],
    ['Filter', exportRow.filter ?? 'none'],
    ['Fields', exportRow.export_fields?.join(', ') ?? 'all'],
    ['Created', <Timestamp at={exportRow.created_at} />],
  ];
  if (exportRow.source_bulk_export_id) details.push(['Spawned by', exportRow.source_bulk_export_id]);
  return (
    <>
      <h2>Export</h2>
      <DetailList pairs={details} />
      <p>
        <a href={`/ui/sql?export_id=${exportRow.id}`}>Query its files in SQL</a>
        {' · '}
        <a href={`/ui/requests?${new URLSearchParams({ path: `/api/v1/bulk-exports/${exportRow.id}**` })}`}>
          its API requests
        </a>
        {' · '}
        <a href={`/ui/requests?${new URLSearchParams({ source: 'objstore', path: `**export_id=${exportRow.id}/**` })}`}>
          its objstore requests
        </a>
        {exportRow.source_bulk_export_id && (
          <>
            {' · '}
            <a href={exportUrl(exportRow.tenant_id, exportRow.source_bulk_export_id)}>
              the recurring export that spawned it
            </a>
          </>
        )}
      </p>
    </>
  );
}

/**
 * /ui/exports: a workspace's destinations and exports, forms creating them and the export-run
 * knobs; /ui/exports/<id>: an export with its runs, their progress, errors and files, live.
 */
export function exportsView(api: DashboardApi) {
  const app = new Hono();

  async function listPage(c: Context, forms: WorkspaceForms & { knobs?: FormState } = {}, status = 200) {
    const fixtures = await readFixtures(api);
    const workspaceId = c.req.query('workspace_id') ?? fixtures.workspaces[0]?.id;
    const workspace = fixtures.workspaces.find((candidate) => candidate.id === workspaceId);
    const knobs = await api.get<ArmedKnobs>('/_localplane/faults');
    let content;
    if (!workspace) {
      content = (
        <div id="exports-workspace">
          <ErrorNote message={`Workspace ${workspaceId} not found`} />
        </div>
      );
    } else {
      try {
        const [destinations, exports] = await Promise.all([
          api.get<DestinationResponse[]>(`${API}/destinations`, { workspaceId: workspace.id }),
          allExports(api, workspace.id),
        ]);
        content = (
          <WorkspaceExports
            workspace={workspace}
            fixtures={fixtures}
            destinations={destinations}
            exports={exports}
            forms={forms}
            query={listQueryOf(c)}
          />
        );
      } catch (error) {
        content = (
          <div id="exports-workspace">
            <ErrorNote message={`${refusal(error).detail} ${WORKSPACE_HINT}`} />
            <p>
              <a href="/ui/state#plans">Change the workspace's plan</a> on the State view.
            </p>
          </div>
        );
      }
    }
    c.status(refusedStatus(c, status) as 200);
    const knobSection = <ExportRunKnobs knobs={knobs.export_runs} state={forms.knobs} />;
    return renderView(c, {
      title: 'Exports',
      active: 'exports',
      fragment: forms.knobs ? knobSection : content,
      children: (
        <>
          <HtmxForm class="inline" method="get" action={EXPORTS} replaces="#exports-workspace" hx-trigger="change">
            <Field label="Workspace">
              <select name="workspace_id">
                {fixtures.workspaces.map((candidate) => (
                  <option value={candidate.id} selected={candidate.id === workspaceId}>
                    {`${candidate.name} (${candidate.tier})`}
                  </option>
                ))}
              </select>
            </Field>
            <button type="submit">Show</button>
          </HtmxForm>
          {content}
          {knobSection}
        </>
      ),
    });
  }

  /**
   * Calls the API with what a workspace form sent: a refusal shows beside the form, with what was typed; one about no
   * field in particular at `refusedField`, when the form names one.
   */
  async function workspaceAction(
    c: Context,
    form: keyof WorkspaceForms,
    call: (values: Record<string, string>, workspaceId: string) => Promise<string>,
    refusedField?: string,
  ) {
    const values = await formValues(c);
    const workspaceId = c.req.query('workspace_id') ?? '';
    let next: string;
    try {
      next = await call(values, workspaceId);
    } catch (error) {
      const { status, state } =
        refusedField === undefined ? refusedForm(error, values) : refusedAt(refusedField, error, values);
      return listPage(c, { [form]: state }, status);
    }
    if (isFragmentRequest(c)) {
      // htmx loads the whole page it is sent to.
      c.header('hx-redirect', next);
      return c.body(null, 204);
    }
    return c.redirect(next, 303);
  }

  app.get('/', (c) => listPage(c));

  /** A key pair as a form sends it: a blank secret is the fixture key's own. */
  async function credentialsOf(values: FormValues) {
    const secret =
      values.secret_access_key ||
      (await readFixtures(api)).objstore.keys.find((key) => key.access_key_id === values.access_key_id)
        ?.secret_access_key;
    return { access_key_id: values.access_key_id, secret_access_key: secret };
  }

  const destinationPath = (c: Context) => `${API}/destinations/${encodeURIComponent(c.req.param('destination_id')!)}`;

  app.post('/destinations/:destination_id/delete', (c) =>
    workspaceAction(c, 'destinationAction', async (_values, workspaceId) => {
      await api.json('DELETE', destinationPath(c), { workspaceId });
      return exportsUrl(workspaceId);
    }),
  );

  // The API checks the new key pair by writing to the bucket: its refusal is about the secret typed (or the fixture's).
  app.post('/destinations/:destination_id/rotate', (c) =>
    workspaceAction(
      c,
      'destinationAction',
      async (values, workspaceId) => {
        await api.json('PATCH', destinationPath(c), {
          workspaceId,
          body: { credentials: await credentialsOf(values) },
        });
        return `${exportsUrl(workspaceId)}#destination-${c.req.param('destination_id')}`;
      },
      'secret_access_key',
    ),
  );

  app.post('/destinations', (c) =>
    workspaceAction(c, 'destination', async (values, workspaceId) => {
      await api.json('POST', `${API}/destinations`, {
        workspaceId,
        body: {
          display_name: values.display_name,
          config: {
            bucket_name: values.bucket_name,
            prefix: values.prefix,
            endpoint_url: optionalText(values.endpoint_url),
          },
          credentials: await credentialsOf(values),
        },
      });
      return exportsUrl(workspaceId);
    }),
  );

  app.post('/', (c) =>
    workspaceAction(c, 'export', async (values, workspaceId) => {
      const allExperiments = values.session_id === ALL_EXPERIMENTS;
      const created = await api.json<ExportResponse>('POST', API, {
        workspaceId,
        body: {
          bulk_export_destination_id: values.bulk_export_destination_id,
          session_id: allExperiments ? undefined : optionalText(values.session_id),
          all_experiments: allExperiments,
          start_time: values.start_time,
          end_time: optionalText(values.end_time),
          interval_hours: optionalNumber(values.interval_hours),
          filter: optionalText(values.filter),
          format_version: values.format_version,
          compression: values.compression,
          export_fields: values.export_fields
            ? values.export_fields.split(',').map((field) => field.trim())
            : undefined,
        },
      });
      return exportUrl(workspaceId, created.id);
    }),
  );

  app.post('/knobs', async (c) => {
    const values = await formValues(c);
    try {
      await api.json('POST', '/_localplane/faults/export-runs', { body: exportRunKnobRequest(values) });
    } catch (error) {
      const { status, state } = refusedForm(error, values);
      return listPage(c, { knobs: state }, status);
    }
    if (!isFragmentRequest(c)) return c.redirect(exportsUrl(c.req.query('workspace_id') ?? ''), 303);
    return listPage(c, { knobs: {} });
  });

  /**
   * The export's workspace: as the URL names it, else the one whose API finds the export (a link from elsewhere may
   * know the export alone).
   */
  async function workspaceOf(c: Context, exportId: string, fixtures: FixturesView): Promise<string> {
    const named = c.req.query('workspace_id');
    if (named) return named;
    for (const workspace of fixtures.workspaces) {
      if ((await api.raw('GET', `${API}/${encodeURIComponent(exportId)}`, { workspaceId: workspace.id })).ok)
        return workspace.id;
    }
    throw new DashboardApiError(404, `Bulk export ${exportId} not found in any workspace`);
  }

  /**
   * The objects under the export's folder in its bucket, when the bucket is the embedded objstore's (null otherwise):
   * found by the `export_id=<id>/` segment every file of the export has in its key.
   */
  async function storedFiles(
    exportId: string,
    runs: RunResponse[],
    destination: DestinationResponse | null,
  ): Promise<StoredFiles | null> {
    const listed = runs.flatMap((run) => run.metadata.result?.exported_files ?? [])[0];
    const bucket = destination?.config.bucket_name ?? (listed && objectOf(listed, null).bucket);
    if (!bucket) return null;
    const search = new URLSearchParams({ search: `export_id=${exportId}/`, limit: '1000' });
    const response = await api.raw(
      'GET',
      `/_localplane/objstore/buckets/${encodeURIComponent(bucket)}/objects?${search}`,
    );
    if (!response.ok) return null;
    return { exportId, bucket, objects: ((await response.json()) as ObjectsPage).objects };
  }

  async function exportPage(c: Context, exportId: string, error?: string, status = 200) {
    const fixtures = await readFixtures(api);
    const workspaceId = await workspaceOf(c, exportId, fixtures);
    const workspace = fixtures.workspaces.find((candidate) => candidate.id === workspaceId);
    const exportRow = await api.get<ExportResponse>(`${API}/${encodeURIComponent(exportId)}`, { workspaceId });
    // A recurring export has no runs of its own: its child exports run its windows.
    const ofChildren = exportRow.interval_hours !== null;
    const [runs, destination] = await Promise.all([
      api.get<RunResponse[]>(
        ofChildren
          ? `${API}/runs?source_bulk_export_id=${encodeURIComponent(exportId)}`
          : `${API}/${encodeURIComponent(exportId)}/runs`,
        { workspaceId },
      ),
      api
        .get<DestinationResponse>(`${API}/destinations/${exportRow.bulk_export_destination_id}`, { workspaceId })
        .catch((error: unknown) => {
          // Deleted since: the files' paths then name their bucket.
          if (error instanceof DashboardApiError && error.status === 404) return null;
          throw error;
        }),
    ]);
    const projects = exportRow.all_experiments ? (workspace?.sessions ?? []) : null;
    const stored = ofChildren ? null : await storedFiles(exportRow.id, runs, destination);
    const live = (
      <ExportLive
        exportRow={exportRow}
        runs={runs}
        ofChildren={ofChildren}
        projects={projects}
        destination={destination}
        workspaceId={workspaceId}
        stored={stored}
        error={error}
      />
    );
    c.status(refusedStatus(c, status) as 200);
    return renderView(c, {
      title: `Export ${exportRow.id}`,
      active: 'exports',
      fragment: live,
      children: (
        <>
          <p>
            <a href={exportsUrl(workspaceId)}>Exports of {workspace?.name ?? workspaceId}</a>
          </p>
          <p class="export-name">{exportName(exportRow, destination ? [destination] : [], workspace)}</p>
          {live}
          <ExportDetails exportRow={exportRow} destination={destination} workspace={workspace} />
        </>
      ),
    });
  }

  app.get('/:bulk_export_id', (c) => exportPage(c, c.req.param('bulk_export_id')));

  app.post('/:bulk_export_id/cancel', async (c) => {
    const exportId = c.req.param('bulk_export_id');
    const workspaceId = c.req.query('workspace_id') ?? '';
    try {
      await api.json('PATCH', `${API}/${encodeURIComponent(exportId)}`, { workspaceId, body: { status: 'Cancelled' } });
    } catch (error) {
      const { status, detail } = refusal(error);
      return exportPage(c, exportId, detail, status);
    }
    if (!isFragmentRequest(c)) return c.redirect(exportUrl(workspaceId, exportId), 303);
    return exportPage(c, exportId);
  });

  return app;
}
