import {
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { beforeEach, describe, expect, it } from 'vitest';

import type { ObjstoreKey } from '../../src/objstore/index.ts';
import { CHECKSUMS_WHEN_REQUIRED, failure, useObjstore } from '../support/objstore-server.ts';
import { sendSigned, xmlElement } from '../support/signed-requests.ts';

const BUCKET = 'exports';
const KEY: ObjstoreKey = {
  accessKeyId: 'LPCONDITIONAL001',
  secretAccessKey: 'conditional-secret-0123456789abcdefghijk',
  permissions: ['create', 'delete', 'get', 'multipart'],
};

const ctx = useObjstore({
  directoryPrefix: 'objstore-conditional-',
  keys: [KEY],
  buckets: [BUCKET],
  clientConfig: CHECKSUMS_WHEN_REQUIRED,
});
const client = () => ctx.client(KEY);

/** An S3 error as the SDK throws it, with the elements of the error document it copies onto it. */
type S3Failure = Awaited<ReturnType<typeof failure>> & { Condition?: string; Key?: string };

const OTHER_ETAG = '"0123456789abcdef0123456789abcdef"';
const DAY_MS = 24 * 60 * 60 * 1000;

/** The object under test, as HeadObject shows it. */
let etag: string;
let lastModified: Date;

async function putObject(key: string, body: string): Promise<void> {
  await client().send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: body }));
}

async function bodyOf(key: string): Promise<string> {
  const object = await client().send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
  return object.Body!.transformToString();
}

const get = (headers: Record<string, string>, method = 'GET', key = 'object') =>
  sendSigned(ctx.objstore.url, KEY, { method, path: `/${BUCKET}/${key}`, headers });

const httpDate = (time: number) => new Date(time).toUTCString();

beforeEach(async () => {
  await putObject('object', 'conditional body');
  const head = await client().send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'object' }));
  etag = head.ETag!;
  lastModified = head.LastModified!;
});

describe('GetObject and HeadObject conditions', () => {
  it('serves the object when If-Match names its ETag, quoted or not, or *', async () => {
    for (const ifMatch of [etag, etag.replace(/"/g, ''), `${OTHER_ETAG}, ${etag}`, '*']) {
      const response = await get({ 'if-match': ifMatch });
      expect([response.status, response.body]).toEqual([200, 'conditional body']);
    }
  });

  it('answers 412 PreconditionFailed for another ETag: the XML for GET, an empty body for HEAD', async () => {
    const response = await get({ 'if-match': OTHER_ETAG });
    expect(response.status).toBe(412);
    expect(xmlElement(response.body, 'Code')).toBe('PreconditionFailed');
    expect(xmlElement(response.body, 'Message')).toBe('At least one of the pre-conditions you specified did not hold');
    expect(xmlElement(response.body, 'Condition')).toBe('If-Match');
    expect(xmlElement(response.body, 'RequestId')).toBe(response.headers['x-amz-request-id']);
    expect(xmlElement(response.body, 'HostId')).toBe(response.headers['x-amz-id-2']);

    const head = await get({ 'if-match': OTHER_ETAG }, 'HEAD');
    expect([head.status, head.body]).toEqual([412, '']);

    const sdk = await failure(
      client().send(new GetObjectCommand({ Bucket: BUCKET, Key: 'object', IfMatch: OTHER_ETAG })),
    );
    expect([sdk.name, sdk.$metadata.httpStatusCode]).toEqual(['PreconditionFailed', 412]);
  });

  it('answers 304 with ETag and Last-Modified and no body when If-None-Match names its ETag or *', async () => {
    for (const ifNoneMatch of [etag, '*']) {
      for (const method of ['GET', 'HEAD']) {
        const response = await get({ 'if-none-match': ifNoneMatch }, method);
        expect([response.status, response.body]).toEqual([304, '']);
        expect(response.headers.etag).toBe(etag);
        expect(response.headers['last-modified']).toBe(lastModified.toUTCString());
      }
    }
    const other = await get({ 'if-none-match': OTHER_ETAG });
    expect([other.status, other.body]).toEqual([200, 'conditional body']);

    const sdk = await failure(
      client().send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'object', IfNoneMatch: etag })),
    );
    expect(sdk.$metadata.httpStatusCode).toBe(304);
  });

  it('compares If-Modified-Since with Last-Modified to the second, and ignores a date in the future', async () => {
    const at = lastModified.getTime();
    expect((await get({ 'if-modified-since': httpDate(at) })).status).toBe(304);
    expect((await get({ 'if-modified-since': httpDate(at - 1000) })).status).toBe(200);
    expect((await get({ 'if-modified-since': httpDate(Date.now() + DAY_MS) })).status).toBe(200);
    expect((await get({ 'if-modified-since': 'not a date' })).status).toBe(200);
  });

  it('answers 412 when the object changed after If-Unmodified-Since', async () => {
    const at = lastModified.getTime();
    const response = await get({ 'if-unmodified-since': httpDate(at - DAY_MS) });
    expect([response.status, xmlElement(response.body, 'Condition')]).toEqual([412, 'If-Unmodified-Since']);
    expect((await get({ 'if-unmodified-since': httpDate(at) })).status).toBe(200);
    expect((await get({ 'if-unmodified-since': 'garbage' })).status).toBe(200);
  });

  it('follows S3 precedence: If-Match over If-Unmodified-Since, If-None-Match over If-Modified-Since', async () => {
    const past = httpDate(lastModified.getTime() - DAY_MS);
    const now = httpDate(lastModified.getTime());
    // If-Match true and If-Unmodified-Since false: 200.
    expect((await get({ 'if-match': etag, 'if-unmodified-since': past })).status).toBe(200);
    // If-None-Match false and If-Modified-Since true: 304.
    expect((await get({ 'if-none-match': etag, 'if-modified-since': past })).status).toBe(304);
    // If-None-Match true decides alone: If-Modified-Since false is not looked at.
    expect((await get({ 'if-none-match': OTHER_ETAG, 'if-modified-since': now })).status).toBe(200);
    // A failed If-Match wins over a 304.
    const both = await get({ 'if-match': OTHER_ETAG, 'if-none-match': etag });
    expect([both.status, xmlElement(both.body, 'Condition')]).toEqual([412, 'If-Match']);
  });

  it('checks the conditions before the range', async () => {
    const ranged = await get({ 'if-match': etag, range: 'bytes=0-10' });
    expect([ranged.status, ranged.body, ranged.headers['content-range']]).toEqual([
      206,
      'conditional',
      'bytes 0-10/16',
    ]);
    expect((await get({ 'if-none-match': etag, range: 'bytes=0-10' })).status).toBe(304);
    expect((await get({ 'if-match': OTHER_ETAG, range: 'bytes=99-' })).status).toBe(412);
  });

  it('answers NoSuchKey for a missing object whatever the conditions', async () => {
    const response = await get({ 'if-none-match': '*' }, 'GET', 'missing');
    expect([response.status, xmlElement(response.body, 'Code'), xmlElement(response.body, 'Key')]).toEqual([
      404,
      'NoSuchKey',
      'missing',
    ]);
  });
});

