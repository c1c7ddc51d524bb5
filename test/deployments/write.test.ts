import { describe, expect, it } from 'vitest';
import { credentialsOf, fullKey, useLocalplane, workspaceByTier, type FixtureWorkspace } from '../support/instance.ts';
import { codehostDeploymentBody, type CodehostBodyOverrides } from '../support/deployments.ts';
import { expectSchema } from '../support/openapi.ts';
import type { RunResponse } from '../../src/bulk-exports/schemas.ts';

const ctx = useLocalplane();
const acme = () => workspaceByTier(ctx.fixtures, 'plus');
const globex = () => workspaceByTier(ctx.fixtures, 'enterprise');
const client = (workspace: FixtureWorkspace) => ctx.api.as(workspace);
const SECRET_VALUE = 'lp-write-test-secret-value';

/** The codehost create body these tests start from: builds on push, with one secret. */
const codehostBody = (workspace: FixtureWorkspace, name: string, overrides: CodehostBodyOverrides = {}) =>
  codehostDeploymentBody(workspace, name, {
    secrets: [{ name: 'OPENAI_API_KEY', value: SECRET_VALUE }],
    ...overrides,
    source_config: { build_on_push: true, ...overrides.source_config },
  });

function containerBody(
  workspace: FixtureWorkspace,
  name: string,
  revisionConfig: Record<string, unknown> = { image_uri: 'registry.example/agent:1' },
) {
  return {
    name,
    source: 'external_container',
    source_config: { listener_id: workspace.listeners[0], listener_config: { k8s_namespace: 'default' } },
    source_revision_config: revisionConfig,
    secrets: [],
    secret_references: [{ name: 'DB_URL', secret_name: 'db', secret_key: 'url' }],
  };
}

async function expectSourceError(workspace: FixtureWorkspace, body: unknown, words: string) {
  const response = await client(workspace).post('/v2/deployments', body);
  expect(response.status).toBe(400);
  expect(response.body.detail).toMatch(/^Source configuration error: /);
  expect(response.body.detail).toContain(words);
}

