import { describe, expect, it } from 'vitest';
import { useLocalplane, workspaceByTier, type FixtureWorkspace } from '../support/instance.ts';
import { expectSchema } from '../support/openapi.ts';

/** /v2/listeners through a running instance: the self-hosted workspace's compute, and the refusals of any other. */
const ctx = useLocalplane({ freezeClock: true });
const globex = () => workspaceByTier(ctx.fixtures, 'enterprise');
const acme = () => workspaceByTier(ctx.fixtures, 'plus');
const client = (workspace: FixtureWorkspace) => ctx.api.as(workspace);
const LISTENERS = '/v2/listeners';

const listenerBody = (computeId: string, namespaces = ['graphs']) => ({
  compute_type: 'k8s',
  compute_id: computeId,
  compute_config: { k8s_namespaces: namespaces },
  version: '0.12.0',
});

function containerDeployment(name: string, listenerId: string) {
  return {
    name,
    source: 'external_container',
    source_config: { listener_id: listenerId, listener_config: { k8s_namespace: 'graphs' } },
    source_revision_config: { image_uri: 'registry.example/agent:1' },
    secrets: [],
  };
}

describe('GET /v2/listeners', () => {
  it("pages the workspace's fixture listeners, oldest first, with the next offset", async () => {
    const all = await client(globex()).get(`${LISTENERS}?limit=100`);
    expect(all.status).toBe(200);
    expectSchema(all.body, 'ListenersList');
    expect(all.body.resources.map((listener: { id: string }) => listener.id)).toEqual(globex().listeners);
    expect(all.body.resources[0]).toMatchObject({
      compute_type: 'k8s',
      compute_id: 'globex-k8s-prod',
      compute_config: { k8s_namespaces: ['graphs', 'graphs-batch'] },
      version: '0.11.4',
    });

    const first = await client(globex()).get(`${LISTENERS}?limit=1`);
    expect(first.body).toEqual({ resources: [all.body.resources[0]], offset: 1 });
    const second = await client(globex()).get(`${LISTENERS}?limit=1&offset=1`);
    expect(second.body).toEqual({ resources: [all.body.resources[1]], offset: 2 });
  });

  it('refuses a limit outside 1..100 with 422, and lists nothing for a workspace that is not self-hosted', async () => {
    const refused = await client(globex()).get(`${LISTENERS}?limit=101`);
    expect(refused.status).toBe(422);
    expect(refused.body.detail[0]).toMatchObject({ loc: ['query', 'limit'] });
    expect((await client(acme()).get(LISTENERS)).body).toEqual({ resources: [], offset: 0 });
  });
});

describe('POST, GET, PATCH and DELETE /v2/listeners/{listener_id}', () => {
  it(
    'creates a listener (201), reads it back, patches its version and namespaces in place (200), deletes it ' +
      '(204), then 404',
    async () => {
      const api = client(globex());
      const created = await api.post(LISTENERS, listenerBody('globex-k8s-edge', ['edge']));
      expect(created.status).toBe(201);
      expectSchema(created.body, 'Listener');
      expect(created.body).toMatchObject({
        compute_type: 'k8s',
        compute_id: 'globex-k8s-edge',
        compute_config: { k8s_namespaces: ['edge'] },
        version: '0.12.0',
      });
      expect(created.body.created_at).toBe(created.body.updated_at);
      const path = `${LISTENERS}/${created.body.id}`;
      expect((await api.get(path)).body).toEqual(created.body);

      await ctx.admin.request('POST', '/clock/advance', { body: { seconds: 60 } });
      const patched = await api.patch(path, { compute_config: { k8s_namespaces: ['edge', 'edge-batch'] } });
      expect(patched.status).toBe(200);
      expect(patched.body).toMatchObject({
        id: created.body.id,
        compute_id: 'globex-k8s-edge',
        version: '0.12.0',
        compute_config: { k8s_namespaces: ['edge', 'edge-batch'] },
      });
      expect(Date.parse(patched.body.updated_at) - Date.parse(created.body.updated_at)).toBe(60_000);
      const versioned = await api.patch(path, { version: '0.13.1', compute_config: null });
      expect(versioned.body).toMatchObject({
        version: '0.13.1',
        compute_config: { k8s_namespaces: ['edge', 'edge-batch'] },
      });

      const deleted = await api.delete(path);
      expect(deleted.status).toBe(204);
      expect(deleted.text).toBe('');
      const gone = await api.get(path);
      expect(gone.status).toBe(404);
      expect(gone.body).toEqual({ detail: `Listener ID ${created.body.id} not found.` });
      expect((await api.delete(path)).status).toBe(404);
    },
  );

  it('refuses a second listener of the same compute_id (409) and a k8s listener without namespaces (400)', async () => {
    const api = client(globex());
    const duplicate = await api.post(LISTENERS, listenerBody('globex-k8s-prod'));
    expect(duplicate.status).toBe(409);
    expect(duplicate.body).toEqual({
      detail: `Listener for the service workspace ID '${globex().id}' and compute ID 'globex-k8s-prod' already exists.`,
    });
    for (const config of [{}, { k8s_namespaces: null }, { k8s_namespaces: [] }]) {
      const refused = await api.post(LISTENERS, { ...listenerBody('globex-k8s-empty'), compute_config: config });
      expect(refused.status, JSON.stringify(config)).toBe(400);
      expect(refused.body.detail).toContain('k8s_namespaces');
    }
    const unknownType = await api.post(LISTENERS, { ...listenerBody('globex-vm'), compute_type: 'vm' });
    expect(unknownType.status).toBe(422);
    expect(unknownType.body.detail[0]).toMatchObject({ loc: ['body', 'compute_type'] });
    const badId = await api.get(`${LISTENERS}/not-a-uuid`);
    expect(badId.status).toBe(422);
    expect(badId.body.detail[0]).toMatchObject({ type: 'uuid_parsing', loc: ['path', 'listener_id'] });
  });

  it('refuses every listener call of a workspace that is not self-hosted with 403, whatever the id', async () => {
    const api = client(acme());
    const detail =
      `Listeners cannot be created for the service workspace ID '${acme().id}'. Creating listeners ` +
      `is only allowed for the service organizations with self-hosted enterprise plans.`;
    const attempts = [
      await api.post(LISTENERS, listenerBody('acme-k8s')),
      await api.get(`${LISTENERS}/${globex().listeners[0]}`),
      await api.patch(`${LISTENERS}/${globex().listeners[0]}`, { version: 'x' }),
      await api.delete(`${LISTENERS}/${globex().listeners[0]}`),
    ];
    for (const attempt of attempts)
      expect({ status: attempt.status, body: attempt.body }).toEqual({ status: 403, body: { detail } });
    expect((await client(globex()).get(`${LISTENERS}/${globex().listeners[0]}`)).status).toBe(200);
  });
});

