import { Hono, type Context } from 'hono';
import { REVISION_STEP_STATUSES } from '../../config.ts';
import { REVISION_FAULT_STAGES, type RevisionFaultStage } from '../../deployments/faults.ts';
import {
  DEPLOYMENT_SOURCES,
  DEPLOYMENT_STATUSES,
  DEPLOYMENT_TYPES,
  REVISION_STATUSES,
  type DeploymentResponse,
  type DeploymentsList,
  type LogsPage,
  type RevisionResponse,
  type RevisionsList,
} from '../../deployments/schemas.ts';
import { DashboardApiError, type DashboardApi } from '../api.ts';
import type { ClockState, ListedTask } from '../../admin/schemas.ts';
import { deploymentPath, DueWork, namesFor, shortId, type Names } from '../due-work.tsx';
import {
  formList,
  formValues,
  refusedAt,
  refusedForm,
  refusedStatus,
  type FormState,
  type FormValues,
} from '../forms.ts';
import { DeploymentTabs, deploymentResourcesView, nestedBody, secretsOf } from './deployment-resources.tsx';
import { isFragmentRequest } from '../fragments.ts';
import { ErrorNote, Field, HtmxForm, Options, renderView, TableHead } from '../layout.tsx';
import { Timestamp } from '../time.tsx';
import { formatSpan } from '../spans.ts';
import { readFixtures, type FixtureWorkspace } from '../fixtures.ts';

interface HistoryEntry {
  status: string;
  at: string;
  detail: string | null;
}

interface ArmedRevisionFault {
  stage: RevisionFaultStage;
  deployment_id?: string | null;
  message?: string | null;
  remaining: number;
}

/** The E8 filters, by the names GET /v2/deployments takes them: the view's URL passes them on as they are. */
const LIST_FILTERS = [
  'name_contains',
  'status',
  'deployment_type',
  'image_version',
  'remote_reconciled',
  'tag_value_ids',
  'deployment_ids',
  'limit',
  'offset',
] as const;
const DEFAULT_LIMIT = 20;

const IN_PROGRESS: ReadonlySet<string> = new Set(REVISION_STEP_STATUSES);

/** A status's colour class: done, on its way, stopped short, failed. */
function statusTone(status: string): string {
  if (status === 'DEPLOYED' || status === 'READY') return 'status-2';
  if (IN_PROGRESS.has(status) || status === 'AWAITING_DATABASE') return 'status-3';
  if (status.endsWith('_FAILED')) return 'status-5';
  return 'status-4';
}

const StatusBadge = ({ status }: { status: string }) => <span class={`badge ${statusTone(status)}`}>{status}</span>;

const FAULT_BUTTONS: Record<RevisionFaultStage, string> = {
  create: 'Fail at create',
  build: 'Fail at build',
  deploy: 'Fail at deploy',
  skip: 'Skip it',
};

const FAULT_WORDS: Record<RevisionFaultStage, string> = {
  create: 'ends CREATE_FAILED',
  build: 'ends BUILD_FAILED',
  deploy: 'ends DEPLOY_FAILED',
  skip: 'ends SKIPPED once queued',
};

const deploymentNotFound = (id: string) => `Deployment ID ${id} not found.`;

/** After an action that leaves the page: htmx goes there as a whole page, a plain form by a 303. */
function seeOther(c: Context, location: string) {
  if (isFragmentRequest(c)) {
    c.header('HX-Redirect', location);
    return c.body(null, 204);
  }
  return c.redirect(location, 303);
}

/** The workspaces to choose from, from the fixtures. */
const workspacesOf = async (api: DashboardApi) => (await readFixtures(api)).workspaces;

/**
 * An action's refusal: to htmx a 200 with the words in the fragment (htmx swaps only successes); to a plain form post
 * the API's status.
 */
function refusalStatus(c: Context, error: DashboardApiError) {
  if (!isFragmentRequest(c)) c.status((error.status >= 500 ? 502 : error.status) as 400);
}

// ---------------------------------------------------------------------------------------------
// The list: /ui/deployments?workspace_id=&<the E8 filters>

function listQuery(c: Context): URLSearchParams {
  const query = new URLSearchParams();
  for (const name of LIST_FILTERS) {
    const value = c.req.query(name)?.trim();
    if (value) query.set(name, value);
  }
  return query;
}

function FilterForm({
  workspaces,
  workspaceId,
  query,
  state,
  outOfBand = false,
}: {
  workspaces: readonly FixtureWorkspace[];
  workspaceId: string;
  query: URLSearchParams;
  /** The API's refusal of the filter, at its fields; out of band, the form comes with the results it refused. */
  state?: FormState;
  outOfBand?: boolean;
}) {
  const text = (name: string, label: string, hint?: string) => (
    <Field label={label}>
      <input name={name} value={query.get(name) ?? ''} placeholder={hint} autocomplete="off" />
    </Field>
  );
  const choice = (name: string, label: string, options: readonly string[]) => (
    <Field label={label}>
      <select name={name}>
        <Options choices={options} selected={query.get(name) ?? undefined} any="any" />
      </select>
    </Field>
  );
  return (
    <HtmxForm
      id="deployment-filters"
      class="inline filters"
      method="get"
      action="/ui/deployments"
      replaces="#deployments-results"
      state={state}
      {...(outOfBand ? { 'hx-swap-oob': 'true' } : {})}
    >
      <Field label="Workspace">
        <select name="workspace_id">
          {workspaces.map((workspace) => (
            <option value={workspace.id} selected={workspace.id === workspaceId}>
              {workspace.name}
            </option>
          ))}
        </select>
      </Field>
      {text('name_contains', 'Name contains')}
      {choice('status', 'Status', DEPLOYMENT_STATUSES)}
      {choice('deployment_type', 'Type', DEPLOYMENT_TYPES)}
      {text('image_version', 'Image version')}
      {choice('remote_reconciled', 'Remote reconciled', ['true', 'false'])}
      {text('tag_value_ids', 'Tag value ids', 'comma-separated')}
      {text('deployment_ids', 'Deployment ids', 'comma-separated')}
      <Field label="Per page">
        <input name="limit" type="number" min={1} max={100} value={query.get('limit') ?? String(DEFAULT_LIMIT)} />
      </Field>
      <button type="submit" class="primary">
        Filter
      </button>
    </HtmxForm>
  );
}

