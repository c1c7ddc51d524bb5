/**
 * Uploads as large as S3 allows them: 10,000 parts; and 2,000 uploads in progress in a bucket.
 * The store runs in its own process with 512 file descriptors (test/objstore/support/process.ts),
 * so reading thousands of part and upload files at once would run out of them (EMFILE) here
 * whatever this machine's own limit.
 */
import { createHash } from 'node:crypto';

import {
  CompleteMultipartUploadCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  type ListMultipartUploadsCommandOutput,
  ListPartsCommand,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { beforeAll, describe, expect, it } from 'vitest';

import type { ObjstoreKey } from '../../src/objstore/index.ts';
import { CHECKSUMS_WHEN_REQUIRED, s3ClientFor } from '../support/objstore-server.ts';
import { useObjstoreProcess } from './support/process.ts';
import { keepAliveSender, xmlElement, type SignedRequest } from '../support/signed-requests.ts';

const FULL: ObjstoreKey = {
  accessKeyId: 'LPMANYPARTS00001',
  secretAccessKey: 'many-parts-secret-0123456789abcdefghij',
  permissions: ['create', 'delete', 'get', 'multipart'],
};

const store = useObjstoreProcess({
  directoryPrefix: 'objstore-many-parts-',
  keys: [FULL],
  buckets: ['parts', 'uploads'],
  maxOpenFiles: 512,
  // S3's 5 MiB for every part but the last would make 10,000 parts 50 GB.
  minPartSize: 1,
});
let s3: S3Client;
/** Thousands of parts and uploads are made with plain signed requests: the SDK would take several times as long. */
let send: (request: SignedRequest) => Promise<{ status: number; headers: Record<string, unknown>; body: string }>;

beforeAll(() => {
  s3 = s3ClientFor(store.url, FULL, CHECKSUMS_WHEN_REQUIRED);
  const sender = keepAliveSender(store.url, FULL, 8);
  send = async (request) => {
    const reply = await sender.send(request);
    if (reply.status !== 200) throw new Error(`${request.method} ${request.path}: ${reply.status} ${reply.body}`);
    return reply;
  };
  return () => {
    s3.destroy();
    sender.close();
  };
});

async function createUpload(bucket: string, key: string): Promise<string> {
  return xmlElement(
    (await send({ method: 'POST', path: `/${bucket}/${key}`, query: { uploads: '' } })).body,
    'UploadId',
  )!;
}

/** Calls `task` for 0..count-1, `atOnce` at a time (as a client's own upload concurrency). */
async function inTurns<T>(count: number, atOnce: number, task: (index: number) => Promise<T>): Promise<T[]> {
  const results: T[] = new Array<T>(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: atOnce }, async () => {
      while (next < count) {
        const index = next++;
        results[index] = await task(index);
      }
    }),
  );
  return results;
}

const md5 = (data: Buffer | string) => createHash('md5').update(data).digest();

/** Making 10,000 parts takes 10 s on a quiet machine; a loaded one may take several times that. */
const MAKING_THOUSANDS_MS = 300_000;

describe('an upload of 10,000 parts', () => {
  const PARTS = 10_000;
  const key = 'exports/ten-thousand-parts.bin';
  const partBody = (number: number) => `part ${number} of ${PARTS}\n`;
  let uploadId: string;
  let etags: string[];

  beforeAll(async () => {
    uploadId = await createUpload('parts', key);
    etags = await inTurns(PARTS, 8, async (index) => {
      const query = { partNumber: String(index + 1), uploadId };
      return String(
        (await send({ method: 'PUT', path: `/parts/${key}`, query, body: partBody(index + 1) })).headers['etag'],
      );
    });
  }, MAKING_THOUSANDS_MS);

  it('ListParts pages through every part with max-parts and part-number-marker, as S3', async () => {
    for (const maxParts of [undefined, 700]) {
      const listed: { number: number; etag: string }[] = [];
      let marker: string | undefined;
      let pages = 0;
      for (;;) {
        const page = await s3.send(
          new ListPartsCommand({
            Bucket: 'parts',
            Key: key,
            UploadId: uploadId,
            MaxParts: maxParts,
            PartNumberMarker: marker,
          }),
        );
        pages++;
        expect(page.MaxParts).toBe(maxParts ?? 1000);
        expect(page.Parts!.length).toBeLessThanOrEqual(maxParts ?? 1000);
        listed.push(...page.Parts!.map((part) => ({ number: part.PartNumber!, etag: part.ETag! })));
        if (!page.IsTruncated) break;
        marker = page.NextPartNumberMarker;
      }
      expect(pages).toBe(Math.ceil(PARTS / (maxParts ?? 1000)));
      expect(listed).toEqual(etags.map((etag, index) => ({ number: index + 1, etag })));
    }
  });

  it('CompleteMultipartUpload joins them: the object has their bytes in order and the ETag "<md5>-10000"', async () => {
    const result = await s3.send(
      new CompleteMultipartUploadCommand({
        Bucket: 'parts',
        Key: key,
        UploadId: uploadId,
        MultipartUpload: { Parts: etags.map((ETag, index) => ({ ETag, PartNumber: index + 1 })) },
      }),
    );
    const bodies = Array.from({ length: PARTS }, (_, index) => partBody(index + 1));
    const etag = `"${createHash('md5')
      .update(Buffer.concat(bodies.map((body) => md5(body))))
      .digest('hex')}-10000"`;
    expect(result.ETag).toBe(etag);
    expect((await s3.send(new HeadObjectCommand({ Bucket: 'parts', Key: key }))).ETag).toBe(etag);
    const object = await s3.send(new GetObjectCommand({ Bucket: 'parts', Key: key }));
    expect(await object.Body!.transformToString()).toBe(bodies.join(''));
  });
});

