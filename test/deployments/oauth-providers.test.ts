import { describe, expect, it } from 'vitest';
import { useLocalplane, workspaceByTier, type FixtureWorkspace } from '../support/instance.ts';
import { expectSchema } from '../support/openapi.ts';

/**
 * /v2/auth/providers writes through a running instance: create, patch, delete, MCP discovery; client secrets
 * write-only.
 */
const ctx = useLocalplane({ freezeClock: true });
const acme = () => workspaceByTier(ctx.fixtures, 'plus');
const globex = () => workspaceByTier(ctx.fixtures, 'enterprise');
const client = (workspace: FixtureWorkspace) => ctx.api.as(workspace);
const PROVIDERS = '/v2/auth/providers';
const CLIENT_SECRET = 'lp-oauth-test-client-secret-0001';
const ROTATED_SECRET = 'lp-oauth-test-client-secret-0002';

const providerBody = (providerId: string) => ({
  provider_id: providerId,
  name: 'Chat workspace',
  client_id: 'chat-client-id',
  client_secret: CLIENT_SECRET,
  auth_url: 'https://chat.example/oauth/v2/authorize',
  token_url: 'https://chat.example/api/oauth.v2.access',
});

/** Every place a secret could show: the journal of the requests, the state dump, the log lines. */
async function expectNowhere(secret: string) {
  const journal = await ctx.admin.request('GET', '/requests');
  expect(journal.status).toBe(200);
  expect(journal.text).not.toContain(secret);
  const state = await ctx.admin.request('GET', '/state');
  expect(state.text).not.toContain(secret);
  expect(ctx.logs.join('\n')).not.toContain(secret);
}

describe('POST /v2/auth/providers', () => {
  it(
    "creates a provider (200) with the reference's defaults, in the workspace's organization, without its " +
      'client_secret',
    async () => {
      const api = client(acme());
      const existing = (await api.get(PROVIDERS)).body;
      const created = await api.post(PROVIDERS, providerBody('chat'));
      expect(created.status).toBe(200);
      expectSchema(created.body, 'OAuthProviderResponse');
      expect(created.body).toMatchObject({
        organization_id: existing[0].organization_id,
        provider_id: 'chat',
        name: 'Chat workspace',
        client_id: 'chat-client-id',
        uses_pkce: false,
        code_challenge_method: 'S256',
        provider_type: null,
        mcp_server_url: null,
        token_endpoint_auth_method: 'client_secret_post',
        is_dynamic_client: false,
      });
      expect(created.body).not.toHaveProperty('client_secret');
      expect(created.text).not.toContain(CLIENT_SECRET);
      expect((await api.get(`${PROVIDERS}/chat`)).body).toEqual(created.body);
      expect((await api.get(PROVIDERS)).body.at(-1)).toEqual(created.body);
      await expectNowhere(CLIENT_SECRET);
    },
  );

  it('keeps provider_type and token_endpoint_auth_method as given, and refuses values outside their enums (422)', async () => {
    const api = client(acme());
    const created = await api.post(PROVIDERS, {
      ...providerBody('crm'),
      provider_type: 'salesforce',
      token_endpoint_auth_method: 'client_secret_basic',
      uses_pkce: true,
    });
    expect(created.body).toMatchObject({
      provider_type: 'salesforce',
      token_endpoint_auth_method: 'client_secret_basic',
      uses_pkce: true,
    });
    const refused = await api.post(PROVIDERS, { ...providerBody('crm-2'), provider_type: 'myspace' });
    expect(refused.status).toBe(422);
    expect(refused.body.detail[0]).toMatchObject({ loc: ['body', 'provider_type'] });
    const missing = await api.post(PROVIDERS, { provider_id: 'crm-3', client_secret: CLIENT_SECRET });
    expect(missing.status).toBe(422);
    expect(missing.text).not.toContain(CLIENT_SECRET);
  });

  it('refuses a provider_id the workspace already has (409), and lets another workspace have it', async () => {
    const duplicate = await client(acme()).post(PROVIDERS, providerBody('codehost'));
    expect(duplicate.status).toBe(409);
    expect(duplicate.body).toEqual({ detail: 'OAuth provider codehost already exists.' });
    const elsewhere = await client(globex()).post(PROVIDERS, providerBody('chat'));
    expect(elsewhere.status).toBe(200);
    expect(elsewhere.body.organization_id).not.toBe(
      (await client(acme()).get(`${PROVIDERS}/chat`)).body.organization_id,
    );
  });
});

