import { createHash } from 'node:crypto';

import {
  CreateMultipartUploadCommand,
  HeadObjectCommand,
  ListObjectsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  PutObjectTaggingCommand,
  type S3Client,
  UploadPartCommand,
  paginateListObjectsV2,
  type ListObjectsV2CommandInput,
  type ListObjectsV2CommandOutput,
} from '@aws-sdk/client-s3';
import { SignatureV4 } from '@smithy/signature-v4';
import { beforeAll, describe, expect, it } from 'vitest';

import type { ObjstoreKey } from '../../src/objstore/index.ts';
import {
  CHECKSUMS_WHEN_REQUIRED,
  failure,
  forEachStorage,
  NodeSha256,
  useObjstore,
} from '../support/objstore-server.ts';

const BUCKET = 'exports';
const OTHER_BUCKET = 'other';

const FULL: ObjstoreKey = {
  accessKeyId: 'LPLISTFULL000001',
  secretAccessKey: 'list-full-secret-0123456789abcdefghijk',
  permissions: ['create', 'delete', 'get', 'multipart'],
};

const EXPORT_IDS = [
  '0b7a4f0e-3f8e-4c1e-9a57-2d1b7c9e0a11',
  '5d2c9a61-8b4f-4e0a-b7c3-91f0e6a2d344',
  'c41e7b90-1a2d-4f3b-8e6c-7d5a0b9f1e22',
];

/** A hive layout: common prefixes `exports/export_id=<uuid>/` beside a few plain keys. */
const HIVE_KEYS = [
  'exports/manifest.json',
  ...EXPORT_IDS.flatMap((id) => [
    `exports/export_id=${id}.marker`,
    `exports/export_id=${id}/tenant=acme/part-00000.parquet`,
    `exports/export_id=${id}/tenant=acme/part-00001.parquet`,
    `exports/export_id=${id}/tenant=globex/part-00000.parquet`,
  ]),
];

/**
 * Names whose S3 order differs from directory order or from JavaScript's UTF-16 order
 * ('-' < '.' < '/' < '0'; U+FF61 before U+1F600 in UTF-8), and names url-encoding changes.
 */
const ODD_KEYS = [
  'odd/a',
  'odd/a-b',
  'odd/a.b',
  'odd/a/b',
  'odd/a0',
  'odd/a b.txt',
  'odd/a+b.txt',
  'odd/100%.csv',
  'odd/folder/',
  'odd/ü.txt',
  'odd/日本.txt',
  'odd/\uFF61.txt',
  'odd/😀.txt',
];

const RUN_KEYS = Array.from({ length: 2580 }, (_, i) => {
  const day = String(Math.floor(i / 215) + 1).padStart(2, '0');
  return `runs/day=${day}/run-${String(i % 215).padStart(4, '0')}.json`;
});

const ALL_KEYS = ['README.md', ...HIVE_KEYS, ...ODD_KEYS, ...RUN_KEYS];

const utf8Order = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));
const SORTED_KEYS = [...ALL_KEYS].sort(utf8Order);

