// The deployments' neighbours under /ui/deployments/: OAuth providers, listeners and codehost integrations, each a
// sub-page of the Deployments view with its tabs, listed and changed through the public API as a workspace.
import { Hono, type Context } from 'hono';
import type { Child } from 'hono/jsx';
import type { CodehostIntegration, CodehostRepository, OAuthProviderResponse } from '../../deployments/schemas.ts';
import type { ListenerResponse } from '../../deployments/listener-schemas.ts';
import { LISTENER_COMPUTE_TYPES } from '../../deployments/listener-schemas.ts';
import { PROVIDER_TYPES, TOKEN_ENDPOINT_AUTH_METHODS } from '../../deployments/oauth-provider-schemas.ts';
import type { DashboardApi } from '../api.ts';
import { readFixtures, type FixtureWorkspace } from '../fixtures.ts';
import {
  formValues,
  refusal,
  refusedAt,
  refusedForm,
  refusedStatus,
  type FormState,
  type FormValues,
} from '../forms.ts';
import { ErrorNote, Field, HtmxForm, Options, renderView, TableHead } from '../layout.tsx';
import { Timestamp } from '../time.tsx';
import { shortId } from '../due-work.tsx';

/** The sub-pages of the Deployments view, in the order its tabs list them. */
const TABS = [
  { name: 'deployments', path: '/ui/deployments', label: 'Deployments' },
  { name: 'providers', path: '/ui/deployments/providers', label: 'OAuth providers' },
  { name: 'listeners', path: '/ui/deployments/listeners', label: 'Listeners' },
  { name: 'integrations', path: '/ui/deployments/integrations', label: 'Codehost integrations' },
] as const;

type TabName = (typeof TABS)[number]['name'];

/** The Deployments view's tabs, each keeping the workspace chosen. */
export const DeploymentTabs = ({ active, workspaceId }: { active: TabName; workspaceId: string }) => (
  <nav class="tabs" aria-label="Deployments and their neighbours">
    <ul>
      {TABS.map((tab) => (
        <li>
          <a
            href={`${tab.path}?workspace_id=${encodeURIComponent(workspaceId)}`}
            aria-current={tab.name === active ? 'page' : undefined}
          >
            {tab.label}
          </a>
        </li>
      ))}
    </ul>
  </nav>
);

/**
 * A request body from a form whose fields are named as the body's: `source_config.repo_url` nests, an empty field is
 * left out (the API's default applies), every value is the text typed (a checkbox's the caller reads).
 */
export function nestedBody(values: FormValues, skip: readonly string[] = []): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(values)) {
    if (value === '' || skip.includes(field)) continue;
    const path = field.split('.');
    let at = body;
    for (const name of path.slice(0, -1)) at = (at[name] ??= {}) as Record<string, unknown>;
    at[path.at(-1)!] = value;
  }
  return body;
}

/** Secrets typed one a line as NAME=value (the value may hold "="), as the API's list of {name, value}. */
export const secretsOf = (text: string | undefined) =>
  (text ?? '')
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .map((line) => {
      const at = line.indexOf('=');
      return at === -1 ? { name: line, value: '' } : { name: line.slice(0, at).trim(), value: line.slice(at + 1) };
    });

