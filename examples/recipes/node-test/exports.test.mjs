import assert from 'node:assert/strict';
import { after, before, beforeEach, test } from 'node:test';
import { start } from 'localplane';

let lp;
before(async () => {
  lp = await start({ port: 0, objstorePort: 0, freezeClock: true });
});
beforeEach(() => lp.reset());
after(() => lp.stop());

const acme = {
  'X-API-Key': 'lp_test_acme_plus_0001',
  'X-Tenant-Id': '6e81f035-1834-4208-8f34-e3a9482cde15',
  'Content-Type': 'application/json',
};
const call = async (method, path, body) => {
  const response = await fetch(`${lp.apiUrl}${path}`, { method, headers: acme, body: body && JSON.stringify(body) });
  return { status: response.status, body: await response.json() };
};

test('an export of one day completes when the clock is advanced', async () => {
  const destination = await call('POST', '/api/v1/bulk-exports/destinations', {
    display_name: 'landing',
    config: { bucket_name: 'exports', prefix: 'node-test' },
    credentials: { access_key_id: 'LPTESTFULLACCESS0001', secret_access_key: 'lp-test-secret-full-access-0001' },
  });
  assert.equal(destination.status, 200);
  const created = await call('POST', '/api/v1/bulk-exports', {
    bulk_export_destination_id: destination.body.id,
    session_id: 'b473474a-d1dd-4781-b84d-264ef5770f98', // support-bot-staging: 1,500 runs
    start_time: '2026-10-01T00:00:00Z',
    end_time: '2026-10-02T00:00:00Z',
    format_version: 'v2_beta',
    compression: 'snappy',
  });
  assert.equal(created.body.status, 'Created');
  await lp.clock.advance(0); // runs what is due now, to its end
  const [run] = (await call('GET', `/api/v1/bulk-exports/${created.body.id}/runs`)).body;
  assert.equal(run.status, 'Completed');
  assert.ok(run.metadata.result.rows_written > 0);
});

test('reset() forgets the export', async () => {
  assert.deepEqual((await call('GET', '/api/v1/bulk-exports')).body, []);
});
