import {
  credentialsOf,
  fullKey,
  workspaceByTier,
  type FixturesView,
  type FixtureWorkspace,
  type TestContext,
} from './instance.ts';

/** An existing value for each path parameter of the API, all in the workspace `workspace`. */
export interface KnownIds extends Record<string, string> {
  workspace_id: string;
  destination_id: string;
  bulk_export_id: string;
  run_id: string;
  deployment_id: string;
  revision_id: string;
  /** The hosted CLI's log routes take the deployment id as project_id. */
  project_id: string;
  integration_id: string;
  provider_id: string;
  listener_id: string;
  session_id: string;
  access_key_id: string;
  bucket: string;
  /** A journal entry's sequence id. */
  request_id: string;
}

/** An objstore key added for the tests that use KnownIds, so that revoking it harms no fixture. */
const SCRATCH_KEY_ID = 'LPSCRATCHKEY00000001';

/**
 * Makes (where the fixtures have none) and collects one existing resource per path parameter:
 * a destination, a one-time export of an empty window and its run, a scratch objstore key.
 */
export async function prepareKnownIds(ctx: TestContext): Promise<{ workspace: FixtureWorkspace; ids: KnownIds }> {
  const workspace = workspaceByTier(ctx.fixtures, 'plus');
  const api = ctx.api.as(workspace);
  const destination = await api.post('/api/v1/bulk-exports/destinations', {
    display_name: 'known ids',
    config: { bucket_name: 'exports', prefix: 'known-ids', endpoint_url: ctx.fixtures.objstore.endpoint_url },
    credentials: credentialsOf(fullKey(ctx.fixtures)),
  });
  const exported = await api.post('/api/v1/bulk-exports', {
    bulk_export_destination_id: destination.body.id,
    session_id: workspace.sessions[0]!.id,
    start_time: '2026-01-01T00:00:00Z',
    end_time: '2026-01-02T00:00:00Z',
  });
  await ctx.instance.clock.settle();
  const runs = await api.get(`/api/v1/bulk-exports/${exported.body.id}/runs`);
  const deployment = workspace.deployments[0]!;
  const revisions = await api.get(`/v2/deployments/${deployment.id}/revisions`);
  const providers = await api.get('/v2/auth/providers');
  await ctx.admin.request('POST', '/objstore/keys', {
    body: { access_key_id: SCRATCH_KEY_ID, secret_access_key: 'lp-scratch-secret-0001', permissions: ['get'] },
  });
  for (const [what, response] of Object.entries({ destination, exported, runs, revisions, providers })) {
    if (response.status !== 200) throw new Error(`could not prepare ${what}: ${response.status} ${response.text}`);
  }
  return {
    workspace,
    ids: {
      workspace_id: workspace.id,
      destination_id: destination.body.id,
      bulk_export_id: exported.body.id,
      run_id: runs.body[0].id,
      deployment_id: deployment.id,
      revision_id: revisions.body.resources[0].id,
      project_id: deployment.id,
      integration_id: workspace.integrations[0]!.id,
      provider_id: providers.body[0].provider_id,
      // Listeners live in the self-hosted workspace: `workspace` is refused them (403), whatever the id.
      listener_id: workspaceByTier(ctx.fixtures, 'enterprise').listeners[0]!,
      session_id: workspace.sessions[0]!.id,
      access_key_id: SCRATCH_KEY_ID,
      bucket: 'exports',
      // Not added: the routes that take it answer its 404 (a rule id is a per-instance counter).
      rule_id: 'fault-rule-1',
      // The journal's first entry (the first request above).
      request_id: '1',
      // A saved snapshot's name; none is saved: the routes that take it answer its 404.
      name: 'known-ids.snapshot',
    },
  };
}

/** A route path (`/v2/deployments/:deployment_id`) with each parameter replaced by its value. */
export function concretePath(pattern: string, values: Record<string, string>): string {
  return pattern.replace(/:(\w+)/g, (_, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`no value for :${name} of ${pattern}`);
    return value;
  });
}