describe('E9 POST /v2/deployments', () => {
  it('creates a codehost deployment with revision 1 and a tracing project of the same name (201)', async () => {
    const api = client(acme());
    const created = await api.post('/v2/deployments', codehostBody(acme(), 'write-codehost'));
    expect(created.status).toBe(201);
    expectSchema(created.body, 'Deployment');
    expect(created.body).toMatchObject({
      name: 'write-codehost',
      source: 'codehost',
      tenant_id: acme().id,
      status: 'AWAITING_DATABASE',
      active_revision_id: null,
    });
    expect(created.body.secrets).toEqual([{ name: 'OPENAI_API_KEY', value: '********' }]);
    expect(created.body.source_config.deployment_type).toBe('dev');
    expect(created.body.source_revision_config.repo_commit_sha).toMatch(/^[0-9a-f]{40}$/);
    expect(created.text).not.toContain(SECRET_VALUE);
    expect(ctx.logs.join('\n')).not.toContain(SECRET_VALUE);

    const revisions = await api.get(`/v2/deployments/${created.body.id}/revisions`);
    expectSchema(revisions.body, 'RevisionsList');
    expect(revisions.body.resources.map((revision: { id: string }) => revision.id)).toEqual([
      created.body.latest_revision_id,
    ]);
    expect(revisions.body.resources[0].source_revision_config).toEqual(created.body.source_revision_config);

    const fetched = await api.get(`/v2/deployments/${created.body.id}`);
    expect(fetched.body).toEqual(created.body);
  });

  it('gives the bulk-export family its tracing project: an export of it is accepted and completes with 0 rows', async () => {
    const api = client(acme());
    expect((await api.post('/v2/deployments', codehostBody(acme(), 'write-exported'))).status).toBe(201);
    const fixtures = (
      await ctx.admin.request<{ workspaces: { id: string; sessions: { id: string; name: string }[] }[] }>(
        'GET',
        '/fixtures',
      )
    ).body;
    const project = fixtures.workspaces
      .find((workspace) => workspace.id === acme().id)!
      .sessions.find((session) => session.name === 'write-exported')!;
    const destination = await api.post('/api/v1/bulk-exports/destinations', {
      display_name: 'deployment project',
      config: {
        bucket_name: ctx.fixtures.objstore.buckets[0],
        prefix: 'deployment-project',
        endpoint_url: ctx.fixtures.objstore.endpoint_url,
      },
      credentials: credentialsOf(fullKey(ctx.fixtures)),
    });
    expect(destination.status).toBe(200);
    await ctx.admin.request('POST', '/clock/freeze');
    const created = await api.post('/api/v1/bulk-exports', {
      bulk_export_destination_id: destination.body.id,
      session_id: project.id,
      start_time: '2026-10-01T00:00:00Z',
      end_time: '2026-10-02T00:00:00Z',
      format_version: 'v2_beta',
      compression: 'snappy',
    });
    expect(created.status).toBe(200);
    await ctx.admin.request('POST', '/clock/advance', { body: { seconds: 60 } });
    expect((await api.get(`/api/v1/bulk-exports/${created.body.id}`)).body.status).toBe('Completed');
    const runs = (await api.get<RunResponse[]>(`/api/v1/bulk-exports/${created.body.id}/runs`)).body;
    expect(runs.map((run) => run.metadata.result!.rows_written)).toEqual([0]);
    await ctx.admin.request('POST', '/clock/unfreeze');
  });

  it('creates an external_container deployment in the self-hosted workspace, with secret_references', async () => {
    const created = await client(globex()).post('/v2/deployments', containerBody(globex(), 'write-container'));
    expect(created.status).toBe(201);
    expectSchema(created.body, 'Deployment');
    expect(created.body.source_config.deployment_type).toBeNull();
    expect(created.body.source_revision_config).toMatchObject({
      image_uri: 'registry.example/agent:1',
      repo_commit_sha: null,
    });
    expect(created.body.secret_references).toEqual([{ name: 'DB_URL', secret_name: 'db', secret_key: 'url' }]);
  });

  it('refuses a name taken by a tracing project of the workspace with 409', async () => {
    const response = await client(acme()).post('/v2/deployments', codehostBody(acme(), 'support-bot-production'));
    expect(response.status).toBe(409);
    expect(response.body.detail).toBe(
      'A tracing project named support-bot-production already exists in this workspace.',
    );
    expect((await client(globex()).post('/v2/deployments', containerBody(globex(), 'write-codehost'))).status).toBe(
      201,
    );
  });

  it('answers schema errors with 422 detail arrays', async () => {
    const missing = await client(acme()).post('/v2/deployments', { name: 'x', source: 'codehost' });
    expect(missing.status).toBe(422);
    expect(missing.body.detail).toEqual(
      expect.arrayContaining(
        ['source_config', 'source_revision_config', 'secrets'].map((field) =>
          expect.objectContaining({ type: 'missing', loc: ['body', field] }),
        ),
      ),
    );
    const badSource = await client(acme()).post('/v2/deployments', { ...codehostBody(acme(), 'x'), source: 'ftp' });
    expect(badSource.body.detail).toEqual([expect.objectContaining({ type: 'enum', loc: ['body', 'source'] })]);
    const badIntegration = await client(acme()).post(
      '/v2/deployments',
      codehostBody(acme(), 'x', { source_config: { integration_id: 'nope' } }),
    );
    expect(badIntegration.body.detail).toEqual([
      expect.objectContaining({ type: 'uuid_parsing', loc: ['body', 'source_config', 'integration_id'] }),
    ]);
  });

  it('enforces the source rules with 400 Source configuration error', async () => {
    const other = globex().integrations[0]!;
    await expectSourceError(
      acme(),
      codehostBody(acme(), 'r1', { source_config: { integration_id: null } }),
      'integration_id is required',
    );
    await expectSourceError(
      acme(),
      codehostBody(acme(), 'r2', { source_config: { integration_id: other.id } }),
      'is not a codehost integration of this workspace',
    );
    await expectSourceError(
      acme(),
      codehostBody(acme(), 'r3', { source_config: { repo_url: null } }),
      'repo_url is required',
    );
    await expectSourceError(
      acme(),
      codehostBody(acme(), 'r4', { source_config: { repo_url: other.repos[0]!.url } }),
      'is not a repository of integration',
    );
    await expectSourceError(
      acme(),
      codehostBody(acme(), 'r5', { source_revision_config: { repo_ref: null } }),
      'repo_ref is required',
    );
    await expectSourceError(
      acme(),
      codehostBody(acme(), 'r6', { source_revision_config: { graph_config_path: null } }),
      'graph_config_path is required',
    );
    await expectSourceError(
      acme(),
      codehostBody(acme(), 'r7', { source_revision_config: { repo_ref: 'refs/tags/v1.0.0' } }),
      'build_on_push',
    );
    await expectSourceError(
      acme(),
      codehostBody(acme(), 'r8', { top: { secret_references: [{ name: 'A', secret_name: 'a', secret_key: 'k' }] } }),
      'secret_references are only applicable',
    );
    await expectSourceError(acme(), containerBody(acme(), 'r9'), 'only available for self-hosted');
    await expectSourceError(globex(), containerBody(globex(), 'r10', {}), 'image_uri is required');
    await expectSourceError(
      globex(),
      { ...codehostBody(globex(), 'r11'), source: 'internal_source' },
      'not available for self-hosted',
    );
    const tagWithoutPush = await client(acme()).post(
      '/v2/deployments',
      codehostBody(acme(), 'r12', {
        source_config: { build_on_push: false },
        source_revision_config: { repo_ref: 'refs/tags/v1.0.0' },
      }),
    );
    expect(tagWithoutPush.status).toBe(201);
  });
});

