import { GetObjectCommand, HeadObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { beforeAll, describe, expect, it } from 'vitest';

import type { ObjstoreKey } from '../../src/objstore/index.ts';
import { CHECKSUMS_WHEN_REQUIRED, failure, forEachStorage, useObjstore } from '../support/objstore-server.ts';
import { sendSigned, xmlElement } from '../support/signed-requests.ts';

const BUCKET = 'exports';
const KEY: ObjstoreKey = {
  accessKeyId: 'LPRANGES00000001',
  secretAccessKey: 'ranges-secret-0123456789abcdefghijklmno',
  permissions: ['create', 'delete', 'get', 'multipart'],
};

const DIGITS = '0123456789';
/** Large enough to be read in several pieces, by either storage (files in 64 KiB reads, memory in 1 MiB pieces). */
const LARGE = Buffer.from(Array.from({ length: 3 * 1024 * 1024 }, (_, i) => (i * 7919) % 251));

forEachStorage((storage) => {
  const ctx = useObjstore({
    directoryPrefix: 'objstore-ranges-',
    keys: [KEY],
    buckets: [BUCKET],
    clientConfig: CHECKSUMS_WHEN_REQUIRED,
    storage,
  });
  const client = () => ctx.client(KEY);

  const get = (range: string, method = 'GET', key = 'digits') =>
    sendSigned(ctx.objstore.url, KEY, { method, path: `/${BUCKET}/${key}`, headers: { range } });

  beforeAll(async () => {
    await client().send(new PutObjectCommand({ Bucket: BUCKET, Key: 'digits', Body: DIGITS }));
    await client().send(new PutObjectCommand({ Bucket: BUCKET, Key: 'large', Body: LARGE }));
    await client().send(new PutObjectCommand({ Bucket: BUCKET, Key: 'empty', Body: '' }));
  });

  describe('Range on GetObject', () => {
    it.each([
      ['bytes=0-8', '012345678', 'bytes 0-8/10'],
      ['bytes=1-1', '1', 'bytes 1-1/10'],
      ['bytes=0-0', '0', 'bytes 0-0/10'],
      ['bytes=1-', '123456789', 'bytes 1-9/10'],
      ['bytes=-2', '89', 'bytes 8-9/10'],
      ['bytes=-9', '123456789', 'bytes 1-9/10'],
      ['bytes=-15', DIGITS, 'bytes 0-9/10'],
      ['bytes=0-100', DIGITS, 'bytes 0-9/10'],
      ['bytes=9-9', '9', 'bytes 9-9/10'],
    ])('serves %s as 206 with Content-Range, Content-Length and Accept-Ranges', async (range, body, contentRange) => {
      const response = await get(range);
      expect([response.status, response.body]).toEqual([206, body]);
      expect(response.headers['content-range']).toBe(contentRange);
      expect(response.headers['content-length']).toBe(String(body.length));
      expect(response.headers['accept-ranges']).toBe('bytes');
    });

    it.each(['bytes=1-0', 'bytes=-1-', 'bytes=0--1', 'bytes=0-1,3-4,7-9', '0-1', 'bytes=-', 'items=0-1', 'bytes=a-b'])(
      'ignores %s as S3 does: the whole object, 200',
      async (range) => {
        const response = await get(range);
        expect([response.status, response.body, response.headers['content-range']]).toEqual([200, DIGITS, undefined]);
        expect(response.headers['content-length']).toBe('10');
      },
    );

    it.each([
      ['bytes=10-', 10],
      ['bytes=100-200', 10],
      ['bytes=-0', 10],
    ])('answers %s with 416 InvalidRange and Content-Range: bytes */size', async (range, size) => {
      const response = await get(range);
      expect(response.status).toBe(416);
      expect(response.headers['content-range']).toBe(`bytes */${size}`);
      expect(xmlElement(response.body, 'Code')).toBe('InvalidRange');
      expect(xmlElement(response.body, 'Message')).toBe('The requested range is not satisfiable');
      expect(xmlElement(response.body, 'RangeRequested')).toBe(range);
      expect(xmlElement(response.body, 'ActualObjectSize')).toBe(String(size));
      expect(xmlElement(response.body, 'RequestId')).toBe(response.headers['x-amz-request-id']);
      expect(xmlElement(response.body, 'HostId')).toBe(response.headers['x-amz-id-2']);
    });

    it('finds no satisfiable range in an empty object', async () => {
      for (const range of ['bytes=0-', 'bytes=-5']) {
        const response = await get(range, 'GET', 'empty');
        expect([response.status, response.headers['content-range']]).toEqual([416, 'bytes */0']);
      }
      expect((await get('bytes=0-1,2-3', 'GET', 'empty')).status).toBe(200);
    });

    it('reads the last bytes of a large object with the SDK, and a range from its middle', async () => {
      const suffix = await client().send(new GetObjectCommand({ Bucket: BUCKET, Key: 'large', Range: 'bytes=-7' }));
      expect(Buffer.from(await suffix.Body!.transformToByteArray()).equals(LARGE.subarray(LARGE.length - 7))).toBe(
        true,
      );
      expect([suffix.ContentRange, suffix.ContentLength]).toEqual([
        `bytes ${LARGE.length - 7}-${LARGE.length - 1}/${LARGE.length}`,
        7,
      ]);

      // Across the memory storage's pieces of 1 MiB.
      const middle = await client().send(
        new GetObjectCommand({ Bucket: BUCKET, Key: 'large', Range: 'bytes=1000000-2200000' }),
      );
      expect(Buffer.from(await middle.Body!.transformToByteArray()).equals(LARGE.subarray(1000000, 2200001))).toBe(
        true,
      );

      const whole = await client().send(new GetObjectCommand({ Bucket: BUCKET, Key: 'large' }));
      expect(Buffer.from(await whole.Body!.transformToByteArray()).equals(LARGE)).toBe(true);
    });

    it('answers the SDK an InvalidRange error past the end', async () => {
      const error = await failure(
        client().send(new GetObjectCommand({ Bucket: BUCKET, Key: 'digits', Range: 'bytes=10-20' })),
      );
      expect([error.name, error.$metadata.httpStatusCode]).toEqual(['InvalidRange', 416]);
    });

    it('answers the stored checksum for the whole object only', async () => {
      const unasked = await sendSigned(ctx.objstore.url, KEY, { method: 'GET', path: `/${BUCKET}/digits` });
      expect(unasked.headers['x-amz-checksum-crc64nvme']).toBeUndefined();
      const asked = await sendSigned(ctx.objstore.url, KEY, {
        method: 'GET',
        path: `/${BUCKET}/digits`,
        headers: { 'x-amz-checksum-mode': 'ENABLED' },
      });
      expect(asked.headers['x-amz-checksum-crc64nvme']).toMatch(/^[A-Za-z0-9+/]{11}=$/);
      const ranged = await sendSigned(ctx.objstore.url, KEY, {
        method: 'GET',
        path: `/${BUCKET}/digits`,
        headers: { 'x-amz-checksum-mode': 'ENABLED', range: 'bytes=0-1' },
      });
      expect([ranged.status, ranged.headers['x-amz-checksum-crc64nvme']]).toEqual([206, undefined]);
    });
  });

  describe('Range on HeadObject', () => {
    it('answers 206 with the headers of the range and no body', async () => {
      const response = await get('bytes=-3', 'HEAD');
      expect([response.status, response.body]).toEqual([206, '']);
      expect(response.headers['content-range']).toBe('bytes 7-9/10');
      expect(response.headers['content-length']).toBe('3');
    });

    it('answers 416 with an empty body', async () => {
      const response = await get('bytes=50-', 'HEAD');
      expect([response.status, response.body, response.headers['content-range']]).toEqual([416, '', 'bytes */10']);
      const sdk = await client().send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'digits', Range: 'bytes=2-4' }));
      expect([sdk.ContentRange, sdk.ContentLength]).toEqual(['bytes 2-4/10', 3]);
    });
  });
});
