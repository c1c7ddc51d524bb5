import { createHash, createHmac } from 'node:crypto';
import http from 'node:http';

import {
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListBucketsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { Sha256 } from '@smithy/core/checksum';
import { SignatureV4 } from '@smithy/signature-v4';
import type { HttpRequest } from '@smithy/types';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { extractCredential } from '../../src/objstore/server/auth/credentials.ts';
import type { ObjstoreKey } from '../../src/objstore/index.ts';
import { verifySignature, type SignatureVerdict } from '../../src/objstore/server/auth/signature.ts';
import { chunkSignatureChain } from '../../src/objstore/server/auth/sigv4.ts';
import { parseTarget } from '../../src/objstore/server/target.ts';
import {
  CHECKSUMS_WHEN_REQUIRED,
  failure,
  rawRequest,
  useObjstore,
  type Credentials,
} from '../support/objstore-server.ts';

const PRIVATE = 'exports';
const PUBLIC = 'public-datasets';
const WRITER: ObjstoreKey = {
  accessKeyId: 'LPSIGWRITER00001',
  secretAccessKey: 'writer-secret/with+odd=chars-0123456789',
  permissions: ['create', 'delete', 'get', 'multipart'],
};
const WRONG_SECRET = { accessKeyId: WRITER.accessKeyId, secretAccessKey: 'not-the-writer-secret-0123456789' };
const MINUTE = 60_000;
const MISMATCH_MESSAGE =
  'The request signature we calculated does not match the signature you provided. Check your key and signing method.';

/** Moves the store's clock away from wall time. */
let storeClockOffset = 0;

const ctx = useObjstore({
  directoryPrefix: 'objstore-signature-',
  keys: [WRITER],
  buckets: [PRIVATE, PUBLIC],
  publicBuckets: [PUBLIC],
  now: () => Date.now() + storeClockOffset,
  clientConfig: CHECKSUMS_WHEN_REQUIRED,
});

/** The stock client, sending its requests unsigned. */
const anonymous = () =>
  ctx.client({ accessKeyId: 'unused', secretAccessKey: 'unused' }, { signer: { sign: async (request) => request } });

async function text(client: S3Client, bucket: string, key: string): Promise<string> {
  return (await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }))).Body!.transformToString();
}

// --- Requests signed (or presigned) by @smithy/signature-v4, then sent as they are ------------

