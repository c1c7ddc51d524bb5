/**
 * Any key S3 takes is a key like any other: names of the store's own files in it (s3rver's
 * `._S3rver_` sidecar suffixes, its uploads folder, the temporary `.incoming-` files), segments
 * longer than a file name, `.`, `..` and empty segments, NUL. Each is stored, listed as sent,
 * copied, uploaded in parts and deleted, never disturbs another key (another account's in a
 * shared bucket), survives a snapshot and a restart, and the plain-file view shows keys' own
 * names only. A key over 1,024 bytes is S3's KeyTooLongError.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import {
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  GetObjectTaggingCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  PutObjectTaggingCommand,
  type S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { start } from '../../src/index.ts';
import { Api, fullKey, useLocalplane, workspaceByTier, type FixturesView } from '../support/instance.ts';
import { s3For } from '../support/objstore.ts';

const ctx = useLocalplane();
/** The fixtures' shared account. */
let shared: S3Client;
/** A workspace's own account, using the same shared bucket. */
let workspace: S3Client;
const BUCKET = 'shared-hostile-keys';

const WORKSPACE_KEY = { access_key_id: 'LPHOSTILEKEYS000001', secret_access_key: 'hostile-keys-secret-0001' };

beforeAll(async () => {
  shared = s3For(ctx.instance.objstoreUrl, fullKey(ctx.fixtures));
  const added = await ctx.admin.request('POST', '/objstore/keys', {
    body: {
      ...WORKSPACE_KEY,
      permissions: ['create', 'delete', 'get', 'multipart'],
      workspace_id: workspaceByTier(ctx.fixtures, 'plus').id,
    },
  });
  expect(added.status, added.text).toBe(201);
  workspace = s3For(ctx.instance.objstoreUrl, { ...WORKSPACE_KEY, permissions: [] });
  // A bucket the shared account creates is every account's.
  await shared.send(new CreateBucketCommand({ Bucket: BUCKET }));
});

const put = (client: S3Client, key: string, body: string, bucket = BUCKET) =>
  client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));

async function bodyOf(client: S3Client, key: string, bucket = BUCKET): Promise<string> {
  return (await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }))).Body!.transformToString();
}

/**
 * Every key of the bucket, as listed with `encoding-type=url` (so control characters and NUL survive the XML) and
 * decoded.
 */
async function listed(client: S3Client, bucket = BUCKET, prefix?: string): Promise<string[]> {
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const page = await client.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, EncodingType: 'url', ContinuationToken: token }),
    );
    keys.push(...(page.Contents ?? []).map((object) => decodeURIComponent(object.Key!)));
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return keys;
}

const sorted = (keys: readonly string[]) => [...keys].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));

/** A multipart upload of two parts onto `key`; answers the object's body. */
async function uploadInParts(client: S3Client, key: string, bucket = BUCKET): Promise<string> {
  const { UploadId } = await client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key }));
  const first = 'a'.repeat(5 * 1024 * 1024);
  const parts = [];
  for (const [index, body] of [first, 'last part'].entries()) {
    const { ETag } = await client.send(
      new UploadPartCommand({ Bucket: bucket, Key: key, UploadId, PartNumber: index + 1, Body: body }),
    );
    parts.push({ ETag, PartNumber: index + 1 });
  }
  await client.send(
    new CompleteMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId, MultipartUpload: { Parts: parts } }),
  );
  return `${first}last part`;
}

/** Put, head, get, list, copy (both ways), tagging, multipart, delete: the whole round trip of one key. */
async function expectRoundTrip(client: S3Client, key: string, bucket = BUCKET): Promise<void> {
  const body = `body of ${JSON.stringify(key)}`;
  await put(client, key, body, bucket);
  expect((await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }))).ContentLength, key).toBe(
    Buffer.byteLength(body),
  );
  expect(await bodyOf(client, key, bucket), key).toBe(body);
  expect(await listed(client, bucket, key), key).toContain(key);

  const copySource = (source: string) => `${bucket}/${encodeURIComponent(source)}`;
  await client.send(new CopyObjectCommand({ Bucket: bucket, Key: 'copied', CopySource: copySource(key) }));
  expect(await bodyOf(client, 'copied', bucket), key).toBe(body);
  await put(client, 'source', 'copied onto the key', bucket);
  await client.send(new CopyObjectCommand({ Bucket: bucket, Key: key, CopySource: copySource('source') }));
  expect(await bodyOf(client, key, bucket), key).toBe('copied onto the key');

  await client.send(
    new PutObjectTaggingCommand({ Bucket: bucket, Key: key, Tagging: { TagSet: [{ Key: 'kind', Value: 'hostile' }] } }),
  );
  expect((await client.send(new GetObjectTaggingCommand({ Bucket: bucket, Key: key }))).TagSet, key).toEqual([
    { Key: 'kind', Value: 'hostile' },
  ]);

  const joined = await uploadInParts(client, key, bucket);
  expect(await bodyOf(client, key, bucket), key).toBe(joined);

  await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
  expect(await listed(client, bucket, key), key).not.toContain(key);
  for (const other of ['copied', 'source']) await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: other }));
}

