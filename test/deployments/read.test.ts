import { describe, expect, it } from 'vitest';
import type { SeededDeployment } from '../../src/deployments/fixtures.ts';
import type { CodehostRepository } from '../../src/deployments/schemas.ts';
import {
  DEPLOYMENT_SOURCES,
  DEPLOYMENT_STATUSES,
  DEPLOYMENT_TYPES,
  REVISION_STATUSES,
} from '../../src/deployments/schemas.ts';
import { deploymentFixtures, seededFamilies } from '../support/deployments.ts';
import { useLocalplane, workspaceByTier, type FixtureWorkspace, type WorkspaceApi } from '../support/instance.ts';
import { expectSchema } from '../support/openapi.ts';

const ctx = useLocalplane({ freezeClock: true });
const families = seededFamilies();
const acme = () => workspaceByTier(ctx.fixtures, 'plus');
const globex = () => workspaceByTier(ctx.fixtures, 'enterprise');
const initech = () => workspaceByTier(ctx.fixtures, 'developer');
const client = (workspace: FixtureWorkspace) => ctx.api.as(workspace);
const seeded = (workspace: FixtureWorkspace) => families.get(workspace.id)!.deployments;
const allSeeded = () => [...families.values()].flatMap((family) => family.deployments);
const MISSING_ID = '00000000-0000-4000-8000-000000000000';

/** Seeded deployments in listing order: newest first, then by id. */
const inListingOrder = (deployments: readonly SeededDeployment[]) =>
  [...deployments]
    .sort((a, b) => b.row.created_at - a.row.created_at || (a.row.id < b.row.id ? 1 : -1))
    .map((d) => d.row.id);

/** Walks E8 page by page and checks each page and the offsets on the way. */
async function walkDeployments(api: WorkspaceApi, query: string, limit: number): Promise<string[]> {
  const ids: string[] = [];
  for (let offset = 0; ;) {
    const page = await api.get(`/v2/deployments?${query}${query ? '&' : ''}limit=${limit}&offset=${offset}`);
    expect(page.status).toBe(200);
    expectSchema(page.body, 'DeploymentsList');
    expect(page.body.resources.length).toBeLessThanOrEqual(limit);
    expect(page.body.offset).toBe(offset + page.body.resources.length);
    ids.push(...page.body.resources.map((deployment: { id: string }) => deployment.id));
    if (page.body.resources.length < limit) return ids;
    offset = page.body.offset;
  }
}

function expect422(response: { status: number; body: { detail?: unknown } }, type: string, loc: (string | number)[]) {
  expect(response.status).toBe(422);
  expect(response.body.detail).toEqual(expect.arrayContaining([expect.objectContaining({ type, loc })]));
}

