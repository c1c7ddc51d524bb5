import { test } from 'localplane/vitest';
import { expect } from 'vitest';

// `localplane` is the run's instance, reached over HTTP and reset before each test that uses it.
const acme = {
  'X-API-Key': 'lp_test_acme_plus_0001',
  'X-Tenant-Id': '6e81f035-1834-4208-8f34-e3a9482cde15',
  'Content-Type': 'application/json',
};

test('creates a destination', async ({ localplane }) => {
  const response = await fetch(`${localplane.apiUrl}/api/v1/bulk-exports/destinations`, {
    method: 'POST',
    headers: acme,
    body: JSON.stringify({
      display_name: 'landing',
      config: { bucket_name: 'exports', prefix: 'recipe' },
      credentials: { access_key_id: 'LPTESTFULLACCESS0001', secret_access_key: 'lp-test-secret-full-access-0001' },
    }),
  });
  expect(response.status).toBe(200);
  const { workspaces } = await localplane.state({ workspace_id: acme['X-Tenant-Id'] });
  expect(workspaces[0]!.destinations).toHaveLength(1);
  expect(
    await localplane.requests.count({ method: 'POST', path: '/api/v1/bulk-exports/destinations', status: 200 }),
  ).toBe(1);
});

test('starts from the seeded fixtures again', async ({ localplane }) => {
  const { workspaces } = await localplane.state({ workspace_id: acme['X-Tenant-Id'] });
  expect(workspaces[0]!.destinations).toEqual([]);
});
