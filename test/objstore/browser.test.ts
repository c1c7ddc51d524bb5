/**
 * The admin API's object browser (/_localplane/objstore/buckets...): objects put through the
 * real objstore over the S3 API, read back as the dashboard reads them: buckets with their
 * owners and sizes, pages of keys and folders as ListObjectsV2 gives them, search across a
 * whole bucket, an object's metadata as HeadObject shows it, and downloads. Keys of any shape
 * are read as their own keys; bucket names that are no bucket read nothing.
 */
import { createHash } from 'node:crypto';
import http from 'node:http';

import {
  CreateBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  type S3Client as Client,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { beforeAll, describe, expect, it } from 'vitest';

import { fullKey, useLocalplane, workspaceByTier, type ApiResponse } from '../support/instance.ts';
import { getBytes, s3For } from '../support/objstore.ts';

const ctx = useLocalplane();
let s3: Client;
const BUCKET = 'warehouse-landing';

const put = (
  key: string,
  body: string | Buffer,
  extra: Partial<ConstructorParameters<typeof PutObjectCommand>[0]> = {},
  bucket = BUCKET,
) => s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ...extra }));

const objectsPath = (bucket: string, query: Record<string, string | number>) => {
  const search = new URLSearchParams(Object.entries(query).map(([name, value]) => [name, String(value)]));
  return `/objstore/buckets/${encodeURIComponent(bucket)}/objects?${search}`;
};
const objectPath = (key: string, bucket = BUCKET) =>
  `/objstore/buckets/${encodeURIComponent(bucket)}/object?key=${encodeURIComponent(key)}`;
const contentPath = (key: string, bucket = BUCKET) =>
  `/objstore/buckets/${encodeURIComponent(bucket)}/object/content?key=${encodeURIComponent(key)}`;

interface Page {
  objects: { key: string; size: number; etag: string; last_modified: string }[];
  prefixes: string[];
  next_cursor: string | null;
}

/** Every page of a listing, followed by its cursors. */
async function allPages(bucket: string, query: Record<string, string | number>): Promise<Page[]> {
  const pages: Page[] = [];
  let cursor: string | null = null;
  do {
    const reply: ApiResponse<Page> = await ctx.admin.request<Page>(
      'GET',
      objectsPath(bucket, cursor === null ? query : { ...query, cursor }),
    );
    expect(reply.status, reply.text).toBe(200);
    pages.push(reply.body);
    cursor = reply.body.next_cursor;
  } while (cursor !== null);
  return pages;
}

/** What ListObjectsV2 lists under a prefix with a delimiter: the keys and the common prefixes, each in order. */
async function s3Listing(
  bucket: string,
  prefix: string,
  delimiter: string,
): Promise<{ keys: string[]; prefixes: string[] }> {
  const keys: string[] = [];
  const prefixes: string[] = [];
  let token: string | undefined;
  do {
    const page = await s3.send(
      new ListObjectsV2Command({
        Bucket: bucket,
        Prefix: prefix,
        Delimiter: delimiter || undefined,
        ContinuationToken: token,
      }),
    );
    keys.push(...(page.Contents ?? []).map((object) => object.Key!));
    prefixes.push(...(page.CommonPrefixes ?? []).map((common) => common.Prefix!));
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return { keys, prefixes };
}

/** A GET with the path sent exactly as written (fetch would resolve `..` and `%2E%2E` first). */
function rawGet(path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(`${ctx.instance.apiUrl}${path}`, { path }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode!, body: Buffer.concat(chunks).toString() }));
      })
      .on('error', reject);
  });
}

const EXPORT_ID = '0b6a4d0e-3c9f-4f5e-9b7a-2d1c0e8f7a61';
const EXPORT_KEYS = [
  `lake/export_id=${EXPORT_ID}/tenant_id=t1/session_id=s1/day=2026-11-01/runs-0.parquet`,
  `lake/export_id=${EXPORT_ID}/tenant_id=t1/session_id=s1/day=2026-11-02/runs-0.parquet`,
  `lake/export_id=${EXPORT_ID}/tenant_id=t1/session_id=s1/day=2026-11-02/runs-1.parquet`,
  'lake/tmp/probe-1.txt',
  'lake/README.md',
  'top-level.json',
];

beforeAll(async () => {
  s3 = s3For(ctx.instance.objstoreUrl, fullKey(ctx.fixtures));
  for (const key of EXPORT_KEYS) await put(key, `content of ${key}`);
});

