import { beforeEach, expect, inject, it } from 'vitest';

const api = inject('localplaneUrl');
const acme = { 'X-API-Key': 'lp_test_acme_plus_0001', 'X-Tenant-Id': '6e81f035-1834-4208-8f34-e3a9482cde15', 'Content-Type': 'application/json' };

// The instance lives in the globalSetup process: reset it over HTTP before each test.
beforeEach(async () => {
  expect((await fetch(`${api}/_localplane/reset`, { method: 'POST' })).status).toBe(200);
});

const destinations = async () => (await (await fetch(`${api}/api/v1/bulk-exports/destinations`, { headers: acme })).json()) as unknown[];

it('creates a destination', async () => {
  const response = await fetch(`${api}/api/v1/bulk-exports/destinations`, {
    method: 'POST',
    headers: acme,
    body: JSON.stringify({
      display_name: 'landing',
      config: { bucket_name: 'exports', prefix: 'recipe' },
      credentials: { access_key_id: 'LPTESTFULLACCESS0001', secret_access_key: 'lp-test-secret-full-access-0001' },
    }),
  });
  expect(response.status).toBe(200);
  expect(await destinations()).toHaveLength(1);
});

it('starts from the seeded fixtures again', async () => {
  expect(await destinations()).toEqual([]);
});