describe('seeded deployment fixtures', () => {
  it('lists self_hosted, integrations, listeners and deployments per workspace', () => {
    const workspaces = ctx.fixtures.workspaces;
    expect(workspaces.filter((workspace) => workspace.self_hosted).map((workspace) => workspace.id)).toEqual([
      globex().id,
    ]);
    for (const workspace of workspaces) {
      const family = families.get(workspace.id)!;
      expect(workspace.integrations).toEqual(
        family.integrations.map((integration) => ({
          id: integration.id,
          repos: family.repos
            .filter((repo) => repo.integration_id === integration.id)
            .map(({ id, url, default_branch }) => ({ id, url, default_branch })),
        })),
      );
      expect(workspace.listeners).toEqual(family.listeners.map((listener) => listener.id));
      expect(workspace.listeners.length > 0).toBe(workspace.self_hosted);
      expect(workspace.deployments.length).toBeGreaterThanOrEqual(30);
      expect(new Set(workspace.deployments.map((deployment) => deployment.id))).toEqual(
        new Set(seeded(workspace).map((d) => d.row.id)),
      );
      const sources = new Set(workspace.deployments.map((deployment) => deployment.source));
      expect(sources.has('external_container')).toBe(workspace.self_hosted);
      for (const source of DEPLOYMENT_SOURCES.filter((source) => source !== 'external_container'))
        expect(sources).toContain(source);
    }
  });

  it('gives each deployment a tracing project of the same name, without runs', () => {
    for (const workspace of ctx.fixtures.workspaces) {
      for (const deployment of workspace.deployments) {
        const projects = workspace.sessions.filter((session) => session.name === deployment.name);
        expect(projects).toHaveLength(1);
        expect(projects[0]!.run_count).toBe(0);
      }
    }
  });

  it('covers every type, status, revision status, tag, image version and remote_reconciled value', () => {
    const rows = allSeeded().map((deployment) => deployment.row);
    expect(new Set(rows.map((row) => row.deployment_type))).toEqual(new Set([...DEPLOYMENT_TYPES, null]));
    expect(new Set(rows.map((row) => row.status))).toEqual(new Set(DEPLOYMENT_STATUSES));
    expect(new Set(rows.map((row) => row.remote_reconciled))).toEqual(new Set([0, 1]));
    const revisionStatuses = new Set(
      allSeeded().flatMap((deployment) => deployment.revisions.map((revision) => revision.status)),
    );
    expect(revisionStatuses.size).toBeGreaterThanOrEqual(10);
    for (const workspace of deploymentFixtures().workspaces) {
      const mine = families.get(workspace.workspace_id)!.deployments.map((deployment) => deployment.row);
      const tags = new Set(mine.flatMap((row) => JSON.parse(row.tag_value_ids) as string[]));
      expect(tags).toEqual(new Set(workspace.deployments!.tag_value_ids));
      expect(new Set(mine.map((row) => row.image_version))).toEqual(new Set(workspace.deployments!.image_versions));
    }
    for (const { revisions } of allSeeded()) expect(revisions.length).toBeGreaterThanOrEqual(1);
    for (const { revisions } of allSeeded()) expect(revisions.length).toBeLessThanOrEqual(4);
  });
});

describe('authentication and workspace isolation', () => {
  const paths = () => {
    const deployment = seeded(acme())[0]!;
    return [
      '/v2/auth/providers',
      '/v2/auth/providers/codehost',
      '/v1/integrations/forge/codehost/install',
      `/v1/integrations/forge/codehost/${acme().integrations[0]!.id}/repos`,
      '/v2/deployments',
      `/v2/deployments/${deployment.row.id}`,
      `/v2/deployments/${deployment.row.id}/revisions`,
      `/v2/deployments/${deployment.row.id}/revisions/${deployment.revisions[0]!.id}`,
    ];
  };

  it('is 401 without a key or with an unknown key, 403 for a key of another workspace', async () => {
    for (const path of paths()) {
      expect((await ctx.api.request('GET', path)).status, path).toBe(401);
      const unknown = await ctx.api.request('GET', path, { headers: { 'X-API-Key': ctx.fixtures.unknown_api_key } });
      expect(unknown.status, path).toBe(401);
      const foreign = await ctx.api.request('GET', path, {
        headers: { 'X-API-Key': globex().api_key, 'X-Tenant-Id': acme().id },
      });
      expect(foreign.status, path).toBe(403);
      expect(foreign.body.detail).toEqual(expect.any(String));
      expect((await client(acme()).get(path)).status, path).toBe(200);
    }
  });

  it('has no plan gate: a developer workspace reads its own deployment family', async () => {
    const developer = client(initech());
    expect((await developer.get('/v2/deployments')).status).toBe(200);
    expect((await developer.get('/v2/auth/providers')).status).toBe(200);
    expect((await developer.get('/v1/integrations/forge/codehost/install')).status).toBe(200);
  });

  it("answers another workspace's ids with 404", async () => {
    const foreign = seeded(globex())[0]!;
    const other = client(acme());
    expect(await other.get(`/v2/deployments/${foreign.row.id}`)).toMatchObject({
      status: 404,
      body: { detail: `Deployment ID ${foreign.row.id} not found.` },
    });
    expect((await other.get(`/v2/deployments/${foreign.row.id}/revisions`)).status).toBe(404);
    expect((await other.get(`/v2/deployments/${foreign.row.id}/revisions/${foreign.revisions[0]!.id}`)).status).toBe(
      404,
    );
    expect((await other.get(`/v1/integrations/forge/codehost/${globex().integrations[0]!.id}/repos`)).status).toBe(404);
    expect((await other.get('/v2/auth/providers/globex-sso')).status).toBe(404);
    const listed = await other.get(`/v2/deployments?deployment_ids=${foreign.row.id}`);
    expect(listed.body.resources).toEqual([]);
  });
});

