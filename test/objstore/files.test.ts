import { randomBytes } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import {
  CopyObjectCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { afterAll, describe, expect, it } from 'vitest';
import { SOURCE_TARBALL_BUCKET } from '../../src/deployments/source-uploads.ts';
import { start } from '../../src/index.ts';
import {
  Api,
  createOnlyKey,
  credentialsOf,
  fullKey,
  useLocalplane,
  workspaceByTier,
  type FixturesView,
} from '../support/instance.ts';
import { duckdb, getBytes, s3For } from '../support/objstore.ts';
import { inWindow, seededRuns } from '../support/source.ts';

const ctx = useLocalplane({ freezeClock: true, limits: { export_rows_per_file: 200 } });
const bucket = () => ctx.fixtures.objstore.buckets[0]!;
const s3 = () => s3For(ctx.instance.objstoreUrl, fullKey(ctx.fixtures));
const fileOf = (key: string, root = ctx.instance.filesDir!) => join(root, bucket(), ...key.split('/'));
/** s3rver's own file for an object: what the view must not make readers glob. */
const storeFileOf = (key: string) => join(ctx.instance.dataDir, 'objstore', bucket(), `${key}._S3rver_object`);

const put = (key: string, body: Uint8Array | string) =>
  s3().send(new PutObjectCommand({ Bucket: bucket(), Key: key, Body: body }));
const remove = (key: string) => s3().send(new DeleteObjectCommand({ Bucket: bucket(), Key: key }));

/** The view's file holds exactly the object's bytes, as the S3 API serves them, and links s3rver's file (no copy). */
async function expectInView(client: S3Client, key: string, bytes: Uint8Array) {
  const file = fileOf(key);
  expect(existsSync(file), `${key} in the view`).toBe(true);
  expect(Buffer.compare(readFileSync(file), Buffer.from(bytes)), `${key} bytes`).toBe(0);
  expect(Buffer.compare(Buffer.from(await getBytes(client, bucket(), key)), Buffer.from(bytes))).toBe(0);
  expect(statSync(file).ino, `${key} is a hard link to the stored object`).toBe(statSync(storeFileOf(key)).ino);
}

/** The fixtures' buckets and the instance's own, for deployment sources. */
const allBuckets = () => [...ctx.fixtures.objstore.buckets, SOURCE_TARBALL_BUCKET].sort();

describe('the plain-file view', () => {
  it('is <data-dir>/files, announced by start() and the fixtures, with one empty folder per bucket', () => {
    expect(ctx.instance.filesDir).toBe(join(ctx.instance.dataDir, 'files'));
    expect(ctx.fixtures.objstore.files_dir).toBe(ctx.instance.filesDir);
    expect(readdirSync(ctx.instance.filesDir!).sort()).toEqual(allBuckets());
  });

  it('follows PutObject, overwrites included, by the time the response arrives', async () => {
    const first = randomBytes(3000);
    await put('plain/put/object.bin', first);
    await expectInView(s3(), 'plain/put/object.bin', first);
    for (const size of [70_000, 10]) {
      const next = randomBytes(size);
      await put('plain/put/object.bin', next);
      await expectInView(s3(), 'plain/put/object.bin', next);
    }
  });

  it('follows a multipart upload by the stock managed uploader', async () => {
    const body = randomBytes(11 * 1024 * 1024 + 123);
    await new Upload({
      client: s3(),
      params: { Bucket: bucket(), Key: 'plain/multipart/big.bin', Body: body },
      partSize: 5 * 1024 * 1024,
      queueSize: 2,
    }).done();
    const journal = (await ctx.admin.request('GET', '/objstore/journal')).body as {
      operation: string;
      key: string;
      status: number;
    }[];
    const parts = journal.filter((record) => record.key === 'plain/multipart/big.bin');
    expect(parts.filter((record) => record.operation === 'UploadPart')).toHaveLength(3);
    expect(parts.at(-1)).toMatchObject({ operation: 'CompleteMultipartUpload', status: 200 });
    await expectInView(s3(), 'plain/multipart/big.bin', body);
  });

  it('follows CopyObject, onto a new key and over an existing one (which a new file replaces)', async () => {
    const source = randomBytes(5000);
    const other = randomBytes(777);
    await put('plain/copy/source.bin', source);
    await put('plain/copy/other.bin', other);
    await s3().send(
      new CopyObjectCommand({
        Bucket: bucket(),
        Key: 'plain/copy/target.bin',
        CopySource: `${bucket()}/plain/copy/source.bin`,
      }),
    );
    await expectInView(s3(), 'plain/copy/target.bin', source);
    await s3().send(
      new CopyObjectCommand({
        Bucket: bucket(),
        Key: 'plain/copy/target.bin',
        CopySource: `${bucket()}/plain/copy/other.bin`,
      }),
    );
    await expectInView(s3(), 'plain/copy/target.bin', other);
    await expectInView(s3(), 'plain/copy/source.bin', source);
  });

  it('drops the file of a deleted object and the folders it leaves empty', async () => {
    await put('plain/delete/a/b/gone.txt', 'gone');
    await put('plain/delete/kept.txt', 'kept');
    await remove('plain/delete/a/b/gone.txt');
    expect(existsSync(fileOf('plain/delete/a/b/gone.txt'))).toBe(false);
    expect(existsSync(fileOf('plain/delete/a'))).toBe(false);
    expect(readFileSync(fileOf('plain/delete/kept.txt'), 'utf8')).toBe('kept');
    await remove('plain/delete/kept.txt');
    expect(existsSync(fileOf('plain/delete'))).toBe(false);
  });

  it('follows a write request that fails too: the key is brought in step with the store whatever the answer', async () => {
    await put('plain/failed/gone.txt', 'gone');
    expect(existsSync(fileOf('plain/failed/gone.txt'))).toBe(true);
    // As a request that removed the object and then failed would leave it: gone from the store only.
    rmSync(storeFileOf('plain/failed/gone.txt'));
    const refused = await s3()
      .send(
        new PutObjectCommand({
          Bucket: bucket(),
          Key: 'plain/failed/gone.txt',
          Body: 'never stored',
          ContentMD5: Buffer.alloc(16).toString('base64'),
        }),
      )
      .catch((error: unknown) => error as Error);
    expect((refused as Error).name).toBe('BadDigest');
    expect(existsSync(fileOf('plain/failed/gone.txt'))).toBe(false);
  });

  it('drops the files of DeleteObjects, and only those', async () => {
    const keys = ['plain/batch/one.txt', 'plain/batch/sub/two.txt', 'plain/batch/sub/three.txt'];
    for (const key of [...keys, 'plain/batch/stays.txt']) await put(key, key);
    const deleted = await s3().send(
      new DeleteObjectsCommand({ Bucket: bucket(), Delete: { Objects: keys.map((Key) => ({ Key })) } }),
    );
    expect(deleted.Deleted?.map((entry) => entry.Key).sort()).toEqual([...keys].sort());
    for (const key of keys) expect(existsSync(fileOf(key)), key).toBe(false);
    expect(existsSync(fileOf('plain/batch/sub'))).toBe(false);
    expect(readdirSync(fileOf('plain/batch'))).toEqual(['stays.txt']);
  });

  it('leaves out keys that cannot be files, without failing a request, and says so in the log', async () => {
    await put('clash/a', 'object a');
    await put('clash/a/b', 'object a/b');
    await put('clash/x/y', 'object x/y');
    await put('clash/x', 'object x');
    await put('clash/marker/', new Uint8Array(0));
    expect(Buffer.from(await getBytes(s3(), bucket(), 'clash/a/b')).toString()).toBe('object a/b');
    expect(Buffer.from(await getBytes(s3(), bucket(), 'clash/x')).toString()).toBe('object x');
    expect(readFileSync(fileOf('clash/a'), 'utf8')).toBe('object a');
    expect(readFileSync(fileOf('clash/x/y'), 'utf8')).toBe('object x/y');
    expect(readdirSync(fileOf('clash')).sort()).toEqual(['a', 'x']);
    for (const key of ['clash/a/b', 'clash/x', 'clash/marker/']) {
      expect(
        ctx.logs.some((line) => line.includes(`${bucket()}/${key} is left out`)),
        key,
      ).toBe(true);
    }
    for (const key of ['clash/a', 'clash/a/b', 'clash/x/y', 'clash/x', 'clash/marker/']) await remove(key);
    expect(existsSync(fileOf('clash'))).toBe(false);
  });

  it('holds a finished export that DuckDB reads with hive partitioning, without the tmp/ probe', async () => {
    const workspace = workspaceByTier(ctx.fixtures, 'plus');
    const session = workspace.sessions.find((candidate) => candidate.run_count < 50_000)!;
    const window = { start_time: '2026-10-01T00:00:00Z', end_time: '2026-10-03T00:00:00Z' };
    const prefix = 'view/warehouse';
    const client = ctx.api.as(workspace);
    await ctx.admin.request('POST', '/clock/set', { body: { time: '2026-10-10T00:00:00Z' } });
    // A key pair that may not delete leaves the validation probe in <prefix>/tmp/.
    const destination = await client.post('/api/v1/bulk-exports/destinations', {
      display_name: 'files view',
      config: { bucket_name: bucket(), prefix, endpoint_url: ctx.fixtures.objstore.endpoint_url },
      credentials: credentialsOf(createOnlyKey(ctx.fixtures)),
    });
    expect(destination.status).toBe(200);
    const created = await client.post('/api/v1/bulk-exports', {
      bulk_export_destination_id: destination.body.id,
      session_id: session.id,
      ...window,
      format_version: 'v2_beta',
      compression: 'snappy',
    });
    expect(created.status).toBe(200);
    await ctx.admin.request('POST', '/clock/advance', { body: { seconds: 0 } });
    expect((await client.get(`/api/v1/bulk-exports/${created.body.id}`)).body.status).toBe('Completed');
    const runs = (await client.get(`/api/v1/bulk-exports/${created.body.id}/runs`)).body as {
      metadata: { result: { rows_written: number; exported_files: string[] } };
    }[];
    const rowsWritten = runs.reduce((sum, run) => sum + run.metadata.result.rows_written, 0);
    const exportedFiles = runs.flatMap((run) => run.metadata.result.exported_files);
    expect(exportedFiles.length, 'several files').toBeGreaterThan(2);

    const glob = `${ctx.instance.filesDir}/${bucket()}/${prefix}/export_id=*/**/*.parquet`;
    const files = `read_parquet('${glob}', hive_partitioning = true)`;
    const matched = (await duckdb<{ file: string }>(`SELECT file FROM glob('${glob}') ORDER BY file`)).map(
      (row) => row.file,
    );
    expect(matched).toEqual(exportedFiles.map((file) => join(ctx.instance.filesDir!, file)).sort());
    const probes = readdirSync(fileOf(`${prefix}/tmp`));
    expect(probes).toHaveLength(1);
    expect(probes[0]).toMatch(/^[0-9a-f-]+\.txt$/);

    const expected = inWindow(seededRuns(session.id), window.start_time, window.end_time);
    const [{ rows }] = (await duckdb<{ rows: number }>(`SELECT count(*)::INTEGER AS rows FROM ${files}`)) as [
      { rows: number },
    ];
    expect(rows).toBe(rowsWritten);
    expect(rows).toBe(expected.length);
    const ids = await duckdb<{ id: string }>(`SELECT id FROM ${files} ORDER BY id`);
    expect(ids.map((row) => row.id)).toEqual(expected.map((run) => run.id).sort());
    const columns = (await duckdb<{ column_name: string }>(`DESCRIBE SELECT * FROM ${files}`)).map(
      (column) => column.column_name,
    );
    expect(columns).toEqual(
      expect.arrayContaining(['export_id', 'tenant_id', 'session_id', 'resource', 'year', 'month', 'day']),
    );
    const partitions = await duckdb(
      `SELECT DISTINCT export_id, tenant_id, session_id, day::INTEGER AS day FROM ${files} ORDER BY day`,
    );
    expect(partitions).toEqual(
      [1, 2].map((day) => ({ export_id: created.body.id, tenant_id: workspace.id, session_id: session.id, day })),
    );
  });

  it('is back to empty bucket folders after a reset', async () => {
    await put('plain/before-reset.txt', 'reset me');
    expect((await ctx.admin.request('POST', '/reset')).status).toBe(200);
    expect(readdirSync(ctx.instance.filesDir!).sort()).toEqual(allBuckets());
    for (const name of allBuckets()) expect(readdirSync(join(ctx.instance.filesDir!, name)), name).toEqual([]);
    await put('plain/after-reset.txt', 'after');
    expect(readFileSync(fileOf('plain/after-reset.txt'), 'utf8')).toBe('after');
  });
});

describe('the plain-file view of a kept --data-dir', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'localplane-files-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('is rebuilt from the store on start: missing files placed, stray ones removed', async () => {
    const first = await start({ port: 0, objstorePort: 0, dataDir, log: () => {} });
    const fixtures = (await new Api(`${first.apiUrl}/_localplane`).request<FixturesView>('GET', '/fixtures')).body;
    const name = fixtures.objstore.buckets[0]!;
    const body = randomBytes(4096);
    await s3For(first.objstoreUrl, fullKey(fixtures)).send(
      new PutObjectCommand({ Bucket: name, Key: 'kept/object.bin', Body: body }),
    );
    await first.stop();

    const files = join(dataDir, 'files');
    rmSync(join(files, name, 'kept'), { recursive: true });
    const stray = join(files, name, 'stray', 'no-such-object.txt');
    mkdirSync(dirname(stray), { recursive: true });
    writeFileSync(stray, 'not in the store');

    const second = await start({ port: 0, objstorePort: 0, dataDir, log: () => {} });
    try {
      expect(second.filesDir).toBe(files);
      expect(Buffer.compare(readFileSync(join(files, name, 'kept', 'object.bin')), body)).toBe(0);
      expect(existsSync(join(files, name, 'stray'))).toBe(false);
    } finally {
      await second.stop();
    }
  });
});
