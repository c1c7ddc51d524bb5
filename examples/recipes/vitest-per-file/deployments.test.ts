import { fileTest } from 'localplane/vitest';
import { expect } from 'vitest';

// One instance for this file, on free ports, reset before each test: files run in parallel, each
// with its own instance, ports and temp dir.
const test = fileTest({ freezeClock: true });

const acme = { 'X-API-Key': 'lp_test_acme_plus_0001', 'X-Tenant-Id': '6e81f035-1834-4208-8f34-e3a9482cde15' };
const get = async (apiUrl: string, path: string) => (await fetch(`${apiUrl}${path}`, { headers: acme })).json();

test('a new revision deploys when the test moves the clock', async ({ localplane: lp }) => {
  const [integration] = await get(lp.apiUrl, '/v1/integrations/forge/codehost/install');
  const [repo] = await get(lp.apiUrl, `/v1/integrations/forge/codehost/${integration.id}/repos`);
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
  expect(await get(lp.apiUrl, `/v2/deployments/${deployment.id}`)).toMatchObject({
    status: 'READY',
    active_revision_id: deployment.latest_revision_id,
  });
});

test('the name is free again after the reset', async ({ localplane: lp }) => {
  const { resources } = await get(lp.apiUrl, '/v2/deployments?name_contains=recipe-agent');
  expect(resources).toEqual([]);
});