describe('E5: OAuth providers', () => {
  it('lists the 2.3 records of the workspace with the defaults applied', async () => {
    for (const workspace of deploymentFixtures().workspaces) {
      const api = client(ctx.fixtures.workspaces.find((candidate) => candidate.id === workspace.workspace_id)!);
      const response = await api.get('/v2/auth/providers');
      expect(response.status).toBe(200);
      expectSchema(response.body, 'OAuthProviderResponse[]');
      expect(response.body.map((provider: { id: string }) => provider.id)).toEqual(
        workspace.oauth_providers.map((provider) => provider.id),
      );
      for (const [index, fixture] of workspace.oauth_providers.entries()) {
        const provider = response.body[index];
        expect(provider).toMatchObject({
          organization_id: workspace.organization_id,
          provider_id: fixture.provider_id,
          uses_pkce: fixture.uses_pkce,
          code_challenge_method: fixture.code_challenge_method,
          provider_type: fixture.provider_type ?? null,
          mcp_server_url: fixture.mcp_server_url ?? null,
          token_endpoint_auth_method: fixture.token_endpoint_auth_method ?? 'client_secret_post',
          is_dynamic_client: fixture.is_dynamic_client ?? false,
        });
        expect(provider.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}\+00:00$/);
      }
    }
  });

  it('seeds varied providers: PKCE on and off, defaults omitted, MCP servers, dynamic clients', () => {
    const providers = deploymentFixtures().workspaces.flatMap((workspace) => workspace.oauth_providers);
    expect(new Set(providers.map((provider) => provider.uses_pkce))).toEqual(new Set([true, false]));
    expect(providers.map((provider) => provider.code_challenge_method)).toEqual(expect.arrayContaining(['S256', null]));
    expect(providers.some((provider) => provider.token_endpoint_auth_method === undefined)).toBe(true);
    expect(providers.some((provider) => provider.is_dynamic_client === true)).toBe(true);
    expect(providers.some((provider) => provider.mcp_server_url)).toBe(true);
    expect(new Set(providers.map((provider) => provider.provider_type ?? null)).size).toBeGreaterThanOrEqual(3);
  });

  it('reads one provider by provider_id; 404 for an unknown one', async () => {
    const response = await client(acme()).get('/v2/auth/providers/crm-mcp');
    expect(response.status).toBe(200);
    expectSchema(response.body, 'OAuthProviderResponse');
    expect(response.body).toMatchObject({
      provider_id: 'crm-mcp',
      is_dynamic_client: true,
      mcp_server_url: expect.any(String),
    });
    expect(await client(acme()).get('/v2/auth/providers/nope')).toMatchObject({
      status: 404,
      body: { detail: expect.any(String) },
    });
  });
});

