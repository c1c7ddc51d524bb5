/**
 * Exports of runs added at run time read their chunks (src/tracing/added-run-chunks.ts): whatever
 * changed the runs since (more runs, a workspace reset, a restore, a reset, another seed, a
 * restart on a kept data dir), an export's files are byte for byte those of the same export read
 * by SQLite from the rows, which a filter every run passes makes it do.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Database } from '../../src/shared/db.ts';
import { start, type Localplane, type StartOptions } from '../../src/index.ts';
import {
  Api,
  credentialsOf,
  eventually,
  fullKey,
  workspaceByTier,
  type FixturesView,
  type FixtureWorkspace,
} from '../support/instance.ts';
import { download, listKeys, s3For } from '../support/objstore.ts';

const WINDOW = { start_time: '2026-10-01T00:00:00Z', end_time: '2026-10-06T00:00:00Z' };
/** A filter every run passes: the export's pages are read by SQLite from the rows. */
const EVERY_RUN = 'neq(id, "")';
const SEEDED_RUNS = 800;

const scratch = mkdtempSync(join(tmpdir(), 'localplane-test-added-runs-'));
const running = new Set<Localplane>();
afterAll(async () => {
  await Promise.all([...running].map((instance) => instance.stop()));
  rmSync(scratch, { recursive: true, force: true });
});

/** An instance and the project its tests add runs to: the enterprise workspace's eval-harness (800 seeded runs). */
async function startInstance(options: StartOptions = {}) {
  const instance = await start({ port: 0, objstorePort: 0, log: () => {}, ...options });
  running.add(instance);
  const admin = new Api(`${instance.apiUrl}/_localplane`);
  const fixtures = (await admin.request<FixturesView>('GET', '/fixtures')).body;
  const workspace: FixtureWorkspace = workspaceByTier(fixtures, 'enterprise');
  const session = workspace.sessions.find((candidate) => candidate.name === 'eval-harness')!;
  const client = new Api(instance.apiUrl).as(workspace);
  let exports = 0;

  async function adminCall(method: string, path: string, body?: unknown) {
    const response = await admin.request(method, path, body === undefined ? {} : { body });
    expect(response.status, response.text).toBeLessThan(300);
    return response.body;
  }

  /** The export of the window's runs, as its files' SHA-256 by path (the export and run ids left out). */
  async function exportFiles(filter: string | null = null) {
    const prefix = `added/${++exports}`;
    const destination = await client.post('/api/v1/bulk-exports/destinations', {
      display_name: `added ${exports}`,
      config: { bucket_name: fixtures.objstore.buckets[0], prefix, endpoint_url: fixtures.objstore.endpoint_url },
      credentials: credentialsOf(fullKey(fixtures)),
    });
    expect(destination.status, destination.text).toBe(200);
    const created = await client.post('/api/v1/bulk-exports', {
      bulk_export_destination_id: destination.body.id,
      session_id: session.id,
      ...WINDOW,
      format_version: 'v2_beta',
      compression: 'zstandard',
      ...(filter === null ? {} : { filter }),
    });
    expect(created.status, created.text).toBe(200);
    const finished = await eventually(async () => {
      const status = (await client.get(`/api/v1/bulk-exports/${created.body.id}`)).body.status;
      return status === 'Running' || status === 'Created' ? undefined : status;
    }, `export ${created.body.id}`);
    expect(finished).toBe('Completed');
    const runs = (await client.get(`/api/v1/bulk-exports/${created.body.id}/runs`)).body as {
      metadata: { result: { rows_written: number } };
    }[];
    const s3 = s3For(fixtures.objstore.endpoint_url, fullKey(fixtures));
    const keys = await listKeys(s3, fixtures.objstore.buckets[0]!, `${prefix}/export_id=`);
    const root = await download(s3, fixtures.objstore.buckets[0]!, keys);
    s3.destroy();
    return {
      rows: runs.reduce((sum, run) => sum + run.metadata.result.rows_written, 0),
      files: Object.fromEntries(
        keys.map((key) => [
          key
            .slice(prefix.length)
            .replace(/export_id=[^/]+/, 'export_id=*')
            .replace(/[0-9a-f-]{36}_(\d+)/, '*_$1'),
          createHash('sha256')
            .update(readFileSync(join(root, key)))
            .digest('hex'),
        ]),
      ),
    };
  }

  /** The export read from the chunks, checked against the rows' reading; its row count. */
  async function exportedRows(): Promise<number> {
    const fromChunks = await exportFiles();
    const fromRows = await exportFiles(EVERY_RUN);
    expect(Object.keys(fromChunks.files).length).toBeGreaterThan(0);
    expect(fromChunks).toEqual(fromRows);
    return fromChunks.rows;
  }

  return {
    instance,
    workspace,
    adminCall,
    exportFiles,
    exportedRows,
    /** Adds generated runs over the window's first three days, as a test or a demo makes a big project. */
    addRuns: (count: number) =>
      adminCall('POST', `/sessions/${session.id}/runs`, { count, start_time: WINDOW.start_time, days: 3 }),
  };
}

