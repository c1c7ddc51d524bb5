/**
 * Requests at the edges of what S3 takes, through the AWS SDK and raw HTTP: an empty `Expect:`
 * header, anonymous requests to a bucket that does not exist, and keys that are not UTF-8.
 */
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { beforeAll, describe, expect, it } from 'vitest';

import type { ObjstoreKey } from '../../src/objstore/index.ts';
import { rawRequest, useObjstore } from '../support/objstore-server.ts';
import { sendExactly, sendSigned } from '../support/signed-requests.ts';

const FULL: ObjstoreKey = {
  accessKeyId: 'LPEDGES000000001',
  secretAccessKey: 'edges-full-secret-0123456789abcdefg',
  permissions: ['create', 'delete', 'get', 'multipart'],
};

const ctx = useObjstore({
  directoryPrefix: 'objstore-request-edges-',
  keys: [FULL],
  buckets: ['exports', 'open-data'],
  publicBuckets: ['open-data'],
});
let s3: S3Client;

beforeAll(async () => {
  s3 = ctx.client(FULL);
  await s3.send(new PutObjectCommand({ Bucket: 'open-data', Key: 'é.txt', Body: 'accented' }));
  await s3.send(new PutObjectCommand({ Bucket: 'exports', Key: 'listed.txt', Body: 'x' }));
});

describe('Expect', () => {
  it('ignores an empty Expect header, and still answers another expectation 417', async () => {
    const statusLineOf = async (expect: string) =>
      (
        await sendExactly(
          ctx.objstore.url,
          `GET /open-data/%C3%A9.txt HTTP/1.1\r\nHost: ${new URL(ctx.objstore.url).host}\r\n${expect}`,
        )
      ).text.split('\r\n')[0];
    expect(await statusLineOf('Expect:')).toBe('HTTP/1.1 200 OK');
    expect(await statusLineOf('Expect:   ')).toBe('HTTP/1.1 200 OK');
    expect(await statusLineOf('Expect: something-else')).toBe('HTTP/1.1 417 Expectation Failed');
  });
});

describe('anonymous requests', () => {
  it('to a bucket that does not exist are 404 NoSuchBucket, as S3 answers anyone; to a private one still 403', async () => {
    for (const [method, path] of [
      ['GET', '/no-such-bucket/key'],
      ['GET', '/no-such-bucket'],
      ['PUT', '/no-such-bucket/key'],
      ['DELETE', '/no-such-bucket/key'],
    ] as const) {
      const reply = await rawRequest(ctx.objstore.url, method, path);
      expect(reply.status, `${method} ${path}`).toBe(404);
      expect(reply.body).toContain(
        '<Code>NoSuchBucket</Code><Message>The specified bucket does not ' +
          'exist</Message><BucketName>no-such-bucket</BucketName>',
      );
    }
    expect((await rawRequest(ctx.objstore.url, 'HEAD', '/no-such-bucket')).status).toBe(404);
    const privateBucket = await rawRequest(ctx.objstore.url, 'GET', '/exports/listed.txt');
    expect(privateBucket.status).toBe(403);
    expect(privateBucket.body).toContain('<Code>AccessDenied</Code>');
  });
});

describe('keys that are not UTF-8', () => {
  it('are 400 InvalidURI, read, written or signed, and the store keeps nothing', async () => {
    for (const path of ['/open-data/%FF.txt', '/open-data/%C3%28.txt', '/open-data/%ED%A0%80', '/open-data/%C0%AF']) {
      const reply = await rawRequest(ctx.objstore.url, 'GET', path);
      expect(reply.status, path).toBe(400);
      expect(reply.body).toContain('<Code>InvalidURI</Code><Message>Couldn&apos;t parse the specified URI.</Message>');
      expect((await rawRequest(ctx.objstore.url, 'HEAD', path)).status, `HEAD ${path}`).toBe(400);
    }
    const write = await sendSigned(ctx.objstore.url, FULL, {
      method: 'PUT',
      path: '/exports/bad-%FF-key',
      body: 'never stored',
    });
    expect(write.status).toBe(400);
    expect(write.body).toContain('<Code>InvalidURI</Code>');
    expect(
      ((await s3.send(new ListObjectsV2Command({ Bucket: 'exports', Prefix: 'bad-' }))).Contents ?? []).length,
    ).toBe(0);
    // Bytes that are not ASCII, sent unescaped, are refused by the HTTP parser before any key is read.
    expect((await rawRequest(ctx.objstore.url, 'GET', '/open-data/\xff.txt')).status).toBe(400);
    // The key they would spell in UTF-8, percent-encoded as clients send it, is read.
    const read = await s3.send(new GetObjectCommand({ Bucket: 'open-data', Key: 'é.txt' }));
    expect(await read.Body!.transformToString()).toBe('accented');
  });
});