describe('E6: codehost integrations and repositories', () => {
  it('lists the integrations as {id, installation_id, name}', async () => {
    for (const workspace of ctx.fixtures.workspaces) {
      const response = await client(workspace).get('/v1/integrations/forge/codehost/install');
      expect(response.status).toBe(200);
      expectSchema(response.body, 'CodehostIntegration[]');
      expect(response.body).toEqual(
        families
          .get(workspace.id)!
          .integrations.map(({ id, installation_id, name }) => ({ id, installation_id, name })),
      );
    }
  });

  it('lists the repositories of an integration as 2.4 records', async () => {
    for (const workspace of ctx.fixtures.workspaces) {
      for (const integration of workspace.integrations) {
        const response = await client(workspace).get<CodehostRepository[]>(
          `/v1/integrations/forge/codehost/${integration.id}/repos`,
        );
        expect(response.status).toBe(200);
        expectSchema(response.body, 'CodehostRepository[]');
        expect(response.body.map(({ id, url, default_branch }) => ({ id, url, default_branch }))).toEqual(
          integration.repos,
        );
        for (const repo of response.body) {
          expect(repo.host_integration_id).toBe(integration.id);
          expect(repo.url).toBe(`https://codehost.example/${repo.owner}/${repo.name}`);
        }
      }
    }
  });

  it('is 422 uuid_parsing for a malformed id and 404 for an unknown one', async () => {
    expect422(await client(acme()).get('/v1/integrations/forge/codehost/not-a-uuid/repos'), 'uuid_parsing', [
      'path',
      'integration_id',
    ]);
    expect(await client(acme()).get(`/v1/integrations/forge/codehost/${MISSING_ID}/repos`)).toMatchObject({
      status: 404,
      body: { detail: expect.any(String) },
    });
  });
});