/** A comma-separated field as a list, or undefined when empty. */
const listOf = (text: string | undefined) => {
  const items = (text ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
  return items.length > 0 ? items : undefined;
};

/** The sub-pages' forms that show the API's refusal at their fields (`-change`: a row's Change form). */
type ResourceForm = 'provider' | 'mcp' | 'listener' | 'provider-change' | 'listener-change';

/** A form the API refused, and its refusal at its fields; `row`, the id of the row whose form it is. */
interface RefusedForm {
  form: ResourceForm;
  row?: string;
  state: FormState;
}

/** What an action did, or what the API refused (`refused`: what is about no field of the form, if it has fields). */
type Outcome = { done: string } | { refused?: string; status: number; refusedForm?: RefusedForm };

/** The state of a form of the panel (of a row's form: `row`'s), if it was the one refused. */
const stateOf = (refused: RefusedForm | undefined, form: ResourceForm, row?: string) =>
  refused?.form === form && refused.row === row ? refused.state : undefined;

const OutcomeNote = ({ outcome }: { outcome?: Outcome }) => {
  if (!outcome || ('refused' in outcome && !outcome.refused)) return null;
  if ('done' in outcome)
    return (
      <p class="notice" role="status">
        {outcome.done}
      </p>
    );
  return <ErrorNote message={outcome.refused!} />;
};

/** The workspace picker of a sub-page: a get of the page itself. */
const WorkspacePicker = ({
  path,
  workspaces,
  workspaceId,
}: {
  path: string;
  workspaces: readonly FixtureWorkspace[];
  workspaceId: string;
}) => (
  <form class="inline filters" method="get" action={path}>
    <Field label="Workspace">
      <select name="workspace_id">
        {workspaces.map((workspace) => (
          <option value={workspace.id} selected={workspace.id === workspaceId}>
            {workspace.name}
            {workspace.self_hosted ? ' (self-hosted)' : ''}
          </option>
        ))}
      </select>
    </Field>
    <button type="submit">Show</button>
  </form>
);

const PANEL = '#resource-panel';

/** A row of a resource table: the item's id (its URL's), the name its buttons say, its header cell and other cells. */
interface ResourceRow {
  id: string;
  name: string;
  header: Child;
  /** The header cell's title: the whole id where the cell shows it short. */
  title?: string;
  cells: Child;
}

/**
 * A tab's table of OAuth providers or listeners: a row an item, its last cell a Delete button (confirmed) and a Change
 * form of the fields `changeFields` draws; the Change form the API refused comes back open, its refusal at its fields.
 */
function ResourceTable({
  kind,
  noun,
  caption,
  columns,
  routes,
  actionPath,
  rows,
  changeFields,
  refused,
}: {
  kind: 'provider' | 'listener';
  /** What the confirmation calls an item. */
  noun: string;
  caption: string;
  columns: readonly string[];
  /** The API routes of the Delete and Change forms. */
  routes: { delete: string; change: string };
  actionPath: (id: string, action: 'delete' | 'update') => string;
  rows: readonly ResourceRow[];
  changeFields: (values: FormValues) => Child;
  refused?: RefusedForm;
}) {
  return (
    <div class="scroll-x">
      <table class={`${kind}s`}>
        <caption class="visually-hidden">{caption}</caption>
        <TableHead columns={columns} />
        <tbody>
          {rows.map((row) => {
            const changed = stateOf(refused, `${kind}-change`, row.id);
            return (
              <tr id={`${kind}-${row.id}`}>
                <th scope="row" class="mono" title={row.title}>
                  {row.header}
                </th>
                {row.cells}
                <td>
                  <div class="actions">
                    <HtmxForm
                      action={actionPath(row.id, 'delete')}
                      replaces={PANEL}
                      hx-confirm={`Delete the ${noun} ${row.name}?`}
                      data-route={routes.delete}
                    >
                      <button type="submit" class="danger">
                        Delete {row.name}
                      </button>
                    </HtmxForm>
                    <details open={changed !== undefined}>
                      <summary>Change {row.name}</summary>
                      <HtmxForm
                        class="stacked"
                        action={actionPath(row.id, 'update')}
                        replaces={PANEL}
                        data-route={routes.change}
                        state={changed}
                      >
                        <p class="muted">An empty field stays as it is.</p>
                        {changeFields(changed?.values ?? {})}
                        <button type="submit">Change</button>
                      </HtmxForm>
                    </details>
                  </div>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

/** A sub-page's list and forms, given the workspace; what they show is read through the API. */
type Panel = (workspaceId: string, refused?: RefusedForm) => Promise<Child>;

// ---------------------------------------------------------------------------------------------
// OAuth providers: /ui/deployments/providers

const providersPath = (workspaceId: string, action = '') =>
  `/ui/deployments/providers${action}?workspace_id=${encodeURIComponent(workspaceId)}`;

function ProvidersPanel({
  workspaceId,
  providers,
  refused,
}: {
  workspaceId: string;
  providers: OAuthProviderResponse[];
  refused?: RefusedForm;
}) {
  const text = (name: string, label: string, required = false, values: FormValues = {}) => (
    <Field label={label}>
      <input name={name} value={values[name]} required={required} autocomplete="off" />
    </Field>
  );
  const created = stateOf(refused, 'provider');
  const discovered = stateOf(refused, 'mcp');
  return (
    <>
      <section aria-labelledby="providers-title" data-route="GET /v2/auth/providers">
        <h2 id="providers-title">OAuth providers</h2>
        {providers.length === 0 ? (
          <p class="muted">No OAuth provider.</p>
        ) : (
          <ResourceTable
            kind="provider"
            noun="OAuth provider"
            caption="The workspace's OAuth providers; client secrets are write-only and never shown"
            columns={['Provider id', 'Name', 'Client id', 'Endpoints', 'Client secret', 'Actions']}
            routes={{
              delete: 'DELETE /v2/auth/providers/:provider_id',
              change: 'PATCH /v2/auth/providers/:provider_id',
            }}
            actionPath={(id, action) => providersPath(workspaceId, `/${encodeURIComponent(id)}/${action}`)}
            refused={refused}
            rows={providers.map((provider) => ({
              id: provider.provider_id,
              name: provider.provider_id,
              header: provider.provider_id,
              cells: (
                <>
                  <td>
                    {provider.name}
                    {provider.provider_type && <span class="muted"> · {provider.provider_type}</span>}
                  </td>
                  <td class="mono">{provider.client_id}</td>
                  <td class="mono">
                    {provider.mcp_server_url && <div>MCP {provider.mcp_server_url}</div>}
                    <div>auth {provider.auth_url}</div>
                    <div>token {provider.token_url}</div>
                    <div class="muted">
                      {provider.token_endpoint_auth_method}
                      {provider.uses_pkce ? ` · PKCE ${provider.code_challenge_method ?? ''}` : ''}
                    </div>
                  </td>
                  <td class="muted">write-only</td>
                </>
              ),
            }))}
            changeFields={(values) => (
              <>
                {text('name', 'Name', false, values)}
                {text('client_id', 'Client id', false, values)}
                <Field label="Client secret">
                  <input name="client_secret" type="password" autocomplete="new-password" />
                </Field>
                {text('auth_url', 'Auth URL', false, values)}
                {text('token_url', 'Token URL', false, values)}
              </>
            )}
          />
        )}
      </section>
      <div class="split">
        <section aria-labelledby="provider-create-title">
          <h2 id="provider-create-title">New OAuth provider</h2>
          <HtmxForm
            class="stacked"
            action={providersPath(workspaceId)}
            replaces={PANEL}
            data-route="POST /v2/auth/providers"
            state={created}
          >
            {text('provider_id', 'Provider id', true, created?.values)}
            {text('name', 'Name', true, created?.values)}
            {text('client_id', 'Client id', true, created?.values)}
            <Field label="Client secret (write-only)">
              <input name="client_secret" type="password" autocomplete="new-password" />
            </Field>
            {text('auth_url', 'Auth URL', true, created?.values)}
            {text('token_url', 'Token URL', true, created?.values)}
            <Field label="Provider type">
              <select name="provider_type">
                <Options choices={PROVIDER_TYPES} any="none" />
              </select>
            </Field>
            <Field label="Token endpoint auth method">
              <select name="token_endpoint_auth_method">
                <Options choices={TOKEN_ENDPOINT_AUTH_METHODS} any="default" />
              </select>
            </Field>
            <label class="check">
              <input type="checkbox" name="uses_pkce" value="true" /> Uses PKCE
            </label>
            {text('code_challenge_method', 'Code challenge method (default S256)')}
            <button type="submit" class="primary">
              Create provider
            </button>
          </HtmxForm>
        </section>
        <section aria-labelledby="provider-mcp-title">
          <h2 id="provider-mcp-title">From an MCP server</h2>
          <HtmxForm
            class="stacked"
            action={providersPath(workspaceId, '/mcp-discover')}
            replaces={PANEL}
            data-route="POST /v2/auth/providers/mcp-discover"
            state={discovered}
          >
            <p class="muted">The OAuth endpoints are discovered from the server (the fixtures' MCP servers).</p>
            {text('provider_id', 'Provider id', true, discovered?.values)}
            {text('name', 'Name', true, discovered?.values)}
            {text('mcp_server_url', 'MCP server URL', true, discovered?.values)}
            <button type="submit" class="primary">
              Discover and create
            </button>
          </HtmxForm>
        </section>
      </div>
    </>
  );
}

// ---------------------------------------------------------------------------------------------
// Listeners: /ui/deployments/listeners

const listenersPath = (workspaceId: string, action = '') =>
  `/ui/deployments/listeners${action}?workspace_id=${encodeURIComponent(workspaceId)}`;

/** The fields of a listener that its Change form takes as well as the New listener form. */
const ListenerChangeableFields = ({ values }: { values: FormValues }) => (
  <>
    <Field label="Namespaces (comma-separated)">
      <input name="compute_config.k8s_namespaces" value={values['compute_config.k8s_namespaces']} autocomplete="off" />
    </Field>
    <Field label="Version">
      <input name="version" value={values.version} autocomplete="off" />
    </Field>
  </>
);

/** A listener's body from its form: the namespaces typed comma-separated. */
const listenerBody = (values: FormValues) => {
  const namespaces = listOf(values['compute_config.k8s_namespaces']);
  return {
    ...nestedBody(values, ['compute_config.k8s_namespaces']),
    ...(namespaces ? { compute_config: { k8s_namespaces: namespaces } } : {}),
  };
};

/** The listeners, or the API's refusal to list them (a workspace not self-hosted): the form shows either way. */
function ListenersPanel({
  workspaceId,
  listeners,
  refused,
}: {
  workspaceId: string;
  listeners: ListenerResponse[] | { refused: string };
  refused?: RefusedForm;
}) {
  const created = stateOf(refused, 'listener');
  const values = created?.values ?? {};
  return (
    <>
      <section aria-labelledby="listeners-title" data-route="GET /v2/listeners">
        <h2 id="listeners-title">Listeners</h2>
        {'refused' in listeners ? (
          <ErrorNote message={listeners.refused} />
        ) : listeners.length === 0 ? (
          <p class="muted">No listener.</p>
        ) : (
          <ResourceTable
            kind="listener"
            noun="listener"
            caption="The workspace's listeners, oldest first"
            columns={['Listener', 'Compute', 'Namespaces', 'Version', 'Created', 'Actions']}
            routes={{ delete: 'DELETE /v2/listeners/:listener_id', change: 'PATCH /v2/listeners/:listener_id' }}
            actionPath={(id, action) => listenersPath(workspaceId, `/${id}/${action}`)}
            refused={refused}
            rows={listeners.map((listener) => ({
              id: listener.id,
              name: listener.compute_id,
              header: shortId(listener.id),
              title: listener.id,
              cells: (
                <>
                  <td class="mono">
                    {listener.compute_type} {listener.compute_id}
                  </td>
                  <td class="mono">{listener.compute_config.k8s_namespaces?.join(', ') ?? '—'}</td>
                  <td class="mono">{listener.version ?? '—'}</td>
                  <td class="mono">
                    <Timestamp at={listener.created_at} />
                  </td>
                </>
              ),
            }))}
            changeFields={(values) => <ListenerChangeableFields values={values} />}
          />
        )}
      </section>
      <section aria-labelledby="listener-create-title">
        <h2 id="listener-create-title">New listener</h2>
        <HtmxForm
          class="inline"
          action={listenersPath(workspaceId)}
          replaces={PANEL}
          data-route="POST /v2/listeners"
          state={created}
        >
          <Field label="Compute type">
            <select name="compute_type">
              <Options choices={LISTENER_COMPUTE_TYPES} selected={values.compute_type} />
            </select>
          </Field>
          <Field label="Compute id">
            <input name="compute_id" value={values.compute_id} required autocomplete="off" />
          </Field>
          <ListenerChangeableFields values={values} />
          <button type="submit" class="primary">
            Create listener
          </button>
        </HtmxForm>
        <p class="muted">Only a self-hosted workspace has listeners; another's are refused.</p>
      </section>
    </>
  );
}

// ---------------------------------------------------------------------------------------------
// Codehost integrations: /ui/deployments/integrations (the API lists them and their repositories, no more)

function IntegrationsPanel({
  integrations,
}: {
  integrations: { integration: CodehostIntegration; repos: CodehostRepository[] }[];
}) {
  return (
    <section aria-labelledby="integrations-title" data-route="GET /v1/integrations/forge/codehost/install">
      <h2 id="integrations-title">Codehost integrations</h2>
      <p class="muted">
        The fixtures install them; the API lists them and their repositories, which a codehost deployment names.
      </p>
      {integrations.length === 0 && <p class="muted">No codehost integration.</p>}
      {integrations.map(({ integration, repos }) => (
        <section
          id={`integration-${integration.id}`}
          aria-label={`Integration ${integration.name}`}
          data-route="GET /v1/integrations/forge/codehost/:integration_id/repos"
        >
          <h3>
            {integration.name} <span class="muted mono">installation {integration.installation_id}</span>
          </h3>
          <p class="muted mono">{integration.id}</p>
          {repos.length === 0 ? (
            <p class="muted">No repository.</p>
          ) : (
            <div class="scroll-x">
              <table>
                <caption class="visually-hidden">Repositories of {integration.name}</caption>
                <TableHead columns={['Repository', 'Default branch', 'URL']} />
                <tbody>
                  {repos.map((repo) => (
                    <tr>
                      <th scope="row">
                        {repo.owner}/{repo.name}
                      </th>
                      <td class="mono">{repo.default_branch}</td>
                      <td class="mono">{repo.url}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </section>
      ))}
    </section>
  );
}

/** /ui/deployments/{providers,listeners,integrations}: mounted by the Deployments view before its deployment pages. */
export function deploymentResourcesView(api: DashboardApi) {
  const app = new Hono();

  const panels: Record<Exclude<TabName, 'deployments'>, { title: string; panel: Panel }> = {
    providers: {
      title: 'OAuth providers',
      panel: async (workspaceId, refused) => (
        <ProvidersPanel
          workspaceId={workspaceId}
          providers={await api.get<OAuthProviderResponse[]>('/v2/auth/providers', { workspaceId })}
          refused={refused}
        />
      ),
    },
    listeners: {
      title: 'Listeners',
      panel: async (workspaceId, refused) => (
        <ListenersPanel
          workspaceId={workspaceId}
          refused={refused}
          listeners={await api.get<{ resources: ListenerResponse[] }>('/v2/listeners?limit=100', { workspaceId }).then(
            (page) => page.resources,
            (error: unknown) => ({ refused: refusal(error).detail }),
          )}
        />
      ),
    },
    integrations: {
      title: 'Codehost integrations',
      panel: async (workspaceId) => {
        const installed = await api.get<CodehostIntegration[]>('/v1/integrations/forge/codehost/install', {
          workspaceId,
        });
        const integrations = await Promise.all(
          installed.map(async (integration) => ({
            integration,
            repos: await api.get<CodehostRepository[]>(
              `/v1/integrations/forge/codehost/${encodeURIComponent(integration.id)}/repos`,
              { workspaceId },
            ),
          })),
        );
        return <IntegrationsPanel integrations={integrations} />;
      },
    },
  };

  /** The sub-page, or (to htmx) its panel, with what an action did or the API's refusal above it. */
  const render = async (c: Context, tab: keyof typeof panels, outcome?: Outcome) => {
    const workspaces = (await readFixtures(api)).workspaces;
    const workspaceId = c.req.query('workspace_id') ?? workspaces[0]?.id ?? '';
    const { title, panel } = panels[tab];
    let content: Child;
    try {
      content = await panel(workspaceId, outcome && 'status' in outcome ? outcome.refusedForm : undefined);
    } catch (error) {
      const refused = refusal(error);
      content = null;
      outcome ??= { refused: refused.detail, status: refused.status };
    }
    if (outcome && 'status' in outcome) c.status(refusedStatus(c, outcome.status) as 200);
    const panelElement = (
      <div id="resource-panel">
        <OutcomeNote outcome={outcome} />
        {content}
      </div>
    );
    return renderView(c, {
      title,
      active: 'deployments',
      children: (
        <>
          <DeploymentTabs active={tab} workspaceId={workspaceId} />
          <WorkspacePicker path={TABS.find((each) => each.name === tab)!.path} {...{ workspaces, workspaceId }} />
          {panelElement}
        </>
      ),
      fragment: panelElement,
    });
  };

  /**
   * An action: the API call as the workspace of the URL, then the sub-page with what it did. A form with fields shows
   * the refusal at them: the API's 422 at the fields it names; a refusal of another status at the field `fieldOf`
   * names for it (a duplicate id, an unreachable server), if any, else above the form.
   */
  const act =
    (
      tab: keyof typeof panels,
      call: (values: FormValues, workspaceId: string, c: Context) => Promise<string>,
      fields?: {
        form: ResourceForm;
        /** The field of a refusal that is no 422, if it is about one. */
        fieldOf?: (status: number) => string | undefined;
        /** A row's form: the id of its row, from the URL. */
        row?: (c: Context) => string;
      },
    ) =>
    async (c: Context) => {
      const workspaceId = c.req.query('workspace_id') ?? '';
      let outcome: Outcome;
      let values: FormValues = {};
      try {
        values = await formValues(c);
        outcome = { done: await call(values, workspaceId, c) };
      } catch (error) {
        const { status, detail } = refusal(error);
        if (fields) {
          // The client secret is never shown back; named empty, a refusal of it finds its field.
          const typed = { ...values, ...('client_secret' in values ? { client_secret: '' } : {}) };
          const field = status === 422 ? undefined : fields.fieldOf?.(status);
          const { state } = field ? refusedAt(field, error, typed) : refusedForm(error, typed);
          outcome = { refused: state.error, status, refusedForm: { form: fields.form, row: fields.row?.(c), state } };
        } else outcome = { refused: detail, status };
      }
      return render(c, tab, outcome);
    };

  for (const tab of Object.keys(panels) as (keyof typeof panels)[]) app.get(`/${tab}`, (c) => render(c, tab));

  const providerPath = (c: Context) => `/v2/auth/providers/${encodeURIComponent(c.req.param('provider_id')!)}`;
  app.post(
    '/providers',
    act(
      'providers',
      async (values, workspaceId) => {
        const created = await api.json<OAuthProviderResponse>('POST', '/v2/auth/providers', {
          workspaceId,
          body: { ...nestedBody(values), uses_pkce: values.uses_pkce === 'true' },
        });
        return `Created the OAuth provider ${created.provider_id}.`;
      },
      { form: 'provider', fieldOf: (status) => (status === 409 ? 'provider_id' : undefined) },
    ),
  );
  app.post(
    '/providers/mcp-discover',
    act(
      'providers',
      async (values, workspaceId) => {
        const created = await api.json<OAuthProviderResponse>('POST', '/v2/auth/providers/mcp-discover', {
          workspaceId,
          body: nestedBody(values),
        });
        return `Created the OAuth provider ${created.provider_id} from ${created.mcp_server_url ?? 'the MCP server'}.`;
      },
      { form: 'mcp', fieldOf: (status) => (status === 409 ? 'provider_id' : 'mcp_server_url') },
    ),
  );
  app.post(
    '/providers/:provider_id/update',
    act(
      'providers',
      async (values, workspaceId, c) => {
        await api.json('PATCH', providerPath(c), { workspaceId, body: nestedBody(values) });
        return `Changed the OAuth provider ${c.req.param('provider_id')}.`;
      },
      { form: 'provider-change', row: (c) => c.req.param('provider_id')! },
    ),
  );
  app.post(
    '/providers/:provider_id/delete',
    act('providers', async (_values, workspaceId, c) => {
      await api.json('DELETE', providerPath(c), { workspaceId });
      return `Deleted the OAuth provider ${c.req.param('provider_id')}.`;
    }),
  );

  const listenerPath = (c: Context) => `/v2/listeners/${encodeURIComponent(c.req.param('listener_id')!)}`;
  app.post(
    '/listeners',
    act(
      'listeners',
      async (values, workspaceId) => {
        const created = await api.json<ListenerResponse>('POST', '/v2/listeners', {
          workspaceId,
          body: { compute_config: {}, ...listenerBody(values) },
        });
        return `Created the listener ${created.compute_id}.`;
      },
      { form: 'listener', fieldOf: (status) => (status === 409 ? 'compute_id' : undefined) },
    ),
  );
  app.post(
    '/listeners/:listener_id/update',
    act(
      'listeners',
      async (values, workspaceId, c) => {
        const changed = await api.json<ListenerResponse>('PATCH', listenerPath(c), {
          workspaceId,
          body: listenerBody(values),
        });
        return `Changed the listener ${changed.compute_id}.`;
      },
      { form: 'listener-change', row: (c) => c.req.param('listener_id')! },
    ),
  );
  app.post(
    '/listeners/:listener_id/delete',
    act('listeners', async (_values, workspaceId, c) => {
      await api.json('DELETE', listenerPath(c), { workspaceId });
      return `Deleted the listener ${shortId(c.req.param('listener_id')!)}.`;
    }),
  );

  return app;
}