/**
 * Names of the store's own files, in keys: sidecar suffixes as folders and names, its uploads folder, its temporary
 * files.
 */
const LAYOUT_NAMES = [
  'report.csv._S3rver_object/x',
  'm._S3rver_metadata.json/x',
  'n._S3rver_object.md5/x',
  't._S3rver_tagging.xml/x',
  '._S3rver_uploads/x',
  '._S3rver_uploads',
  '._S3rver_cors.xml/x',
  'name._S3rver_object',
  'p.md5',
  '1.md5',
  '.incoming-6d7f0a1e-0000-4000-8000-000000000000',
  '%%',
  '%+/x',
];

describe("keys holding the store's own file names", () => {
  it(
    "never spoil another account's keys in a shared bucket: every later PutObject of report.csv, m, n and t " +
      'answers 200',
    async () => {
      for (const key of LAYOUT_NAMES) await put(workspace, key, `workspace's ${key}`);
      for (const key of ['report.csv', 'm', 'n', 't', 'name', 'p']) {
        await put(shared, key, `shared ${key}`);
        expect(await bodyOf(workspace, key)).toBe(`shared ${key}`);
      }
      for (const key of LAYOUT_NAMES) expect(await bodyOf(shared, key)).toBe(`workspace's ${key}`);
      expect(await listed(shared)).toEqual(sorted([...LAYOUT_NAMES, 'report.csv', 'm', 'n', 't', 'name', 'p']));
    },
  );

  it('are shown by the plain-file view under their own names, never the names the store keeps them under', () => {
    const folder = join(ctx.instance.filesDir!, BUCKET);
    expect(readFileSync(join(folder, 'report.csv'), 'utf8')).toBe('shared report.csv');
    expect(readFileSync(join(folder, 'report.csv._S3rver_object', 'x'), 'utf8')).toBe(
      "workspace's report.csv._S3rver_object/x",
    );
    const files = readdirSync(folder, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile());
    const keys = files.map((entry) => join(entry.parentPath, entry.name).slice(folder.length + 1));
    // '._S3rver_uploads' is both a key and a folder of another key's: the view shows whichever came first.
    expect(sorted(keys)).toEqual(
      sorted([...LAYOUT_NAMES, 'report.csv', 'm', 'n', 't', 'name', 'p'].filter((key) => key !== '._S3rver_uploads')),
    );
  });

  it.each(LAYOUT_NAMES)('%s: put, head, get, list, copy, tagging, multipart and delete', async (key) => {
    await expectRoundTrip(workspace, `round-trip/${key}`);
    await expectRoundTrip(workspace, key);
    await put(workspace, key, `workspace's ${key}`);
  });
});

describe('long keys', () => {
  const LONG_KEYS = [
    'a'.repeat(240),
    `${'b'.repeat(241)}/x`,
    `${'c'.repeat(255)}/${'d'.repeat(255)}`,
    `${'e'.repeat(256)}/${'f'.repeat(256)}`,
    'g'.repeat(1024),
    'é'.repeat(512),
    `${'h/'.repeat(300)}end`,
    `${'%'.repeat(1000)}/${'.'.repeat(23)}`,
    `${'😀'.repeat(200)}/${'x'.repeat(223)}`,
  ];

  it.each(LONG_KEYS.map((key) => [Buffer.byteLength(key), key] as const))(
    '%i bytes: put, head, get, list, copy, tagging, multipart and delete',
    async (bytes, key) => {
      expect(bytes).toBeLessThanOrEqual(1024);
      await expectRoundTrip(shared, key);
    },
  );

  it("a key over 1,024 bytes is S3's KeyTooLongError, for every operation that names one", async () => {
    const key = 'k'.repeat(1025);
    const refusals = [
      () => put(shared, key, 'x'),
      () => shared.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: key })),
      () => shared.send(new CopyObjectCommand({ Bucket: BUCKET, Key: key, CopySource: `${BUCKET}/anything` })),
      () => shared.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'é'.repeat(513) })),
    ];
    for (const refusal of refusals)
      await expect(refusal()).rejects.toMatchObject({ $metadata: { httpStatusCode: 400 } });
    await expect(put(shared, key, 'x')).rejects.toMatchObject({ name: 'KeyTooLongError' });
  });

  it('the plain-file view shows segments up to 255 bytes, and leaves longer ones out (and logs them)', async () => {
    const fits = `${'c'.repeat(255)}/${'d'.repeat(255)}`;
    const tooLong = `${'e'.repeat(256)}/y`;
    await put(shared, fits, 'fits');
    await put(shared, tooLong, 'too long');
    expect(readFileSync(join(ctx.instance.filesDir!, BUCKET, ...fits.split('/')), 'utf8')).toBe('fits');
    expect(ctx.logs.some((line) => line.includes(tooLong) && line.includes('longer than a file name'))).toBe(true);
    expect(await bodyOf(shared, tooLong)).toBe('too long');
  });
});

