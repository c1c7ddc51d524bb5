import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { start } from '../src/index.ts';
import { Api, credentialsOf, eventually, fullKey, type FixturesView } from './support/instance.ts';
import { listKeys, s3For } from './support/objstore.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'localplane-persist-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe('--data-dir', () => {
  it('keeps destinations, exports and objects across a restart', async () => {
    const first = await start({ port: 0, objstorePort: 0, dataDir, log: () => {} });
    const fixtures = (await new Api(`${first.apiUrl}/_localplane`).request<FixturesView>('GET', '/fixtures')).body;
    const workspace = fixtures.workspaces.find((candidate) => candidate.tier === 'enterprise')!;
    const client = new Api(first.apiUrl).as(workspace);
    const destination = await client.post('/api/v1/bulk-exports/destinations', {
      display_name: 'persisted',
      config: { bucket_name: fixtures.objstore.buckets[0], prefix: 'kept', endpoint_url: first.objstoreUrl },
      credentials: credentialsOf(fullKey(fixtures)),
    });
    const created = await client.post('/api/v1/bulk-exports', {
      bulk_export_destination_id: destination.body.id,
      session_id: workspace.sessions[0]!.id,
      start_time: '2026-10-01T00:00:00Z',
      end_time: '2026-10-02T00:00:00Z',
    });
    await eventually(async () => (await client.get(`/api/v1/bulk-exports/${created.body.id}`)).body.status === 'Completed', 'export');
    await first.stop();
    expect(existsSync(join(dataDir, 'localplane.sqlite'))).toBe(true);

    const second = await start({ port: 0, objstorePort: 0, dataDir, log: () => {} });
    try {
      const again = new Api(second.apiUrl).as(workspace);
      expect((await again.get(`/api/v1/bulk-exports/destinations/${destination.body.id}`)).status).toBe(200);
      const exported = await again.get(`/api/v1/bulk-exports/${created.body.id}`);
      expect(exported.body.status).toBe('Completed');
      const keys = await listKeys(s3For(second.objstoreUrl, fullKey(fixtures)), fixtures.objstore.buckets[0]!, 'kept/export_id=');
      expect(keys.length).toBeGreaterThan(0);
    } finally {
      await second.stop();
    }
    expect(existsSync(dataDir), 'a given data dir is not removed').toBe(true);
  });

  it('removes its own temp dir on stop when none was given', async () => {
    const instance = await start({ port: 0, objstorePort: 0, log: () => {} });
    expect(existsSync(instance.dataDir)).toBe(true);
    await instance.stop();
    expect(existsSync(instance.dataDir)).toBe(false);
  });
});