describe('GET /_localplane/objstore/buckets', () => {
  it('lists every bucket in name order, with its owner, region, object count and bytes', async () => {
    const workspace = workspaceByTier(ctx.fixtures, 'plus');
    const key = { access_key_id: 'LPBROWSERWORKSPACE01', secret_access_key: 'browser-workspace-secret-01' };
    expect(
      (
        await ctx.admin.request('POST', '/objstore/keys', {
          body: { ...key, permissions: ['create', 'get', 'buckets'], workspace_id: workspace.id },
        })
      ).status,
    ).toBe(201);
    const own = s3For(ctx.instance.objstoreUrl, { ...key, permissions: [] });
    await own.send(
      new CreateBucketCommand({
        Bucket: 'browser-own-bucket',
        CreateBucketConfiguration: { LocationConstraint: 'eu-west-2' },
      }),
    );
    await own.send(new PutObjectCommand({ Bucket: 'browser-own-bucket', Key: 'a.txt', Body: 'abc' }));
    await own.send(new PutObjectCommand({ Bucket: 'browser-own-bucket', Key: 'b/c.txt', Body: 'defgh' }));

    const reply = await ctx.admin.request('GET', '/objstore/buckets');
    expect(reply.status, reply.text).toBe(200);
    const buckets = reply.body.buckets as { name: string }[];
    expect(buckets.map((bucket) => bucket.name)).toEqual([...buckets.map((bucket) => bucket.name)].sort());
    expect(buckets.map((bucket) => bucket.name)).toEqual(
      expect.arrayContaining([...ctx.fixtures.objstore.buckets, 'browser-own-bucket']),
    );
    const byName = new Map(buckets.map((bucket) => [bucket.name, bucket]));
    expect(byName.get('browser-own-bucket')).toEqual({
      name: 'browser-own-bucket',
      created_at: expect.any(String),
      workspace_id: workspace.id,
      region: 'eu-west-2',
      configured: false,
      public: false,
      workspace_folders: false,
      object_count: 2,
      bytes: 8,
    });
    const sizes = EXPORT_KEYS.map((exported) => Buffer.byteLength(`content of ${exported}`));
    expect(byName.get(BUCKET)).toMatchObject({
      workspace_id: null,
      configured: true,
      region: 'us-east-1',
      object_count: EXPORT_KEYS.length,
      bytes: sizes.reduce((a, b) => a + b),
    });
    expect(byName.get('public-datasets')).toMatchObject({ public: true });
    expect(byName.get('localplane-deployment-sources')).toMatchObject({ workspace_folders: true });
  });
});

