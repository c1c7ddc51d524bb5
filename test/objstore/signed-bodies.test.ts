/**
 * Bodies the objstore acts on are the bodies signed: a request signed over one body and sent
 * with another is refused (XAmzContentSHA256Mismatch) before anything changes, for every
 * operation that takes a body (DeleteObjects, CreateBucket, CompleteMultipartUpload,
 * PutObjectTagging, PutObject through a presigned URL naming its payload hash), as PutObject
 * always was. UNSIGNED-PAYLOAD binds nothing, as on S3; signed chunks are for uploads only.
 */
import { createHash } from 'node:crypto';

import {
  CreateMultipartUploadCommand,
  GetObjectTaggingCommand,
  HeadBucketCommand,
  ListPartsCommand,
  PutObjectCommand,
  PutObjectTaggingCommand,
  UploadPartCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { SignatureV4 } from '@smithy/signature-v4';
import { beforeAll, describe, expect, it } from 'vitest';

import type { ObjstoreKey } from '../../src/objstore/index.ts';
import { failure, NodeSha256, rawRequest, useObjstore, type RawResponse } from '../support/objstore-server.ts';
import { signedHeaders, targetOf, xmlElement, type SignedRequest } from '../support/signed-requests.ts';

const BUCKET = 'exports';
const KEY: ObjstoreKey = {
  accessKeyId: 'LPSIGNEDBODY0001',
  secretAccessKey: 'signed-body-secret-0123456789abcdefgh',
  permissions: ['create', 'delete', 'get', 'multipart', 'buckets'],
};

const ctx = useObjstore({ directoryPrefix: 'objstore-signed-bodies-', keys: [KEY], buckets: [BUCKET] });
let s3: S3Client;

const sha256Hex = (data: string) => createHash('sha256').update(data).digest('hex');

/** A request signed over `request.body` (its SHA-256 as x-amz-content-sha256), sent with `sent` instead. */
async function sendInstead(
  request: SignedRequest,
  sent: string,
  headers: Record<string, string> = {},
): Promise<RawResponse> {
  const signed = { ...(await signedHeaders(ctx.objstore.url, KEY, request)), ...headers };
  signed['content-length'] = String(Buffer.byteLength(sent));
  return rawRequest(ctx.objstore.url, request.method, targetOf(request), signed, sent);
}

const codeOf = (reply: RawResponse) => [reply.status, xmlElement(reply.body, 'Code')];
const MISMATCH = [400, 'XAmzContentSHA256Mismatch'];

const deleteDocument = (...keys: string[]) =>
  `<Delete>${keys.map((key) => `<Object><Key>${key}</Key></Object>`).join('')}</Delete>`;
const deleteRequest = (body: string): SignedRequest => ({
  method: 'POST',
  path: `/${BUCKET}`,
  query: { delete: '' },
  body,
});

async function bodyOf(key: string): Promise<string | null> {
  const reply = await rawRequest(
    ctx.objstore.url,
    'GET',
    `/${BUCKET}/${key}`,
    await signedHeaders(ctx.objstore.url, KEY, { method: 'GET', path: `/${BUCKET}/${key}` }),
  );
  return reply.status === 404 ? null : reply.body;
}

beforeAll(async () => {
  s3 = ctx.client(KEY);
});

describe('a body other than the one signed', () => {
  it('is refused by DeleteObjects, which deletes nothing', async () => {
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'victim.txt', Body: 'keep me' }));
    const reply = await sendInstead(deleteRequest(deleteDocument('decoy.txt')), deleteDocument('victim.txt'));
    expect(codeOf(reply)).toEqual(MISMATCH);
    expect(await bodyOf('victim.txt')).toBe('keep me');

    // The body signed is acted on.
    const signed = await sendInstead(deleteRequest(deleteDocument('victim.txt')), deleteDocument('victim.txt'));
    expect(signed.status).toBe(200);
    expect(await bodyOf('victim.txt')).toBeNull();
  });

  it('is refused by CreateBucket, which creates nothing', async () => {
    const configuration = (region: string) =>
      `<CreateBucketConfiguration><LocationConstraint>${region}</LocationConstraint></CreateBucketConfiguration>`;
    const unsignedBody = await sendInstead({ method: 'PUT', path: '/tampered-bucket' }, configuration('eu-west-1'));
    expect(codeOf(unsignedBody)).toEqual(MISMATCH);
    const otherRegion = await sendInstead(
      { method: 'PUT', path: '/tampered-bucket', body: configuration('eu-west-1') },
      configuration('ap-south-1'),
    );
    expect(codeOf(otherRegion)).toEqual(MISMATCH);
    expect(
      (await failure(s3.send(new HeadBucketCommand({ Bucket: 'tampered-bucket' })))).$metadata.httpStatusCode,
    ).toBe(404);
  });

  it('is refused by CompleteMultipartUpload, which leaves the upload in progress', async () => {
    const key = 'assembled.bin';
    const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: key }));
    const { ETag } = await s3.send(
      new UploadPartCommand({ Bucket: BUCKET, Key: key, UploadId, PartNumber: 1, Body: 'only part' }),
    );
    const complete =
      `<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>${ETag}</ETag></Part>` +
      '</CompleteMultipartUpload>';
    const request: SignedRequest = {
      method: 'POST',
      path: `/${BUCKET}/${key}`,
      query: { uploadId: UploadId! },
      body: `${complete}\n`,
    };
    expect(codeOf(await sendInstead(request, complete))).toEqual(MISMATCH);
    expect(await bodyOf(key)).toBeNull();
    const parts = await s3.send(new ListPartsCommand({ Bucket: BUCKET, Key: key, UploadId }));
    expect(parts.Parts?.map((part) => part.PartNumber)).toEqual([1]);
  });

  it('is refused by PutObjectTagging, which keeps the tags', async () => {
    const key = 'tagged.txt';
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: 'x' }));
    await s3.send(
      new PutObjectTaggingCommand({ Bucket: BUCKET, Key: key, Tagging: { TagSet: [{ Key: 'owner', Value: 'a' }] } }),
    );
    const tagging = (value: string) =>
      `<Tagging><TagSet><Tag><Key>owner</Key><Value>${value}</Value></Tag></TagSet></Tagging>`;
    const request: SignedRequest = {
      method: 'PUT',
      path: `/${BUCKET}/${key}`,
      query: { tagging: '' },
      body: tagging('a'),
    };
    expect(codeOf(await sendInstead(request, tagging('b')))).toEqual(MISMATCH);
    expect((await s3.send(new GetObjectTaggingCommand({ Bucket: BUCKET, Key: key }))).TagSet).toEqual([
      { Key: 'owner', Value: 'a' },
    ]);

    // What S3 refuses of the body itself, and an object that is not there.
    expect(codeOf(await sendInstead({ ...request, body: '<Tagging>' }, '<Tagging>'))).toEqual([400, 'MalformedXML']);
    const missing = { ...request, path: `/${BUCKET}/missing.txt` };
    expect(codeOf(await sendInstead(missing, tagging('a')))).toEqual([404, 'NoSuchKey']);
  });

  it('is refused by PutObject through a presigned URL that names its payload hash', async () => {
    const { host, hostname, port } = new URL(ctx.objstore.url);
    const signer = new SignatureV4({
      credentials: KEY,
      region: 'us-east-1',
      service: 's3',
      sha256: NodeSha256,
      uriEscapePath: false,
    });
    const path = `/${BUCKET}/presigned.txt`;
    const presigned = await signer.presign(
      {
        method: 'PUT',
        protocol: 'http:',
        hostname,
        port: Number(port),
        path,
        query: {},
        headers: { host, 'x-amz-content-sha256': sha256Hex('signed body') },
      },
      { expiresIn: 300 },
    );
    // The signer moves the hash into the URL.
    expect(presigned.query?.['x-amz-content-sha256']).toBe(sha256Hex('signed body'));
    const url = `${path}?${new URLSearchParams(presigned.query as Record<string, string>).toString()}`;
    const put = (body: string) =>
      rawRequest(ctx.objstore.url, 'PUT', url, { 'content-length': String(body.length) }, body);
    expect(codeOf(await put('other body'))).toEqual(MISMATCH);
    expect(await bodyOf('presigned.txt')).toBeNull();
    expect((await put('signed body')).status).toBe(200);
    expect(await bodyOf('presigned.txt')).toBe('signed body');
  });
});

