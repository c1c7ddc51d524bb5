import { createHash, createHmac, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';

import {
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteBucketCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListBucketsCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';

import type { ObjstoreJournalRecord } from '../../src/journal/objstore-journal.ts';
import type { ObjstoreKey } from '../../src/objstore/index.ts';
import { CHECKSUMS_WHEN_REQUIRED, failure, rawRequest, useObjstore } from '../support/objstore-server.ts';

const BUCKET = 'exports';

const FULL: ObjstoreKey = {
  accessKeyId: 'LPFULLKEY0000001',
  secretAccessKey: 'full-secret-0123456789abcdefghijklmnop',
  permissions: ['create', 'delete', 'get', 'multipart'],
};
const CREATE_ONLY: ObjstoreKey = {
  accessKeyId: 'LPCREATEONLY0001',
  secretAccessKey: 'create-only-secret-0123456789abcdefghij',
  permissions: ['create', 'get'],
};
const NO_CREATE: ObjstoreKey = {
  accessKeyId: 'LPNOCREATE000001',
  secretAccessKey: 'no-create-secret-0123456789abcdefghijk',
  permissions: ['get', 'delete'],
};

const ctx = useObjstore({
  directoryPrefix: 'objstore-gateway-',
  keys: [FULL, CREATE_ONLY, NO_CREATE],
  buckets: [BUCKET],
  clientConfig: CHECKSUMS_WHEN_REQUIRED,
});

async function bodyOf(client: S3Client, key: string, bucket = BUCKET): Promise<Buffer> {
  const response = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return Buffer.from(await response.Body!.transformToByteArray());
}

async function listKeys(client: S3Client, bucket = BUCKET): Promise<string[]> {
  const response = await client.send(new ListObjectsV2Command({ Bucket: bucket }));
  return (response.Contents ?? []).map((object) => object.Key!).sort();
}

function lastRecord(predicate: (record: ObjstoreJournalRecord) => boolean): ObjstoreJournalRecord | undefined {
  return [...ctx.journal()].reverse().find(predicate);
}

// --- Minimal SigV4 signing for raw HTTP requests (header and presigned) ----------------------

const encode = (text: string) =>
  encodeURIComponent(text).replace(/[!'()*]/g, (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`);
const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest();

interface SignInput {
  method: string;
  /** Already percent-encoded path, sent as is. */
  path: string;
  query?: [string, string][];
  key: Pick<ObjstoreKey, 'accessKeyId' | 'secretAccessKey'>;
  presign?: boolean;
  /** More headers (lower-case names), signed too. */
  headers?: Record<string, string>;
}

function sign({ method, path: rawPath, query = [], key, presign = false, headers: extra = {} }: SignInput): {
  url: string;
  headers: Record<string, string>;
} {
  const host = new URL(ctx.objstore.url).host;
  const amzDate = new Date()
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
  const scope = `${amzDate.slice(0, 8)}/us-east-1/s3/aws4_request`;
  const headers: Record<string, string> = { host, ...extra };
  const params = [...query];
  if (presign) {
    params.push(
      ['X-Amz-Algorithm', 'AWS4-HMAC-SHA256'],
      ['X-Amz-Credential', `${key.accessKeyId}/${scope}`],
      ['X-Amz-Date', amzDate],
      ['X-Amz-Expires', '300'],
      ['X-Amz-SignedHeaders', 'host'],
    );
  } else {
    headers['x-amz-date'] = amzDate;
    headers['x-amz-content-sha256'] = 'UNSIGNED-PAYLOAD';
  }
  const signedHeaders = Object.keys(headers).sort();
  const canonicalQuery = params
    .map(([name, value]) => `${encode(name)}=${encode(value)}`)
    .sort()
    .join('&');
  const canonicalRequest = [
    method,
    rawPath,
    canonicalQuery,
    signedHeaders.map((name) => `${name}:${headers[name]!.trim()}\n`).join(''),
    signedHeaders.join(';'),
    'UNSIGNED-PAYLOAD',
  ].join('\n');
  const stringToSign = [
    'AWS4-HMAC-SHA256',
    amzDate,
    scope,
    createHash('sha256').update(canonicalRequest).digest('hex'),
  ].join('\n');
  const signingKey = ['us-east-1', 's3', 'aws4_request'].reduce<Buffer>(
    (k, part) => hmac(k, part),
    hmac(`AWS4${key.secretAccessKey}`, amzDate.slice(0, 8)),
  );
  const signature = createHmac('sha256', signingKey).update(stringToSign).digest('hex');
  if (presign) return { url: `${rawPath}?${canonicalQuery}&X-Amz-Signature=${signature}`, headers: {} };
  headers['authorization'] =
    `AWS4-HMAC-SHA256 Credential=${key.accessKeyId}/${scope}, ` +
    `SignedHeaders=${signedHeaders.join(';')}, Signature=${signature}`;
  return { url: canonicalQuery ? `${rawPath}?${canonicalQuery}` : rawPath, headers };
}

function signedRaw(input: SignInput, body?: string | Buffer, extraHeaders: Record<string, string> = {}) {
  const { url, headers } = sign({ ...input, headers: extraHeaders });
  return rawRequest(ctx.objstore.url, input.method, url, headers, body);
}

const codeOf = (xml: string) => /<Code>([^<]*)<\/Code>/.exec(xml)?.[1];

// ---------------------------------------------------------------------------------------------

describe('objstore gateway', () => {
  let full: S3Client;
  let createOnly: S3Client;
  let noCreate: S3Client;

  beforeAll(() => {
    full = ctx.client(FULL);
    createOnly = ctx.client(CREATE_ONLY);
    noCreate = ctx.client(NO_CREATE);
  });

  beforeEach(async () => {
    await ctx.objstore.reset();
  });

  it('listens on the requested host with an http URL', () => {
    expect(ctx.objstore.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('puts, gets, heads, lists and deletes objects with a full key', async () => {
    const put = await full.send(
      new PutObjectCommand({
        Bucket: BUCKET,
        Key: 'runs/2024/a.json',
        Body: '{"a":1}',
        ContentType: 'application/json',
      }),
    );
    expect(put.ETag).toBe(`"${createHash('md5').update('{"a":1}').digest('hex')}"`);
    await full.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'b.bin', Body: Buffer.from([0, 1, 2, 255]) }));

    expect((await bodyOf(full, 'runs/2024/a.json')).toString()).toBe('{"a":1}');
    expect([...(await bodyOf(full, 'b.bin'))]).toEqual([0, 1, 2, 255]);

    const head = await full.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'runs/2024/a.json' }));
    expect(head.ContentLength).toBe(7);
    expect(head.ContentType).toBe('application/json');

    await full.send(new HeadBucketCommand({ Bucket: BUCKET }));
    expect(await listKeys(full)).toEqual(['b.bin', 'runs/2024/a.json']);
    const buckets = await full.send(new ListBucketsCommand({}));
    expect(buckets.Buckets?.map((b) => b.Name)).toEqual([BUCKET]);

    await full.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: 'b.bin' }));
    await full.send(new DeleteObjectsCommand({ Bucket: BUCKET, Delete: { Objects: [{ Key: 'runs/2024/a.json' }] } }));
    expect(await listKeys(full)).toEqual([]);
  });

  it('copies objects with a key that may create and get', async () => {
    await full.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'src.txt', Body: 'copy me' }));
    await createOnly.send(new CopyObjectCommand({ Bucket: BUCKET, Key: 'dst.txt', CopySource: `${BUCKET}/src.txt` }));
    expect((await bodyOf(full, 'dst.txt')).toString()).toBe('copy me');
    const error = await failure(
      noCreate.send(new CopyObjectCommand({ Bucket: BUCKET, Key: 'dst2.txt', CopySource: `${BUCKET}/src.txt` })),
    );
    expect(error.name).toBe('AccessDenied');
  });

  it('rejects an unknown access key id with InvalidAccessKeyId', async () => {
    const stranger = ctx.client({ accessKeyId: 'LPUNKNOWN0000001', secretAccessKey: 'whatever-secret' });
    const error = await failure(stranger.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'x', Body: 'x' })));
    expect(error.name).toBe('InvalidAccessKeyId');
    expect(error.message).toBe('The Key ID you provided does not exist in our records.');
    expect(error.$metadata?.httpStatusCode).toBe(403);

    const listError = await failure(stranger.send(new ListObjectsV2Command({ Bucket: BUCKET })));
    expect(listError.name).toBe('InvalidAccessKeyId');
    expect(await listKeys(full)).toEqual([]);
  });

  it('lets a create-only key put but not delete', async () => {
    await createOnly.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'keep.txt', Body: 'keep' }));

    const error = await failure(createOnly.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: 'keep.txt' })));
    expect(error.name).toBe('AccessDenied');
    expect(error.message).toBe('Access denied.');
    expect(error.$metadata?.httpStatusCode).toBe(403);

    const bulkError = await failure(
      createOnly.send(new DeleteObjectsCommand({ Bucket: BUCKET, Delete: { Objects: [{ Key: 'keep.txt' }] } })),
    );
    expect(bulkError.name).toBe('AccessDenied');

    expect((await bodyOf(full, 'keep.txt')).toString()).toBe('keep');
  });

  it('refuses puts for a key without create', async () => {
    const error = await failure(noCreate.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'nope.txt', Body: 'nope' })));
    expect(error.name).toBe('AccessDenied');
    expect(error.message).toBe('Access denied.');
    expect(await listKeys(full)).toEqual([]);

    // ...but it may read and delete.
    await full.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'gone.txt', Body: 'bye' }));
    expect((await bodyOf(noCreate, 'gone.txt')).toString()).toBe('bye');
    await noCreate.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: 'gone.txt' }));
    expect(await listKeys(full)).toEqual([]);
  });

  it('refuses bucket creation and deletion for keys without the buckets permission', async () => {
    for (const client of [full, createOnly, noCreate]) {
      const create = await failure(client.send(new CreateBucketCommand({ Bucket: 'newbucket' })));
      expect(create.name).toBe('AccessDenied');
      const remove = await failure(client.send(new DeleteBucketCommand({ Bucket: BUCKET })));
      expect(remove.name).toBe('AccessDenied');
    }
    const buckets = await full.send(new ListBucketsCommand({}));
    expect(buckets.Buckets?.map((b) => b.Name)).toEqual([BUCKET]);
  });

  it('runs a multipart upload with a full key and reads it back byte-identical', async () => {
    const first = randomBytes(5 * 1024 * 1024 + 123);
    const last = randomBytes(4321);
    const created = await full.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: 'big/object.bin' }));
    const uploadId = created.UploadId!;
    expect(uploadId).toBeTruthy();

    const part1 = await full.send(
      new UploadPartCommand({ Bucket: BUCKET, Key: 'big/object.bin', UploadId: uploadId, PartNumber: 1, Body: first }),
    );
    const part2 = await full.send(
      new UploadPartCommand({ Bucket: BUCKET, Key: 'big/object.bin', UploadId: uploadId, PartNumber: 2, Body: last }),
    );
    const completed = await full.send(
      new CompleteMultipartUploadCommand({
        Bucket: BUCKET,
        Key: 'big/object.bin',
        UploadId: uploadId,
        MultipartUpload: {
          Parts: [
            { PartNumber: 1, ETag: part1.ETag },
            { PartNumber: 2, ETag: part2.ETag },
          ],
        },
      }),
    );
    expect(completed.Key).toBe('big/object.bin');

    const body = await bodyOf(full, 'big/object.bin');
    expect(body.length).toBe(first.length + last.length);
    expect(body.equals(Buffer.concat([first, last]))).toBe(true);
    expect(await listKeys(full)).toEqual(['big/object.bin']);
  });

  it('refuses multipart uploads for a key without multipart', async () => {
    const error = await failure(createOnly.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: 'mp.bin' })));
    expect(error.name).toBe('AccessDenied');
    expect(error.message).toBe('Access denied.');

    const { UploadId } = await full.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: 'mp.bin' }));
    const partError = await failure(
      createOnly.send(
        new UploadPartCommand({
          Bucket: BUCKET,
          Key: 'mp.bin',
          UploadId,
          PartNumber: 1,
          Body: randomBytes(5 * 1024 * 1024),
        }),
      ),
    );
    expect(partError.name).toBe('AccessDenied');

    const part = await full.send(
      new UploadPartCommand({ Bucket: BUCKET, Key: 'mp.bin', UploadId, PartNumber: 1, Body: 'tiny' }),
    );
    const completeError = await failure(
      createOnly.send(
        new CompleteMultipartUploadCommand({
          Bucket: BUCKET,
          Key: 'mp.bin',
          UploadId,
          MultipartUpload: { Parts: [{ PartNumber: 1, ETag: part.ETag }] },
        }),
      ),
    );
    expect(completeError.name).toBe('AccessDenied');
    expect(await listKeys(full)).toEqual([]);
  });

  it('answers multipart mistakes with S3 errors instead of crashing', async () => {
    const { UploadId } = await full.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: 'm.bin' }));
    const part = await full.send(
      new UploadPartCommand({ Bucket: BUCKET, Key: 'm.bin', UploadId, PartNumber: 1, Body: 'one' }),
    );

    // A part that was never uploaded (s3rver alone crashes the process on this).
    const missing = await failure(
      full.send(
        new CompleteMultipartUploadCommand({
          Bucket: BUCKET,
          Key: 'm.bin',
          UploadId,
          MultipartUpload: {
            Parts: [
              { PartNumber: 1, ETag: part.ETag },
              { PartNumber: 2, ETag: part.ETag },
            ],
          },
        }),
      ),
    );
    expect(missing.name).toBe('InvalidPart');

    const wrongEtag = await failure(
      full.send(
        new CompleteMultipartUploadCommand({
          Bucket: BUCKET,
          Key: 'm.bin',
          UploadId,
          MultipartUpload: { Parts: [{ PartNumber: 1, ETag: '"00000000000000000000000000000000"' }] },
        }),
      ),
    );
    expect(wrongEtag.name).toBe('InvalidPart');

    const noSuchUpload = await failure(
      full.send(
        new UploadPartCommand({ Bucket: BUCKET, Key: 'm.bin', UploadId: 'deadbeef', PartNumber: 1, Body: 'x' }),
      ),
    );
    expect(noSuchUpload.name).toBe('NoSuchUpload');

    const otherKey = await failure(
      full.send(
        new CompleteMultipartUploadCommand({
          Bucket: BUCKET,
          Key: 'other.bin',
          UploadId,
          MultipartUpload: { Parts: [{ PartNumber: 1, ETag: part.ETag }] },
        }),
      ),
    );
    expect(otherKey.name).toBe('NoSuchUpload');

    // The upload is still intact and completes.
    await full.send(
      new CompleteMultipartUploadCommand({
        Bucket: BUCKET,
        Key: 'm.bin',
        UploadId,
        MultipartUpload: { Parts: [{ PartNumber: 1, ETag: part.ETag }] },
      }),
    );
    expect((await bodyOf(full, 'm.bin')).toString()).toBe('one');
  });

  it('consults the key lookup on every request', async () => {
    const late: ObjstoreKey = {
      accessKeyId: 'LPLATEKEY0000001',
      secretAccessKey: 'late-secret-0123456789abcdefghijklmn',
      permissions: ['create', 'get'],
    };
    const client = ctx.client(late);
    expect((await failure(client.send(new ListObjectsV2Command({ Bucket: BUCKET })))).name).toBe('InvalidAccessKeyId');

    ctx.keys.set(late.accessKeyId, late);
    try {
      await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'late.txt', Body: 'late' }));
      expect((await bodyOf(client, 'late.txt')).toString()).toBe('late');

      // Permissions are read per request too.
      ctx.keys.set(late.accessKeyId, { ...late, permissions: ['get'] });
      expect(
        (await failure(client.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'late2.txt', Body: 'x' })))).name,
      ).toBe('AccessDenied');
    } finally {
      ctx.keys.delete(late.accessKeyId);
    }
    const revoked = await failure(client.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'late.txt' })));
    expect(revoked.name).toBe('InvalidAccessKeyId');
  });

  it('journals operations, keys, statuses and error codes without secrets', async () => {
    await full.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'j/one.txt', Body: 'one' }));
    await failure(noCreate.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'j/two.txt', Body: 'two' })));
    await bodyOf(createOnly, 'j/one.txt');
    await listKeys(full);
    await failure(full.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'j/missing.txt' })));

    const journal = ctx.journal();
    expect(journal.map((r) => r.operation)).toEqual([
      'PutObject',
      'PutObject',
      'GetObject',
      'ListObjectsV2',
      'GetObject',
    ]);
    expect(journal[0]).toMatchObject({
      method: 'PUT',
      operation: 'PutObject',
      bucket: BUCKET,
      key: 'j/one.txt',
      accessKeyId: FULL.accessKeyId,
      status: 200,
      errorCode: null,
    });
    expect(journal[1]).toMatchObject({
      operation: 'PutObject',
      key: 'j/two.txt',
      accessKeyId: NO_CREATE.accessKeyId,
      status: 403,
      errorCode: 'AccessDenied',
    });
    expect(journal[2]).toMatchObject({ accessKeyId: CREATE_ONLY.accessKeyId, status: 200 });
    expect(journal[3]).toMatchObject({ method: 'GET', bucket: BUCKET, key: null, status: 200 });
    expect(journal[4]).toMatchObject({ status: 404, errorCode: 'NoSuchKey' });
    for (const record of journal) expect(Number.isNaN(Date.parse(record.time))).toBe(false);

    const serialized = JSON.stringify(journal);
    for (const key of [FULL, CREATE_ONLY, NO_CREATE]) expect(serialized).not.toContain(key.secretAccessKey);
    expect(serialized).not.toContain('Signature');

    // Snapshots do not change under the caller.
    const before = ctx.journal().length;
    await listKeys(full);
    expect(journal.length).toBe(before);
    expect(ctx.journal().length).toBe(before + 1);
  });

  it('reset empties the buckets and keeps the configured ones', async () => {
    await full.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'a/b/c.txt', Body: 'c' }));
    await full.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: 'pending.bin' }));
    expect(await listKeys(full)).toEqual(['a/b/c.txt']);

    await ctx.objstore.reset();
    expect(await listKeys(full)).toEqual([]);
    const buckets = await full.send(new ListBucketsCommand({}));
    expect(buckets.Buckets?.map((b) => b.Name)).toEqual([BUCKET]);
    expect((await full.send(new ListMultipartUploadsCommand({ Bucket: BUCKET }))).Uploads).toBeUndefined();
    // Nothing is left of the object's folders nor of the upload's (the memory storage writes no files).
    if (ctx.storage === 'files') expect(fs.readdirSync(path.join(ctx.directory, BUCKET))).toEqual([]);
  });

  it('answers NoSuchBucket for a bucket that does not exist', async () => {
    const error = await failure(full.send(new GetObjectCommand({ Bucket: 'nosuchbucket', Key: 'x' })));
    expect(error.name).toBe('NoSuchBucket');
    expect(error.message).toBe('The specified bucket does not exist');
    expect(error.$metadata?.httpStatusCode).toBe(404);

    const putError = await failure(full.send(new PutObjectCommand({ Bucket: 'nosuchbucket', Key: 'x', Body: 'x' })));
    expect(putError.name).toBe('NoSuchBucket');
    expect(lastRecord(() => true)).toMatchObject({
      operation: 'PutObject',
      bucket: 'nosuchbucket',
      status: 404,
      errorCode: 'NoSuchBucket',
    });
  });

  it('answers anonymous requests with AccessDenied XML', async () => {
    await full.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'public?.txt', Body: 'secret' }));
    const response = await rawRequest(ctx.objstore.url, 'GET', `/${BUCKET}/public%3F.txt`);
    expect(response.status).toBe(403);
    expect(response.headers['content-type']).toBe('application/xml');
    expect(response.body).toMatch(
      new RegExp(
        String.raw`^<\?xml version="1\.0" encoding="UTF-8"\?><Error><Code>AccessDenied<\/Code>` +
          String.raw`<Message>Access denied\.<\/Message><Resource>\/exports\/public\?\.txt<\/Resource>` +
          String.raw`<RequestId>[0-9A-F]{16}<\/RequestId><HostId>[A-Za-z0-9+/=]{32}<\/HostId><\/Error>$`,
      ),
    );
    expect(response.body).toContain(`<RequestId>${response.headers['x-amz-request-id']}</RequestId>`);
    expect(lastRecord(() => true)).toMatchObject({ operation: 'GetObject', accessKeyId: null, status: 403 });

    const head = await rawRequest(ctx.objstore.url, 'HEAD', `/${BUCKET}/public%3F.txt`);
    expect(head.status).toBe(403);
    expect(head.body).toBe('');

    const putAnonymously = await rawRequest(
      ctx.objstore.url,
      'PUT',
      `/${BUCKET}/anon.txt`,
      { 'content-type': 'text/plain' },
      'anon',
    );
    expect(codeOf(putAnonymously.body)).toBe('AccessDenied');
    expect(await listKeys(full)).toEqual(['public?.txt']);
  });

  it('accepts presigned URLs and strips their signing parameters', async () => {
    await full.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'dir/pre signed.txt', Body: 'presigned' }));
    const ok = await signedRaw({
      method: 'GET',
      path: `/${BUCKET}/dir/pre%20signed.txt`,
      query: [['response-content-type', 'text/x-test']],
      key: CREATE_ONLY,
      presign: true,
    });
    expect(ok.status).toBe(200);
    expect(ok.body).toBe('presigned');
    expect(ok.headers['content-type']).toBe('text/x-test');
    expect(lastRecord(() => true)).toMatchObject({
      operation: 'GetObject',
      key: 'dir/pre signed.txt',
      accessKeyId: CREATE_ONLY.accessKeyId,
      status: 200,
    });

    const unknown = await signedRaw({
      method: 'GET',
      path: `/${BUCKET}/dir/pre%20signed.txt`,
      key: { accessKeyId: 'LPNOBODY00000001', secretAccessKey: 'x' },
      presign: true,
    });
    expect(unknown.status).toBe(403);
    expect(codeOf(unknown.body)).toBe('InvalidAccessKeyId');

    const presignedPut = await signedRaw(
      { method: 'PUT', path: `/${BUCKET}/via-presign.txt`, key: NO_CREATE, presign: true },
      'no',
    );
    expect(codeOf(presignedPut.body)).toBe('AccessDenied');
  });

  it('supports response header overrides on authenticated GetObject', async () => {
    await full.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'o.csv', Body: 'a,b' }));
    const response = await full.send(
      new GetObjectCommand({
        Bucket: BUCKET,
        Key: 'o.csv',
        ResponseContentDisposition: 'attachment; filename="o.csv"',
      }),
    );
    expect(response.ContentDisposition).toBe('attachment; filename="o.csv"');
    expect(await response.Body!.transformToString()).toBe('a,b');
  });

  it('never crashes on malformed requests', async () => {
    const malformedHeader = await rawRequest(ctx.objstore.url, 'GET', `/${BUCKET}`, {
      authorization: 'AWS4-HMAC-SHA256 Credential=oops',
    });
    expect(malformedHeader.status).toBe(400);
    expect(codeOf(malformedHeader.body)).toBe('AuthorizationHeaderMalformed');

    const unsupported = await rawRequest(ctx.objstore.url, 'GET', `/${BUCKET}`, { authorization: 'Bearer abc' });
    expect(unsupported.status).toBe(400);
    expect(codeOf(unsupported.body)).toBe('InvalidArgument');

    const badQuery = await rawRequest(ctx.objstore.url, 'GET', `/${BUCKET}?X-Amz-Credential=abc`);
    expect(codeOf(badQuery.body)).toBe('AuthorizationQueryParametersError');

    const badEncoding = await signedRaw({ method: 'GET', path: `/${BUCKET}/%E0%A4%A`, key: FULL });
    expect(badEncoding.status).toBe(400);
    expect(codeOf(badEncoding.body)).toBe('InvalidURI');

    // '..' segments are a key's like any other, as on S3: stored inside the bucket, nothing outside.
    const traversal = await signedRaw({ method: 'PUT', path: `/${BUCKET}/a/..%2F..%2F..%2Fescaped`, key: FULL }, 'x');
    expect(traversal.status).toBe(200);
    expect(fs.existsSync(path.join(ctx.directory, '..', 'escaped._S3rver_object'))).toBe(false);
    expect((await bodyOf(full, 'a/../../../escaped')).toString()).toBe('x');

    const badBucket = await signedRaw({ method: 'GET', path: '/..', key: FULL });
    expect(badBucket.status).toBe(400);
    expect(codeOf(badBucket.body)).toBe('InvalidBucketName');

    const uploadTraversal = await signedRaw(
      {
        method: 'PUT',
        path: `/${BUCKET}/k`,
        query: [
          ['partNumber', '1'],
          ['uploadId', '../../x'],
        ],
        key: FULL,
      },
      'x',
    );
    expect(codeOf(uploadTraversal.body)).toBe('NoSuchUpload');

    const { UploadId } = await full.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: 'k' }));
    const badPart = await signedRaw(
      {
        method: 'PUT',
        path: `/${BUCKET}/k`,
        query: [
          ['partNumber', '../1'],
          ['uploadId', UploadId!],
        ],
        key: FULL,
      },
      'x',
    );
    expect(codeOf(badPart.body)).toBe('InvalidArgument');

    const garbageComplete = await signedRaw(
      { method: 'POST', path: `/${BUCKET}/k`, query: [['uploadId', UploadId!]], key: FULL },
      '<not-xml',
    );
    expect(codeOf(garbageComplete.body)).toBe('MalformedXML');

    const copyTraversal = await signedRaw({ method: 'PUT', path: `/${BUCKET}/copy`, key: FULL }, '', {
      'x-amz-copy-source': `/${BUCKET}/../../etc/passwd`,
    });
    expect(codeOf(copyTraversal.body)).toBe('NoSuchKey');

    const weirdMethod = await signedRaw({ method: 'PATCH', path: `/${BUCKET}/k`, key: FULL });
    expect(weirdMethod.status).toBe(405);

    // Still serving.
    await full.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'alive.txt', Body: 'alive' }));
    expect((await bodyOf(full, 'alive.txt')).toString()).toBe('alive');
  });
});

describe('idle connections', () => {
  it(
    "stay open 20 s idle, longer than Node's 5 s default, and the server says so to clients that keep them " +
      '(Keep-Alive: timeout=20)',
    async () => {
      const agent = new http.Agent({ keepAlive: true });
      try {
        const response = await rawRequest(ctx.objstore.url, 'GET', '/', {}, undefined, agent);
        expect(response.headers.connection).toBe('keep-alive');
        expect(response.headers['keep-alive']).toBe('timeout=20');
      } finally {
        agent.destroy();
      }
    },
  );
});
