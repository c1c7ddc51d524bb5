/**
 * The memory storage's budget, as S3 clients meet it: a body that would take the store past it is
 * refused with 507 InsufficientStorage naming objstore_memory_limit_mb, stores nothing and gives
 * its bytes back; deleting objects and aborting uploads free theirs.
 */
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  ListPartsCommand,
  PutObjectCommand,
  type S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import http from 'node:http';

import { beforeAll, beforeEach, describe, expect, it } from 'vitest';

import type { ObjstoreKey } from '../../src/objstore/index.ts';
import { CHECKSUMS_WHEN_REQUIRED, failure, useObjstore } from '../support/objstore-server.ts';
import { presignedPath } from '../support/signed-requests.ts';

const BUCKET = 'exports';
const KiB = 1024;
const MiB = 1024 * KiB;

const KEY: ObjstoreKey = {
  accessKeyId: 'LPMEMORYBUDGET01',
  secretAccessKey: 'memory-budget-secret-0123456789abcdefgh',
  permissions: ['create', 'delete', 'get', 'multipart'],
};

const ctx = useObjstore({
  directoryPrefix: 'objstore-memory-storage-',
  keys: [KEY],
  buckets: [BUCKET],
  clientConfig: CHECKSUMS_WHEN_REQUIRED,
  storage: 'memory',
  memoryBudgetBytes: () => MiB,
});
let client: S3Client;

beforeAll(() => {
  client = ctx.client(KEY);
});

beforeEach(async () => {
  await ctx.objstore.reset();
});

const put = (key: string, size: number) =>
  client.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: Buffer.alloc(size, key) }));
const listedKeys = async () =>
  ((await client.send(new ListObjectsV2Command({ Bucket: BUCKET }))).Contents ?? []).map((object) => object.Key);

/** Expects the request to have been refused as the store's memory being full. */
async function expectInsufficientStorage(request: Promise<unknown>): Promise<void> {
  const error = await failure(request);
  expect([error.$metadata.httpStatusCode, error.name]).toEqual([507, 'InsufficientStorage']);
  expect(error.message).toMatch(/objstore_memory_limit_mb/);
}

describe('a memory storage of 1 MiB', () => {
  it('refuses a PutObject of 2 MiB with 507 InsufficientStorage, stores nothing, and takes 100 KiB after', async () => {
    await expectInsufficientStorage(put('too-big.bin', 2 * MiB));
    expect(
      (await failure(client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'too-big.bin' })))).$metadata
        .httpStatusCode,
    ).toBe(404);
    expect(await listedKeys()).toEqual([]);

    // The refused body gave its bytes back.
    await put('fits.bin', 100 * KiB);
    const body = await (
      await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'fits.bin' }))
    ).Body!.transformToByteArray();
    expect(body.length).toBe(100 * KiB);
    expect(await listedKeys()).toEqual(['fits.bin']);
  });

  it('refuses an UploadPart past the budget the same way; the upload goes on, and aborting it frees its parts', async () => {
    const { UploadId } = await client.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: 'upload.bin' }));
    const part = (PartNumber: number, size: number) =>
      client.send(
        new UploadPartCommand({
          Bucket: BUCKET,
          Key: 'upload.bin',
          UploadId,
          PartNumber,
          Body: Buffer.alloc(size, PartNumber),
        }),
      );

    await expectInsufficientStorage(part(1, 2 * MiB));
    await part(1, 600 * KiB);
    const parts = await client.send(new ListPartsCommand({ Bucket: BUCKET, Key: 'upload.bin', UploadId }));
    expect(parts.Parts?.map(({ PartNumber, Size }) => [PartNumber, Size])).toEqual([[1, 600 * KiB]]);
    // The part holds 600 KiB of the budget: 600 more do not fit beside it.
    await expectInsufficientStorage(part(2, 600 * KiB));

    await client.send(new AbortMultipartUploadCommand({ Bucket: BUCKET, Key: 'upload.bin', UploadId }));
    await put('after-abort.bin', 900 * KiB);

    // An upload completed within the budget: its parts' bytes become the object's, counted once.
    await client.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: 'after-abort.bin' }));
    const { UploadId: second } = await client.send(
      new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: 'upload.bin' }),
    );
    const only = await client.send(
      new UploadPartCommand({
        Bucket: BUCKET,
        Key: 'upload.bin',
        UploadId: second,
        PartNumber: 1,
        Body: Buffer.alloc(600 * KiB, 1),
      }),
    );
    await client.send(
      new CompleteMultipartUploadCommand({
        Bucket: BUCKET,
        Key: 'upload.bin',
        UploadId: second,
        MultipartUpload: { Parts: [{ PartNumber: 1, ETag: only.ETag }] },
      }),
    );
    expect(await listedKeys()).toEqual(['upload.bin']);
    await put('beside.bin', 300 * KiB);
  });

  it('takes again what deleted objects held', async () => {
    await put('first.bin', 600 * KiB);
    await expectInsufficientStorage(put('second.bin', 600 * KiB));
    expect(await listedKeys()).toEqual(['first.bin']);

    await client.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: 'first.bin' }));
    await put('second.bin', 600 * KiB);
    expect(await listedKeys()).toEqual(['second.bin']);
    await client.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: 'second.bin' }));
    await put('whole.bin', 1000 * KiB);
    expect(await listedKeys()).toEqual(['whole.bin']);
  });

  it(
    'refuses a body announced past the budget before the client sends it: no 100 Continue for Expect: ' +
      '100-continue',
    async () => {
      const path = await presignedPath(ctx.objstore.url, KEY, {
        method: 'PUT',
        path: `/${BUCKET}/announced.bin`,
        expiresIn: 60,
      });
      const { status, continued } = await new Promise<{ status: number; continued: boolean }>((resolve, reject) => {
        let continued = false;
        const request = http.request(`${ctx.objstore.url}${path}`, {
          method: 'PUT',
          headers: { 'content-length': 2 * MiB, expect: '100-continue' },
        });
        request.on('continue', () => {
          continued = true;
          request.end(Buffer.alloc(2 * MiB));
        });
        request.on('response', (response) => {
          response.resume();
          request.destroy();
          resolve({ status: response.statusCode!, continued });
        });
        request.on('error', reject);
        request.flushHeaders();
      });
      expect({ status, continued }).toEqual({ status: 507, continued: false });
      expect(await listedKeys()).toEqual([]);
    },
  );
});