/** What GET /_localplane/state shows of a workspace's resources: the ids a read of each names. */
interface WorkspaceState {
  id: string;
  sessions: { id: string }[];
  destinations: { id: string }[];
  bulk_exports: { id: string; interval_hours: number | null; runs: { id: string }[] }[];
  deployments: { id: string; revisions: { id: string }[] }[];
  listeners: { id: string }[];
  oauth_providers: { provider_id: string }[];
  codehost_integrations: { id: string }[];
}

/** A request that only reads: to the admin API, or as a workspace. */
export interface ReadRequest {
  method: 'GET' | 'POST';
  path: string;
  workspace?: Pick<FixtureWorkspace, 'id' | 'api_key'>;
}

/** Event streams: a read of one is answered with no end (test/journal/stream.test.ts reads them). */
const EVENT_STREAMS = new Set(['/_localplane/requests/stream']);

/**
 * The routes that only read and answer: every GET but the event streams, and the deployment logs' POSTs (a log is asked
 * for with a body).
 */
const readsOnly = (route: { method: string; path: string }) =>
  (route.method === 'GET' && !EVENT_STREAMS.has(route.path)) ||
  (route.method === 'POST' && route.path.endsWith('_logs'));

/**
 * Every read of `routes` for each workspace of `fixtures`, naming resources of its own as
 * `state` (GET /_localplane/state) shows them; the admin API's once, the state also per
 * workspace. A route naming a resource the workspace has none of is left out.
 */
export function readRequests(
  routes: readonly { method: string; path: string }[],
  fixtures: FixturesView,
  state: { workspaces: WorkspaceState[] },
): ReadRequest[] {
  const reads = routes.filter(readsOnly);
  const requests: ReadRequest[] = reads
    .filter((route) => route.path.startsWith('/_localplane/') && !route.path.includes(':'))
    .map((route) => ({ method: 'GET', path: route.path }));
  for (const resources of state.workspaces) {
    const workspace = fixtures.workspaces.find((candidate) => candidate.id === resources.id);
    if (!workspace) continue;
    requests.push({ method: 'GET', path: `/_localplane/state?workspace_id=${workspace.id}` });
    const exported = resources.bulk_exports.find((row) => row.runs.length > 0);
    const recurring = resources.bulk_exports.find((row) => row.interval_hours !== null);
    const deployment = resources.deployments.find((row) => row.revisions.length > 0);
    const values: Record<string, string | undefined> = {
      workspace_id: workspace.id,
      session_id: resources.sessions[0]?.id,
      destination_id: resources.destinations[0]?.id,
      bulk_export_id: exported?.id,
      run_id: exported?.runs[0]?.id,
      deployment_id: deployment?.id,
      project_id: deployment?.id,
      revision_id: deployment?.revisions[0]?.id,
      listener_id: resources.listeners[0]?.id,
      provider_id: resources.oauth_providers[0]?.provider_id,
      integration_id: resources.codehost_integrations[0]?.id,
    };
    const known = Object.fromEntries(
      Object.entries(values).filter((entry): entry is [string, string] => entry[1] !== undefined),
    );
    for (const route of reads) {
      if (route.path.startsWith('/_localplane/') || route.path.startsWith('/docs') || route.path === '/openapi.json')
        continue;
      const names = [...route.path.matchAll(/:(\w+)/g)].map((match) => match[1]!);
      if (names.some((name) => known[name] === undefined)) continue;
      const query =
        route.path === '/api/v1/bulk-exports/runs'
          ? `?source_bulk_export_id=${(recurring ?? exported)?.id ?? workspace.id}`
          : '';
      requests.push({
        method: route.method as ReadRequest['method'],
        path: `${concretePath(route.path, known)}${query}`,
        workspace,
      });
    }
  }
  return requests;
}