describe('E8: listing deployments', () => {
  it('pages 20 at a time by default, newest first, offset = where the next page starts', async () => {
    const response = await client(acme()).get('/v2/deployments');
    expect(response.status).toBe(200);
    expectSchema(response.body, 'DeploymentsList');
    expect(response.body.offset).toBe(20);
    expect(response.body.resources.map((deployment: { id: string }) => deployment.id)).toEqual(
      inListingOrder(seeded(acme())).slice(0, 20),
    );
    for (const deployment of response.body.resources) {
      expectSchema(deployment, 'Deployment');
      expect(deployment.tenant_id).toBe(acme().id);
    }
    const past = await client(acme()).get('/v2/deployments?offset=500');
    expect(past.body).toEqual({ resources: [], offset: 500 });
  });

  it('walks all pages with limit 7: every matching deployment exactly once, for several filter combinations', async () => {
    const tag = (workspace: FixtureWorkspace, index: number) =>
      deploymentFixtures().workspaces.find((w) => w.workspace_id === workspace.id)!.deployments!.tag_value_ids[index]!;
    const tagsOf = (deployment: SeededDeployment) => JSON.parse(deployment.row.tag_value_ids) as string[];
    const cases: [FixtureWorkspace, string, (deployment: SeededDeployment) => boolean][] = [
      [acme(), '', () => true],
      [globex(), '', () => true],
      [initech(), '', () => true],
      [acme(), 'status=READY', (d) => d.row.status === 'READY'],
      [
        acme(),
        'deployment_type=prod&remote_reconciled=false',
        (d) => d.row.deployment_type === 'prod' && d.row.remote_reconciled === 0,
      ],
      [
        globex(),
        `tag_value_ids=${tag(globex(), 0)},${tag(globex(), 2)}`,
        (d) => tagsOf(d).includes(tag(globex(), 0)) || tagsOf(d).includes(tag(globex(), 2)),
      ],
      [
        globex(),
        'image_version=0.4.12&remote_reconciled=true',
        (d) => d.row.image_version === '0.4.12' && d.row.remote_reconciled === 1,
      ],
      [acme(), 'name_contains=BOT', (d) => d.row.name.includes('bot')],
      [
        initech(),
        'deployment_type=dev&status=UNKNOWN',
        (d) => d.row.deployment_type === 'dev' && d.row.status === 'UNKNOWN',
      ],
    ];
    for (const [workspace, query, matches] of cases) {
      const expected = inListingOrder(seeded(workspace).filter(matches));
      expect(expected.length, `${workspace.name} ${query} matches some`).toBeGreaterThan(0);
      const walked = await walkDeployments(client(workspace), query, 7);
      expect(walked, `${workspace.name} ${query}`).toEqual(expected);
      expect(new Set(walked).size).toBe(walked.length);
    }
  });

  it('filters by each parameter alone', async () => {
    const api = client(globex());
    const mine = seeded(globex());
    const ids = async (query: string) => (await walkDeployments(api, query, 100)).sort();
    const idsWhere = (matches: (deployment: SeededDeployment) => boolean) =>
      mine
        .filter(matches)
        .map((d) => d.row.id)
        .sort();

    expect(await ids('name_contains=Research-AGENT')).toEqual(idsWhere((d) => d.row.name.startsWith('research-agent')));
    expect(await ids('name_contains=zzz')).toEqual([]);
    for (const status of DEPLOYMENT_STATUSES)
      expect(await ids(`status=${status}`), status).toEqual(idsWhere((d) => d.row.status === status));
    expect(await ids('status=NOT_A_STATUS')).toEqual([]);
    expect(await ids('remote_reconciled=true')).toEqual(idsWhere((d) => d.row.remote_reconciled === 1));
    expect(await ids('remote_reconciled=false')).toEqual(idsWhere((d) => d.row.remote_reconciled === 0));
    for (const type of DEPLOYMENT_TYPES)
      expect(await ids(`deployment_type=${type}`), type).toEqual(idsWhere((d) => d.row.deployment_type === type));
    for (const version of ['0.4.12', '0.4.10', '0.4.9']) {
      expect(await ids(`image_version=${version}`), version).toEqual(idsWhere((d) => d.row.image_version === version));
    }
    const [firstTag, secondTag] = deploymentFixtures().workspaces.find((w) => w.workspace_id === globex().id)!
      .deployments!.tag_value_ids;
    const tagged = (tag: string) => (d: SeededDeployment) =>
      (JSON.parse(d.row.tag_value_ids) as string[]).includes(tag);
    expect(await ids(`tag_value_ids=${firstTag}`)).toEqual(idsWhere(tagged(firstTag!)));
    const either = idsWhere((d) => tagged(firstTag!)(d) || tagged(secondTag!)(d));
    expect(await ids(`tag_value_ids=${firstTag},${secondTag}`)).toEqual(either);
    expect(await ids(`tag_value_ids=${firstTag}&tag_value_ids=${secondTag}`)).toEqual(either);
    const picked = [mine[3]!.row.id, mine[9]!.row.id, mine[20]!.row.id].sort();
    expect(await ids(`deployment_ids=${picked.join(',')}`)).toEqual(picked);
    expect(await ids(`deployment_ids=${picked[0]}&deployment_ids=${picked[1]},${picked[2]}`)).toEqual(picked);
    expect(await ids(`deployment_ids=${picked[0]},${MISSING_ID}`)).toEqual([picked[0]]);
  });

  it('is 422 with a detail array outside the bounds', async () => {
    const api = client(acme());
    expect422(await api.get('/v2/deployments?limit=0'), 'greater_than_equal', ['query', 'limit']);
    expect422(await api.get('/v2/deployments?limit=101'), 'less_than_equal', ['query', 'limit']);
    expect((await api.get('/v2/deployments?limit=abc')).status).toBe(422);
    expect422(await api.get('/v2/deployments?offset=-1'), 'greater_than_equal', ['query', 'offset']);
    expect422(await api.get('/v2/deployments?deployment_type=staging'), 'enum', ['query', 'deployment_type']);
    expect422(await api.get('/v2/deployments?remote_reconciled=maybe'), 'bool_parsing', ['query', 'remote_reconciled']);
    expect422(await api.get('/v2/deployments?deployment_ids=not-a-uuid'), 'uuid_parsing', [
      'query',
      'deployment_ids',
      0,
    ]);
    expect422(await api.get(`/v2/deployments?tag_value_ids=${MISSING_ID},x`), 'uuid_parsing', [
      'query',
      'tag_value_ids',
      1,
    ]);
    const limits = await api.get('/v2/deployments?limit=100');
    expect(limits.body.resources).toHaveLength(seeded(acme()).length);
  });
});