forEachStorage((storage) => {
  const ctx = useObjstore({
    directoryPrefix: 'objstore-listing-',
    keys: [FULL],
    buckets: [BUCKET, OTHER_BUCKET],
    clientConfig: CHECKSUMS_WHEN_REQUIRED,
    storage,
  });
  let client: S3Client;

  async function putAll(keys: readonly string[], concurrency = 16): Promise<void> {
    const queue = [...keys];
    const worker = async () => {
      for (let key = queue.shift(); key !== undefined; key = queue.shift()) {
        await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: `body of ${key}` }));
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
  }

  async function allPages(input: ListObjectsV2CommandInput, pageSize?: number): Promise<ListObjectsV2CommandOutput[]> {
    const pages: ListObjectsV2CommandOutput[] = [];
    // The paginator writes its token and page size into the input it is given.
    for await (const page of paginateListObjectsV2({ client, pageSize }, { ...input })) pages.push(page);
    return pages;
  }

  const keysOf = (pages: readonly { Contents?: { Key?: string }[] }[]) =>
    pages.flatMap((page) => (page.Contents ?? []).map((object) => object.Key!));
  const prefixesOf = (pages: readonly { CommonPrefixes?: { Prefix?: string }[] }[]) =>
    pages.flatMap((page) => (page.CommonPrefixes ?? []).map((prefix) => prefix.Prefix!));

  // --- Raw requests signed by the SDK's own SigV4 signer, for what the SDK hides -----------------

  const rfc3986 = (text: string) =>
    encodeURIComponent(text).replace(/[!'()*]/g, (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`);

  /** GET /<bucket>?<query>, signed with the full key; answers the status and the body text. */
  async function rawList(query: Record<string, string>, bucket = BUCKET): Promise<{ status: number; body: string }> {
    const url = new URL(ctx.objstore.url);
    const signer = new SignatureV4({
      credentials: { accessKeyId: FULL.accessKeyId, secretAccessKey: FULL.secretAccessKey },
      region: 'us-east-1',
      service: 's3',
      sha256: NodeSha256,
      uriEscapePath: false,
    });
    const signed = await signer.sign({
      method: 'GET',
      protocol: 'http:',
      hostname: url.hostname,
      port: Number(url.port),
      path: `/${bucket}`,
      query,
      headers: { host: url.host },
    });
    const search = Object.entries(query)
      .map(([name, value]) => `${rfc3986(name)}=${rfc3986(value)}`)
      .join('&');
    const response = await fetch(`${ctx.objstore.url}/${bucket}?${search}`, { headers: signed.headers });
    return { status: response.status, body: await response.text() };
  }

  const errorCodeOf = (xml: string) => /<Code>([^<]*)<\/Code>/.exec(xml)?.[1];
  const errorMessageOf = (xml: string) => /<Message>([^<]*)<\/Message>/.exec(xml)?.[1];

  // -------------------------------------------------------------------------------------------

  beforeAll(async () => {
    client = ctx.client(FULL);
    await putAll(ALL_KEYS);
    // Neither an upload in progress nor s3rver's sidecar files (metadata, MD5, tags) are objects.
    const { UploadId } = await client.send(
      new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: 'pending/upload.bin' }),
    );
    await client.send(
      new UploadPartCommand({ Bucket: BUCKET, Key: 'pending/upload.bin', UploadId, PartNumber: 1, Body: 'part' }),
    );
    await client.send(
      new PutObjectTaggingCommand({
        Bucket: BUCKET,
        Key: 'README.md',
        Tagging: { TagSet: [{ Key: 'k', Value: 'v' }] },
      }),
    );
  });

  describe('ListObjectsV2', () => {
    it('pages through every key once, in UTF-8 binary order, 1,000 keys a page by default', async () => {
      const pages = await allPages({ Bucket: BUCKET });

      expect(keysOf(pages)).toEqual(SORTED_KEYS);
      expect(pages.map((page) => page.KeyCount)).toEqual([1000, 1000, ALL_KEYS.length - 2000]);
      expect(pages.map((page) => page.IsTruncated)).toEqual([true, true, false]);
      expect(pages.map((page) => page.MaxKeys)).toEqual([1000, 1000, 1000]);
      expect(pages[0]!.NextContinuationToken).toEqual(expect.any(String));
      expect(pages[1]!.ContinuationToken).toBe(pages[0]!.NextContinuationToken);
      expect(pages[2]!.NextContinuationToken).toBeUndefined();
    });

    it('pages with a small page size, alone and under a prefix', async () => {
      const pages = await allPages({ Bucket: BUCKET }, 97);
      expect(keysOf(pages)).toEqual(SORTED_KEYS);
      expect(pages).toHaveLength(Math.ceil(ALL_KEYS.length / 97));
      expect(pages.every((page) => page.KeyCount === (page.Contents ?? []).length && page.KeyCount! <= 97)).toBe(true);

      const odd = await allPages({ Bucket: BUCKET, Prefix: 'odd/' }, 2);
      expect(keysOf(odd)).toEqual([...ODD_KEYS].sort(utf8Order));
      expect(odd.every((page) => page.Prefix === 'odd/')).toBe(true);
    });

    it('describes each object as HeadObject does', async () => {
      const [page] = await allPages({ Bucket: BUCKET, Prefix: 'odd/ü' });
      const [object] = page!.Contents!;
      const head = await client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'odd/ü.txt' }));
      expect(object).toEqual({
        Key: 'odd/ü.txt',
        LastModified: head.LastModified,
        ETag: `"${createHash('md5').update('body of odd/ü.txt').digest('hex')}"`,
        Size: Buffer.byteLength('body of odd/ü.txt'),
        StorageClass: 'STANDARD',
      });
      expect(head.ETag).toBe(object!.ETag);
      expect(object!.LastModified!.getTime() % 1000).toBe(0);
    });

    it('rolls a hive layout up into common prefixes, each listed once across pages', async () => {
      const input = { Bucket: BUCKET, Prefix: 'exports/', Delimiter: '/' };
      const [whole] = await allPages(input);
      const hivePrefixes = EXPORT_IDS.map((id) => `exports/export_id=${id}/`);
      expect(prefixesOf([whole!])).toEqual(hivePrefixes);
      expect(keysOf([whole!])).toEqual(
        [...EXPORT_IDS.map((id) => `exports/export_id=${id}.marker`), 'exports/manifest.json'].sort(utf8Order),
      );
      expect(whole!.KeyCount).toBe(7);
      expect(whole!.Delimiter).toBe('/');

      for (const pageSize of [1, 2, 3]) {
        const pages = await allPages(input, pageSize);
        expect(prefixesOf(pages)).toEqual(hivePrefixes);
        expect(keysOf(pages)).toEqual(keysOf([whole!]));
        expect(pages.every((page) => page.KeyCount! <= pageSize)).toBe(true);
      }

      const [top] = await allPages({ Bucket: BUCKET, Delimiter: '/' });
      expect(prefixesOf([top!])).toEqual(['exports/', 'odd/', 'runs/']);
      expect(keysOf([top!])).toEqual(['README.md']);

      const [partitions] = await allPages({
        Bucket: BUCKET,
        Prefix: `exports/export_id=${EXPORT_IDS[1]}/`,
        Delimiter: '/',
      });
      expect(prefixesOf([partitions!])).toEqual([
        `exports/export_id=${EXPORT_IDS[1]}/tenant=acme/`,
        `exports/export_id=${EXPORT_IDS[1]}/tenant=globex/`,
      ]);
    });

    it('starts after a key, echoing StartAfter, and skips a common prefix it starts inside', async () => {
      const after = 'runs/day=12/run-0100.json';
      const pages = await allPages({ Bucket: BUCKET, StartAfter: after }, 50);
      expect(keysOf(pages)).toEqual(SORTED_KEYS.filter((key) => utf8Order(key, after) > 0));
      // The paginator sends StartAfter with every page, and S3 echoes it beside the continuation token.
      expect(pages.map((page) => page.StartAfter)).toEqual(pages.map(() => after));

      const inside = `exports/export_id=${EXPORT_IDS[0]}/tenant=acme/part-00000.parquet`;
      const [page] = await allPages({ Bucket: BUCKET, Prefix: 'exports/', Delimiter: '/', StartAfter: inside });
      expect(prefixesOf([page!])).toEqual(EXPORT_IDS.slice(1).map((id) => `exports/export_id=${id}/`));
      expect(keysOf([page!])).toEqual([
        `exports/export_id=${EXPORT_IDS[1]}.marker`,
        `exports/export_id=${EXPORT_IDS[2]}.marker`,
        'exports/manifest.json',
      ]);
    });

    it('answers max-keys 0 with an empty page and serves at most 1,000 keys', async () => {
      const none = await client.send(new ListObjectsV2Command({ Bucket: BUCKET, MaxKeys: 0 }));
      expect(none).toMatchObject({ KeyCount: 0, MaxKeys: 0, IsTruncated: false });
      expect(none.Contents).toBeUndefined();
      expect(none.NextContinuationToken).toBeUndefined();

      const capped = await client.send(new ListObjectsV2Command({ Bucket: BUCKET, MaxKeys: 5000 }));
      expect(capped).toMatchObject({ KeyCount: 1000, MaxKeys: 5000, IsTruncated: true });
    });

    it('names each object owner only when asked to', async () => {
      const plain = await client.send(new ListObjectsV2Command({ Bucket: BUCKET, MaxKeys: 1 }));
      expect(plain.Contents![0]!.Owner).toBeUndefined();
      const owned = await client.send(new ListObjectsV2Command({ Bucket: BUCKET, MaxKeys: 1, FetchOwner: true }));
      expect(owned.Contents![0]!.Owner).toEqual({ ID: expect.stringMatching(/^[0-9a-f]{64}$/) });
    });

    it('url-encodes keys, prefixes, the delimiter and StartAfter under encoding-type=url', async () => {
      const page = await client.send(
        new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'odd/', EncodingType: 'url', StartAfter: 'odd/a b.txt' }),
      );
      expect(page.EncodingType).toBe('url');
      expect(page.Prefix).toBe('odd/');
      expect(page.StartAfter).toBe('odd/a%20b.txt');
      expect(keysOf([page])).toEqual([
        'odd/a%2Bb.txt',
        'odd/a-b',
        'odd/a.b',
        'odd/a/b',
        'odd/a0',
        'odd/folder/',
        'odd/%C3%BC.txt',
        'odd/%E6%97%A5%E6%9C%AC.txt',
        'odd/%EF%BD%A1.txt',
        'odd/%F0%9F%98%80.txt',
      ]);

      const grouped = await client.send(
        new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'odd/a', Delimiter: ' ', EncodingType: 'url' }),
      );
      expect(grouped.Delimiter).toBe('%20');
      expect(prefixesOf([grouped])).toEqual(['odd/a%20']);
      expect(keysOf([grouped])).toEqual(['odd/a', 'odd/a%2Bb.txt', 'odd/a-b', 'odd/a.b', 'odd/a/b', 'odd/a0']);

      const percent = await client.send(
        new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'odd/1', EncodingType: 'url' }),
      );
      expect(keysOf([percent])).toEqual(['odd/100%25.csv']);
    });

    it('refuses a continuation token it did not hand out', async () => {
      const token = (await client.send(new ListObjectsV2Command({ Bucket: BUCKET, MaxKeys: 10 })))
        .NextContinuationToken!;

      for (const bad of [
        'bm90IGEgdG9rZW4=',
        'garbage!',
        `${token}x`,
        token.replace(/^./, (ch) => (ch === 'A' ? 'B' : 'A')),
      ]) {
        const error = await failure(client.send(new ListObjectsV2Command({ Bucket: BUCKET, ContinuationToken: bad })));
        expect(error.name).toBe('InvalidArgument');
        expect(error.message).toBe('The continuation token provided is incorrect');
        expect(error.$metadata?.httpStatusCode).toBe(400);
      }
      // A token is bound to the bucket it was handed out for.
      const elsewhere = await failure(
        client.send(new ListObjectsV2Command({ Bucket: OTHER_BUCKET, ContinuationToken: token })),
      );
      expect(elsewhere.name).toBe('InvalidArgument');
    });

    it('writes the result elements in the order S3 does', async () => {
      const after = 'exports/export_id=0';
      const { status, body } = await rawList({
        'list-type': '2',
        prefix: 'exports/',
        delimiter: '/',
        'max-keys': '2',
        'start-after': after,
      });
      expect(status).toBe(200);
      const etag = createHash('md5').update(`body of exports/export_id=${EXPORT_IDS[0]}.marker`).digest('hex');
      expect(body).toMatch(
        new RegExp(
          '^<\\?xml version="1\\.0" encoding="UTF-8"\\?>\n' +
            '<ListBucketResult xmlns="http://s3\\.amazonaws\\.com/doc/2006-03-01/">' +
            '<Name>exports</Name><Prefix>exports/</Prefix><StartAfter>exports/export_id=0</StartAfter>' +
            '<NextContinuationToken>[A-Za-z0-9+/=]+</NextContinuationToken>' +
            '<KeyCount>2</KeyCount><MaxKeys>2</MaxKeys><Delimiter>/</Delimiter><IsTruncated>true</IsTruncated>' +
            `<Contents><Key>exports/export_id=${EXPORT_IDS[0]}\\.marker</Key>` +
            '<LastModified>\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.000Z</LastModified>' +
            `<ETag>&quot;${etag}&quot;</ETag><Size>\\d+</Size><StorageClass>STANDARD</StorageClass></Contents>` +
            `<CommonPrefixes><Prefix>exports/export_id=${EXPORT_IDS[0]}/</Prefix></CommonPrefixes>` +
            '</ListBucketResult>$',
        ),
      );
    });

    it('answers bad parameters with InvalidArgument, before and after the bucket lookup', async () => {
      const cases: [Record<string, string>, string][] = [
        [{ 'max-keys': 'abc' }, 'Provided max-keys not an integer or within integer range'],
        [{ 'max-keys': '2147483648' }, 'Provided max-keys not an integer or within integer range'],
        [{ 'max-keys': '-1' }, 'Argument maxKeys must be an integer between 0 and 2147483647'],
        [{ 'encoding-type': 'base64' }, 'Invalid Encoding Method specified in Request'],
        [{ marker: 'a' }, 'Marker unsupported with REST.GET.BUCKET in list-type=2'],
      ];
      for (const [query, message] of cases) {
        const { status, body } = await rawList({ 'list-type': '2', ...query });
        expect({ status, code: errorCodeOf(body), message: errorMessageOf(body) }).toEqual({
          status: 400,
          code: 'InvalidArgument',
          message,
        });
      }
      const v1 = await rawList({ 'start-after': 'a' });
      expect(errorMessageOf(v1.body)).toBe('startAfter only supported in REST.GET.BUCKET with list-type=2');
      const v1Token = await rawList({ 'continuation-token': 'a' });
      expect(errorMessageOf(v1Token.body)).toBe(
        'continuation-token only supported in REST.GET.BUCKET with list-type=2',
      );

      const zeros = await rawList({ 'list-type': '2', 'max-keys': '005' });
      expect(zeros.body).toContain('<KeyCount>5</KeyCount><MaxKeys>5</MaxKeys>');
    });

    it('answers NoSuchBucket for a bucket that does not exist', async () => {
      const error = await failure(client.send(new ListObjectsV2Command({ Bucket: 'nosuchbucket' })));
      expect(error.name).toBe('NoSuchBucket');
      expect(error.$metadata?.httpStatusCode).toBe(404);
      const v1 = await failure(client.send(new ListObjectsCommand({ Bucket: 'nosuchbucket' })));
      expect(v1.name).toBe('NoSuchBucket');
    });
  });

  describe('ListObjects (v1)', () => {
    it('pages by marker: no NextMarker without a delimiter, so clients resume after the last key', async () => {
      const keys: string[] = [];
      let marker: string | undefined;
      for (;;) {
        const page = await client.send(new ListObjectsCommand({ Bucket: BUCKET, Marker: marker }));
        expect(page.Marker ?? '').toBe(marker ?? '');
        expect(page.NextMarker).toBeUndefined();
        keys.push(...keysOf([page]));
        if (!page.IsTruncated) break;
        marker = page.Contents!.at(-1)!.Key;
      }
      expect(keys).toEqual(SORTED_KEYS);
    });

    it('pages a delimited listing by NextMarker, each common prefix once', async () => {
      const keys: string[] = [];
      const prefixes: string[] = [];
      let marker: string | undefined;
      let pages = 0;
      for (;;) {
        const page = await client.send(
          new ListObjectsCommand({ Bucket: BUCKET, Prefix: 'exports/', Delimiter: '/', MaxKeys: 2, Marker: marker }),
        );
        pages += 1;
        keys.push(...keysOf([page]));
        prefixes.push(...prefixesOf([page]));
        if (!page.IsTruncated) {
          expect(page.NextMarker).toBeUndefined();
          break;
        }
        expect(page.NextMarker).toEqual(expect.any(String));
        marker = page.NextMarker;
      }
      expect(pages).toBe(4);
      expect(prefixes).toEqual(EXPORT_IDS.map((id) => `exports/export_id=${id}/`));
      expect(keys).toHaveLength(4);
    });

    it('names the owner of every object', async () => {
      const page = await client.send(new ListObjectsCommand({ Bucket: BUCKET, MaxKeys: 2 }));
      expect(page.Contents!.map((object) => object.Owner)).toEqual([
        { ID: expect.stringMatching(/^[0-9a-f]{64}$/) },
        { ID: expect.stringMatching(/^[0-9a-f]{64}$/) },
      ]);
    });

    it('url-encodes the marker and NextMarker under encoding-type=url', async () => {
      const page = await client.send(
        new ListObjectsCommand({
          Bucket: BUCKET,
          Prefix: 'odd/',
          Delimiter: '/',
          Marker: 'odd/a b.txt',
          MaxKeys: 1,
          EncodingType: 'url',
        }),
      );
      expect(page).toMatchObject({ Marker: 'odd/a%20b.txt', NextMarker: 'odd/a%2Bb.txt', EncodingType: 'url' });
    });
  });
});