describe('CopyObject source conditions', () => {
  const copy = (conditions: Partial<CopyObjectCommand['input']>) =>
    client().send(
      new CopyObjectCommand({ Bucket: BUCKET, Key: 'copy', CopySource: `${BUCKET}/object`, ...conditions }),
    );

  it('answers 412 naming the first condition that fails, in S3 order', async () => {
    const now = new Date();
    const dayBefore = new Date(lastModified.getTime() - DAY_MS);
    const cases: [Partial<CopyObjectCommand['input']>, string][] = [
      [
        {
          CopySourceIfMatch: OTHER_ETAG,
          CopySourceIfUnmodifiedSince: dayBefore,
          CopySourceIfNoneMatch: etag,
          CopySourceIfModifiedSince: now,
        },
        'x-amz-copy-source-If-Match',
      ],
      [
        { CopySourceIfUnmodifiedSince: dayBefore, CopySourceIfNoneMatch: etag, CopySourceIfModifiedSince: now },
        'x-amz-copy-source-If-Unmodified-Since',
      ],
      [{ CopySourceIfNoneMatch: etag, CopySourceIfModifiedSince: now }, 'x-amz-copy-source-If-None-Match'],
      [{ CopySourceIfNoneMatch: etag.replace(/"/g, '') }, 'x-amz-copy-source-If-None-Match'],
      [{ CopySourceIfModifiedSince: now }, 'x-amz-copy-source-If-Modified-Since'],
    ];
    for (const [conditions, condition] of cases) {
      const error = (await failure(copy(conditions))) as S3Failure;
      expect([error.name, error.$metadata.httpStatusCode, error.Condition]).toEqual([
        'PreconditionFailed',
        412,
        condition,
      ]);
    }
    expect(await failure(client().send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'copy' })))).toMatchObject({
      name: 'NotFound',
    });
  });

  it('copies when every condition holds, and ignores If-Modified-Since in the future', async () => {
    await copy({
      CopySourceIfMatch: etag.replace(/"/g, ''),
      CopySourceIfNoneMatch: OTHER_ETAG,
      CopySourceIfModifiedSince: new Date(lastModified.getTime() - DAY_MS),
      CopySourceIfUnmodifiedSince: new Date(Date.now() + DAY_MS),
    });
    expect(await bodyOf('copy')).toBe('conditional body');
    await copy({ CopySourceIfModifiedSince: new Date(Date.now() + DAY_MS) });
  });
});

describe('conditional writes', () => {
  const put = (key: string, body: string, conditions: Partial<PutObjectCommand['input']>) =>
    client().send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: body, ...conditions }));

  it('PutObject with If-None-Match: * creates a key once and refuses to overwrite it', async () => {
    const key = `create-once-${Date.now()}`;
    await put(key, 'first', { IfNoneMatch: '*' });
    const error = (await failure(put(key, 'second', { IfNoneMatch: '*' }))) as S3Failure;
    expect([error.name, error.$metadata.httpStatusCode, error.Condition]).toEqual([
      'PreconditionFailed',
      412,
      'If-None-Match',
    ]);
    expect(await bodyOf(key)).toBe('first');
  });

  it('of concurrent If-None-Match: * uploads of a new key, exactly one succeeds', async () => {
    const key = `race-${Date.now()}`;
    const bodies = Array.from({ length: 8 }, (_, i) => `writer ${i}`);
    const outcomes = await Promise.allSettled(bodies.map((body) => put(key, body, { IfNoneMatch: '*' })));
    const won = outcomes.flatMap((outcome, i) => (outcome.status === 'fulfilled' ? [bodies[i]] : []));
    const refused = outcomes.flatMap((outcome) =>
      outcome.status === 'rejected' ? [(outcome.reason as S3Failure).$metadata.httpStatusCode] : [],
    );
    expect(won).toHaveLength(1);
    expect(refused).toEqual(Array(7).fill(412));
    expect(await bodyOf(key)).toBe(won[0]);
  });

  it('PutObject with If-Match overwrites only the object with that ETag, and 404s when there is none', async () => {
    const error = (await failure(put('object', 'lost update', { IfMatch: OTHER_ETAG }))) as S3Failure;
    expect([error.name, error.$metadata.httpStatusCode, error.Condition]).toEqual([
      'PreconditionFailed',
      412,
      'If-Match',
    ]);
    expect(await bodyOf('object')).toBe('conditional body');

    await put('object', 'updated', { IfMatch: etag });
    expect(await bodyOf('object')).toBe('updated');

    const missing = (await failure(put('never-written', 'x', { IfMatch: etag }))) as S3Failure;
    expect([missing.name, missing.$metadata.httpStatusCode, missing.Key]).toEqual(['NoSuchKey', 404, 'never-written']);
    expect(await failure(client().send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'never-written' })))).toMatchObject(
      { name: 'NotFound' },
    );
  });

  it.each([
    [
      { 'if-none-match': OTHER_ETAG },
      'If-None-Match',
      "We don't accept the provided value of If-None-Match header for this API",
    ],
    [{ 'if-match': '*' }, 'If-None-Match', "We don't accept the provided value of If-None-Match header for this API"],
    [
      { 'if-match': OTHER_ETAG, 'if-none-match': '*' },
      'If-Match,If-None-Match',
      'Multiple conditional request headers present in the request',
    ],
  ])('answers the write conditions S3 does not take (%o) 501 NotImplemented', async (conditions, header, detail) => {
    const response = await sendSigned(ctx.objstore.url, KEY, {
      method: 'PUT',
      path: `/${BUCKET}/object`,
      headers: conditions,
      body: 'x',
    });
    expect(response.status).toBe(501);
    expect([xmlElement(response.body, 'Code'), xmlElement(response.body, 'Header')]).toEqual([
      'NotImplemented',
      header,
    ]);
    expect(xmlElement(response.body, 'additionalMessage')?.replace('&apos;', "'")).toBe(detail);
    expect(await bodyOf('object')).toBe('conditional body');
  });

  it('CompleteMultipartUpload takes If-None-Match and If-Match like PutObject', async () => {
    const complete = async (conditions: Partial<CompleteMultipartUploadCommand['input']>) => {
      const { UploadId } = await client().send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: 'object' }));
      const part = await client().send(
        new UploadPartCommand({ Bucket: BUCKET, Key: 'object', UploadId, PartNumber: 1, Body: 'multipart body' }),
      );
      return client().send(
        new CompleteMultipartUploadCommand({
          Bucket: BUCKET,
          Key: 'object',
          UploadId,
          MultipartUpload: { Parts: [{ ETag: part.ETag, PartNumber: 1 }] },
          ...conditions,
        }),
      );
    };
    const exists = (await failure(complete({ IfNoneMatch: '*' }))) as S3Failure;
    expect([exists.$metadata.httpStatusCode, exists.Condition]).toEqual([412, 'If-None-Match']);
    const stale = (await failure(complete({ IfMatch: OTHER_ETAG }))) as S3Failure;
    expect([stale.$metadata.httpStatusCode, stale.Condition]).toEqual([412, 'If-Match']);
    expect(await bodyOf('object')).toBe('conditional body');

    await complete({ IfMatch: etag });
    expect(await bodyOf('object')).toBe('multipart body');
  });
});
