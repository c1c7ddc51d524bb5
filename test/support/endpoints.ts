import { credentialsOf, fullKey, workspaceByTier, type FixtureWorkspace, type TestContext } from './instance.ts';

/** An existing value for each path parameter of the API, all in the workspace `workspace`. */
export interface KnownIds extends Record<string, string> {
  workspace_id: string;
  destination_id: string;
  bulk_export_id: string;
  run_id: string;
  deployment_id: string;
  revision_id: string;
  integration_id: string;
  provider_id: string;
  listener_id: string;
  session_id: string;
  access_key_id: string;
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
      integration_id: workspace.integrations[0]!.id,
      provider_id: providers.body[0].provider_id,
      // Listeners live in the self-hosted workspace: `workspace` is refused them (403), whatever the id.
      listener_id: workspaceByTier(ctx.fixtures, 'enterprise').listeners[0]!,
      session_id: workspace.sessions[0]!.id,
      access_key_id: SCRATCH_KEY_ID,
      // Not added: the routes that take it answer its 404 (a rule id is a per-instance counter).
      rule_id: 'fault-rule-1',
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