describe('GET /_localplane/objstore/buckets/{bucket}/objects', () => {
  it.each([
    ['', '/'],
    ['lake/', '/'],
    [`lake/export_id=${EXPORT_ID}/`, '/'],
    [`lake/export_id=${EXPORT_ID}/tenant_id=t1/session_id=s1/`, '/'],
    ['lake/', ''],
    ['lake/export_id=', '/'],
  ])(
    'prefix %j, delimiter %j: the keys and folders ListObjectsV2 gives, in its order, hive partitions as stored',
    async (prefix, delimiter) => {
      const expected = await s3Listing(BUCKET, prefix, delimiter);
      const [page] = await allPages(BUCKET, { prefix, delimiter });
      expect(page!.objects.map((object) => object.key)).toEqual(expected.keys);
      expect(page!.prefixes).toEqual(expected.prefixes);
      expect(page!.next_cursor).toBeNull();
    },
  );

  it('hive partitions are read as stored (export_id=…, day=…), never percent-encoded', async () => {
    const [page] = await allPages(BUCKET, {
      prefix: `lake/export_id=${EXPORT_ID}/tenant_id=t1/session_id=s1/`,
      delimiter: '/',
    });
    expect(page!.prefixes).toEqual([
      `lake/export_id=${EXPORT_ID}/tenant_id=t1/session_id=s1/day=2026-11-01/`,
      `lake/export_id=${EXPORT_ID}/tenant_id=t1/session_id=s1/day=2026-11-02/`,
    ]);
  });

  it('pages of `limit` entries (objects and folders alike) follow one another by their cursors to the same listing', async () => {
    const whole = await s3Listing(BUCKET, 'lake/', '');
    const pages = await allPages(BUCKET, { prefix: 'lake/', limit: 2 });
    expect(pages.map((page) => page.objects.length)).toEqual([2, 2, 1]);
    expect(pages.flatMap((page) => page.objects.map((object) => object.key))).toEqual(whole.keys);

    const delimited = await allPages(BUCKET, { prefix: 'lake/', delimiter: '/', limit: 1 });
    expect(delimited.map((page) => [...page.prefixes, ...page.objects.map((object) => object.key)])).toEqual([
      ['lake/README.md'],
      [`lake/export_id=${EXPORT_ID}/`],
      ['lake/tmp/'],
    ]);
  });

  it("lists each object's size, ETag and last modified as ListObjectsV2 does", async () => {
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'lake/' }));
    const [page] = await allPages(BUCKET, { prefix: 'lake/' });
    expect(page!.objects).toEqual(
      listed.Contents!.map((object) => ({
        key: object.Key,
        size: object.Size,
        etag: object.ETag,
        last_modified: object.LastModified!.toISOString(),
      })),
    );
  });

  it(
    'search finds keys holding the text, in any case, across the whole bucket (not only the first page), paged ' +
      'by its cursor',
    async () => {
      const bucket = 'browser-search';
      await s3.send(new CreateBucketCommand({ Bucket: bucket }));
      const keys = Array.from({ length: 150 }, (_, index) => `runs/part-${String(index).padStart(3, '0')}.parquet`);
      keys[140] = 'runs/zz/Needle-In-A-Haystack.parquet';
      keys[145] = 'runs/zz/another-needle.json';
      await Promise.all(keys.map((key) => put(key, 'x', {}, bucket)));

      const [firstPage] = await allPages(bucket, { prefix: 'runs/' });
      expect(firstPage!.objects).toHaveLength(100);
      expect(firstPage!.objects.map((object) => object.key)).not.toContain(keys[140]);

      const found = await allPages(bucket, { search: 'NEEDLE', limit: 1 });
      expect(found.map((page) => page.objects.map((object) => object.key))).toEqual([[keys[140]], [keys[145]]]);
      // A delimiter does not hide what is found in folders: the search lists keys flat.
      const [flat] = await allPages(bucket, { search: 'needle', delimiter: '/' });
      expect(flat!.objects.map((object) => object.key)).toEqual([keys[140], keys[145]]);
      expect(flat!.prefixes).toEqual([]);
      // Within a prefix only; an empty search is no search.
      expect((await allPages(bucket, { prefix: 'runs/part-', search: 'needle' }))[0]!.objects).toEqual([]);
      expect(
        (await allPages(bucket, { prefix: 'runs/', delimiter: '/', search: '' })).flatMap((page) => page.prefixes),
      ).toEqual(['runs/zz/']);
    },
  );

  it('refuses a cursor no page gave, and a limit out of 1..1000, with 422', async () => {
    const queries: Record<string, string | number>[] = [
      { cursor: 'not a cursor' },
      { cursor: '' },
      { limit: 0 },
      { limit: 1001 },
      { limit: 'ten' },
    ];
    for (const query of queries) {
      const reply = await ctx.admin.request('GET', objectsPath(BUCKET, query));
      expect(reply.status, reply.text).toBe(422);
      expect(reply.body.detail[0].loc).toEqual(['query', Object.keys(query)[0]]);
    }
  });

  it('answers 404 {"detail"} for a bucket that does not exist', async () => {
    const reply = await ctx.admin.request('GET', objectsPath('no-such-bucket', {}));
    expect(reply.status).toBe(404);
    expect(reply.body).toEqual({ detail: 'Bucket no-such-bucket not found' });
  });
});

