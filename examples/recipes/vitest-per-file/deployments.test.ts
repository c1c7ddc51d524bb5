import { start, type Localplane } from 'localplane';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';

// One instance for this file: files run in parallel, each with its own instance, ports and temp dir.
let lp: Localplane;
beforeAll(async () => {
  lp = await start({ port: 0, objstorePort: 0, freezeClock: true });
});
beforeEach(() => lp.reset());
afterAll(() => lp.stop());

const acme = { 'X-API-Key': 'lp_test_acme_plus_0001', 'X-Tenant-Id': '6e81f035-1834-4208-8f34-e3a9482cde15' };
const get = async (path: string) => (await fetch(`${lp.apiUrl}${path}`, { headers: acme })).json();

it('a new revision deploys when the test moves the clock', async () => {
  const [integration] = await get('/v1/integrations/forge/codehost/install');
  const [repo] = await get(`/v1/integrations/forge/codehost/${integration.id}/repos`);
  const created = await fetch(`${lp.apiUrl}/v2/deployments`, {
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
  const deployment = await created.json();
  await lp.clock.advance(10); // the default revision steps take ten seconds in all
  expect(await get(`/v2/deployments/${deployment.id}`)).toMatchObject({ status: 'READY', active_revision_id: deployment.latest_revision_id });
});

it('the name is free again after reset()', async () => {
  const { resources } = await get('/v2/deployments?name_contains=recipe-agent');
  expect(resources).toEqual([]);
});
