import { createHash } from 'node:crypto';

import { GetObjectCommand, HeadObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { beforeEach, describe, expect, it } from 'vitest';

import type { ObjstoreKey } from '../../src/objstore/index.ts';
import { CHECKSUMS_WHEN_REQUIRED, rawRequest, useObjstore, type RawResponse } from '../support/objstore-server.ts';
import {
  presignedPath,
  sendExactly,
  sendSigned,
  signedHeaders,
  targetOf,
  xmlElement,
} from '../support/signed-requests.ts';

const BUCKET = 'exports';
const KEY: ObjstoreKey = {
  accessKeyId: 'LPEDGESKEY000001',
  secretAccessKey: 'edges-secret-0123456789abcdefghijklmnop',
  permissions: ['create', 'delete', 'get', 'multipart'],
};

const ctx = useObjstore({
  directoryPrefix: 'objstore-edges-',
  keys: [KEY],
  buckets: [BUCKET, 'public-data'],
  publicBuckets: ['public-data'],
  clientConfig: CHECKSUMS_WHEN_REQUIRED,
});
const client = () => ctx.client(KEY);

const DATA = 'edge case body';
const md5Base64 = (data: string) => createHash('md5').update(data).digest('base64');

async function bodyOf(key: string): Promise<string> {
  const object = await client().send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
  return object.Body!.transformToString();
}

const put = (key: string, headers: Record<string, string>, body = DATA) =>
  sendSigned(ctx.objstore.url, KEY, { method: 'PUT', path: `/${BUCKET}/${key}`, headers, body });

/** The error document's Code and Message, and whether its ids are those of the response headers. */
function errorOf(response: RawResponse) {
  return {
    status: response.status,
    code: xmlElement(response.body, 'Code'),
    message: xmlElement(response.body, 'Message')
      ?.replace(/&apos;/g, "'")
      .replace(/&quot;/g, '"'),
    idsMatch:
      xmlElement(response.body, 'RequestId') === response.headers['x-amz-request-id'] &&
      xmlElement(response.body, 'HostId') === response.headers['x-amz-id-2'],
  };
}

beforeEach(async () => {
  await client().send(new PutObjectCommand({ Bucket: BUCKET, Key: 'kept', Body: 'previous' }));
});

describe('malformed and mismatching digests', () => {
  it.each([
    ['x-amz-checksum-crc32', 'not base64!', 'InvalidRequest', 'Value for x-amz-checksum-crc32 header is invalid.'],
    ['x-amz-checksum-crc32', 'AAAAAAA=', 'InvalidRequest', 'Value for x-amz-checksum-crc32 header is invalid.'],
    ['x-amz-checksum-crc32c', 'AAAAAA', 'InvalidRequest', 'Value for x-amz-checksum-crc32c header is invalid.'],
    [
      'x-amz-checksum-sha256',
      Buffer.alloc(20).toString('base64'),
      'InvalidRequest',
      'Value for x-amz-checksum-sha256 header is invalid.',
    ],
    ['x-amz-checksum-crc32', 'AAAAAA==', 'BadDigest', 'The CRC32 you specified did not match the calculated checksum.'],
    [
      'x-amz-checksum-sha1',
      Buffer.alloc(20).toString('base64'),
      'BadDigest',
      'The SHA1 you specified did not match the calculated checksum.',
    ],
    ['content-md5', 'not-an-md5', 'InvalidDigest', 'The Content-MD5 you specified was invalid.'],
    ['content-md5', Buffer.alloc(8).toString('base64'), 'InvalidDigest', 'The Content-MD5 you specified was invalid.'],
    [
      'content-md5',
      md5Base64('something else'),
      'BadDigest',
      'The Content-MD5 you specified did not match what we received.',
    ],
  ])('%s: %s is 400 %s, and the object stays as it was', async (header, value, code, message) => {
    const response = await put('kept', { [header]: value });
    expect(errorOf(response)).toEqual({ status: 400, code, message, idsMatch: true });
    expect(await bodyOf('kept')).toBe('previous');
  });

  it('takes right ones', async () => {
    expect((await put('kept', { 'content-md5': md5Base64(DATA) })).status).toBe(200);
    expect(await bodyOf('kept')).toBe(DATA);
  });
});

describe('non-ASCII user metadata', () => {
  async function metadataOf(key: string): Promise<Record<string, string> | undefined> {
    return (await client().send(new HeadObjectCommand({ Bucket: BUCKET, Key: key }))).Metadata;
  }

  it('is signed as the SDK sends it and answered RFC 2047-encoded, ASCII as is', async () => {
    await client().send(
      new PutObjectCommand({
        Bucket: BUCKET,
        Key: 'meta-sdk',
        Body: DATA,
        Metadata: { city: 'Zürich', plain: 'ascii only' },
      }),
    );
    expect(await metadataOf('meta-sdk')).toEqual({ city: '=?UTF-8?B?WsO8cmljaA==?=', plain: 'ascii only' });
    const get = await client().send(new GetObjectCommand({ Bucket: BUCKET, Key: 'meta-sdk' }));
    expect(get.Metadata).toEqual({ city: '=?UTF-8?B?WsO8cmljaA==?=', plain: 'ascii only' });
  });

  it.each([
    ['raw UTF-8 bytes', '日本 ✓', '=?UTF-8?B?5pel5pysIOKckw==?='],
    ['an RFC 2047 B word', '=?UTF-8?B?5pel5pys?=', '=?UTF-8?B?5pel5pys?='],
    ['an RFC 2047 Q word', '=?UTF-8?Q?caf=C3=A9_au_lait?=', '=?UTF-8?B?Y2Fmw6kgYXUgbGFpdA==?='],
    ['an RFC 2047 word that is ASCII', '=?UTF-8?B?aGVsbG8=?=', 'hello'],
  ])('sent as %s round-trips as S3 answers it', async (_, sent, answered) => {
    expect((await put('meta-raw', { 'x-amz-meta-note': sent })).status).toBe(200);
    expect(await metadataOf('meta-raw')).toEqual({ note: answered });
  });
});

describe('request framing', () => {
  it('answers a PUT without Content-Length (and not chunked) 411 MissingContentLength', async () => {
    const request = { method: 'PUT', path: `/${BUCKET}/kept` };
    const headers = await signedHeaders(ctx.objstore.url, KEY, request);
    const head = [
      `PUT ${targetOf(request)} HTTP/1.1`,
      ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
    ].join('\r\n');
    const response = await sendExactly(ctx.objstore.url, head);
    expect(response.status).toBe(411);
    expect(xmlElement(response.text, 'Code')).toBe('MissingContentLength');
    expect(await bodyOf('kept')).toBe('previous');
  });

  it('takes a plain body sent with Transfer-Encoding: chunked, as S3 does', async () => {
    const pieces = [Buffer.from('sent in '), Buffer.from('HTTP chunks')];
    const request = { method: 'PUT', path: `/${BUCKET}/chunked`, body: Buffer.concat(pieces) };
    const headers = await signedHeaders(ctx.objstore.url, KEY, request);
    const response = await rawRequest(
      ctx.objstore.url,
      'PUT',
      targetOf(request),
      { ...headers, 'transfer-encoding': 'chunked' },
      pieces,
    );
    expect(response.status).toBe(200);
    expect(response.headers.etag).toBe(`"${createHash('md5').update(request.body).digest('hex')}"`);
    expect(await bodyOf('chunked')).toBe('sent in HTTP chunks');
  });
});

describe('presigned URL expiry', () => {
  async function withExpires(expires: string): Promise<RawResponse> {
    const path = await presignedPath(ctx.objstore.url, KEY, {
      method: 'GET',
      path: `/${BUCKET}/kept`,
      expiresIn: 3600,
    });
    return rawRequest(ctx.objstore.url, 'GET', path.replace('X-Amz-Expires=3600', `X-Amz-Expires=${expires}`));
  }

  it.each([
    [
      '604801',
      'X-Amz-Expires must be less than a week (in seconds); that is, the given X-Amz-Expires must be less than ' +
        '604800 seconds',
    ],
    ['-1', 'X-Amz-Expires must be non-negative'],
    ['soon', 'X-Amz-Expires should be a number'],
  ])('refuses X-Amz-Expires=%s with AuthorizationQueryParametersError', async (expires, message) => {
    expect(errorOf(await withExpires(expires))).toEqual({
      status: 403,
      code: 'AuthorizationQueryParametersError',
      message,
      idsMatch: true,
    });
  });

  it('answers an expired URL 403 AccessDenied "Request has expired"', async () => {
    const signingDate = new Date(Date.now() - 2 * 60 * 60 * 1000);
    const path = await presignedPath(ctx.objstore.url, KEY, {
      method: 'GET',
      path: `/${BUCKET}/kept`,
      expiresIn: 60,
      signingDate,
    });
    const response = await rawRequest(ctx.objstore.url, 'GET', path);
    expect(errorOf(response)).toEqual({
      status: 403,
      code: 'AccessDenied',
      message: 'Request has expired',
      idsMatch: true,
    });
    expect(xmlElement(response.body, 'X-Amz-Expires')).toBe('60');
    expect(xmlElement(response.body, 'Expires')).toBe(
      new Date(signingDate.getTime() + 60_000).toISOString().replace(/\.\d{3}Z$/, 'Z'),
    );

    const fresh = await presignedPath(ctx.objstore.url, KEY, { method: 'GET', path: `/${BUCKET}/kept`, expiresIn: 60 });
    expect((await rawRequest(ctx.objstore.url, 'GET', fresh)).body).toBe('previous');
  });
});

describe('error documents', () => {
  it('carry the RequestId and HostId of the response headers, on every path', async () => {
    const cases: [string, Promise<RawResponse>, string][] = [
      ['refused by the gateway', rawRequest(ctx.objstore.url, 'PUT', `/${BUCKET}/anonymous`, {}, 'x'), 'AccessDenied'],
      [
        'an unknown key',
        sendSigned(
          ctx.objstore.url,
          { ...KEY, accessKeyId: 'LPUNKNOWN0000001' },
          { method: 'GET', path: `/${BUCKET}/kept` },
        ),
        'InvalidAccessKeyId',
      ],
      [
        'a wrong secret',
        sendSigned(ctx.objstore.url, { ...KEY, secretAccessKey: 'wrong' }, { method: 'GET', path: `/${BUCKET}/kept` }),
        'SignatureDoesNotMatch',
      ],
      [
        'a bucket that does not exist',
        sendSigned(ctx.objstore.url, KEY, { method: 'GET', path: '/no-such-bucket/kept' }),
        'NoSuchBucket',
      ],
      [
        'tags of an object that does not exist',
        sendSigned(ctx.objstore.url, KEY, { method: 'GET', path: `/${BUCKET}/missing`, query: { tagging: '' } }),
        'NoSuchKey',
      ],
      [
        'a missing object',
        sendSigned(ctx.objstore.url, KEY, { method: 'GET', path: `/${BUCKET}/missing` }),
        'NoSuchKey',
      ],
      [
        'an anonymous read with overrides',
        rawRequest(ctx.objstore.url, 'GET', '/public-data/x?response-content-type=text/plain'),
        'InvalidRequest',
      ],
    ];
    for (const [why, pending, code] of cases) {
      const response = await pending;
      expect({ why, code: xmlElement(response.body, 'Code'), ids: errorOf(response).idsMatch }).toEqual({
        why,
        code,
        ids: true,
      });
      expect(response.headers['x-amz-id-2'], why).toMatch(/^[A-Za-z0-9+/]{32}$/);
    }
  });

  it('are left out of HEAD responses, which keep the id headers', async () => {
    const response = await sendSigned(ctx.objstore.url, KEY, { method: 'HEAD', path: `/${BUCKET}/missing` });
    expect([response.status, response.body]).toEqual([404, '']);
    expect(response.headers['x-amz-request-id']).toMatch(/^[0-9A-F]{16}$/);
    expect(response.headers['x-amz-id-2']).toMatch(/^[A-Za-z0-9+/]{32}$/);
  });
});

describe('a missing bucket', () => {
  const MISSING = 'no-such-bucket';
  const uploadId = 'f'.repeat(32);
  const request = (
    method: string,
    path: string,
    query: Record<string, string> = {},
    headers: Record<string, string> = {},
    body?: string,
  ) => sendSigned(ctx.objstore.url, KEY, { method, path: `/${MISSING}${path}`, query, headers, body });

  it('is NoSuchBucket, with the same document, for every operation the gateway answers only in a bucket that exists', async () => {
    const cases: [string, Promise<RawResponse>][] = [
      ['PutObject', request('PUT', '/k', {}, {}, DATA)],
      ['GetObject', request('GET', '/k')],
      ['GetObject of a part', request('GET', '/k', { partNumber: '1' })],
      ['GetObjectAttributes', request('GET', '/k', { attributes: '' }, { 'x-amz-object-attributes': 'ETag' })],
      ['UploadPart', request('PUT', '/k', { partNumber: '1', uploadId }, {}, DATA)],
      ['UploadPartCopy', request('PUT', '/k', { partNumber: '1', uploadId }, { 'x-amz-copy-source': `/${BUCKET}/k` })],
      [
        'CompleteMultipartUpload',
        request('POST', '/k', { uploadId }, {}, '<CompleteMultipartUpload></CompleteMultipartUpload>'),
      ],
      ['AbortMultipartUpload', request('DELETE', '/k', { uploadId })],
      ['ListParts', request('GET', '/k', { uploadId })],
      ['ListMultipartUploads', request('GET', '', { uploads: '' })],
      ['ListObjects', request('GET', '')],
      ['ListObjectsV2', request('GET', '', { 'list-type': '2' })],
      ['DeleteObjects', request('POST', '', { delete: '' }, {}, '<Delete><Object><Key>k</Key></Object></Delete>')],
      ['PutObjectTagging', request('PUT', '/k', { tagging: '' }, {}, '<Tagging><TagSet></TagSet></Tagging>')],
    ];
    for (const [operation, pending] of cases) {
      const response = await pending;
      const answer = {
        status: response.status,
        code: xmlElement(response.body, 'Code'),
        bucket: xmlElement(response.body, 'BucketName'),
        ids: errorOf(response).idsMatch,
      };
      expect({ operation, ...answer }).toEqual({
        operation,
        status: 404,
        code: 'NoSuchBucket',
        bucket: MISSING,
        ids: true,
      });
    }
    const head = await request('HEAD', '/k');
    expect([head.status, head.body]).toEqual([404, '']);
  });

  it('is looked up after what S3 refuses first', async () => {
    const cases: [string, Promise<RawResponse>, string][] = [
      [
        'ListObjectsV2 with max-keys not a number',
        request('GET', '', { 'list-type': '2', 'max-keys': 'many' }),
        'InvalidArgument',
      ],
      ['ListObjectsV2 with a v1 marker', request('GET', '', { 'list-type': '2', marker: 'a' }), 'InvalidArgument'],
      ['ListObjects with a continuation token', request('GET', '', { 'continuation-token': 'a' }), 'InvalidArgument'],
      [
        'ListParts with max-parts not a number',
        request('GET', '/k', { uploadId, 'max-parts': 'many' }),
        'InvalidArgument',
      ],
      [
        'ListMultipartUploads with max-uploads not a number',
        request('GET', '', { uploads: '', 'max-uploads': 'many' }),
        'InvalidArgument',
      ],
      ['GetObjectAttributes without attributes', request('GET', '/k', { attributes: '' }), 'InvalidRequest'],
      ['GetObject of part 0', request('GET', '/k', { partNumber: '0' }), 'InvalidArgument'],
      [
        'GetObject of a part and a range',
        request('GET', '/k', { partNumber: '1' }, { range: 'bytes=0-1' }),
        'InvalidRequest',
      ],
    ];
    for (const [why, pending, code] of cases) {
      const response = await pending;
      expect({ why, status: response.status, code: xmlElement(response.body, 'Code') }).toEqual({
        why,
        status: 400,
        code,
      });
    }
  });
});