const uriEncode = (value: string) =>
  encodeURIComponent(value).replace(/[!'()*]/g, (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`);
const encodePath = (bucket: string, key = '') =>
  `/${bucket}${key ? `/${key.split('/').map(uriEncode).join('/')}` : ''}`;

interface Unsigned {
  method: string;
  bucket: string;
  key?: string;
  query?: Record<string, string>;
  headers?: Record<string, string>;
  body?: string;
}

interface SigningOptions {
  credentials?: Credentials;
  region?: string;
  service?: string;
  signingDate?: Date;
}

function signer({ credentials = WRITER, region = 'us-east-1', service = 's3' }: SigningOptions): SignatureV4 {
  return new SignatureV4({ credentials, region, service, sha256: Sha256, uriEscapePath: false });
}

function httpRequest({ method, bucket, key, query = {}, headers = {}, body }: Unsigned): HttpRequest {
  const { host, hostname, port } = new URL(ctx.objstore.url);
  return {
    method,
    protocol: 'http:',
    hostname,
    port: Number(port),
    path: encodePath(bucket, key),
    query,
    headers: { host, ...headers },
    body,
  };
}

async function signed(request: Unsigned, options: SigningOptions = {}): Promise<HttpRequest> {
  return signer(options).sign(httpRequest(request), { signingDate: options.signingDate });
}

/** Presigned the way the SDK's S3 presigner does it: UNSIGNED-PAYLOAD named in the query. */
async function presigned(
  request: Unsigned,
  options: SigningOptions & { expiresIn?: number } = {},
): Promise<HttpRequest> {
  const unsigned = httpRequest({
    ...request,
    headers: { ...request.headers, 'X-Amz-Content-Sha256': 'UNSIGNED-PAYLOAD' },
  });
  return signer(options).presign(unsigned, { expiresIn: options.expiresIn ?? 300, signingDate: options.signingDate });
}

interface Answer {
  status: number;
  body: string;
  /** The elements of an error document. */
  error: Record<string, string>;
}

const unescapeXml = (value: string) =>
  value.replace(
    /&(lt|gt|quot|apos|amp);/g,
    (_, name: string) => ({ lt: '<', gt: '>', quot: '"', apos: "'", amp: '&' })[name]!,
  );

async function send(request: HttpRequest): Promise<Answer> {
  const query = Object.entries(request.query ?? {})
    .map(([name, value]) => `${uriEncode(name)}=${uriEncode(String(value))}`)
    .join('&');
  const target = query ? `${request.path}?${query}` : request.path;
  const origin = `${request.protocol}//${request.hostname}:${request.port}`;
  const { status, body } = await rawRequest(
    origin,
    request.method,
    target,
    request.headers,
    request.body as string | undefined,
  );
  const error = Object.fromEntries(
    [...body.matchAll(/<([\w-]+)>([^<]*)<\/\1>/g)].map(([, name, value]) => [name!, unescapeXml(value!)]),
  );
  return { status, body, error };
}

const isoSeconds = (time: Date) => time.toISOString().replace(/\.\d{3}Z$/, 'Z');
const amzDate = (time: Date) => isoSeconds(time).replace(/[-:]/g, '');

// ---------------------------------------------------------------------------------------------

beforeEach(() => ctx.objstore.reset());
afterEach(() => {
  storeClockOffset = 0;
});

describe('requests signed correctly', () => {
  const keys = ['dir/a b.txt', 'ünïcödé/中文 файл.txt', 'k=v+w.txt', "odd !'()*~@$&,;:.txt", 'trailing/'];

  it('pass for the stock S3Client, with spaces, unicode, = and + in keys and prefixes', async () => {
    const client = ctx.client(WRITER);
    for (const key of keys)
      await client.send(new PutObjectCommand({ Bucket: PRIVATE, Key: key, Body: `body of ${key}` }));
    for (const key of keys) {
      expect(await text(client, PRIVATE, key)).toBe(`body of ${key}`);
      expect((await client.send(new HeadObjectCommand({ Bucket: PRIVATE, Key: key }))).ContentLength).toBe(
        Buffer.byteLength(`body of ${key}`),
      );
    }
    const listed = await client.send(new ListObjectsV2Command({ Bucket: PRIVATE }));
    expect(listed.Contents?.map((object) => object.Key).sort()).toEqual([...keys].sort());
    const prefixed = await client.send(new ListObjectsV2Command({ Bucket: PRIVATE, Prefix: 'k=v+' }));
    expect(prefixed.Contents?.map((object) => object.Key)).toEqual(['k=v+w.txt']);
    const spaced = await client.send(new ListObjectsV2Command({ Bucket: PRIVATE, Prefix: 'dir/a ' }));
    expect(spaced.Contents?.map((object) => object.Key)).toEqual(['dir/a b.txt']);

    await client.send(
      new CopyObjectCommand({ Bucket: PRIVATE, Key: 'copy of k=v+w.txt', CopySource: `${PRIVATE}/dir/a%20b.txt` }),
    );
    expect(await text(client, PRIVATE, 'copy of k=v+w.txt')).toBe('body of dir/a b.txt');
    await client.send(new DeleteObjectCommand({ Bucket: PRIVATE, Key: 'ünïcödé/中文 файл.txt' }));
    expect(
      (await failure(client.send(new HeadObjectCommand({ Bucket: PRIVATE, Key: 'ünïcödé/中文 файл.txt' })))).name,
    ).toBe('NotFound');
  });

  it('pass for the stock S3Client with its default checksums, signed in any region', async () => {
    const defaults = ctx.client(WRITER, { requestChecksumCalculation: 'WHEN_SUPPORTED', region: 'eu-central-1' });
    await defaults.send(new PutObjectCommand({ Bucket: PRIVATE, Key: 'checksummed.txt', Body: 'with a crc32 header' }));
    expect(await text(ctx.client(WRITER, { region: 'auto' }), PRIVATE, 'checksummed.txt')).toBe('with a crc32 header');
  });

  it('pass presigned for GET, PUT and HEAD, with the response-* parameters signed', async () => {
    const key = 'pre signed/ü=+.txt';
    const put = await send(await presigned({ method: 'PUT', bucket: PRIVATE, key, body: 'presigned body' }));
    expect(put.status).toBe(200);
    const get = await presigned({
      method: 'GET',
      bucket: PRIVATE,
      key,
      query: { 'response-content-type': 'text/x-test' },
    });
    expect(await send(get)).toMatchObject({ status: 200, body: 'presigned body' });
    expect((await send(await presigned({ method: 'HEAD', bucket: PRIVATE, key }))).status).toBe(200);
    expect((await send(await presigned({ method: 'GET', bucket: PRIVATE, key }, { expiresIn: 604800 }))).status).toBe(
      200,
    );
  });

  it('pass with the Date header in place of X-Amz-Date', async () => {
    await ctx.client(WRITER).send(new PutObjectCommand({ Bucket: PRIVATE, Key: 'dated.txt', Body: 'dated' }));
    const time = new Date(Math.floor(Date.now() / 1000) * 1000);
    const host = new URL(ctx.objstore.url).host;
    const unsignedPayload = 'UNSIGNED-PAYLOAD';
    // Signed here by hand: the SDK's signer always adds X-Amz-Date itself.
    const canonical = [
      'GET',
      `/${PRIVATE}/dated.txt`,
      '',
      `date:${time.toUTCString()}`,
      `host:${host}`,
      `x-amz-content-sha256:${unsignedPayload}`,
      '',
      'date;host;x-amz-content-sha256',
      unsignedPayload,
    ].join('\n');
    const scope = `${amzDate(time).slice(0, 8)}/us-east-1/s3/aws4_request`;
    const stringToSign = [
      'AWS4-HMAC-SHA256',
      amzDate(time),
      scope,
      createHash('sha256').update(canonical).digest('hex'),
    ].join('\n');
    const request: HttpRequest = {
      ...httpRequest({ method: 'GET', bucket: PRIVATE, key: 'dated.txt' }),
      headers: {
        host,
        date: time.toUTCString(),
        'x-amz-content-sha256': unsignedPayload,
        authorization:
          `AWS4-HMAC-SHA256 Credential=${WRITER.accessKeyId}/${scope}, ` +
          `SignedHeaders=date;host;x-amz-content-sha256, ` +
          `Signature=${hmacHex(signingKey(WRITER.secretAccessKey, time), stringToSign)}`,
      },
    };
    expect(await send(request)).toMatchObject({ status: 200, body: 'dated' });
  });
});

describe('requests refused', () => {
  it('with a wrong secret: SignatureDoesNotMatch, showing what the store signed and never a secret', async () => {
    const error = await failure(
      ctx.client(WRONG_SECRET).send(new PutObjectCommand({ Bucket: PRIVATE, Key: 'x.txt', Body: 'x' })),
    );
    expect(error.name).toBe('SignatureDoesNotMatch');
    expect(error.message).toBe(MISMATCH_MESSAGE);
    expect(error.$metadata.httpStatusCode).toBe(403);

    const answer = await send(
      await signed({ method: 'GET', bucket: PRIVATE, query: { prefix: 'a b' } }, { credentials: WRONG_SECRET }),
    );
    expect(answer.status).toBe(403);
    expect(answer.error).toMatchObject({
      Code: 'SignatureDoesNotMatch',
      Message: MISMATCH_MESSAGE,
      AWSAccessKeyId: WRITER.accessKeyId,
    });
    expect(answer.error['CanonicalRequest']).toMatch(new RegExp(`^GET\n/${PRIVATE}\nprefix=a%20b\nhost:`));
    expect(answer.error['StringToSign']).toMatch(
      /^AWS4-HMAC-SHA256\n\d{8}T\d{6}Z\n\d{8}\/us-east-1\/s3\/aws4_request\n[0-9a-f]{64}$/,
    );
    expect(answer.error['StringToSignBytes']).toBe(
      Buffer.from(answer.error['StringToSign']!).toString('hex').match(/../g)!.join(' '),
    );
    for (const secret of [WRITER.secretAccessKey, WRONG_SECRET.secretAccessKey])
      expect(answer.body).not.toContain(secret);
    expect(ctx.journal().at(-1)).toMatchObject({
      operation: 'ListObjects',
      status: 403,
      errorCode: 'SignatureDoesNotMatch',
    });

    const presignedAnswer = await send(
      await presigned({ method: 'GET', bucket: PRIVATE, key: 'x.txt' }, { credentials: WRONG_SECRET }),
    );
    expect(presignedAnswer.error['Code']).toBe('SignatureDoesNotMatch');
  });

  it('with an unknown access key id: InvalidAccessKeyId', async () => {
    const stranger = { accessKeyId: 'LPNOSUCHKEY00001', secretAccessKey: WRITER.secretAccessKey };
    const error = await failure(ctx.client(stranger).send(new ListObjectsV2Command({ Bucket: PRIVATE })));
    expect([error.name, error.$metadata.httpStatusCode]).toEqual(['InvalidAccessKeyId', 403]);
    const answer = await send(await presigned({ method: 'GET', bucket: PRIVATE, key: 'x' }, { credentials: stranger }));
    expect([answer.status, answer.error['Code']]).toEqual([403, 'InvalidAccessKeyId']);
  });

  it('when unsigned: AccessDenied, except reads of a public bucket', async () => {
    const writer = ctx.client(WRITER);
    await writer.send(new PutObjectCommand({ Bucket: PRIVATE, Key: 'private.txt', Body: 'private' }));
    await writer.send(new PutObjectCommand({ Bucket: PUBLIC, Key: 'data/open.csv', Body: 'a,b' }));
    const anon = anonymous();

    expect(await text(anon, PUBLIC, 'data/open.csv')).toBe('a,b');
    expect((await anon.send(new HeadObjectCommand({ Bucket: PUBLIC, Key: 'data/open.csv' }))).ContentLength).toBe(3);
    expect(
      (await anon.send(new ListObjectsV2Command({ Bucket: PUBLIC }))).Contents?.map((object) => object.Key),
    ).toEqual(['data/open.csv']);
    await anon.send(new HeadBucketCommand({ Bucket: PUBLIC }));
    expect(ctx.journal().at(-1)).toMatchObject({ operation: 'HeadBucket', accessKeyId: null, status: 200 });

    const refusals = [
      () => anon.send(new GetObjectCommand({ Bucket: PRIVATE, Key: 'private.txt' })),
      () => anon.send(new ListObjectsV2Command({ Bucket: PRIVATE })),
      () => anon.send(new PutObjectCommand({ Bucket: PUBLIC, Key: 'data/vandal.csv', Body: 'x' })),
      () => anon.send(new DeleteObjectCommand({ Bucket: PUBLIC, Key: 'data/open.csv' })),
      () => anon.send(new ListBucketsCommand({})),
    ];
    for (const refusal of refusals) {
      const error = await failure(refusal());
      expect([error.name, error.$metadata.httpStatusCode]).toEqual(['AccessDenied', 403]);
    }
    expect(
      (await writer.send(new ListObjectsV2Command({ Bucket: PUBLIC }))).Contents?.map((object) => object.Key),
    ).toEqual(['data/open.csv']);
  });

  it('when signed more than 15 minutes away from the store clock: RequestTimeTooSkewed', async () => {
    const signingDate = new Date(Date.now() - 20 * MINUTE);
    const answer = await send(await signed({ method: 'GET', bucket: PRIVATE }, { signingDate }));
    expect(answer.status).toBe(403);
    expect(answer.error).toMatchObject({
      Code: 'RequestTimeTooSkewed',
      Message: 'The difference between the request time and the current time is too large.',
      RequestTime: amzDate(signingDate),
      MaxAllowedSkewMilliseconds: '900000',
    });
    expect(Math.abs(Date.parse(answer.error['ServerTime']!) - Date.now())).toBeLessThan(5_000);
    expect(answer.body.indexOf('<RequestTime>')).toBeGreaterThan(answer.body.indexOf('</Message>'));

    expect(
      (
        await send(
          await signed({ method: 'GET', bucket: PRIVATE }, { signingDate: new Date(Date.now() + 14 * MINUTE) }),
        )
      ).status,
    ).toBe(200);
    // A bad signature is reported before the time.
    const both = await send(
      await signed({ method: 'GET', bucket: PRIVATE }, { signingDate, credentials: WRONG_SECRET }),
    );
    expect(both.error['Code']).toBe('SignatureDoesNotMatch');
  });

  it('on the store clock (the injectable now), not on the time the client signed with', async () => {
    storeClockOffset = 20 * MINUTE;
    const error = await failure(ctx.client(WRITER).send(new ListObjectsV2Command({ Bucket: PRIVATE })));
    expect([error.name, error.$metadata.httpStatusCode]).toEqual(['RequestTimeTooSkewed', 403]);

    storeClockOffset = 0;
    const url = await presigned({ method: 'GET', bucket: PRIVATE }, { expiresIn: 3600 });
    storeClockOffset = 59 * MINUTE;
    expect((await send(url)).status).toBe(200);
    storeClockOffset = 61 * MINUTE;
    expect((await send(url)).error).toMatchObject({
      Code: 'AccessDenied',
      Message: 'Request has expired',
      'X-Amz-Expires': '3600',
    });
  });

  it('presigned, once past X-Amz-Expires or before X-Amz-Date: AccessDenied', async () => {
    const signingDate = new Date(Math.floor(Date.now() / 1000) * 1000 - 2 * MINUTE);
    const expired = await send(
      await presigned({ method: 'GET', bucket: PRIVATE, key: 'x' }, { signingDate, expiresIn: 60 }),
    );
    expect(expired.status).toBe(403);
    expect(expired.error).toMatchObject({
      Code: 'AccessDenied',
      Message: 'Request has expired',
      'X-Amz-Expires': '60',
      Expires: isoSeconds(new Date(signingDate.getTime() + MINUTE)),
    });
    expect(Math.abs(Date.parse(expired.error['ServerTime']!) - Date.now())).toBeLessThan(5_000);

    const early = new Date(Date.now() + 20 * MINUTE);
    const notYet = await send(await presigned({ method: 'GET', bucket: PRIVATE, key: 'x' }, { signingDate: early }));
    expect(notYet.error).toMatchObject({
      Code: 'AccessDenied',
      Message: 'Request is not yet valid',
      'X-Amz-Date': amzDate(early),
    });
  });

  it('presigned with an X-Amz-Expires beyond a week or not a number: AuthorizationQueryParametersError', async () => {
    const week = await presigned({ method: 'GET', bucket: PRIVATE, key: 'x' }, { expiresIn: 604800 });
    for (const [expires, message] of [
      [
        '604801',
        'X-Amz-Expires must be less than a week (in seconds); that is, the given X-Amz-Expires must be less than ' +
          '604800 seconds',
      ],
      ['-1', 'X-Amz-Expires must be non-negative'],
      ['1h', 'X-Amz-Expires should be a number'],
    ]) {
      const answer = await send({ ...week, query: { ...week.query, 'X-Amz-Expires': expires! } });
      expect([answer.status, answer.error['Code'], answer.error['Message']]).toEqual([
        403,
        'AuthorizationQueryParametersError',
        message,
      ]);
    }
  });

  it('when the path, the query or a signed header changed after signing: SignatureDoesNotMatch', async () => {
    const original = await signed({
      method: 'PUT',
      bucket: PRIVATE,
      key: 'a b.txt',
      headers: { 'x-amz-meta-color': 'red' },
      body: 'tampered?',
    });
    const tampered: HttpRequest[] = [
      { ...original, path: encodePath(PRIVATE, 'a c.txt') },
      { ...original, query: { 'x-id': 'PutObject' } },
      { ...original, headers: { ...original.headers, 'x-amz-meta-color': 'blue' } },
      { ...original, method: 'POST' },
    ];
    for (const request of tampered) {
      const answer = await send(request);
      expect([answer.status, answer.error['Code']]).toEqual([403, 'SignatureDoesNotMatch']);
    }

    const url = await presigned({
      method: 'GET',
      bucket: PRIVATE,
      key: 'a b.txt',
      query: { 'response-content-type': 'text/plain' },
    });
    for (const request of [
      { ...url, query: { ...url.query, 'response-content-type': 'text/html' } },
      { ...url, query: { ...url.query, versionId: 'null' } },
      { ...url, path: encodePath(PRIVATE, 'other.txt') },
    ]) {
      expect((await send(request)).error['Code']).toBe('SignatureDoesNotMatch');
    }
    expect((await send(original)).status).toBe(200);
  });

  it('with an x-amz-* header that is not signed: AccessDenied naming the headers', async () => {
    const request = await signed({ method: 'PUT', bucket: PRIVATE, key: 'copy.txt' });
    const answer = await send({
      ...request,
      headers: { ...request.headers, 'x-amz-copy-source': `/${PRIVATE}/secret.txt`, 'x-amz-meta-a': '1' },
    });
    expect(answer.status).toBe(403);
    expect(answer.error).toMatchObject({
      Code: 'AccessDenied',
      Message: 'There were headers present in the request which were not signed',
      HeadersNotSigned: 'x-amz-copy-source, x-amz-meta-a',
    });

    const url = await presigned({ method: 'PUT', bucket: PRIVATE, key: 'copy.txt', body: 'x' });
    const presignedAnswer = await send({
      ...url,
      headers: { ...url.headers, 'x-amz-copy-source': `/${PRIVATE}/secret.txt` },
    });
    expect(presignedAnswer.error).toMatchObject({ Code: 'AccessDenied', HeadersNotSigned: 'x-amz-copy-source' });
  });

  it('without or with a malformed x-amz-content-sha256', async () => {
    const request = await signed({ method: 'GET', bucket: PRIVATE });
    const { 'x-amz-content-sha256': _, ...withoutHash } = request.headers;
    const missing = await send({ ...request, headers: withoutHash });
    expect([missing.status, missing.error['Code'], missing.error['Message']]).toEqual([
      400,
      'InvalidRequest',
      'Missing required header for this request: x-amz-content-sha256',
    ]);
    const malformed = await send({ ...request, headers: { ...request.headers, 'x-amz-content-sha256': 'abc' } });
    expect(malformed.error).toMatchObject({
      Code: 'InvalidArgument',
      ArgumentName: 'x-amz-content-sha256',
      ArgumentValue: 'abc',
    });
    expect(malformed.status).toBe(400);
  });

  it('with a credential scope S3 does not take', async () => {
    const service = await send(await signed({ method: 'GET', bucket: PRIVATE }, { service: 'ec2' }));
    expect([service.status, service.error['Code'], service.error['Message']]).toEqual([
      400,
      'AuthorizationHeaderMalformed',
      'The authorization header is malformed; incorrect service "ec2". This endpoint belongs to "s3".',
    ]);

    const request = await signed({ method: 'GET', bucket: PRIVATE });
    const rewrite = (from: RegExp, to: string) => ({
      ...request,
      headers: { ...request.headers, authorization: request.headers['authorization']!.replace(from, to) },
    });
    const terminator = await send(rewrite(/aws4_request/, 'aws5_request'));
    expect(terminator.error['Message']).toBe(
      'The authorization header is malformed; incorrect terminal "aws5_request". This endpoint uses "aws4_request".',
    );
    const date = await send(rewrite(/\/\d{8}\//, '/20000101/'));
    expect(date.error['Message']).toBe(
      `The authorization header is malformed; Invalid credential date "20000101". This date is not the same as ` +
        `X-Amz-Date: "${request.headers['x-amz-date']!.slice(0, 8)}".`,
    );

    const url = await presigned({ method: 'GET', bucket: PRIVATE }, { service: 'sts' });
    const presignedService = await send(url);
    expect([presignedService.status, presignedService.error['Code'], presignedService.error['Message']]).toEqual([
      400,
      'AuthorizationQueryParametersError',
      'Error parsing the X-Amz-Credential parameter; incorrect service "sts". This endpoint belongs to "s3".',
    ]);
  });

  it('signed with Signature Version 2, as a SigV4-only region refuses it', async () => {
    const message = 'The authorization mechanism you have provided is not supported. Please use AWS4-HMAC-SHA256.';
    const header = httpRequest({
      method: 'GET',
      bucket: PRIVATE,
      headers: { authorization: `AWS ${WRITER.accessKeyId}:frJIUN8DYpKDtOLCwo//yllqDzg=` },
    });
    const query = httpRequest({
      method: 'GET',
      bucket: PRIVATE,
      query: {
        AWSAccessKeyId: WRITER.accessKeyId,
        Expires: String(Math.floor(Date.now() / 1000) + 60),
        Signature: 'frJIUN8DYpKDtOLCwo//yllqDzg=',
      },
    });
    for (const request of [header, query]) {
      const answer = await send(request);
      expect([answer.status, answer.error['Code'], answer.error['Message']]).toEqual([400, 'InvalidRequest', message]);
    }
  });
});

// --- Chunk signatures ---------------------------------------------------------------------------

const hmacHex = (key: Buffer, data: string) => createHmac('sha256', key).update(data).digest('hex');

function signingKey(secret: string, time: Date, region = 'us-east-1'): Buffer {
  return [region, 's3', 'aws4_request'].reduce<Buffer>(
    (key, part) => createHmac('sha256', key).update(part).digest(),
    createHmac('sha256', `AWS4${secret}`).update(amzDate(time).slice(0, 8)).digest(),
  );
}

/** The trailer signature as the AWS chunked-upload spec defines it, computed independently here. */
function trailerSignature(secret: string, time: Date, previous: string, trailerLines: string): string {
  const scope = `${amzDate(time).slice(0, 8)}/us-east-1/s3/aws4_request`;
  const hash = createHash('sha256').update(trailerLines).digest('hex');
  return hmacHex(
    signingKey(secret, time),
    ['AWS4-HMAC-SHA256-TRAILER', amzDate(time), scope, previous, hash].join('\n'),
  );
}

describe('chunk signatures', () => {
  // The examples of the AWS documentation (sigv4-streaming, sigv4-streaming-trailers).
  const EXAMPLE = { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' };
  const EXAMPLE_TIME = new Date('2013-05-24T00:00:00Z');
  const SCOPE = { region: 'us-east-1', service: 's3' };
  const chunks = [Buffer.alloc(65536, 'a'), Buffer.alloc(1024, 'a'), Buffer.alloc(0)];
  /** What the decoder hands the chain: the SHA-256 of a chunk's data. */
  const hashOf = (chunk: Buffer) => createHash('sha256').update(chunk).digest('hex');

  it('verify the AWS example of a chunked upload, chained from its seed signature', async () => {
    const verifier = await chunkSignatureChain(
      EXAMPLE,
      EXAMPLE_TIME,
      SCOPE,
      '4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9',
    );
    const signatures = [
      'ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648',
      '0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497',
      'b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9',
    ];
    expect(chunks.map((chunk, index) => verifier.verifyChunk(hashOf(chunk), signatures[index]!))).toEqual([
      true,
      true,
      true,
    ]);
  });

  it('verify the AWS example of a chunked upload with a signed trailer', async () => {
    const verifier = await chunkSignatureChain(
      EXAMPLE,
      EXAMPLE_TIME,
      SCOPE,
      '106e2a8a18243abcf37539882f36619c00e2dfc72633413f02d3b74544bfeb8e',
    );
    const signatures = [
      'b474d8862b1487a5145d686f57f013e54db672cee1c953b3010fb58501ef5aa2',
      '1c1344b170168f8e65b41376b44b20fe354e373826ccbbe2c1d40a8cae51e5c7',
      '2ca2aba2005185cf7159c6277faf83795951dd77a3a99e6e65d5c9f85863f992',
    ];
    expect(chunks.map((chunk, index) => verifier.verifyChunk(hashOf(chunk), signatures[index]!))).toEqual([
      true,
      true,
      true,
    ]);
    expect(
      verifier.verifyTrailer(
        'x-amz-checksum-crc32c:sOO8/Q==\n',
        'd81f82fc3505edab99d459891051a732e8730629a2e4a59689829ca17fe2e435',
      ),
    ).toBe(true);
  });

  /** The verdict of the gateway's check for a request as a real server receives it. */
  async function verdictOf(request: HttpRequest): Promise<SignatureVerdict> {
    let verdict!: Promise<SignatureVerdict>;
    const server = http.createServer((req, res) => {
      const target = parseTarget(req.url);
      verdict = verifySignature({
        req,
        target,
        credential: extractCredential(req.headers, target.query)!,
        key: WRITER,
        now: new Date(),
      });
      req.resume();
      req.on('end', () => res.end());
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as { port: number };
      await send({ ...request, port });
      return await verdict;
    } finally {
      server.close();
    }
  }

  async function streamingRequest(payload: string, time: Date): Promise<HttpRequest> {
    const headers = {
      'x-amz-content-sha256': payload,
      'content-encoding': 'aws-chunked',
      'x-amz-decoded-content-length': '1029',
    };
    return signed({ method: 'PUT', bucket: PRIVATE, key: 'chunked.bin', headers }, { signingDate: time });
  }

  it(
    'chain from the seed signature of a STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER request, as the SDK signs ' +
      'chunks',
    async () => {
      const time = new Date();
      const request = await streamingRequest('STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER', time);
      const body = [Buffer.alloc(1024, 'x'), Buffer.from('tail!'), Buffer.alloc(0)];
      let previous = /Signature=([0-9a-f]{64})$/.exec(request.headers['authorization']!)![1]!;
      const chunkSignatures: string[] = [];
      for (const chunk of body) {
        previous = await signer({}).sign(
          { headers: new Uint8Array(0), payload: chunk },
          { signingDate: time, priorSignature: previous },
        );
        chunkSignatures.push(previous);
      }
      const trailer = 'x-amz-checksum-crc32:AAAAAA==\n';

      const verdict = await verdictOf(request);
      expect(verdict.error).toBeNull();
      const { chunks: verifier } = verdict as Extract<SignatureVerdict, { error: null }>;
      expect(body.map((chunk, index) => verifier.verifyChunk(hashOf(chunk), chunkSignatures[index]!))).toEqual([
        true,
        true,
        true,
      ]);
      expect(verifier.verifyTrailer(trailer, trailerSignature(WRITER.secretAccessKey, time, previous, trailer))).toBe(
        true,
      );

      const tampered = ((await verdictOf(request)) as Extract<SignatureVerdict, { error: null }>).chunks;
      expect(tampered.verifyChunk(hashOf(Buffer.alloc(1024, 'y')), chunkSignatures[0]!)).toBe(false);
      // The chain stays broken after a bad chunk.
      expect(tampered.verifyChunk(hashOf(body[1]!), chunkSignatures[1]!)).toBe(false);

      const reordered = ((await verdictOf(request)) as Extract<SignatureVerdict, { error: null }>).chunks;
      expect(reordered.verifyChunk(hashOf(body[1]!), chunkSignatures[1]!)).toBe(false);
    },
  );

  it('are never right for a body sent without chunk signatures', async () => {
    const verdict = await verdictOf(await streamingRequest('STREAMING-UNSIGNED-PAYLOAD-TRAILER', new Date()));
    expect(verdict.error).toBeNull();
    const { chunks: verifier } = verdict as Extract<SignatureVerdict, { error: null }>;
    expect(verifier.verifyChunk(hashOf(Buffer.alloc(0)), '0'.repeat(64))).toBe(false);
    expect(verifier.verifyTrailer('x-amz-checksum-crc32:AAAAAA==\n', '0'.repeat(64))).toBe(false);
  });
});