describe('PATCH and DELETE /v2/auth/providers/{provider_id}', () => {
  it(
    'changes only the fields given (200), rotates the secret without showing it, then deletes (200) and answers ' +
      '404',
    async () => {
      const api = client(acme());
      const created = (await api.post(PROVIDERS, providerBody('tickets'))).body;
      await ctx.admin.request('POST', '/clock/advance', { body: { seconds: 30 } });
      const patched = await api.patch(`${PROVIDERS}/tickets`, {
        name: 'Ticket desk',
        client_secret: ROTATED_SECRET,
        uses_pkce: true,
        token_url: null,
      });
      expect(patched.status).toBe(200);
      expect(patched.body).toEqual({
        ...created,
        name: 'Ticket desk',
        uses_pkce: true,
        updated_at: patched.body.updated_at,
      });
      expect(Date.parse(patched.body.updated_at) - Date.parse(created.updated_at)).toBe(30_000);
      expect(patched.text).not.toContain(ROTATED_SECRET);
      await expectNowhere(ROTATED_SECRET);

      const deleted = await api.delete(`${PROVIDERS}/tickets`);
      expect(deleted.status).toBe(200);
      expect(deleted.body).toEqual({ message: 'OAuth provider tickets deleted.' });
      for (const answer of [
        await api.get(`${PROVIDERS}/tickets`),
        await api.patch(`${PROVIDERS}/tickets`, { name: 'x' }),
        await api.delete(`${PROVIDERS}/tickets`),
      ]) {
        expect(answer.status).toBe(404);
        expect(answer.body).toEqual({ detail: 'OAuth provider tickets not found.' });
      }
      expect(
        (await api.get(PROVIDERS)).body.map((provider: { provider_id: string }) => provider.provider_id),
      ).not.toContain('tickets');
    },
  );

  it('deletes a fixture provider, which a reset brings back', async () => {
    const api = client(globex());
    expect((await ctx.admin.request('POST', '/reset')).status).toBe(200);
    const before = (await api.get(PROVIDERS)).body;
    expect((await api.delete(`${PROVIDERS}/lab-notebook`)).status).toBe(200);
    expect((await api.get(`${PROVIDERS}/lab-notebook`)).status).toBe(404);
    expect((await ctx.admin.request('POST', '/reset')).status).toBe(200);
    expect((await api.get(PROVIDERS)).body).toEqual(before);
  });
});

describe('POST /v2/auth/providers/mcp-discover', () => {
  it(
    "creates a dynamic-client MCP provider from the server's discovered endpoints (those of the fixtures), " +
      'deterministically',
    async () => {
      const discover = () =>
        client(acme()).post(`${PROVIDERS}/mcp-discover`, {
          provider_id: 'papers',
          name: 'Papers',
          mcp_server_url: 'https://papers.globex.example/mcp',
        });
      const papersFixture = (await client(globex()).get(`${PROVIDERS}/papers-mcp`)).body;
      expect((await ctx.admin.request('POST', '/reset')).status).toBe(200);
      const created = await discover();
      expect(created.status).toBe(200);
      expectSchema(created.body, 'OAuthProviderResponse');
      expect(created.body).toMatchObject({
        provider_id: 'papers',
        name: 'Papers',
        auth_url: papersFixture.auth_url,
        token_url: papersFixture.token_url,
        uses_pkce: true,
        code_challenge_method: 'S256',
        provider_type: 'mcp',
        mcp_server_url: 'https://papers.globex.example/mcp',
        token_endpoint_auth_method: 'none',
        is_dynamic_client: true,
      });
      expect(created.body.client_id).toMatch(/^lp-dcr-[0-9a-f-]{36}$/);

      // The same calls after a reset give the same provider (the frozen clock restarts at the wall time): ids come from
      // the seeded sequence.
      expect((await ctx.admin.request('POST', '/reset')).status).toBe(200);
      const { created_at: _created, updated_at: _updated, ...again } = (await discover()).body;
      expect(created.body).toMatchObject(again);
      expect((await discover()).status).toBe(409);
    },
  );

  it('answers 400 with a detail when the MCP server has no OAuth metadata to discover, creating nothing', async () => {
    const api = client(acme());
    const before = (await api.get(PROVIDERS)).body;
    const refused = await api.post(`${PROVIDERS}/mcp-discover`, {
      provider_id: 'nowhere',
      name: 'Nowhere',
      mcp_server_url: 'https://mcp.nowhere.example/mcp',
    });
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({
      detail:
        'Failed to discover OAuth metadata for MCP server https://mcp.nowhere.example/mcp: no OAuth authorization ' +
        'server metadata was found at the server.',
    });
    expect((await api.get(PROVIDERS)).body).toEqual(before);
    const incomplete = await api.post(`${PROVIDERS}/mcp-discover`, { provider_id: 'nowhere', name: 'Nowhere' });
    expect(incomplete.status).toBe(422);
    expect(incomplete.body.detail[0]).toMatchObject({ type: 'missing', loc: ['body', 'mcp_server_url'] });
  });
});
