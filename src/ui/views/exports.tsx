import { Hono, type Context } from 'hono';
import {
  COMPRESSIONS,
  FORMAT_VERSIONS,
  MAX_INTERVAL_HOURS,
  type DestinationResponse,
  type ExportResponse,
  type RunResponse,
} from '../../bulk-exports/schemas.ts';
import { isTerminalStatus } from '../../bulk-exports/statuses.ts';
import { DashboardApiError, type DashboardApi } from '../api.ts';
import type { FixturesView } from '../../admin/schemas.ts';
import { readFixtures, type FixtureWorkspace } from '../fixtures.ts';
import {
  formValues,
  optionalNumber,
  optionalText,
  refusal,
  refusedForm,
  refusedStatus,
  type FormState,
} from '../forms.ts';
import { DetailList, ErrorNote, Field, HtmxForm, isFragmentRequest, renderView, TableHead } from '../layout.tsx';
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
    {start.slice(0, 16).replace('T', ' ')} → {end ? end.slice(0, 16).replace('T', ' ') : 'on'}
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
}

interface WorkspaceProps {
  workspace: FixtureWorkspace;
  fixtures: FixturesView;
  destinations: DestinationResponse[];
  exports: ExportResponse[];
  forms: WorkspaceForms;
}

function ExportList({
  workspace,
  destinations,
  exports,
}: Pick<WorkspaceProps, 'workspace' | 'destinations' | 'exports'>) {
  const polling = exports.some((row) => isActive(row.status))
    ? {
        'hx-get': exportsUrl(workspace.id),
        'hx-trigger': 'every 1s',
        'hx-select': '#export-list',
        'hx-swap': 'outerHTML',
      }
    : {};
  return (
    <div id="export-list" {...polling}>
      {exports.length === 0 ? (
        <p class="muted">No exports in {workspace.name} yet.</p>
      ) : (
        <table aria-labelledby="exports-heading">
          <TableHead columns={['Export', 'Status', 'Tracing project', 'Window (UTC)', 'Destination', 'Created']} />
          <tbody>
            {exports.map((row) => (
              <tr>
                <th scope="row" class="mono">
                  <a href={exportUrl(workspace.id, row.id)}>{row.id}</a>
                  {row.source_bulk_export_id && (
                    <div class="muted">child of {row.source_bulk_export_id.slice(0, 8)}</div>
                  )}
                </th>
                <td>
                  <Status status={row.status} />
                </td>
                <td>{projectName(row, workspace)}</td>
                <td>
                  <Window start={row.start_time} end={row.end_time} />
                  {row.interval_hours !== null && <div class="muted">every {row.interval_hours} h</div>}
                </td>
                <td>
                  {destinations.find((destination) => destination.id === row.bulk_export_destination_id)
                    ?.display_name ?? row.bulk_export_destination_id}
                </td>
                <td class="mono">{row.created_at.slice(0, 19).replace('T', ' ')}</td>
              </tr>
            ))}
          </tbody>
        </table>
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
    <HtmxForm action={action} replaces="#exports-workspace" aria-labelledby="new-destination-heading" state={state}>
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
    <HtmxForm action={action} replaces="#exports-workspace" aria-labelledby="new-export-heading" state={state}>
      <h3 id="new-export-heading">New export</h3>
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
          <Field label="Every hours (recurring)">
            <input
              name="interval_hours"
              type="number"
              inputmode="numeric"
              min={1}
              max={MAX_INTERVAL_HOURS}
              step={1}
              size={4}
              value={values.interval_hours}
            />
          </Field>
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

function WorkspaceExports(props: WorkspaceProps) {
  const { workspace, fixtures, destinations, forms } = props;
  return (
    <div id="exports-workspace">
      <h2 id="destinations-heading">Destinations</h2>
      {destinations.length === 0 ? (
        <p class="muted">No destinations in {workspace.name} yet.</p>
      ) : (
        <table aria-labelledby="destinations-heading">
          <TableHead columns={['Name', 'Id', 'Bucket and prefix', 'Endpoint', 'Created']} />
          <tbody>
            {destinations.map((destination) => (
              <tr>
                <th scope="row">{destination.display_name}</th>
                <td class="mono">{destination.id}</td>
                <td class="mono">
                  {destination.config.bucket_name}/{destination.config.prefix}
                </td>
                <td class="mono">{destination.config.endpoint_url ?? 'the embedded objstore'}</td>
                <td class="mono">{destination.created_at.slice(0, 19).replace('T', ' ')}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <h2 id="exports-heading">Exports</h2>
      <ExportList {...props} />
      <div class="split">
        <ExportForm workspace={workspace} destinations={destinations} state={forms.export} />
        <DestinationForm workspace={workspace} fixtures={fixtures} state={forms.destination} />
      </div>
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
          <tr>
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
                  {Object.entries(run.errors).map(([attempt, message]) => (
                    <>
                      <dt>{attempt}</dt>
                      <dd>{message}</dd>
                    </>
                  ))}
                </dl>
              )}
            </td>
            <td class="mono">{run.finished_at?.slice(0, 19).replace('T', ' ') ?? ''}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

interface ExportLiveProps extends RunsProps {
  exportRow: ExportResponse;
  error?: string;
}

/**
 * What changes while an export runs; it refreshes itself every second until the export and its
 * runs have ended. Polled rather than streamed: the API has no stream of export changes, and a
 * poll is one in-process read of the export and its runs, made only while a page shows one moving.
 */
function ExportLive({ exportRow, error, ...runsProps }: ExportLiveProps) {
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
      <section class="cards" aria-label="Progress">
        <div class="card">
          <h2>Status</h2>
          <div class="figure" role="status">
            <Status status={exportRow.status} />
          </div>
          <div class="muted">
            {live
              ? 'refreshing every second'
              : exportRow.finished_at
                ? `finished ${exportRow.finished_at.slice(0, 19).replace('T', ' ')}`
                : ''}
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
      {!isTerminalStatus(exportRow.status) && (
        <HtmxForm action={cancelUrl} replaces="#export-live" class="inline">
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
  const details: [string, string][] = [
    ['Tracing project', projectName(exportRow, workspace) ?? ''],
    ['Window (UTC)', `${exportRow.start_time} → ${exportRow.end_time ?? `every ${exportRow.interval_hours} h`}`],
    [
      'Destination',
      destination
        ? `${destination.display_name}: ${destination.config.bucket_name}/${destination.config.prefix}`
        : exportRow.bulk_export_destination_id,
    ],
    ['Format', `${exportRow.format} ${exportRow.format_version}, ${exportRow.compression}`],
    ['Filter', exportRow.filter ?? 'none'],
    ['Fields', exportRow.export_fields?.join(', ') ?? 'all'],
    ['Created', exportRow.created_at],
  ];
  if (exportRow.source_bulk_export_id) details.push(['Spawned by', exportRow.source_bulk_export_id]);
  return (
    <>
      <h2>Export</h2>
      <DetailList pairs={details} />
      <p>
        <a href={`/ui/sql?export_id=${exportRow.id}`}>Query its files in SQL</a>
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
          api.get<ExportResponse[]>(`${API}?limit=100`, { workspaceId: workspace.id }),
        ]);
        content = (
          <WorkspaceExports
            workspace={workspace}
            fixtures={fixtures}
            destinations={destinations}
            exports={exports}
            forms={forms}
          />
        );
      } catch (error) {
        content = (
          <div id="exports-workspace">
            <ErrorNote message={`${refusal(error).detail} ${WORKSPACE_HINT}`} />
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
            <label>
              Workspace
              <select name="workspace_id">
                {fixtures.workspaces.map((candidate) => (
                  <option value={candidate.id} selected={candidate.id === workspaceId}>
                    {`${candidate.name} (${candidate.tier})`}
                  </option>
                ))}
              </select>
            </label>
            <button type="submit">Show</button>
          </HtmxForm>
          {content}
          {knobSection}
        </>
      ),
    });
  }

  /** Calls the API with what a workspace form sent: a refusal shows beside the form, with what was typed. */
  async function workspaceAction(
    c: Context,
    form: keyof WorkspaceForms,
    call: (values: Record<string, string>, workspaceId: string) => Promise<string>,
  ) {
    const values = await formValues(c);
    const workspaceId = c.req.query('workspace_id') ?? '';
    let next: string;
    try {
      next = await call(values, workspaceId);
    } catch (error) {
      const { status, state } = refusedForm(error, values);
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

  app.post('/destinations', (c) =>
    workspaceAction(c, 'destination', async (values, workspaceId) => {
      const secret =
        values.secret_access_key ||
        (await readFixtures(api)).objstore.keys.find((key) => key.access_key_id === values.access_key_id)
          ?.secret_access_key;
      await api.json('POST', `${API}/destinations`, {
        workspaceId,
        body: {
          display_name: values.display_name,
          config: {
            bucket_name: values.bucket_name,
            prefix: values.prefix,
            endpoint_url: optionalText(values.endpoint_url),
          },
          credentials: { access_key_id: values.access_key_id, secret_access_key: secret },
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
    const live = (
      <ExportLive
        exportRow={exportRow}
        runs={runs}
        ofChildren={ofChildren}
        projects={projects}
        destination={destination}
        workspaceId={workspaceId}
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