describe('GET /v2/deployments/{id}', () => {
  it('returns the Deployment: the latest revision config, consistent revision ids, masked secrets', async () => {
    for (const workspace of ctx.fixtures.workspaces) {
      for (const { row, revisions } of seeded(workspace)) {
        const response = await client(workspace).get(`/v2/deployments/${row.id}`);
        expect(response.status).toBe(200);
        expectSchema(response.body, 'Deployment');
        const deployment = response.body;
        const newest = revisions.at(-1)!;
        const active = revisions.filter((revision) => revision.status === 'DEPLOYED').at(-1);
        expect(deployment).toMatchObject({
          id: row.id,
          tenant_id: workspace.id,
          name: row.name,
          source: row.source,
          status: row.status,
          image_version: row.image_version,
          latest_revision_id: newest.id,
          active_revision_id: active?.id ?? null,
        });
        expect(deployment.source_config.deployment_type).toBe(row.deployment_type);
        expect(deployment.source_revision_config).toEqual({
          repo_ref: null,
          graph_config_path: null,
          image_uri: null,
          source_tarball_path: null,
          repo_commit_sha: null,
          ...JSON.parse(newest.source_revision_config),
        });
        expect(deployment.secrets).toEqual(
          (JSON.parse(row.secrets) as { name: string }[]).map(({ name }) => ({ name, value: '********' })),
        );
        expect(deployment.secret_references === null).toBe(row.source !== 'external_container');
        if (row.status === 'AWAITING_DATABASE') expect(deployment.active_revision_id).toBeNull();
        if (row.source === 'codehost') {
          const repos = workspace.integrations.find(
            (integration) => integration.id === deployment.source_config.integration_id,
          )!.repos;
          expect(repos.map((repo) => repo.url)).toContain(deployment.source_config.repo_url);
          if (deployment.source_revision_config.repo_ref.startsWith('refs/tags/'))
            expect(deployment.source_config.build_on_push).toBe(false);
        }
        if (row.source === 'external_container')
          expect(workspace.listeners).toContain(deployment.source_config.listener_id);
      }
    }
  });

  it('is 404 with the exact detail for an unknown id, 422 uuid_parsing for a malformed one', async () => {
    expect(await client(acme()).get(`/v2/deployments/${MISSING_ID}`)).toMatchObject({
      status: 404,
      body: { detail: `Deployment ID ${MISSING_ID} not found.` },
    });
    expect422(await client(acme()).get('/v2/deployments/12345'), 'uuid_parsing', ['path', 'deployment_id']);
  });
});

