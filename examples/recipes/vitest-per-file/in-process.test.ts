import { inProcessFileTest } from 'localplane/vitest';
import type { InProcessLocalplane } from 'localplane';
import { expect } from 'vitest';

// An instance of this file alone, answering in process: no port at all for a test of the API.
// It runs in parallel with deployments.test.ts, which creates the same deployment name in its
// own instance: were the two to share state, one of them would get a 409.
const test = inProcessFileTest({ freezeClock: true });

const acme = { 'X-API-Key': 'lp_test_acme_plus_0001', 'X-Tenant-Id': '6e81f035-1834-4208-8f34-e3a9482cde15' };
const get = async (lp: InProcessLocalplane, path: string) => (await lp.request(path, { headers: acme })).json();

test('creates the deployment name the other file creates too', async ({ localplane: lp }) => {
  const [integration] = await get(lp, '/v1/integrations/forge/codehost/install');
  const [repo] = await get(lp, `/v1/integrations/forge/codehost/${integration.id}/repos`);
  const created = await lp.request('/v2/deployments', {
    method: 'POST',
    headers: { ...acme, 'Content-Type': 'application/json' },
    body: JSON.stringify({
      name: 'recipe-agent',
      source: 'codehost',
      source_config: { integration_id: integration.id, repo_url: repo.url },
      source_revision_config: { repo_ref: repo.default_branch, graph_config_path: 'graph.json' },
      secrets: [],
    }),
  });
  expect(created.status).toBe(201);
  const health = await lp.health();
  expect(health.objstore_url).toBeNull(); // nothing used the objstore, so it bound no port
});