describe("'.', '..' and empty segments, NUL, control and URL-reserved characters", () => {
  const KEYS = [
    '.',
    '..',
    './x',
    '../x',
    'a/./b',
    'a/../b',
    'a/..',
    '../../../../etc/escaped',
    'a//b',
    '/leading',
    '//',
    'nul\0key',
    'line\nbreak\ttab\u001b[31m',
    '\u202eevil',
    'export_id=1/a+b&c?d#e;f:g@h$i,j%25k',
  ];

  it.each(KEYS)('%j: put, head, get, list, copy, tagging, multipart and delete, inside the bucket', async (key) => {
    await expectRoundTrip(shared, key);
    expect(existsSync(join(ctx.instance.dataDir, 'etc'))).toBe(false);
    expect(existsSync(join(ctx.instance.dataDir, 'objstore', 'etc'))).toBe(false);
  });

  it(
    'the plain-file view leaves out keys that cannot be files (and logs them), and holds nothing outside the ' +
      'bucket folder',
    async () => {
      for (const key of ['a/../b', 'a//b', 'nul\0key', '..']) await put(shared, key, key);
      for (const reason of ["an empty, '.' or '..' segment names no file", 'a file name cannot hold NUL']) {
        expect(ctx.logs.some((line) => line.includes(reason))).toBe(true);
      }
      expect(readdirSync(ctx.instance.filesDir!).sort()).toEqual(
        [...ctx.fixtures.objstore.buckets, BUCKET, 'localplane-deployment-sources'].sort(),
      );
    },
  );
});

describe('the store kept across a snapshot and a restart', () => {
  const KEPT = ['report.csv._S3rver_object/x', 'report.csv', `${'l'.repeat(700)}/x`, 'a/../b', '%%'];
  const scratch = mkdtempSync(join(tmpdir(), 'localplane-hostile-keys-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('restores every key with its bytes from a snapshot', async () => {
    const bucket = ctx.fixtures.objstore.buckets[0]!;
    for (const key of KEPT) await put(shared, `kept/${key}`, `kept ${key}`, bucket);
    expect((await ctx.admin.request('POST', '/snapshot', { body: { name: 'keys.lps' } })).status).toBe(200);
    await ctx.admin.request('POST', '/reset');
    expect(await listed(shared, bucket, 'kept/')).toEqual([]);
    expect((await ctx.admin.request('POST', '/restore', { body: { name: 'keys.lps' } })).status).toBe(200);
    expect(await listed(shared, bucket, 'kept/')).toEqual(sorted(KEPT.map((key) => `kept/${key}`)));
    for (const key of KEPT) expect(await bodyOf(shared, `kept/${key}`, bucket)).toBe(`kept ${key}`);
  });

  it('reads every key back after a restart on the same --data-dir', async () => {
    const dataDir = join(scratch, 'data');
    const first = await start({ port: 0, objstorePort: 0, dataDir, log: () => {} });
    const fixtures = (await new Api(`${first.apiUrl}/_localplane`).request<FixturesView>('GET', '/fixtures')).body;
    const bucket = fixtures.objstore.buckets[0]!;
    const before = s3For(first.objstoreUrl, fullKey(fixtures));
    for (const key of KEPT) await put(before, key, `kept ${key}`, bucket);
    before.destroy();
    await first.stop();

    const second = await start({ port: 0, objstorePort: 0, dataDir, log: () => {} });
    try {
      const after = s3For(second.objstoreUrl, fullKey(fixtures));
      expect(await listed(after, bucket)).toEqual(sorted(KEPT));
      for (const key of KEPT) expect(await bodyOf(after, key, bucket)).toBe(`kept ${key}`);
      expect(readFileSync(join(second.filesDir!, bucket, 'report.csv._S3rver_object', 'x'), 'utf8')).toBe(
        'kept report.csv._S3rver_object/x',
      );
      after.destroy();
    } finally {
      await second.stop();
    }
  });
});