describe('listeners and the deployments that run on them', () => {
  it(
    "lets an external_container deployment name a created listener, refuses the listener's deletion while it " +
      'runs one (409), then deletes it',
    async () => {
      const api = client(globex());
      const listener = (await api.post(LISTENERS, listenerBody('globex-k8s-deploys'))).body;
      const deployment = await api.post('/v2/deployments', containerDeployment('on-a-new-listener', listener.id));
      expect(deployment.status, deployment.text).toBe(201);
      expect(deployment.body.source_config.listener_id).toBe(listener.id);

      const refused = await api.delete(`${LISTENERS}/${listener.id}`);
      expect(refused.status).toBe(409);
      expect(refused.body).toEqual({
        detail:
          `Listener ID ${listener.id} is used by deployment(s) ${deployment.body.id}. Delete those ` +
          `deployments first.`,
      });
      expect((await api.get(`${LISTENERS}/${listener.id}`)).status).toBe(200);

      expect((await api.delete(`/v2/deployments/${deployment.body.id}`)).status).toBe(204);
      expect((await api.delete(`${LISTENERS}/${listener.id}`)).status).toBe(204);
      const orphan = await api.post('/v2/deployments', containerDeployment('on-a-deleted-listener', listener.id));
      expect(orphan.status).toBe(400);
      expect(orphan.body).toEqual({
        detail: `Source configuration error: listener_id ${listener.id} is not a listener of this workspace.`,
      });
    },
  );

  it('refuses to delete a fixture listener that seeded deployments run on', async () => {
    const state = await ctx.admin.request('GET', `/state?workspace_id=${globex().id}`);
    const users = state.body.workspaces[0].deployments.filter(
      (deployment: { source_config: { listener_id: string | null } }) =>
        deployment.source_config.listener_id === globex().listeners[0],
    );
    expect(users.length).toBeGreaterThan(0);
    const refused = await client(globex()).delete(`${LISTENERS}/${globex().listeners[0]}`);
    expect(refused.status).toBe(409);
    for (const user of users) expect(refused.body.detail).toContain(user.id);
  });
});

describe('state and reset', () => {
  it('shows created listeners in GET /_localplane/state as the API does, and a reset takes them away', async () => {
    const created = (await client(globex()).post(LISTENERS, listenerBody('globex-k8s-reset'))).body;
    const state = await ctx.admin.request('GET', `/state?workspace_id=${globex().id}`);
    expect(state.body.workspaces[0].listeners).toContainEqual(created);

    expect((await ctx.admin.request('POST', '/reset')).status).toBe(200);
    const after = await client(globex()).get(`${LISTENERS}?limit=100`);
    expect(after.body.resources.map((listener: { id: string }) => listener.id)).toEqual(globex().listeners);
    expect((await client(globex()).get(`${LISTENERS}/${created.id}`)).status).toBe(404);
  });
});
