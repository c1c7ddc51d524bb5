import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsCommand,
  ListObjectsV2Command,
  ListPartsCommand,
  type S3Client,
  UploadPartCommand,
  type ListMultipartUploadsCommandOutput,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';

import type { ObjstoreKey } from '../../src/objstore/index.ts';
import { CHECKSUMS_WHEN_REQUIRED, failure, forEachStorage, useObjstore } from '../support/objstore-server.ts';

const BUCKET = 'exports';
const MiB = 1024 * 1024;

const FULL: ObjstoreKey = {
  accessKeyId: 'LPMPUFULL0000001',
  secretAccessKey: 'mpu-full-secret-0123456789abcdefghijkl',
  permissions: ['create', 'delete', 'get', 'multipart'],
};
const NO_MULTIPART: ObjstoreKey = {
  accessKeyId: 'LPMPUNOMULTI0001',
  secretAccessKey: 'mpu-no-multipart-secret-0123456789abcd',
  permissions: ['create', 'delete', 'get'],
};

const md5 = (data: Buffer | string) => createHash('md5').update(data).digest();

/** S3's ETag of an object uploaded in these parts, computed here independently of the store. */
function expectedMultipartEtag(parts: readonly Buffer[]): string {
  return `"${createHash('md5')
    .update(Buffer.concat(parts.map((part) => md5(part))))
    .digest('hex')}-${parts.length}"`;
}

function splitIntoParts(body: Buffer, partSize: number): Buffer[] {
  const parts: Buffer[] = [];
  for (let offset = 0; offset < body.length; offset += partSize) parts.push(body.subarray(offset, offset + partSize));
  return parts;
}

async function eventually<T>(probe: () => Promise<T | undefined>, what: string): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