describe('GET /_localplane/objstore/buckets/{bucket}/object', () => {
  it(
    'shows what HeadObject shows: size, ETag, checksums by algorithm, content type, user metadata, stored ' +
      'headers, last modified',
    async () => {
      const body = Buffer.from('{"hello": "world"}');
      await put('meta/doc.json', body, {
        ContentType: 'application/json',
        CacheControl: 'max-age=60',
        ContentLanguage: 'en',
        // Non-ASCII metadata travels RFC 2047-encoded (the SDK sends no other header bytes); it reads back as text.
        Metadata: { owner: 'team-a', note: `=?UTF-8?B?${Buffer.from('café ✓').toString('base64')}?=` },
        ChecksumAlgorithm: 'SHA256',
      });
      const head = await s3.send(
        new HeadObjectCommand({ Bucket: BUCKET, Key: 'meta/doc.json', ChecksumMode: 'ENABLED' }),
      );

      const reply = await ctx.admin.request('GET', objectPath('meta/doc.json'));
      expect(reply.status, reply.text).toBe(200);
      expect(reply.body).toEqual({
        bucket: BUCKET,
        key: 'meta/doc.json',
        size: body.length,
        etag: `"${createHash('md5').update(body).digest('hex')}"`,
        last_modified: head.LastModified!.toISOString(),
        content_type: 'application/json',
        storage_class: 'STANDARD',
        headers: { 'cache-control': 'max-age=60', 'content-language': 'en' },
        user_metadata: { owner: 'team-a', note: 'café ✓' },
        checksums: { SHA256: createHash('sha256').update(body).digest('base64') },
        checksum_type: 'FULL_OBJECT',
        parts_count: null,
      });
      expect(reply.body.etag).toBe(head.ETag);
      expect(reply.body.checksums.SHA256).toBe(head.ChecksumSHA256);
    },
  );

  it('an object put without a checksum: the CRC64NVME S3 gives it', async () => {
    await put('meta/plain.bin', Buffer.from([0, 1, 2]));
    const head = await s3.send(
      new HeadObjectCommand({ Bucket: BUCKET, Key: 'meta/plain.bin', ChecksumMode: 'ENABLED' }),
    );
    const reply = await ctx.admin.request('GET', objectPath('meta/plain.bin'));
    expect(reply.body).toMatchObject({
      content_type: head.ContentType,
      checksums: { CRC64NVME: head.ChecksumCRC64NVME },
      checksum_type: 'FULL_OBJECT',
      user_metadata: {},
      headers: {},
    });
  });

  it('a multipart object: its part count, multipart ETag and COMPOSITE checksum', async () => {
    const client = new S3Client({
      endpoint: ctx.instance.objstoreUrl,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: {
        accessKeyId: fullKey(ctx.fixtures).access_key_id,
        secretAccessKey: fullKey(ctx.fixtures).secret_access_key,
      },
    });
    const body = Buffer.alloc(6 * 1024 * 1024, 'p');
    await new Upload({
      client,
      params: { Bucket: BUCKET, Key: 'meta/parts.bin', Body: body },
      partSize: 5 * 1024 * 1024,
    }).done();
    const head = await client.send(
      new HeadObjectCommand({ Bucket: BUCKET, Key: 'meta/parts.bin', ChecksumMode: 'ENABLED' }),
    );

    const reply = await ctx.admin.request('GET', objectPath('meta/parts.bin'));
    expect(reply.body).toMatchObject({
      size: body.length,
      etag: head.ETag,
      parts_count: 2,
      checksums: { CRC32: head.ChecksumCRC32 },
      checksum_type: 'COMPOSITE',
    });
    expect(reply.body.etag).toMatch(/-2"$/);
  });

  it('answers 404 {"detail"} for a missing key or bucket, and 422 for no key, an empty one or one over 1,024 bytes', async () => {
    expect(await ctx.admin.request('GET', objectPath('meta/none'))).toMatchObject({
      status: 404,
      body: { detail: `Object meta/none not found in bucket ${BUCKET}` },
    });
    expect(await ctx.admin.request('GET', objectPath('meta/doc.json', 'no-such-bucket'))).toMatchObject({
      status: 404,
      body: { detail: 'Bucket no-such-bucket not found' },
    });
    // A key that names a folder of keys is no object.
    expect((await ctx.admin.request('GET', objectPath('lake'))).status).toBe(404);
    for (const [path, type] of [
      [`/objstore/buckets/${BUCKET}/object`, 'missing'],
      [objectPath(''), 'string_too_short'],
      [objectPath('k'.repeat(1025)), 'value_error'],
      [objectPath('é'.repeat(513)), 'value_error'],
    ] as const) {
      const reply = await ctx.admin.request('GET', path);
      expect(reply.status, reply.text).toBe(422);
      expect(reply.body.detail).toMatchObject([{ type, loc: ['query', 'key'] }]);
    }
  });
});

describe('GET /_localplane/objstore/buckets/{bucket}/object/content', () => {
  it('downloads the content with its type, ETag and an attachment named after the key', async () => {
    const body = Buffer.from('day,runs\n2026-11-01,3\n');
    const { ETag } = await put('lake/report.csv', body, { ContentType: 'text/csv' });
    const response = await fetch(`${ctx.instance.apiUrl}/_localplane${contentPath('lake/report.csv')}`);
    expect(response.status).toBe(200);
    expect(Buffer.from(await response.arrayBuffer()).equals(body)).toBe(true);
    expect(
      Object.fromEntries(
        ['content-type', 'content-length', 'content-disposition', 'etag', 'x-content-type-options'].map((name) => [
          name,
          response.headers.get(name),
        ]),
      ),
    ).toEqual({
      'content-type': 'text/csv',
      'content-length': String(body.length),
      'content-disposition': `attachment; filename="report.csv"; filename*=UTF-8''report.csv`,
      etag: ETag,
      'x-content-type-options': 'nosniff',
    });
  });

  it('a key with quotes, a backslash and unicode gets a safe ASCII filename beside its UTF-8 name', async () => {
    await put('odd/"quoted"\\ rapport é.txt', 'x');
    const response = await fetch(`${ctx.instance.apiUrl}/_localplane${contentPath('odd/"quoted"\\ rapport é.txt')}`);
    expect(response.headers.get('content-disposition')).toBe(
      `attachment; filename="_quoted__ rapport _.txt"; filename*=UTF-8''%22quoted%22%5C%20rapport%20%C3%A9.txt`,
    );
    await response.arrayBuffer();
  });

  it('answers 404 {"detail"} for a missing object', async () => {
    const reply = await ctx.admin.request('GET', contentPath('lake/none.csv'));
    expect(reply).toMatchObject({
      status: 404,
      body: { detail: `Object lake/none.csv not found in bucket ${BUCKET}` },
    });
  });
});

describe('keys of any shape, and names that are no bucket', () => {
  const HOSTILE_KEYS = [
    'a/../b',
    '../../../../etc/passwd',
    './x',
    'a//b',
    'literal%2Fslash',
    'literal%2E%2E/up',
    'with spaces and + plus',
    'unicode/日本語/ключ/🙂.txt',
    'ends-with-slash/',
    `long/${'k'.repeat(1019)}`,
  ];

  beforeAll(async () => {
    await put('b', 'the key b');
    await put('etc/passwd', 'not the system file');
    for (const key of HOSTILE_KEYS) await put(key, `body of ${key}`, {}, BUCKET);
  });

  it.each(HOSTILE_KEYS)(
    '%j: its metadata and content are its own, never another key or a file outside the store',
    async (key) => {
      expect(Buffer.byteLength(key)).toBeLessThanOrEqual(1024);
      const described = await ctx.admin.request('GET', objectPath(key));
      expect(described.status, described.text).toBe(200);
      expect(described.body).toMatchObject({ key, size: Buffer.byteLength(`body of ${key}`) });
      const response = await fetch(`${ctx.instance.apiUrl}/_localplane${contentPath(key)}`);
      expect(await response.text()).toBe(`body of ${key}`);
      expect(Buffer.from(await getBytes(s3, BUCKET, key)).toString()).toBe(`body of ${key}`);
    },
  );

  it('lists them and finds them by search as stored', async () => {
    const pages = await allPages(BUCKET, {});
    const listed = pages.flatMap((page) => page.objects.map((object) => object.key));
    expect(listed).toEqual(expect.arrayContaining(HOSTILE_KEYS));
    expect(listed).toEqual((await s3Listing(BUCKET, '', '')).keys);
    const [found] = await allPages(BUCKET, { search: '%2f' });
    expect(found!.objects.map((object) => object.key)).toEqual(['literal%2Fslash']);
    const [up] = await allPages(BUCKET, { prefix: '../', delimiter: '/' });
    expect(up!.prefixes).toEqual(['../../']);
  });

  it.each([
    '/_localplane/objstore/buckets/../objects',
    '/_localplane/objstore/buckets/%2E%2E/objects',
    '/_localplane/objstore/buckets/..%2F..%2F..%2Fetc/objects',
    '/_localplane/objstore/buckets/%2E%2E/object?key=objstore/warehouse-landing/b._S3rver_object',
    '/_localplane/objstore/buckets/%2E%2E%2Fobjstore%2Fwarehouse-landing/object/content?key=b',
    '/_localplane/objstore/buckets/warehouse-landing%2F..%2Fexports/object/content?key=b',
    '/_localplane/objstore/buckets/%2Fetc/object/content?key=passwd',
  ])('%s: 404, never a file outside the bucket', async (path) => {
    const { status, body } = await rawGet(path);
    expect(status).toBe(404);
    expect(body).not.toContain('the key b');
    expect(body).not.toContain('root:');
  });
});