describe('payloads that bind no body', () => {
  it('UNSIGNED-PAYLOAD binds nothing, as on S3', async () => {
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'unsigned.txt', Body: 'x' }));
    const reply = await sendInstead(deleteRequest(''), deleteDocument('unsigned.txt'));
    expect(codeOf(reply)).toEqual(MISMATCH);
    const request = { ...deleteRequest(''), headers: { 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' } };
    expect((await sendInstead(request, deleteDocument('unsigned.txt'))).status).toBe(200);
    expect(await bodyOf('unsigned.txt')).toBeNull();
  });

  it(
    'signed chunks are for uploads: another operation with a STREAMING payload hash is NotImplemented, and acts on ' +
      'nothing',
    async () => {
      await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'chunked.txt', Body: 'x' }));
      const document = deleteDocument('chunked.txt');
      const signature = `chunk-signature=${'0'.repeat(64)}`;
      const framed = `${document.length.toString(16)};${signature}\r\n${document}\r\n0;${signature}\r\n\r\n`;
      const request = {
        ...deleteRequest(''),
        headers: {
          'x-amz-content-sha256': 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD',
          'x-amz-decoded-content-length': String(document.length),
        },
      };
      const reply = await sendInstead(request, framed);
      expect(codeOf(reply)).toEqual([501, 'NotImplemented']);
      expect(xmlElement(reply.body, 'Header')).toBe('x-amz-content-sha256');
      expect(await bodyOf('chunked.txt')).toBe('x');
    },
  );
});
