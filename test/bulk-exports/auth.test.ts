import { describe, expect, it } from 'vitest';
import { useLocalplane, workspaceByTier } from '../support/instance.ts';

const ctx = useLocalplane();
const PATHS = [
  ['GET', '/api/v1/bulk-exports'],
  ['GET', '/api/v1/bulk-exports/destinations'],
  ['POST', '/api/v1/bulk-exports/destinations'],
  ['POST', '/api/v1/bulk-exports'],
  ['GET', '/api/v1/bulk-exports/6e81f035-1834-4208-8f34-e3a9482cde15'],
] as const;

describe('bulk-export authentication', () => {
  it.each(PATHS)('%s %s without an API key is 401', async (method, path) => {
    const response = await ctx.api.request(method, path, { body: method === 'POST' ? {} : undefined });
    expect(response.status).toBe(401);
    expect(typeof response.body.detail).toBe('string');
  });

  it.each(PATHS)('%s %s with an unknown API key is 401', async (method, path) => {
    const workspace = workspaceByTier(ctx.fixtures, 'plus');
    const response = await ctx.api.request(method, path, {
      headers: { 'X-API-Key': ctx.fixtures.unknown_api_key, 'X-Tenant-Id': workspace.id },
    });
    expect(response.status).toBe(401);
    expect(response.body).toEqual({ detail: 'Invalid token' });
  });

  it('is 403 for a key of another workspace', async () => {
    const plus = workspaceByTier(ctx.fixtures, 'plus');
    const enterprise = workspaceByTier(ctx.fixtures, 'enterprise');
    const response = await ctx.api.request('GET', '/api/v1/bulk-exports/destinations', {
      headers: { 'X-API-Key': plus.api_key, 'X-Tenant-Id': enterprise.id },
    });
    expect(response.status).toBe(403);
    expect(response.body.detail).toMatch(/does not belong/);
  });

  it('takes header names in any case', async () => {
    const plus = workspaceByTier(ctx.fixtures, 'plus');
    for (const name of ['X-API-Key', 'X-Api-Key', 'x-api-key']) {
      const response = await ctx.api.request('GET', '/api/v1/bulk-exports', {
        headers: { [name]: plus.api_key, 'x-tenant-id': plus.id },
      });
      expect(response.status, name).toBe(200);
      expect(response.body).toEqual([]);
    }
  });

  it('is 403 with a clear detail on a tier without bulk export, and follows the tier knob', async () => {
    const developer = workspaceByTier(ctx.fixtures, 'developer');
    const client = ctx.api.as(developer);
    const refused = await client.get('/api/v1/bulk-exports/destinations');
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toMatch(/Plus and Enterprise/);
    const knob = await ctx.admin.request('PUT', `/workspaces/${developer.id}/tier`, { body: { tier: 'plus' } });
    expect(knob.status).toBe(200);
    expect((await client.get('/api/v1/bulk-exports/destinations')).status).toBe(200);
    await ctx.admin.request('PUT', `/workspaces/${developer.id}/tier`, { body: { tier: 'developer' } });
    expect((await client.get('/api/v1/bulk-exports/destinations')).status).toBe(403);
    const badTier = await ctx.admin.request('PUT', `/workspaces/${developer.id}/tier`, { body: { tier: 'gold' } });
    expect(badTier.status).toBe(422);
    expect(badTier.body.detail[0]).toMatchObject({ type: 'enum', loc: ['body', 'tier'] });
  });
});