const projectNames = async (workspace: FixtureWorkspace) => {
  const fixtures = (
    await ctx.admin.request<{ workspaces: { id: string; sessions: { name: string }[] }[] }>('GET', '/fixtures')
  ).body;
  return fixtures.workspaces
    .find((candidate) => candidate.id === workspace.id)!
    .sessions.map((session) => session.name);
};

describe('DELETE /v2/deployments', () => {
  it('deletes one deployment with 204 and an empty body, keeping its tracing project by default', async () => {
    const api = client(acme());
    const created = (await api.post('/v2/deployments', codehostBody(acme(), 'delete-keep'))).body;
    const deleted = await api.delete(`/v2/deployments/${created.id}`);
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expect((await api.get(`/v2/deployments/${created.id}`)).body).toEqual({
      detail: `Deployment ID ${created.id} not found.`,
    });
    expect((await api.get(`/v2/deployments/${created.id}/revisions/${created.latest_revision_id}`)).status).toBe(404);
    expect(await projectNames(acme())).toContain('delete-keep');
    expect((await api.delete(`/v2/deployments/${created.id}`)).status).toBe(404);
    expect((await api.delete('/v2/deployments/not-a-uuid')).body.detail[0].type).toBe('uuid_parsing');
  });

  it('deletes the tracing project with delete_tracing_project=true', async () => {
    const api = client(acme());
    const created = (await api.post('/v2/deployments', codehostBody(acme(), 'delete-project'))).body;
    expect((await api.delete(`/v2/deployments/${created.id}?delete_tracing_project=true`)).status).toBe(204);
    expect(await projectNames(acme())).not.toContain('delete-project');
    expect((await api.post('/v2/deployments', codehostBody(acme(), 'delete-project'))).status).toBe(201);
  });

  it(
    'deletes in bulk: 200 when all are deleted (repeated or comma-separated ids), 207 with per-id results ' +
      'otherwise',
    async () => {
      const api = client(acme());
      const ids = [];
      for (const name of ['bulk-a', 'bulk-b', 'bulk-c'])
        ids.push((await api.post('/v2/deployments', codehostBody(acme(), name))).body.id);
      const all = await api.delete(`/v2/deployments?deployment_ids=${ids[0]}&deployment_ids=${ids[1]}`);
      expect(all.status).toBe(200);
      expect(all.body.results).toEqual([
        { deployment_id: ids[0], deleted: true },
        { deployment_id: ids[1], deleted: true },
      ]);
      const missing = '00000000-0000-4000-8000-000000000000';
      const some = await api.delete(`/v2/deployments?deployment_ids=${ids[2]},${missing}`);
      expect(some.status).toBe(207);
      expect(some.body.results).toEqual([
        { deployment_id: ids[2], deleted: true },
        { deployment_id: missing, deleted: false, detail: `Deployment ID ${missing} not found.` },
      ]);
      const tooMany = Array.from({ length: 101 }, () => missing).join(',');
      expect((await api.delete(`/v2/deployments?deployment_ids=${tooMany}`)).status).toBe(422);
      expect((await api.delete('/v2/deployments')).status).toBe(422);
    },
  );
});