describe('revisions', () => {
  it('lists every revision newest first, each a Revision of the source with its own config', async () => {
    for (const workspace of [acme(), globex()]) {
      for (const { row, revisions } of seeded(workspace)) {
        const response = await client(workspace).get(`/v2/deployments/${row.id}/revisions`);
        expect(response.status).toBe(200);
        expectSchema(response.body, 'RevisionsList');
        expect(response.body.offset).toBe(revisions.length);
        expect(
          response.body.resources.map((revision: { id: string; status: string }) => [revision.id, revision.status]),
        ).toEqual([...revisions].reverse().map((revision) => [revision.id, revision.status]));
        for (const revision of response.body.resources) {
          expect(revision.source).toBe(row.source);
          expect(revision.source_revision_config.repo_commit_sha !== null).toBe(row.source === 'codehost');
          if (row.source === 'codehost')
            expect(revision.source_revision_config.repo_commit_sha).toMatch(/^[0-9a-f]{40}$/);
        }
        const statuses = revisions.map((revision) => revision.status);
        expect(
          statuses
            .slice(0, -1)
            .every(
              (status) =>
                !['CREATING', 'QUEUED', 'AWAITING_BUILD', 'BUILDING', 'AWAITING_DEPLOY', 'DEPLOYING'].includes(status),
            ),
        ).toBe(true);
      }
    }
  });

  it('pages with limit and offset and filters by comma-separated statuses', async () => {
    const { row, revisions } = seeded(acme()).find((deployment) => deployment.revisions.length >= 3)!;
    const api = client(acme());
    const newestFirst = [...revisions].reverse().map((revision) => revision.id);
    const walked: string[] = [];
    for (let offset = 0; offset < revisions.length;) {
      const page = await api.get(`/v2/deployments/${row.id}/revisions?limit=1&offset=${offset}`);
      expectSchema(page.body, 'RevisionsList');
      expect(page.body.resources).toHaveLength(1);
      walked.push(page.body.resources[0].id);
      offset = page.body.offset;
    }
    expect(walked).toEqual(newestFirst);

    const [first, second] = [...new Set(revisions.map((revision) => revision.status))];
    const matching = (wanted: string[]) =>
      newestFirst.filter((id) => wanted.includes(revisions.find((revision) => revision.id === id)!.status));
    const ids = async (query: string) =>
      (await api.get(`/v2/deployments/${row.id}/revisions?${query}`)).body.resources.map((r: { id: string }) => r.id);
    expect(await ids(`status=${first}`)).toEqual(matching([first!]));
    if (second) {
      expect(await ids(`status=${first},${second}`)).toEqual(matching([first!, second]));
      expect(await ids(`status=${first}&status=${second}`)).toEqual(matching([first!, second]));
    }
    const absent = REVISION_STATUSES.find((status) => !revisions.some((revision) => revision.status === status))!;
    expect(await ids(`status=${absent}`)).toEqual([]);
  });

  it('is 422 for an unknown status or a limit out of bounds', async () => {
    const { row } = seeded(acme())[0]!;
    expect422(await client(acme()).get(`/v2/deployments/${row.id}/revisions?status=DEPLOYED,SHIPPED`), 'enum', [
      'query',
      'status',
      1,
    ]);
    expect422(await client(acme()).get(`/v2/deployments/${row.id}/revisions?limit=101`), 'less_than_equal', [
      'query',
      'limit',
    ]);
    expect(await client(acme()).get(`/v2/deployments/${MISSING_ID}/revisions`)).toMatchObject({
      status: 404,
      body: { detail: `Deployment ID ${MISSING_ID} not found.` },
    });
  });

  it('reads one revision; 404 for one of another deployment, 422 for a malformed id', async () => {
    const [first, second] = seeded(acme());
    const api = client(acme());
    for (const revision of first!.revisions) {
      const response = await api.get(`/v2/deployments/${first!.row.id}/revisions/${revision.id}`);
      expect(response.status).toBe(200);
      expectSchema(response.body, 'Revision');
      expect(response.body).toMatchObject({ id: revision.id, status: revision.status, source: first!.row.source });
    }
    const elsewhere = second!.revisions[0]!.id;
    expect(await api.get(`/v2/deployments/${first!.row.id}/revisions/${elsewhere}`)).toMatchObject({
      status: 404,
      body: { detail: `Revision ID ${elsewhere} not found.` },
    });
    expect422(await api.get(`/v2/deployments/${first!.row.id}/revisions/nope`), 'uuid_parsing', [
      'path',
      'revision_id',
    ]);
  });
});

describe('secrets', () => {
  it('never appear in clear in any response of the deployment family', async () => {
    const secretValues = allSeeded().flatMap(({ row }) =>
      (JSON.parse(row.secrets) as { value: string }[]).map((secret) => secret.value),
    );
    expect(secretValues.length).toBeGreaterThan(20);
    const texts: string[] = [(await ctx.admin.request('GET', '/fixtures')).text];
    for (const workspace of ctx.fixtures.workspaces) {
      const api = client(workspace);
      texts.push((await api.get('/v2/deployments?limit=100')).text, (await api.get('/v2/auth/providers')).text);
      for (const { row } of seeded(workspace)) {
        texts.push(
          (await api.get(`/v2/deployments/${row.id}`)).text,
          (await api.get(`/v2/deployments/${row.id}/revisions`)).text,
        );
      }
    }
    const everything = texts.join('\n');
    for (const value of secretValues) expect(everything.includes(value), 'a secret value in a response').toBe(false);
    expect(everything).toContain('"value":"********"');
    expect(ctx.logs.join('\n')).not.toContain('lp-fixture-secret-');
  });
});
