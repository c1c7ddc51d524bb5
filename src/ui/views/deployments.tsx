import { Hono, type Context } from 'hono';
import { REVISION_STEP_STATUSES } from '../../config.ts';
import { REVISION_FAULT_STAGES, type RevisionFaultStage } from '../../deployments/faults.ts';
import {
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
import { formValues } from '../forms.ts';
import { ErrorNote, Field, HtmxForm, isFragmentRequest, Options, renderView, TableHead } from '../layout.tsx';
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
}: {
  workspaces: readonly FixtureWorkspace[];
  workspaceId: string;
  query: URLSearchParams;
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
    <HtmxForm class="inline filters" method="get" action="/ui/deployments" replaces="#deployments-results">
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
}: {
  workspaceId: string;
  query: URLSearchParams;
  page?: DeploymentsList;
  error?: string;
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
    <section id="deployments-results" aria-labelledby="deployments-title">
      <h2 id="deployments-title">Deployments</h2>
      {error && <ErrorNote message={error} />}
      {page && page.resources.length === 0 && <p class="muted">No deployment matches.</p>}
      {page && page.resources.length > 0 && (
        <table>
          <caption class="visually-hidden">Deployments of the workspace, newest first</caption>
          <TableHead columns={['Name', 'Status', 'Type', 'Source', 'Image version', 'Active revision', 'Updated']} />
          <tbody>
            {page.resources.map((deployment) => (
              <tr>
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
                <td class="mono">{deployment.updated_at}</td>
              </tr>
            ))}
          </tbody>
        </table>
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
}

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
          <time datetime={entry.at} title={entry.at}>
            +{formatSpan(Date.parse(entry.at) - created)}
          </time>
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
                <td class="mono">{new Date(line.timestamp).toISOString()}</td>
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
      <section class="cards" aria-label="Deployment">
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
          <HtmxForm class="inline" action={detailPath(page, '/advance')} replaces="#deployment">
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
          <TableHead columns={['Revision', 'Status', 'Created', 'Source', 'Timeline', 'Logs']} />
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
                <td class="mono">{revision.created_at}</td>
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
        <section id="logs" aria-labelledby="logs-title">
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
        <HtmxForm class="inline" action={detailPath(page, '/fault')} replaces="#deployment">
          <Field label="Failure line (optional)">
            <input name="message" maxlength={2000} placeholder="the last line of its log" autocomplete="off" />
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
        <HtmxForm class="inline" action={detailPath(page, '/revisions')} replaces="#deployment">
          <button type="submit" class="primary">
            New revision
          </button>
          <span class="muted">from the latest revision's configuration</span>
        </HtmxForm>
        {page.revisions.resources.length > 0 && (
          <HtmxForm class="inline" action={detailPath(page, '/status')} replaces="#deployment">
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
      </section>
    </div>
  );
}

function DeploymentContent({ page, error }: { page: DeploymentPage; error?: string }) {
  return (
    <div id="deployment">
      {error && <ErrorNote message={error} />}
      <LiveDeployment page={page} />
      <DeploymentSettings page={page} />
    </div>
  );
}

/**
 * /ui/deployments: a workspace's deployments with the API's filters and paging; a deployment's revisions, logs and
 * knobs.
 */
export function deploymentsView(api: DashboardApi) {
  const app = new Hono();

  app.get('/', async (c) => {
    const workspaces = await workspacesOf(api);
    const workspaceId = c.req.query('workspace_id') ?? workspaces[0]?.id ?? '';
    const query = listQuery(c);
    let page: DeploymentsList | undefined;
    let error: string | undefined;
    try {
      page = await api.json<DeploymentsList>('GET', `/v2/deployments?${query}`, { workspaceId });
    } catch (refused) {
      if (!(refused instanceof DashboardApiError)) throw refused;
      error = refused.detail;
      c.status(refused.status >= 500 ? 502 : (refused.status as 400));
    }
    const results = <DeploymentsResults workspaceId={workspaceId} query={query} page={page} error={error} />;
    return renderView(c, {
      title: 'Deployments',
      active: 'deployments',
      children: (
        <>
          <FilterForm workspaces={workspaces} workspaceId={workspaceId} query={query} />
          {results}
        </>
      ),
      fragment: results,
    });
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

  const renderDeployment = async (c: Context, deploymentId: string, workspaceId: string, error?: string) => {
    const page = await loadDeploymentPage(api, c, deploymentId, workspaceId);
    return renderView(c, {
      title: page.deployment.name,
      active: 'deployments',
      children: <DeploymentContent page={page} error={error} />,
      // A poll asks for the live part; an action's answer replaces the whole deployment.
      fragment:
        c.req.method === 'GET' ? <LiveDeployment page={page} /> : <DeploymentContent page={page} error={error} />,
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
   * if any.
   */
  type Call = (ids: { deploymentId: string; workspaceId: string }, form: Record<string, string>) => Promise<unknown>;
  const action = (call: Call) => async (c: Context) => {
    const deploymentId = c.req.param('deployment_id')!;
    const workspaceId = await workspaceOf(c, deploymentId);
    if (workspaceId === null) throw new DashboardApiError(404, deploymentNotFound(deploymentId));
    const form = await formValues(c);
    try {
      await call({ deploymentId, workspaceId }, form);
    } catch (error) {
      if (!(error instanceof DashboardApiError)) throw error;
      refusalStatus(c, error);
      return renderDeployment(c, deploymentId, workspaceId, error.detail);
    }
    return renderDeployment(c, deploymentId, workspaceId);
  };

  app.post(
    '/:deployment_id/fault',
    action(({ deploymentId }, form) => {
      const message = form.message?.trim();
      return api.json('POST', '/_localplane/faults/revisions', {
        body: { stage: form.stage, deployment_id: deploymentId, ...(message ? { message } : {}) },
      });
    }),
  );
  app.post(
    '/:deployment_id/revisions',
    action(({ deploymentId, workspaceId }) =>
      api.json('POST', `/v2/deployments/${encodeURIComponent(deploymentId)}/revisions`, { workspaceId, body: {} }),
    ),
  );
  app.post(
    '/:deployment_id/status',
    action(({ deploymentId }, form) =>
      api.json(
        'PUT',
        `/_localplane/deployments/${encodeURIComponent(deploymentId)}/revisions/` +
          `${encodeURIComponent(form.revision_id ?? '')}/status`,
        {
          body: { status: form.status },
        },
      ),
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

  return app;
}