forEachStorage((storage) => {
  const ctx = useObjstore({
    directoryPrefix: 'objstore-multipart-',
    keys: [FULL, NO_MULTIPART],
    buckets: [BUCKET],
    clientConfig: CHECKSUMS_WHEN_REQUIRED,
    storage,
  });
  let full: S3Client;
  let noMultipart: S3Client;

  async function createUpload(key: string, client = full): Promise<string> {
    return (await client.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: key }))).UploadId!;
  }

  async function uploadPart(key: string, uploadId: string, partNumber: number, body: Buffer | string) {
    return full.send(
      new UploadPartCommand({ Bucket: BUCKET, Key: key, UploadId: uploadId, PartNumber: partNumber, Body: body }),
    );
  }

  const uploadsOf = (page: ListMultipartUploadsCommandOutput) =>
    (page.Uploads ?? []).map((upload) => ({ key: upload.Key!, uploadId: upload.UploadId! }));

  async function uploadsInProgress(): Promise<{ key: string; uploadId: string }[]> {
    return uploadsOf(await full.send(new ListMultipartUploadsCommand({ Bucket: BUCKET })));
  }

  beforeAll(() => {
    full = ctx.client(FULL);
    noMultipart = ctx.client(NO_MULTIPART);
  });

  beforeEach(async () => {
    await ctx.objstore.reset();
  });

  describe('CompleteMultipartUpload', () => {
    it("gives a lib-storage upload S3's multipart ETag, shown alike by HeadObject, GetObject and the listings", async () => {
      const body = randomBytes(12 * MiB + 123);
      const upload = new Upload({
        client: full,
        params: { Bucket: BUCKET, Key: 'big/export.parquet', Body: body },
        partSize: 5 * MiB,
        queueSize: 2,
      });
      const result = await upload.done();
      const etag = expectedMultipartEtag(splitIntoParts(body, 5 * MiB));
      expect(etag).toMatch(/^"[0-9a-f]{32}-3"$/);
      expect(result.ETag).toBe(etag);

      const head = await full.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'big/export.parquet' }));
      expect(head.ETag).toBe(etag);
      expect(head.ContentLength).toBe(body.length);

      const get = await full.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'big/export.parquet' }));
      expect(get.ETag).toBe(etag);
      expect(Buffer.from(await get.Body!.transformToByteArray()).equals(body)).toBe(true);

      const v2 = await full.send(new ListObjectsV2Command({ Bucket: BUCKET }));
      expect(v2.Contents).toEqual([
        expect.objectContaining({ Key: 'big/export.parquet', ETag: etag, Size: body.length }),
      ]);
      const v1 = await full.send(new ListObjectsCommand({ Bucket: BUCKET }));
      expect(v1.Contents).toEqual([
        expect.objectContaining({ Key: 'big/export.parquet', ETag: etag, Size: body.length }),
      ]);
      expect(await uploadsInProgress()).toEqual([]);
    });

    it('refuses EntityTooSmall when a part but the last is under 5 MiB, and keeps the upload', async () => {
      const uploadId = await createUpload('small.bin');
      const first = await uploadPart('small.bin', uploadId, 1, 'tiny');
      const second = await uploadPart('small.bin', uploadId, 2, 'tail');
      const complete = (firstEtag: string) =>
        full.send(
          new CompleteMultipartUploadCommand({
            Bucket: BUCKET,
            Key: 'small.bin',
            UploadId: uploadId,
            MultipartUpload: {
              Parts: [
                { PartNumber: 1, ETag: firstEtag },
                { PartNumber: 2, ETag: second.ETag },
              ],
            },
          }),
        );

      const error = await failure(complete(first.ETag!));
      expect(error.name).toBe('EntityTooSmall');
      expect(error.message).toBe('Your proposed upload is smaller than the minimum allowed object size.');
      expect(error.$metadata?.httpStatusCode).toBe(400);
      const parts = await full.send(new ListPartsCommand({ Bucket: BUCKET, Key: 'small.bin', UploadId: uploadId }));
      expect(parts.Parts?.map((part) => part.PartNumber)).toEqual([1, 2]);

      // Exactly 5 MiB is enough; the last part may be any size.
      const bigFirst = randomBytes(5 * MiB);
      const replaced = await uploadPart('small.bin', uploadId, 1, bigFirst);
      const done = await complete(replaced.ETag!);
      expect(done.ETag).toBe(expectedMultipartEtag([bigFirst, Buffer.from('tail')]));
    });
  });

  describe('AbortMultipartUpload', () => {
    it('answers 204 and forgets the upload: its parts, UploadPart, Complete and ListParts', async () => {
      const uploadId = await createUpload('aborted.bin');
      const part = await uploadPart('aborted.bin', uploadId, 1, 'part one');

      const aborted = await full.send(
        new AbortMultipartUploadCommand({ Bucket: BUCKET, Key: 'aborted.bin', UploadId: uploadId }),
      );
      expect(aborted.$metadata.httpStatusCode).toBe(204);
      if (storage === 'files')
        expect(fs.existsSync(path.join(ctx.directory, BUCKET, '._S3rver_uploads', uploadId))).toBe(false);
      expect(ctx.journal().at(-1)).toMatchObject({ operation: 'AbortMultipartUpload', status: 204, errorCode: null });

      const refusals: (() => Promise<unknown>)[] = [
        () => full.send(new ListPartsCommand({ Bucket: BUCKET, Key: 'aborted.bin', UploadId: uploadId })),
        () => uploadPart('aborted.bin', uploadId, 2, 'part two'),
        () =>
          full.send(
            new CompleteMultipartUploadCommand({
              Bucket: BUCKET,
              Key: 'aborted.bin',
              UploadId: uploadId,
              MultipartUpload: { Parts: [{ PartNumber: 1, ETag: part.ETag }] },
            }),
          ),
        () => full.send(new AbortMultipartUploadCommand({ Bucket: BUCKET, Key: 'aborted.bin', UploadId: uploadId })),
      ];
      for (const refusal of refusals) {
        const error = await failure(refusal());
        expect(error.name).toBe('NoSuchUpload');
        expect(error.$metadata?.httpStatusCode).toBe(404);
      }
      expect(await uploadsInProgress()).toEqual([]);
      expect((await full.send(new ListObjectsV2Command({ Bucket: BUCKET }))).KeyCount).toBe(0);
    });

    it('aborts the upload a lib-storage Upload leaves behind when it is aborted', async () => {
      const upload = new Upload({
        client: full,
        params: { Bucket: BUCKET, Key: 'cancelled.bin', Body: randomBytes(15 * MiB + 1) },
        partSize: 5 * MiB,
        queueSize: 1,
      });
      upload.on('httpUploadProgress', (progress) => {
        if (progress.part === 1) void upload.abort();
      });
      const error = await failure(upload.done());
      expect(error.name).toBe('AbortError');

      const abort = await eventually(
        async () => ctx.journal().find((record) => record.operation === 'AbortMultipartUpload'),
        'the uploader to abort its upload',
      );
      expect(abort).toMatchObject({ key: 'cancelled.bin', status: 204 });
      expect(await uploadsInProgress()).toEqual([]);
      const head = await failure(full.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'cancelled.bin' })));
      expect(head.$metadata?.httpStatusCode).toBe(404);
    });
  });

  describe('ListParts', () => {
    it('lists the parts uploaded so far, page by page', async () => {
      const created = await full.send(
        new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: 'parts.bin', StorageClass: 'STANDARD_IA' }),
      );
      const uploadId = created.UploadId!;
      const bodies = new Map([
        [1, 'first part'],
        [2, 'second part'],
        [3, 'third'],
        [5, 'fifth part, after a gap'],
      ]);
      for (const [number, body] of bodies) await uploadPart('parts.bin', uploadId, number, body);
      await uploadPart('parts.bin', uploadId, 2, 'second part, uploaded again');
      bodies.set(2, 'second part, uploaded again');

      const first = await full.send(
        new ListPartsCommand({ Bucket: BUCKET, Key: 'parts.bin', UploadId: uploadId, MaxParts: 2 }),
      );
      expect(first).toMatchObject({
        Bucket: BUCKET,
        Key: 'parts.bin',
        UploadId: uploadId,
        StorageClass: 'STANDARD_IA',
        MaxParts: 2,
        IsTruncated: true,
        NextPartNumberMarker: '2',
        Initiator: { ID: expect.stringMatching(/^[0-9a-f]{64}$/) },
        Owner: { ID: expect.stringMatching(/^[0-9a-f]{64}$/) },
      });
      expect(first.Parts).toEqual(
        [1, 2].map((number) =>
          expect.objectContaining({
            PartNumber: number,
            ETag: `"${md5(bodies.get(number)!).toString('hex')}"`,
            Size: Buffer.byteLength(bodies.get(number)!),
            LastModified: expect.any(Date),
          }),
        ),
      );

      const second = await full.send(
        new ListPartsCommand({ Bucket: BUCKET, Key: 'parts.bin', UploadId: uploadId, PartNumberMarker: '2' }),
      );
      expect(second).toMatchObject({
        PartNumberMarker: '2',
        NextPartNumberMarker: '5',
        IsTruncated: false,
        MaxParts: 1000,
      });
      expect(second.Parts?.map((part) => part.PartNumber)).toEqual([3, 5]);

      // As on S3, NextPartNumberMarker is there on the last page too (0 on an empty one): clients
      // page until IsTruncated is false.
      const numbers: number[] = [];
      let marker: string | undefined;
      for (;;) {
        const page = await full.send(
          new ListPartsCommand({
            Bucket: BUCKET,
            Key: 'parts.bin',
            UploadId: uploadId,
            MaxParts: 1,
            PartNumberMarker: marker,
          }),
        );
        numbers.push(...(page.Parts ?? []).map((part) => part.PartNumber!));
        if (!page.IsTruncated) break;
        marker = page.NextPartNumberMarker;
      }
      expect(numbers).toEqual([1, 2, 3, 5]);
      const beyond = await full.send(
        new ListPartsCommand({ Bucket: BUCKET, Key: 'parts.bin', UploadId: uploadId, PartNumberMarker: '5' }),
      );
      expect(beyond).toMatchObject({ IsTruncated: false, NextPartNumberMarker: '0' });
      expect(beyond.Parts).toBeUndefined();
    });

    it('answers NoSuchUpload for an upload of another key', async () => {
      const uploadId = await createUpload('mine.bin');
      const error = await failure(
        full.send(new ListPartsCommand({ Bucket: BUCKET, Key: 'theirs.bin', UploadId: uploadId })),
      );
      expect(error.name).toBe('NoSuchUpload');
    });
  });

  describe('ListMultipartUploads', () => {
    it('lists uploads in progress by key, then by initiation, with prefixes, delimiters and markers', async () => {
      const firstA = await createUpload('mp/a.bin');
      await new Promise((resolve) => setTimeout(resolve, 20));
      const secondA = await createUpload('mp/a.bin');
      const b = await createUpload('mp/b.bin');
      const c = await createUpload('mp/sub/c.bin');
      const other = await createUpload('other.bin');
      const done = await createUpload('done.bin');
      const part = await uploadPart('done.bin', done, 1, 'done');
      await full.send(
        new CompleteMultipartUploadCommand({
          Bucket: BUCKET,
          Key: 'done.bin',
          UploadId: done,
          MultipartUpload: { Parts: [{ PartNumber: 1, ETag: part.ETag }] },
        }),
      );

      const all = await full.send(new ListMultipartUploadsCommand({ Bucket: BUCKET }));
      const expected = [
        { key: 'mp/a.bin', uploadId: firstA },
        { key: 'mp/a.bin', uploadId: secondA },
        { key: 'mp/b.bin', uploadId: b },
        { key: 'mp/sub/c.bin', uploadId: c },
        { key: 'other.bin', uploadId: other },
      ];
      expect(uploadsOf(all)).toEqual(expected);
      expect(all).toMatchObject({ Bucket: BUCKET, MaxUploads: 1000, IsTruncated: false, NextKeyMarker: 'other.bin' });
      expect(all.Uploads![0]).toMatchObject({
        StorageClass: 'STANDARD',
        Initiated: expect.any(Date),
        Initiator: { ID: expect.stringMatching(/^[0-9a-f]{64}$/) },
        Owner: { ID: expect.stringMatching(/^[0-9a-f]{64}$/) },
      });

      const grouped = await full.send(
        new ListMultipartUploadsCommand({ Bucket: BUCKET, Prefix: 'mp/', Delimiter: '/' }),
      );
      expect(uploadsOf(grouped)).toEqual(expected.slice(0, 3));
      expect(grouped.CommonPrefixes).toEqual([{ Prefix: 'mp/sub/' }]);
      expect(grouped).toMatchObject({ Prefix: 'mp/', Delimiter: '/' });

      const paged: { key: string; uploadId: string }[] = [];
      let markers: { KeyMarker?: string; UploadIdMarker?: string } = {};
      for (;;) {
        const page = await full.send(new ListMultipartUploadsCommand({ Bucket: BUCKET, MaxUploads: 2, ...markers }));
        paged.push(...uploadsOf(page));
        if (!page.IsTruncated) break;
        markers = { KeyMarker: page.NextKeyMarker, UploadIdMarker: page.NextUploadIdMarker };
      }
      expect(paged).toEqual(expected);

      const afterKey = await full.send(new ListMultipartUploadsCommand({ Bucket: BUCKET, KeyMarker: 'mp/a.bin' }));
      expect(uploadsOf(afterKey)).toEqual(expected.slice(2));
      const unknownMarker = await failure(
        full.send(
          new ListMultipartUploadsCommand({ Bucket: BUCKET, KeyMarker: 'mp/a.bin', UploadIdMarker: 'nosuchupload' }),
        ),
      );
      expect(unknownMarker.name).toBe('InvalidArgument');
    });
  });

  describe('permissions', () => {
    it('refuses every multipart operation to a key without the multipart permission', async () => {
      const uploadId = await createUpload('guarded.bin');
      const part = await uploadPart('guarded.bin', uploadId, 1, 'guarded');
      const refused: (() => Promise<unknown>)[] = [
        () => noMultipart.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: 'guarded.bin' })),
        () =>
          noMultipart.send(
            new UploadPartCommand({ Bucket: BUCKET, Key: 'guarded.bin', UploadId: uploadId, PartNumber: 2, Body: 'x' }),
          ),
        () => noMultipart.send(new ListPartsCommand({ Bucket: BUCKET, Key: 'guarded.bin', UploadId: uploadId })),
        () => noMultipart.send(new ListMultipartUploadsCommand({ Bucket: BUCKET })),
        () =>
          noMultipart.send(new AbortMultipartUploadCommand({ Bucket: BUCKET, Key: 'guarded.bin', UploadId: uploadId })),
        () =>
          noMultipart.send(
            new CompleteMultipartUploadCommand({
              Bucket: BUCKET,
              Key: 'guarded.bin',
              UploadId: uploadId,
              MultipartUpload: { Parts: [{ PartNumber: 1, ETag: part.ETag }] },
            }),
          ),
      ];
      for (const request of refused) {
        const error = await failure(request());
        expect(error.name).toBe('AccessDenied');
        expect(error.$metadata?.httpStatusCode).toBe(403);
      }
      const operations = ctx
        .journal()
        .filter((record) => record.accessKeyId === NO_MULTIPART.accessKeyId)
        .map((record) => [record.operation, record.status]);
      expect(operations).toEqual(
        [
          'CreateMultipartUpload',
          'UploadPart',
          'ListParts',
          'ListMultipartUploads',
          'AbortMultipartUpload',
          'CompleteMultipartUpload',
        ].map((operation) => [operation, 403]),
      );

      expect(await uploadsInProgress()).toEqual([{ key: 'guarded.bin', uploadId }]);
      const parts = await full.send(new ListPartsCommand({ Bucket: BUCKET, Key: 'guarded.bin', UploadId: uploadId }));
      expect(parts.Parts?.map((p) => p.PartNumber)).toEqual([1]);
    });
  });
});