describe('E7 PATCH /v2/deployments/{id} and redeploy', () => {
  const revisionIds = async (id: string) =>
    (await client(acme()).get(`/v2/deployments/${id}/revisions`)).body.resources.map((r: { id: string }) => r.id);

  it('changes in-place fields without a new revision', async () => {
    const api = client(acme());
    const created = (await api.post('/v2/deployments', codehostBody(acme(), 'patch-in-place'))).body;
    const patched = await api.patch(`/v2/deployments/${created.id}`, {
      source_config: { build_on_push: false, custom_url: 'https://x.test', build_command: 'make' },
    });
    expect(patched.status).toBe(200);
    expectSchema(patched.body, 'Deployment');
    expect(patched.body.source_config).toMatchObject({
      build_on_push: false,
      custom_url: 'https://x.test',
      build_command: 'make',
      repo_url: created.source_config.repo_url,
    });
    expect(patched.body.latest_revision_id).toBe(created.latest_revision_id);
    expect(await revisionIds(created.id)).toEqual([created.latest_revision_id]);
  });

  it('makes a new revision for revision config, secrets or a changed resource_spec, honouring revision_source', async () => {
    const api = client(acme());
    const created = (await api.post('/v2/deployments', codehostBody(acme(), 'patch-revision'))).body;
    const byRef = (
      await api.patch(`/v2/deployments/${created.id}`, { source_revision_config: { repo_ref: 'feature/x' } })
    ).body;
    expect(byRef.latest_revision_id).not.toBe(created.latest_revision_id);
    expect(byRef.source_revision_config).toMatchObject({ repo_ref: 'feature/x', graph_config_path: 'graph.json' });
    // An internal_source revision names a tarball uploaded through upload-url.
    const upload = (await api.post(`/v2/deployments/${created.id}/upload-url`)).body;
    expect((await fetch(upload.upload_url, { method: 'PUT', body: 'not really gzip' })).status).toBe(200);
    const bySecrets = (
      await api.patch(`/v2/deployments/${created.id}`, {
        secrets: [{ name: 'K', value: SECRET_VALUE }],
        revision_source: 'internal_source',
        source_revision_config: { source_tarball_path: upload.object_path },
      })
    ).body;
    expect(bySecrets.secrets).toEqual([{ name: 'K', value: '********' }]);
    const latest = (await api.get(`/v2/deployments/${created.id}/revisions/${bySecrets.latest_revision_id}`)).body;
    expectSchema(latest, 'Revision');
    expect(latest.source).toBe('internal_source');
    const bySpec = (
      await api.patch(`/v2/deployments/${created.id}`, { source_config: { resource_spec: { min_scale: 2 } } })
    ).body;
    expect(bySpec.source_config.resource_spec.min_scale).toBe(2);
    const sameSpec = (
      await api.patch(`/v2/deployments/${created.id}`, {
        source_config: { resource_spec: bySpec.source_config.resource_spec },
      })
    ).body;
    expect(sameSpec.latest_revision_id).toBe(bySpec.latest_revision_id);
    expect(await revisionIds(created.id)).toHaveLength(4);
  });

  it('refuses changes of immutable fields with 400', async () => {
    const api = client(acme());
    const created = (await api.post('/v2/deployments', codehostBody(acme(), 'patch-immutable'))).body;
    for (const [body, field] of [
      [{ name: 'other' }, 'name'],
      [{ source: 'internal_source' }, 'source'],
      [{ source_config: { deployment_type: 'prod' } }, 'deployment_type'],
      [{ source_config: { repo_url: 'https://elsewhere.test/r' } }, 'repo_url'],
      [{ source_config: { integration_id: globex().integrations[0]!.id } }, 'integration_id'],
      [{ source_config: { listener_id: '00000000-0000-4000-8000-000000000000' } }, 'listener_id'],
    ] as const) {
      const response = await api.patch(`/v2/deployments/${created.id}`, body);
      expect(response.status).toBe(400);
      expect(response.body.detail).toBe(`${field} cannot be changed once the deployment is created.`);
    }
    expect(
      (
        await api.patch(`/v2/deployments/${created.id}`, {
          name: 'patch-immutable',
          source_config: { repo_url: created.source_config.repo_url },
        })
      ).status,
    ).toBe(200);
  });

  it('refuses a revision_source the deployment or the revision cannot build from (400 Source configuration error)', async () => {
    const api = client(acme());
    const codehost = (await api.post('/v2/deployments', codehostBody(acme(), 'patch-revision-source'))).body;
    const internal = (
      await api.post('/v2/deployments', {
        name: 'patch-revision-source-internal',
        source: 'internal_container',
        source_config: {},
        source_revision_config: { image_uri: 'registry.example/agent:1' },
        secrets: [],
      })
    ).body;
    const external = (
      await client(globex()).post('/v2/deployments', containerBody(globex(), 'patch-revision-source-external'))
    ).body;
    for (const [api_, deployment, body, words] of [
      [
        api,
        codehost,
        { revision_source: 'internal_source', secrets: [] },
        'source_tarball_path is required for revision_source internal_source',
      ],
      [
        api,
        codehost,
        { revision_source: 'internal_container', source_revision_config: { repo_ref: 'main' } },
        'image_uri is required',
      ],
      [
        api,
        internal,
        { revision_source: 'codehost', source_revision_config: { repo_ref: 'main', graph_config_path: 'g.json' } },
        'integration_id and repo_url',
      ],
      [
        client(globex()),
        external,
        { revision_source: 'internal_container', source_revision_config: { image_uri: 'x' } },
        'not applicable to source external_container',
      ],
    ] as const) {
      const response = await api_.patch(`/v2/deployments/${deployment.id}`, body);
      expect(response.status).toBe(400);
      expect(response.body.detail).toMatch(/^Source configuration error: /);
      expect(response.body.detail).toContain(words);
    }
    expect(await revisionIds(codehost.id)).toEqual([codehost.latest_revision_id]);
    const toContainer = await api.patch(`/v2/deployments/${codehost.id}`, {
      revision_source: 'internal_container',
      source_revision_config: { image_uri: 'registry.example/agent:2' },
    });
    expect(toContainer.status).toBe(200);
    expect(
      (await api.get(`/v2/deployments/${codehost.id}/revisions/${toContainer.body.latest_revision_id}`)).body.source,
    ).toBe('internal_container');
  });

  it('redeploys a revision as a new one with its config (200 Deployment)', async () => {
    const api = client(acme());
    const created = (await api.post('/v2/deployments', codehostBody(acme(), 'redeploy'))).body;
    await api.patch(`/v2/deployments/${created.id}`, { source_revision_config: { repo_ref: 'feature/y' } });
    const redeployed = await api.post(`/v2/deployments/${created.id}/revisions/${created.latest_revision_id}/redeploy`);
    expect(redeployed.status).toBe(200);
    expectSchema(redeployed.body, 'Deployment');
    expect(redeployed.body.source_revision_config).toEqual(created.source_revision_config);
    expect(await revisionIds(created.id)).toHaveLength(3);
    expect(
      (await api.post(`/v2/deployments/${created.id}/revisions/00000000-0000-4000-8000-000000000000/redeploy`)).status,
    ).toBe(404);
  });
});