describe('an export of runs added at run time', () => {
  let lp: Awaited<ReturnType<typeof startInstance>>;

  it('reads runs added in calls that overlap in time, with the seeded ones, as the rows do', async () => {
    lp = await startInstance();
    expect(await lp.exportedRows()).toBe(SEEDED_RUNS);
    for (let call = 0; call < 3; call++) await lp.addRuns(400);
    expect(await lp.exportedRows()).toBe(SEEDED_RUNS + 1_200);
  });

  it("leaves them out after the workspace's reset", async () => {
    await lp.adminCall('POST', '/reset', { workspace_id: lp.workspace.id });
    expect(await lp.exportedRows()).toBe(SEEDED_RUNS);
  });

  it("reads a restored snapshot's runs, not those added after it was taken", async () => {
    await lp.addRuns(400);
    await lp.adminCall('POST', '/snapshot', { name: 'with-added-runs' });
    await lp.addRuns(300);
    expect(await lp.exportedRows()).toBe(SEEDED_RUNS + 700);
    await lp.adminCall('POST', '/restore', { name: 'with-added-runs' });
    expect(await lp.exportedRows()).toBe(SEEDED_RUNS + 400);
  });

  it('reads only the runs added after a reset', async () => {
    await lp.adminCall('POST', '/reset');
    await lp.addRuns(250);
    expect(await lp.exportedRows()).toBe(SEEDED_RUNS + 250);
  });

  it("reads another seed's runs on an instance of that seed, whose template has every seeded run's chunk", async () => {
    const other = await startInstance({ seed: 2, cacheDir: join(scratch, 'cache') });
    await other.addRuns(250);
    expect(await other.exportedRows()).toBe(SEEDED_RUNS + 250);
    expect((await other.exportFiles()).files).not.toEqual((await lp.exportFiles()).files);
    // The template was built for this instance (an empty cache): the seeded runs of every project are in chunks.
    const template = new Database(join(other.instance.dataDir, 'seed.sqlite'), { readonly: true });
    try {
      const uncovered = template
        .prepare(
          'SELECT session_id FROM (SELECT session_id, count(*) AS runs FROM runs GROUP BY session_id) LEFT JOIN ' +
            '(SELECT session_id, sum(rows) AS chunked FROM run_chunks GROUP BY session_id) USING (session_id) ' +
            'WHERE chunked IS NOT runs',
        )
        .all();
      expect(uncovered).toEqual([]);
      expect(template.prepare<[], number>('SELECT count(*) FROM runs').pluck().get()).toBeGreaterThan(SEEDED_RUNS);
    } finally {
      template.close();
    }
  });

  it('reads them on a kept data dir after a restart, with or without the file of their chunks', async () => {
    const dataDir = join(scratch, 'kept');
    const first = await startInstance({ dataDir });
    await first.addRuns(300);
    const before = await first.exportFiles();
    await first.instance.stop();
    running.delete(first.instance);
    const again = await startInstance({ dataDir });
    expect((await again.exportFiles()).files).toEqual(before.files);
    await again.instance.stop();
    running.delete(again.instance);
    rmSync(join(dataDir, 'localplane.sqlite.added-run-chunks'));
    const rebuilt = await startInstance({ dataDir });
    expect(await rebuilt.exportedRows()).toBe(SEEDED_RUNS + 300);
    expect((await rebuilt.exportFiles()).files).toEqual(before.files);
  });

  it('refuses a kept data dir whose file of chunks is a link, and leaves what it points to alone', async () => {
    const dataDir = join(scratch, 'linked');
    const first = await startInstance({ dataDir });
    await first.addRuns(100);
    await first.instance.stop();
    running.delete(first.instance);
    const outside = join(scratch, 'outside.txt');
    writeFileSync(outside, "not localplane's");
    const chunks = join(dataDir, 'localplane.sqlite.added-run-chunks');
    rmSync(chunks);
    symlinkSync(outside, chunks);
    await expect(start({ port: 0, objstorePort: 0, log: () => {}, dataDir })).rejects.toThrow(
      `${chunks} is a symbolic link, where localplane keeps a file of its own`,
    );
    expect(readFileSync(outside, 'utf8')).toBe("not localplane's");
  });
});