describe('2,000 uploads in progress in one bucket', () => {
  // Four times the store's file descriptors, in two pages.
  const UPLOADS = 2_000;
  // Four uploads of each key, so pages also end between uploads of one key (upload-id-marker).
  const keyOf = (index: number) => `in-progress/${String(index % (UPLOADS / 4)).padStart(4, '0')}`;
  let uploadIds: string[];

  beforeAll(async () => {
    uploadIds = await inTurns(UPLOADS, 8, (index) => createUpload('uploads', keyOf(index)));
  }, MAKING_THOUSANDS_MS);

  async function listAll(): Promise<{
    uploads: { key: string; uploadId: string }[];
    pages: ListMultipartUploadsCommandOutput[];
  }> {
    const uploads: { key: string; uploadId: string }[] = [];
    const pages: ListMultipartUploadsCommandOutput[] = [];
    let keyMarker: string | undefined;
    let uploadIdMarker: string | undefined;
    for (;;) {
      const page = await s3.send(
        new ListMultipartUploadsCommand({ Bucket: 'uploads', KeyMarker: keyMarker, UploadIdMarker: uploadIdMarker }),
      );
      pages.push(page);
      uploads.push(...(page.Uploads ?? []).map((upload) => ({ key: upload.Key!, uploadId: upload.UploadId! })));
      if (!page.IsTruncated) return { uploads, pages };
      keyMarker = page.NextKeyMarker;
      uploadIdMarker = page.NextUploadIdMarker;
    }
  }

  it('ListMultipartUploads pages them (1,000 a page by default, key-marker and upload-id-marker), each once, by key', async () => {
    const { uploads, pages } = await listAll();
    expect(pages).toHaveLength(UPLOADS / 1000);
    expect(pages.every((page) => page.MaxUploads === 1000 && page.Uploads!.length === 1000)).toBe(true);
    expect(uploads.map((upload) => upload.uploadId).sort()).toEqual([...uploadIds].sort());
    const keys = uploads.map((upload) => upload.key);
    expect(keys).toEqual([...keys].sort());
    // Pages of 700 end between uploads of one key: upload-id-marker resumes there.
    const first = await s3.send(new ListMultipartUploadsCommand({ Bucket: 'uploads', MaxUploads: 701 }));
    const second = await s3.send(
      new ListMultipartUploadsCommand({
        Bucket: 'uploads',
        MaxUploads: 701,
        KeyMarker: first.NextKeyMarker,
        UploadIdMarker: first.NextUploadIdMarker,
      }),
    );
    expect([...first.Uploads!, ...second.Uploads!].map((upload) => upload.UploadId)).toEqual(
      uploads.slice(0, 1402).map((upload) => upload.uploadId),
    );
  });

  it('ListParts of one of them answers, and PutObjects sent while they are listed all succeed', async () => {
    const uploadId = uploadIds[1234]!;
    const key = keyOf(1234);
    const part = await s3.send(
      new UploadPartCommand({ Bucket: 'uploads', Key: key, UploadId: uploadId, PartNumber: 3, Body: 'one part' }),
    );
    const parts = await s3.send(new ListPartsCommand({ Bucket: 'uploads', Key: key, UploadId: uploadId }));
    expect(parts.Parts).toEqual([expect.objectContaining({ PartNumber: 3, ETag: part.ETag, Size: 8 })]);

    const listings = Promise.all(
      Array.from({ length: 3 }, () => s3.send(new ListMultipartUploadsCommand({ Bucket: 'uploads' }))),
    );
    const puts = await inTurns(200, 50, (index) =>
      s3.send(new PutObjectCommand({ Bucket: 'uploads', Key: `objects/${index}`, Body: `object ${index}` })),
    );
    expect(puts.every((put) => put.ETag !== undefined)).toBe(true);
    expect((await listings).map((page) => page.Uploads!.length)).toEqual([1000, 1000, 1000]);
  });
});
