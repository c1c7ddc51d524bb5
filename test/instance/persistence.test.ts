import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { start, type Localplane } from '../../src/index.ts';
import { Api, credentialsOf, eventually, fullKey, workspaceByTier, type FixturesView } from '../support/instance.ts';
import { listKeys, s3For } from '../support/objstore.ts';

const scratch = mkdtempSync(join(tmpdir(), 'localplane-persist-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
let dirs = 0;
const newDir = () => join(scratch, `data-${++dirs}`);

async function fixturesOf(instance: Localplane): Promise<FixturesView> {
  return (await new Api(`${instance.apiUrl}/_localplane`).request<FixturesView>('GET', '/fixtures')).body;
}

/** A destination, an export (with its runs) and a deployment (with its revision and tracing project): their ids. */
async function createOneOfEach(instance: Localplane): Promise<string[]> {
  const fixtures = await fixturesOf(instance);
  const workspace = workspaceByTier(fixtures, 'plus');
  const client = new Api(instance.apiUrl).as(workspace);
  const destination = await client.post('/api/v1/bulk-exports/destinations', {
    display_name: 'ids',
    config: { bucket_name: fixtures.objstore.buckets[0], prefix: 'ids' },
    credentials: credentialsOf(fullKey(fixtures)),
  });
  expect(destination.status, destination.text).toBe(200);
  const exported = await client.post('/api/v1/bulk-exports', {
    bulk_export_destination_id: destination.body.id,
    session_id: workspace.sessions[1]!.id,
    start_time: '2026-10-01T00:00:00Z',
    end_time: '2026-10-03T00:00:00Z',
  });
  expect(exported.status, exported.text).toBe(200);
  const runs = (await client.get(`/api/v1/bulk-exports/${exported.body.id}/runs`)).body as { id: string }[];
  const integration = workspace.integrations[0]!;
  const deployment = await client.post('/v2/deployments', {
    name: `ids-${destination.body.id}`,
    source: 'codehost',
    source_config: { integration_id: integration.id, repo_url: integration.repos[0]!.url },
    source_revision_config: { repo_ref: 'main', graph_config_path: 'graph.json' },
    secrets: [],
  });
  expect(deployment.status, deployment.text).toBe(201);
  return [
    destination.body.id,
    exported.body.id,
    ...runs.map((run) => run.id),
    deployment.body.id,
    deployment.body.latest_revision_id,
  ];
}

describe('--data-dir', () => {
  it('keeps destinations, exports and objects across a restart', async () => {
    const dataDir = newDir();
    const first = await start({ port: 0, objstorePort: 0, dataDir, log: () => {} });
    const fixtures = await fixturesOf(first);
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
    await eventually(
      async () => (await client.get(`/api/v1/bulk-exports/${created.body.id}`)).body.status === 'Completed',
      'export',
    );
    await first.stop();
    expect(existsSync(join(dataDir, 'localplane.sqlite'))).toBe(true);

    const second = await start({ port: 0, objstorePort: 0, dataDir, log: () => {} });
    try {
      const again = new Api(second.apiUrl).as(workspace);
      expect((await again.get(`/api/v1/bulk-exports/destinations/${destination.body.id}`)).status).toBe(200);
      const exported = await again.get(`/api/v1/bulk-exports/${created.body.id}`);
      expect(exported.body.status).toBe('Completed');
      const keys = await listKeys(
        s3For(second.objstoreUrl, fullKey(fixtures)),
        fixtures.objstore.buckets[0]!,
        'kept/export_id=',
      );
      expect(keys.length).toBeGreaterThan(0);
    } finally {
      await second.stop();
    }
    expect(existsSync(dataDir), 'a given data dir is not removed').toBe(true);
  });

  it('goes on with the id sequence after a restart: no id comes back, of any kind', async () => {
    const dataDir = newDir();
    const first = await start({ port: 0, objstorePort: 0, dataDir, log: () => {} });
    const before = await createOneOfEach(first);
    await first.stop();

    const second = await start({ port: 0, objstorePort: 0, dataDir, log: () => {} });
    try {
      const after = await createOneOfEach(second);
      const all = [...before, ...after];
      expect(new Set(all).size, 'every id is new').toBe(all.length);
    } finally {
      await second.stop();
    }
  });

  it('draws the same ids from a fresh dir of a seed, and again after a reset', async () => {
    const first = await start({ port: 0, objstorePort: 0, dataDir: newDir(), log: () => {} });
    const fresh = await start({ port: 0, objstorePort: 0, log: () => {} });
    try {
      const ids = await createOneOfEach(first);
      expect(await createOneOfEach(fresh)).toEqual(ids);
      await fresh.reset();
      expect(await createOneOfEach(fresh)).toEqual(ids);
    } finally {
      await Promise.all([first.stop(), fresh.stop()]);
    }
  });

  it('is self-contained: a copy starts and works without the template cache', async () => {
    const original = newDir();
    const first = await start({ port: 0, objstorePort: 0, dataDir: original, log: () => {} });
    const [destinationId] = await createOneOfEach(first);
    await first.stop();
    const copy = newDir();
    cpSync(original, copy, { recursive: true });
    rmSync(original, { recursive: true });

    const noCache = join(scratch, 'no-cache');
    const moved = await start({ port: 0, objstorePort: 0, dataDir: copy, cacheDir: noCache, log: () => {} });
    try {
      const fixtures = await fixturesOf(moved);
      const workspace = workspaceByTier(fixtures, 'plus');
      const client = new Api(moved.apiUrl).as(workspace);
      expect((await client.get(`/api/v1/bulk-exports/destinations/${destinationId}`)).status).toBe(200);
      // Seeded runs are read from the data dir's own template: an export of an hour of them has rows.
      const exported = await client.post('/api/v1/bulk-exports', {
        bulk_export_destination_id: destinationId,
        session_id: workspace.sessions[0]!.id,
        start_time: '2026-10-01T00:00:00Z',
        end_time: '2026-10-01T01:00:00Z',
      });
      const finished = await eventually(async () => {
        const body = (await client.get(`/api/v1/bulk-exports/${exported.body.id}`)).body;
        return body.status === 'Completed' ? body : undefined;
      }, 'export');
      expect(finished.status).toBe('Completed');
      const runs = (await client.get(`/api/v1/bulk-exports/${exported.body.id}/runs`)).body;
      expect(runs[0].metadata.result.rows_written).toBeGreaterThan(0);
      await moved.reset();
      expect((await client.get('/v2/deployments')).body.resources.length).toBeGreaterThan(0);
      expect(existsSync(noCache), 'the cache was never needed').toBe(false);
    } finally {
      await moved.stop();
    }
  });

  it('refuses a data dir whose tables another version wrote, naming it, and leaves it as it was', async () => {
    const dir = newDir();
    const first = await start({ port: 0, objstorePort: 0, dataDir: dir, log: () => {} });
    await first.stop();
    const file = join(dir, 'localplane.sqlite');
    const older = new Database(file);
    older.pragma('user_version = 0');
    older.close();

    await expect(start({ port: 0, objstorePort: 0, dataDir: dir, log: () => {} })).rejects.toThrow(
      `${file} was written by another version of localplane (its tables differ): remove that data dir or choose ` +
        `another --data-dir`,
    );
    const kept = new Database(file, { readonly: true });
    expect(kept.pragma('user_version', { simple: true })).toBe(0);
    kept.close();
  });

  it('removes its own temp dir on stop when none was given', async () => {
    const instance = await start({ port: 0, objstorePort: 0, log: () => {} });
    expect(existsSync(instance.dataDir)).toBe(true);
    await instance.stop();
    expect(existsSync(instance.dataDir)).toBe(false);
  });
});