function DeploymentsResults({
  workspaceId,
  query,
  page,
  error,
  notice,
}: {
  workspaceId: string;
  query: URLSearchParams;
  page?: DeploymentsList;
  error?: string;
  notice?: string;
}) {
  const limit = Number(query.get('limit') ?? DEFAULT_LIMIT);
  const offset = Number(query.get('offset') ?? 0);
  const pageUrl = (at: number) => {
    const next = new URLSearchParams(query);
    next.set('offset', String(at));
    return `/ui/deployments?workspace_id=${workspaceId}&${next}`;
  };
  const pageLink = (at: number, label: string, rel: string) => (
    <a
      href={pageUrl(at)}
      rel={rel}
      hx-get={pageUrl(at)}
      hx-target="#deployments-results"
      hx-swap="outerHTML"
      hx-push-url="true"
    >
      {label}
    </a>
  );
  return (
    <section id="deployments-results" aria-labelledby="deployments-title" data-route="GET /v2/deployments">
      <h2 id="deployments-title">Deployments</h2>
      {notice && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      {error && <ErrorNote message={error} />}
      {page && page.resources.length === 0 && <p class="muted">No deployment matches.</p>}
      {page && page.resources.length > 0 && (
        <table>
          <caption class="visually-hidden">Deployments of the workspace, newest first</caption>
          <TableHead
            columns={['Select', 'Name', 'Status', 'Type', 'Source', 'Image version', 'Active revision', 'Updated']}
          />
          <tbody>
            {page.resources.map((deployment) => (
              <tr>
                <td>
                  <input
                    type="checkbox"
                    name="deployment_ids"
                    value={deployment.id}
                    form="delete-deployments"
                    aria-label={`Select ${deployment.name}`}
                  />
                </td>
                <th scope="row">
                  <a href={deploymentPath(workspaceId, deployment.id)}>{deployment.name}</a>
                </th>
                <td>
                  <StatusBadge status={deployment.status} />
                </td>
                <td>{deployment.source_config.deployment_type ?? '—'}</td>
                <td>{deployment.source}</td>
                <td class="mono">{deployment.image_version ?? '—'}</td>
                <td class="mono">{deployment.active_revision_id ? shortId(deployment.active_revision_id) : '—'}</td>
                <td class="mono">
                  <Timestamp at={deployment.updated_at} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {page && page.resources.length > 0 && (
        <HtmxForm
          id="delete-deployments"
          class="inline"
          action={`/ui/deployments/delete?workspace_id=${workspaceId}&${query}`}
          replaces="#deployments-results"
          hx-confirm="Delete the selected deployments? Their tracing projects stay."
          data-route="DELETE /v2/deployments"
        >
          <button type="submit" class="danger">
            Delete selected
          </button>
        </HtmxForm>
      )}
      {page && (
        <nav class="pager" aria-label="Pages of deployments">
          {offset > 0 && pageLink(Math.max(0, offset - limit), 'Newer', 'prev')}
          <span class="muted">
            {page.resources.length === 0 ? 'none' : `${offset + 1}–${offset + page.resources.length}`}
          </span>
          {page.resources.length === limit && pageLink(page.offset, 'Older', 'next')}
        </nav>
      )}
    </section>
  );
}

/** A field of a form whose name is the API body's (dotted for a nested field). */
const BodyField = ({
  name,
  label,
  values = {},
  required = false,
  hint,
}: {
  name: string;
  label: string;
  values?: FormValues;
  required?: boolean;
  hint?: string;
}) => (
  <Field label={label}>
    <input name={name} value={values[name] ?? ''} required={required} placeholder={hint} autocomplete="off" />
  </Field>
);

/** Secrets as NAME=value lines; what was typed is never shown back. */
const SecretsField = ({ label }: { label: string }) => (
  <Field label={label}>
    <textarea name="secrets" rows={2} placeholder="NAME=value, one a line" autocomplete="off" spellcheck={false} />
  </Field>
);

/** The E9 create form; a refusal shows it again with what was typed but the secrets. */
function CreateForm({
  workspaceId,
  integrations,
  state,
}: {
  workspaceId: string;
  integrations: FixtureWorkspace['integrations'];
  /** The API's refusal of what was sent: at the fields it names, the rest above the form. */
  state?: FormState;
}) {
  const values = state?.values ?? {};
  return (
    <details id="deployment-create" open={state !== undefined}>
      <summary>New deployment</summary>
      {state?.error && <ErrorNote message={state.error} />}
      <HtmxForm
        class="stacked"
        action={`/ui/deployments/create?workspace_id=${workspaceId}`}
        replaces="#deployment-create"
        data-route="POST /v2/deployments"
        state={state}
      >
        <BodyField name="name" label="Name" values={values} required />
        <Field label="Source">
          <select name="source">
            <Options choices={DEPLOYMENT_SOURCES} selected={values.source ?? 'codehost'} />
          </select>
        </Field>
        <Field label="Deployment type">
          <select name="source_config.deployment_type">
            <Options choices={DEPLOYMENT_TYPES} selected={values['source_config.deployment_type']} any="default" />
          </select>
        </Field>
        <Field label="Codehost integration">
          <select name="source_config.integration_id">
            <option value="">none</option>
            {integrations.map((integration) => (
              <option value={integration.id} selected={integration.id === values['source_config.integration_id']}>
                {shortId(integration.id)} ({integration.repos.map((repo) => repo.url).join(', ') || 'no repository'})
              </option>
            ))}
          </select>
        </Field>
        <BodyField
          name="source_config.repo_url"
          label="Repository URL"
          values={values}
          hint={integrations[0]?.repos[0]?.url}
        />
        <BodyField name="source_revision_config.repo_ref" label="Repository ref" values={values} hint="main" />
        <BodyField
          name="source_revision_config.graph_config_path"
          label="Graph config path"
          values={values}
          hint="graph.json"
        />
        <BodyField name="source_revision_config.image_uri" label="Image URI" values={values} />
        <BodyField name="source_config.listener_id" label="Listener id (self-hosted)" values={values} />
        <SecretsField label="Secrets" />
        <button type="submit" class="primary">
          Create deployment
        </button>
      </HtmxForm>
    </details>
  );
}

/** The E9 body from the create form: the nested fields, the secrets as a list (none: an empty one). */
const createBody = (values: FormValues) => ({
  source_config: {},
  source_revision_config: {},
  ...nestedBody(values, ['secrets']),
  secrets: secretsOf(values.secrets),
});

// ---------------------------------------------------------------------------------------------
// A deployment: /ui/deployments/<id>?workspace_id=&revision=<id whose logs show>&revisions_offset=

interface DeploymentPage {
  workspaceId: string;
  deployment: DeploymentResponse;
  revisions: RevisionsList;
  revisionsOffset: number;
  histories: ReadonlyMap<string, HistoryEntry[]>;
  logsOf: RevisionResponse['id'] | null;
  /** Whether the URL chose the revision whose logs show (else the latest one shows). */
  logsChosen: boolean;
  logs: { build: LogsPage; deploy: LogsPage } | null;
  clock: ClockState;
  tasks: ListedTask[];
  names: Names;
  faults: ArmedRevisionFault[];
  /** The form of the deployment whose values the API refused, and its refusal at its fields. */
  refused?: { form: DetailForm; state: FormState };
}

/** The deployment's forms with fields the API may refuse. */
type DetailForm = 'fault' | 'status' | 'deployment-status' | 'patch' | 'redeploy';

/** The field of a form that a refusal of another status than 422 is about (a revision not found, at its id). */
const REFUSED_AT: Partial<Record<DetailForm, string>> = { redeploy: 'revision_id' };

/** The state of a form of the deployment: its refusal, if it was the one refused. */
const detailState = (page: DeploymentPage, form: DetailForm) =>
  page.refused?.form === form ? page.refused.state : undefined;

const REVISIONS_PER_PAGE = 20;

async function loadDeploymentPage(
  api: DashboardApi,
  c: Context,
  deploymentId: string,
  workspaceId: string,
): Promise<DeploymentPage> {
  const asWorkspace = { workspaceId };
  const id = encodeURIComponent(deploymentId);
  const revisionsOffset = Math.max(0, Number(c.req.query('revisions_offset') ?? 0) || 0);
  const [deployment, revisions, clock, allTasks, faults] = await Promise.all([
    api.json<DeploymentResponse>('GET', `/v2/deployments/${id}`, asWorkspace),
    api.json<RevisionsList>(
      'GET',
      `/v2/deployments/${id}/revisions?limit=${REVISIONS_PER_PAGE}&offset=${revisionsOffset}`,
      asWorkspace,
    ),
    api.get<ClockState>('/_localplane/clock'),
    api.get<ListedTask[]>('/_localplane/tasks'),
    api.get<{ revisions: ArmedRevisionFault[] }>('/_localplane/faults'),
  ]);
  const histories = new Map(
    await Promise.all(
      revisions.resources.map(
        async (revision) =>
          [
            revision.id,
            await api.get<HistoryEntry[]>(`/_localplane/deployments/${id}/revisions/${revision.id}/history`),
          ] as const,
      ),
    ),
  );
  const logsOf = c.req.query('revision') ?? deployment.latest_revision_id;
  const readLog = (stream: 'build' | 'deploy') =>
    api.json<LogsPage>('POST', `/v1/projects/${id}/revisions/${encodeURIComponent(logsOf!)}/${stream}_logs`, {
      ...asWorkspace,
      body: { order: 'asc', limit: 1000 },
    });
  const logs = logsOf
    ? await Promise.all([readLog('build'), readLog('deploy')]).then(([build, deploy]) => ({ build, deploy }))
    : null;
  const tasks = allTasks.filter((task) => 'deployment_id' in task && task.deployment_id === deploymentId);
  return {
    workspaceId,
    deployment,
    revisions,
    revisionsOffset,
    histories,
    logsOf,
    logsChosen: c.req.query('revision') !== undefined,
    logs,
    clock,
    tasks,
    names: await namesFor(api, tasks),
    faults: faults.revisions.filter((fault) => !fault.deployment_id || fault.deployment_id === deploymentId),
  };
}

const detailPath = (page: Pick<DeploymentPage, 'workspaceId' | 'deployment'>, action = '') =>
  `/ui/deployments/${page.deployment.id}${action}?workspace_id=${page.workspaceId}`;

/** A revision's statuses on the emulator clock: each after the time since the revision was created. */
function Timeline({ revision, history }: { revision: RevisionResponse; history: readonly HistoryEntry[] }) {
  const created = Date.parse(revision.created_at);
  return (
    <ol class="timeline" aria-label={`Statuses of revision ${shortId(revision.id)}`}>
      {history.map((entry) => (
        <li>
          <StatusBadge status={entry.status} />{' '}
          <time datetime={entry.at}>+{formatSpan(Date.parse(entry.at) - created)}</time>
          {entry.detail && <span class="muted"> {entry.detail}</span>}
        </li>
      ))}
    </ol>
  );
}

/** What the revision is built from, in one line. */
function revisionSource(revision: RevisionResponse): string {
  const config = revision.source_revision_config;
  if (config.image_uri) return `image ${config.image_uri}`;
  if (config.source_tarball_path) return `tarball ${config.source_tarball_path}`;
  if (config.repo_ref)
    return `${config.repo_ref}${config.repo_commit_sha ? ` @ ${config.repo_commit_sha.slice(0, 12)}` : ''}`;
  return revision.source;
}

function LogTable({ title, page }: { title: string; page: LogsPage }) {
  return (
    <div>
      <h3>{title}</h3>
      {page.logs.length === 0 ? (
        <p class="muted">No lines.</p>
      ) : (
        <table class="log">
          <caption class="visually-hidden">{title}</caption>
          <TableHead columns={['Time', 'Level', 'Message']} />
          <tbody>
            {page.logs.map((line) => (
              <tr class={`log-${line.level.toLowerCase()}`}>
                <td class="mono nowrap">
                  <Timestamp at={line.timestamp} precise />
                </td>
                <td>{line.level}</td>
                <td class="mono">{line.message}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}

/**
 * The part that moves with the clock: status, due work, revisions with their timelines, logs. Polled while a revision
 * is in progress.
 */
function LiveDeployment({ page }: { page: DeploymentPage }) {
  const { deployment, revisions, workspaceId } = page;
  const moving = revisions.resources.some((revision) => IN_PROGRESS.has(revision.status)) || page.tasks.length > 0;
  // The poll asks for what this URL shows: the logs of the revision chosen, else of the latest one then.
  const revisionParam = page.logsChosen ? `&revision=${page.logsOf}` : '';
  const offsetParam = page.revisionsOffset ? `&revisions_offset=${page.revisionsOffset}` : '';
  const self = `${detailPath(page)}${revisionParam}${offsetParam}`;
  const polling = moving
    ? { 'hx-get': self, 'hx-trigger': 'every 1s', 'hx-target': 'this', 'hx-swap': 'outerHTML' }
    : {};
  const next = page.tasks.find((task) => task.state === 'queued');
  const revisionsPage = (offset: number) => `${detailPath(page)}&revisions_offset=${offset}`;
  return (
    <div id="deployment-live" {...polling}>
      <section
        class="cards"
        aria-label="Deployment"
        data-route={
          'GET /v2/deployments/:deployment_id, GET /v2/deployments/:deployment_id/revisions, ' +
          'GET /_localplane/deployments/:deployment_id/revisions/:revision_id/history'
        }
      >
        <div class="card">
          <h2>Status</h2>
          <div class="figure">
            <StatusBadge status={deployment.status} />
          </div>
          <div class="muted mono">{deployment.id}</div>
        </div>
        <div class="card">
          <h2>Active revision</h2>
          <div class="figure mono">
            {deployment.active_revision_id ? shortId(deployment.active_revision_id) : 'none'}
          </div>
          <div class="muted">
            latest {deployment.latest_revision_id ? shortId(deployment.latest_revision_id) : 'none'}
          </div>
        </div>
        <div class="card">
          <h2>Emulator clock</h2>
          <div class="figure mono">{page.clock.now}</div>
          <div class="muted">
            {page.clock.frozen ? 'frozen' : 'running'} · <a href="/ui/clock">clock</a>
          </div>
        </div>
      </section>

      <section aria-labelledby="due-title">
        <h2 id="due-title">Due work of this deployment</h2>
        <DueWork
          tasks={page.tasks}
          names={page.names}
          now={page.clock.now}
          caption="Work of this deployment: the tasks running, then those scheduled, soonest first"
        />
        {next && (
          <HtmxForm
            class="inline"
            action={detailPath(page, '/advance')}
            replaces="#deployment"
            data-route="POST /_localplane/clock/advance"
          >
            <input type="hidden" name="until" value={next.due_at} />
            <button type="submit">Advance the clock to the next step</button>
          </HtmxForm>
        )}
      </section>

      <section aria-labelledby="revisions-title">
        <h2 id="revisions-title">Revisions</h2>
        <table class="revisions">
          <caption class="visually-hidden">
            Revisions, newest first, each with its statuses on the emulator clock
          </caption>
          <TableHead columns={['Revision', 'Status', 'Created', 'Source', 'Timeline', 'Logs', 'Redeploy']} />
          <tbody>
            {revisions.resources.map((revision) => (
              <tr id={`revision-${revision.id}`} data-status={revision.status}>
                <th scope="row" class="mono">
                  {shortId(revision.id)}
                  {revision.id === deployment.active_revision_id && <span class="badge status-2">active</span>}
                </th>
                <td>
                  <StatusBadge status={revision.status} />
                </td>
                <td class="mono">
                  <Timestamp at={revision.created_at} />
                </td>
                <td class="mono">{revisionSource(revision)}</td>
                <td>
                  <Timeline revision={revision} history={page.histories.get(revision.id) ?? []} />
                </td>
                <td>
                  <a
                    href={`${detailPath(page)}&revision=${revision.id}#logs`}
                    aria-current={revision.id === page.logsOf ? 'true' : undefined}
                  >
                    logs
                  </a>
                </td>
                <td>
                  <HtmxForm
                    action={detailPath(page, '/redeploy')}
                    replaces="#deployment"
                    data-route="POST /v2/deployments/:deployment_id/revisions/:revision_id/redeploy"
                  >
                    <input type="hidden" name="revision_id" value={revision.id} />
                    <button type="submit" aria-label={`Redeploy revision ${shortId(revision.id)}`}>
                      Redeploy
                    </button>
                  </HtmxForm>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        <nav class="pager" aria-label="Pages of revisions">
          {page.revisionsOffset > 0 && (
            <a href={revisionsPage(Math.max(0, page.revisionsOffset - REVISIONS_PER_PAGE))}>Newer</a>
          )}
          {revisions.resources.length === REVISIONS_PER_PAGE && <a href={revisionsPage(revisions.offset)}>Older</a>}
        </nav>
      </section>

      {page.logs && (
        <section
          id="logs"
          aria-labelledby="logs-title"
          data-route={
            'POST /v1/projects/:project_id/revisions/:revision_id/build_logs, ' +
            'POST /v1/projects/:project_id/revisions/:revision_id/deploy_logs'
          }
        >
          <h2 id="logs-title">Logs of revision {shortId(page.logsOf!)}</h2>
          <div class="split">
            <LogTable title="Build log" page={page.logs.build} />
            <LogTable title="Deploy log" page={page.logs.deploy} />
          </div>
        </section>
      )}
      <p class="muted">
        <a href={`/ui/deployments?workspace_id=${workspaceId}`}>All deployments of the workspace</a>
      </p>
    </div>
  );
}

/** What does not move with the clock: the configuration, the secrets' names, the knobs. */
function DeploymentSettings({ page }: { page: DeploymentPage }) {
  const { deployment } = page;
  const config = Object.entries({
    source: deployment.source,
    ...deployment.source_config,
    ...deployment.source_revision_config,
  }).filter(([, value]) => value !== null && typeof value !== 'object');
  return (
    <div class="split">
      <section aria-labelledby="config-title">
        <h2 id="config-title">Configuration</h2>
        <table>
          <caption class="visually-hidden">The deployment's source and its latest revision's configuration</caption>
          <tbody>
            {config.map(([name, value]) => (
              <tr>
                <th scope="row">{name}</th>
                <td class="mono">{String(value)}</td>
              </tr>
            ))}
          </tbody>
        </table>
        <h3>Secrets</h3>
        {deployment.secrets.length === 0 && !deployment.secret_references?.length ? (
          <p class="muted">None.</p>
        ) : (
          <ul class="secrets" aria-label="Secret names (values are never shown)">
            {deployment.secrets.map((secret) => (
              <li class="mono">{secret.name}</li>
            ))}
            {deployment.secret_references?.map((reference) => (
              <li class="mono">{reference.name} (reference)</li>
            ))}
          </ul>
        )}
      </section>
      <section aria-labelledby="knobs-title">
        <h2 id="knobs-title">Revision knobs</h2>
        <HtmxForm
          class="inline"
          action={detailPath(page, '/fault')}
          replaces="#deployment"
          data-route="POST /_localplane/faults/revisions"
          state={detailState(page, 'fault')}
        >
          <Field label="Failure line (optional)">
            <input
              name="message"
              maxlength={2000}
              value={detailState(page, 'fault')?.values?.message}
              placeholder="the last line of its log"
              autocomplete="off"
            />
          </Field>
          <span class="muted">The next revision of this deployment:</span>
          {REVISION_FAULT_STAGES.map((stage) => (
            <button type="submit" name="stage" value={stage}>
              {FAULT_BUTTONS[stage]}
            </button>
          ))}
        </HtmxForm>
        {page.faults.length > 0 && (
          <ul class="armed" aria-label="Armed revision knobs">
            {page.faults.map((fault) => (
              <li>
                The next {fault.remaining === 1 ? 'revision' : `${fault.remaining} revisions`}{' '}
                {fault.deployment_id ? 'of this deployment' : 'of any deployment'} {FAULT_WORDS[fault.stage]}
                {fault.message ? `: ${fault.message}` : ''}
              </li>
            ))}
          </ul>
        )}
        <HtmxForm
          class="inline"
          action={detailPath(page, '/revisions')}
          replaces="#deployment"
          data-route="POST /v2/deployments/:deployment_id/revisions"
        >
          <button type="submit" class="primary">
            New revision
          </button>
          <span class="muted">from the latest revision's configuration</span>
        </HtmxForm>
        {page.revisions.resources.length > 0 && (
          <HtmxForm
            class="inline"
            action={detailPath(page, '/status')}
            replaces="#deployment"
            data-route="PUT /_localplane/deployments/:deployment_id/revisions/:revision_id/status"
            state={detailState(page, 'status')}
          >
            <Field label="Revision">
              <select name="revision_id">
                {page.revisions.resources.map((revision) => (
                  <option value={revision.id}>
                    {shortId(revision.id)} ({revision.status})
                  </option>
                ))}
              </select>
            </Field>
            <Field label="Status">
              <select name="status">
                <Options choices={REVISION_STATUSES} />
              </select>
            </Field>
            <button type="submit">Force the status</button>
          </HtmxForm>
        )}
        <HtmxForm
          class="inline"
          action={detailPath(page, '/deployment-status')}
          replaces="#deployment"
          data-route="PUT /_localplane/deployments/:deployment_id/status"
          state={detailState(page, 'deployment-status')}
        >
          <Field label="Deployment status">
            <select name="status">
              <Options choices={DEPLOYMENT_STATUSES} selected={deployment.status} />
            </select>
          </Field>
          <button type="submit">Force the deployment's status</button>
        </HtmxForm>
      </section>
    </div>
  );
}

/** What the API changes of a deployment and the deploy flow's calls: patch, push token, upload URL, delete. */
function DeploymentActions({ page }: { page: DeploymentPage }) {
  const { deployment } = page;
  const patch = detailState(page, 'patch');
  const redeploy = detailState(page, 'redeploy');
  return (
    <section aria-labelledby="actions-title">
      <h2 id="actions-title">Change or delete</h2>
      <div class="split">
        <HtmxForm
          class="stacked"
          action={detailPath(page, '/patch')}
          replaces="#deployment"
          data-route="PATCH /v2/deployments/:deployment_id"
          state={patch}
        >
          <h3>Change the deployment</h3>
          <p class="muted">An empty field stays as it is; a new ref, image or path makes a new revision.</p>
          <BodyField name="source_revision_config.repo_ref" label="Repository ref" values={patch?.values} />
          <BodyField name="source_revision_config.graph_config_path" label="Graph config path" values={patch?.values} />
          <BodyField name="source_revision_config.image_uri" label="Image URI" values={patch?.values} />
          <SecretsField label="Secrets (replace them all; values are never shown)" />
          <button type="submit">Change</button>
        </HtmxForm>
        <div>
          <h3>Redeploy a revision</h3>
          <HtmxForm
            id="redeploy"
            class="inline"
            action={detailPath(page, '/redeploy')}
            replaces="#deployment"
            data-route="POST /v2/deployments/:deployment_id/revisions/:revision_id/redeploy"
            state={redeploy}
          >
            <Field label="Revision id">
              <input
                name="revision_id"
                value={redeploy?.values?.revision_id}
                list="revision-ids"
                required
                autocomplete="off"
                spellcheck={false}
              />
            </Field>
            <datalist id="revision-ids">
              {page.revisions.resources.map((revision) => (
                <option value={revision.id} />
              ))}
            </datalist>
            <button type="submit">Redeploy</button>
          </HtmxForm>
          <h3>Deploy flow</h3>
          <HtmxForm
            class="inline"
            action={detailPath(page, '/push-token')}
            replaces="#deployment"
            data-route="POST /v2/deployments/:deployment_id/push-token"
          >
            <button type="submit">Get a push token</button>
            <span class="muted">internal_container deployments</span>
          </HtmxForm>
          <HtmxForm
            class="inline"
            action={detailPath(page, '/upload-url')}
            replaces="#deployment"
            data-route="POST /v2/deployments/:deployment_id/upload-url"
          >
            <button type="submit">Get an upload URL</button>
            <span class="muted">for a source tarball</span>
          </HtmxForm>
          <h3>Delete</h3>
          <HtmxForm
            class="inline"
            action={detailPath(page, '/delete')}
            replaces="#deployment"
            hx-confirm={`Delete the deployment ${deployment.name}?`}
            data-route="DELETE /v2/deployments/:deployment_id"
          >
            <label class="check">
              <input type="checkbox" name="delete_tracing_project" value="true" /> and its tracing project
            </label>
            <button type="submit" class="danger">
              Delete {deployment.name}
            </button>
          </HtmxForm>
        </div>
      </div>
    </section>
  );
}

function DeploymentContent({ page, error, notice }: { page: DeploymentPage; error?: string; notice?: string }) {
  return (
    <div id="deployment">
      {error && <ErrorNote message={error} />}
      {notice && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      <LiveDeployment page={page} />
      <DeploymentSettings page={page} />
      <DeploymentActions page={page} />
    </div>
  );
}

/**
 * /ui/deployments: a workspace's deployments with the API's filters and paging; a deployment's revisions, logs and
 * knobs.
 */
export function deploymentsView(api: DashboardApi) {
  const app = new Hono();
  // Before /:deployment_id, which would take their names for ids.
  app.route('/', deploymentResourcesView(api));

  /**
   * The list (to htmx, its results), with what a bulk deletion did, or with the create form as it was sent and the
   * API's refusal of it.
   */
  const renderList = async (c: Context, notice?: string, refusedCreate?: FormState) => {
    const workspaces = await workspacesOf(api);
    const workspaceId = c.req.query('workspace_id') ?? workspaces[0]?.id ?? '';
    const query = listQuery(c);
    let page: DeploymentsList | undefined;
    let error: string | undefined;
    let filterState: FormState | undefined;
    try {
      page = await api.json<DeploymentsList>('GET', `/v2/deployments?${query}`, { workspaceId });
    } catch (refused) {
      if (!(refused instanceof DashboardApiError)) throw refused;
      error = refused.detail;
      // To htmx a 200, as htmx swaps in only a success's answer: the refusal shows at the filter's fields.
      c.status(refused.status >= 500 ? 502 : (refusedStatus(c, refused.status) as 400));
      if (refused.status < 500) {
        // What the API locates at a field of the filter shows there; the rest in the results' alert.
        const { state } = refusedForm(refused, Object.fromEntries(query));
        error = state.error;
        if (state.fieldErrors) filterState = state;
      }
    }
    const results = (
      <DeploymentsResults workspaceId={workspaceId} query={query} page={page} error={error} notice={notice} />
    );
    const integrations = workspaces.find((workspace) => workspace.id === workspaceId)?.integrations ?? [];
    return renderView(c, {
      title: 'Deployments',
      active: 'deployments',
      children: (
        <>
          <DeploymentTabs active="deployments" workspaceId={workspaceId} />
          <FilterForm workspaces={workspaces} workspaceId={workspaceId} query={query} state={filterState} />
          <CreateForm workspaceId={workspaceId} integrations={integrations} state={refusedCreate} />
          {results}
        </>
      ),
      fragment: (
        <>
          {results}
          {filterState && (
            <FilterForm workspaces={workspaces} workspaceId={workspaceId} query={query} state={filterState} outOfBand />
          )}
        </>
      ),
    });
  };

  app.get('/', (c) => renderList(c));

  app.post('/create', async (c) => {
    const workspaceId = c.req.query('workspace_id') ?? '';
    const values = await formValues(c);
    try {
      const created = await api.json<DeploymentResponse>('POST', '/v2/deployments', {
        workspaceId,
        body: createBody(values),
      });
      return seeOther(c, deploymentPath(workspaceId, created.id));
    } catch (error) {
      if (!(error instanceof DashboardApiError)) throw error;
      // The secrets are never shown back; named empty, a refusal of them finds their field.
      const typed = { ...values, secrets: '' };
      const state = error.status < 500 ? refusedForm(error, typed).state : { values: typed, error: error.detail };
      // A plain form's answer is the whole list with the form open; htmx swaps in the form alone.
      refusalStatus(c, error);
      if (!isFragmentRequest(c)) return renderList(c, undefined, state);
      const integrations =
        (await workspacesOf(api)).find((workspace) => workspace.id === workspaceId)?.integrations ?? [];
      return c.html(<CreateForm workspaceId={workspaceId} integrations={integrations} state={state} />);
    }
  });

  app.post('/delete', async (c) => {
    const workspaceId = c.req.query('workspace_id') ?? '';
    const ids = (await formList(c, 'deployment_ids')).filter(Boolean);
    if (ids.length === 0) return renderList(c, 'Select the deployments to delete.');
    const query = new URLSearchParams(ids.map((id) => ['deployment_ids', id]));
    try {
      const { results } = await api.json<{ results: { deployment_id: string; deleted: boolean; detail?: string }[] }>(
        'DELETE',
        `/v2/deployments?${query}`,
        { workspaceId },
      );
      const deleted = results.filter((result) => result.deleted).length;
      const refused = results.filter((result) => !result.deleted).map((result) => result.detail);
      return renderList(c, [`Deleted ${deleted} of ${results.length}.`, ...refused].join(' '));
    } catch (error) {
      if (!(error instanceof DashboardApiError)) throw error;
      return renderList(c, error.detail);
    }
  });

  /** The deployment's workspace: the one named, else the one that has it (a link from elsewhere may not say). */
  const workspaceOf = async (c: Context, deploymentId: string): Promise<string | null> => {
    const named = c.req.query('workspace_id');
    if (named) return named;
    for (const workspace of await workspacesOf(api)) {
      const response = await api.raw('GET', `/v2/deployments/${encodeURIComponent(deploymentId)}`, {
        workspaceId: workspace.id,
      });
      if (response.ok) return workspace.id;
    }
    return null;
  };

  const renderDeployment = async (
    c: Context,
    deploymentId: string,
    workspaceId: string,
    { error, notice, refused }: { error?: string; notice?: string; refused?: DeploymentPage['refused'] } = {},
  ) => {
    const page = { ...(await loadDeploymentPage(api, c, deploymentId, workspaceId)), refused };
    const content = <DeploymentContent page={page} error={error} notice={notice} />;
    return renderView(c, {
      title: page.deployment.name,
      active: 'deployments',
      children: content,
      // A poll asks for the live part; an action's answer replaces the whole deployment.
      fragment: c.req.method === 'GET' ? <LiveDeployment page={page} /> : content,
    });
  };

  app.get('/:deployment_id', async (c) => {
    const deploymentId = c.req.param('deployment_id');
    const workspaceId = await workspaceOf(c, deploymentId);
    if (workspaceId === null) throw new DashboardApiError(404, deploymentNotFound(deploymentId));
    if (!c.req.query('workspace_id'))
      return c.redirect(`/ui/deployments/${deploymentId}?workspace_id=${workspaceId}`, 303);
    try {
      return await renderDeployment(c, deploymentId, workspaceId);
    } catch (error) {
      // A poll of a deployment that was deleted meanwhile: say so, and stop polling.
      if (!(error instanceof DashboardApiError) || error.status !== 404 || !isFragmentRequest(c)) throw error;
      return c.html(
        <div id="deployment-live">
          <ErrorNote message={error.detail} />
        </div>,
      );
    }
  });

  /**
   * An action on the deployment: runs the API call, then answers the deployment as it is now, with the call's refusal
   * if any (at the fields of the form `fieldsOf` when it names them), or the words the call resolves to.
   */
  type Call = (ids: { deploymentId: string; workspaceId: string }, form: Record<string, string>) => Promise<unknown>;
  const action = (call: Call, fieldsOf?: DetailForm) => async (c: Context) => {
    const deploymentId = c.req.param('deployment_id')!;
    const workspaceId = await workspaceOf(c, deploymentId);
    if (workspaceId === null) throw new DashboardApiError(404, deploymentNotFound(deploymentId));
    const form = await formValues(c);
    let notice: string | undefined;
    try {
      const done = await call({ deploymentId, workspaceId }, form);
      if (typeof done === 'string') notice = done;
    } catch (error) {
      if (!(error instanceof DashboardApiError)) throw error;
      refusalStatus(c, error);
      if (fieldsOf === undefined || error.status >= 500)
        return renderDeployment(c, deploymentId, workspaceId, { error: error.detail });
      // The secrets are never shown back; named empty, a refusal of them finds their field.
      const typed = { ...form, ...('secrets' in form ? { secrets: '' } : {}) };
      const field = REFUSED_AT[fieldsOf];
      const { state } = field && error.status !== 422 ? refusedAt(field, error, typed) : refusedForm(error, typed);
      const refused = { form: fieldsOf, state };
      return renderDeployment(c, deploymentId, workspaceId, { error: state.error, refused });
    }
    return renderDeployment(c, deploymentId, workspaceId, { notice });
  };
  const deploymentApiPath = (deploymentId: string, rest = '') =>
    `/v2/deployments/${encodeURIComponent(deploymentId)}${rest}`;

  app.post(
    '/:deployment_id/fault',
    action(({ deploymentId }, form) => {
      const message = form.message?.trim();
      return api.json('POST', '/_localplane/faults/revisions', {
        body: { stage: form.stage, deployment_id: deploymentId, ...(message ? { message } : {}) },
      });
    }, 'fault'),
  );
  app.post(
    '/:deployment_id/revisions',
    action(({ deploymentId, workspaceId }) =>
      api.json('POST', `/v2/deployments/${encodeURIComponent(deploymentId)}/revisions`, { workspaceId, body: {} }),
    ),
  );
  app.post(
    '/:deployment_id/status',
    action(
      ({ deploymentId }, form) =>
        api.json(
          'PUT',
          `/_localplane/deployments/${encodeURIComponent(deploymentId)}/revisions/` +
            `${encodeURIComponent(form.revision_id ?? '')}/status`,
          {
            body: { status: form.status },
          },
        ),
      'status',
    ),
  );
  app.post(
    '/:deployment_id/advance',
    action(async (_ids, form) => {
      const { now } = await api.get<ClockState>('/_localplane/clock');
      const milliseconds = Date.parse(form.until ?? '') - Date.parse(now);
      if (Number.isNaN(milliseconds))
        throw new DashboardApiError(422, `Cannot read "${form.until ?? ''}" as a time to advance the clock to.`);
      return api.json('POST', '/_localplane/clock/advance', { body: { seconds: Math.max(0, milliseconds) / 1000 } });
    }),
  );
  app.post(
    '/:deployment_id/redeploy',
    action(
      ({ deploymentId, workspaceId }, form) =>
        api.json(
          'POST',
          deploymentApiPath(deploymentId, `/revisions/${encodeURIComponent(form.revision_id ?? '')}/redeploy`),
          { workspaceId },
        ),
      'redeploy',
    ),
  );
  app.post(
    '/:deployment_id/deployment-status',
    action(
      ({ deploymentId }, form) =>
        api.json('PUT', `/_localplane/deployments/${encodeURIComponent(deploymentId)}/status`, {
          body: { status: form.status },
        }),
      'deployment-status',
    ),
  );
  app.post(
    '/:deployment_id/patch',
    action(async ({ deploymentId, workspaceId }, form) => {
      const body = nestedBody(form, ['secrets']);
      if (form.secrets) body.secrets = secretsOf(form.secrets);
      if (Object.keys(body).length === 0) return 'Nothing to change: every field was empty.';
      await api.json('PATCH', deploymentApiPath(deploymentId), { workspaceId, body });
      return `Changed ${Object.keys(body).join(', ')}.`;
    }, 'patch'),
  );
  app.post(
    '/:deployment_id/push-token',
    action(async ({ deploymentId, workspaceId }) => {
      const token = await api.json<{ token: string; registry_url: string; expires_at: string }>(
        'POST',
        deploymentApiPath(deploymentId, '/push-token'),
        { workspaceId },
      );
      // The token is a credential: the page says it was issued, not what it is.
      return `A push token for ${token.registry_url} was issued, valid until ${token.expires_at} (not shown).`;
    }),
  );
  app.post(
    '/:deployment_id/upload-url',
    action(async ({ deploymentId, workspaceId }) => {
      const upload = await api.json<{ upload_url: string; object_path: string }>(
        'POST',
        deploymentApiPath(deploymentId, '/upload-url'),
        { workspaceId },
      );
      // The URL's query is its signature: the page names where it points, not the signature.
      const { origin, pathname } = new URL(upload.upload_url);
      return (
        `An upload URL was issued: PUT a tarball to ${origin}${pathname}; ` +
        `a revision names it as ${upload.object_path}.`
      );
    }),
  );
  app.post('/:deployment_id/delete', async (c) => {
    const deploymentId = c.req.param('deployment_id');
    const workspaceId = await workspaceOf(c, deploymentId);
    if (workspaceId === null) throw new DashboardApiError(404, deploymentNotFound(deploymentId));
    const { delete_tracing_project: deleteProject } = await formValues(c);
    try {
      await api.json(
        'DELETE',
        `${deploymentApiPath(deploymentId)}?delete_tracing_project=${deleteProject === 'true' ? 'true' : 'false'}`,
        { workspaceId },
      );
    } catch (error) {
      if (!(error instanceof DashboardApiError)) throw error;
      refusalStatus(c, error);
      return renderDeployment(c, deploymentId, workspaceId, { error: error.detail });
    }
    return seeOther(c, `/ui/deployments?workspace_id=${workspaceId}`);
  });

  return app;
}
