/**
 * The admin API's object writes (PUT and DELETE /_localplane/objstore/buckets/{bucket}/object?key=): an object put
 * there reads back over S3 as a PutObject of the same bytes does (content, ETag, checksum, content type) and is a
 * plain file of the file view; one deleted there is gone for S3 and from the file view; unknown buckets and keys,
 * over-long keys and the memory storage's budget are refused in the API's shape.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { ChecksumMode, HeadObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createLocalplane, LocalplaneError, type InProcessLocalplane } from '../../src/index.ts';
import { fixturesOf } from '../support/in-process.ts';
import { fullKey } from '../support/instance.ts';
import { getBytes, s3For } from '../support/objstore.ts';
import { failure } from '../support/objstore-server.ts';

const BUCKET = 'warehouse-landing';
const CONTENT = Buffer.from('id,name\n1,ada\n2,grace\n');

const objectPath = (bucket: string, key: string) =>
  `/_localplane/objstore/buckets/${encodeURIComponent(bucket)}/object?key=${encodeURIComponent(key)}`;

/** The LocalplaneError a call fails with. */
async function refusal(call: Promise<unknown>): Promise<LocalplaneError> {
  const error = await call.then(
    () => null,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(LocalplaneError);
  return error as LocalplaneError;
}

describe('with the files storage', () => {
  let lp: InProcessLocalplane;
  let s3: S3Client;

  beforeAll(async () => {
    lp = await createLocalplane({ log: () => {} });
    s3 = s3For(await lp.objstoreEndpoint(), fullKey(await fixturesOf(lp)));
  });
  afterAll(async () => {
    s3?.destroy();
    await lp?.stop();
  });

  it('puts an object as S3 PutObject does: same bytes, ETag, checksum and content type, and a plain file', async () => {
    const put = await lp.objstore.putObject(BUCKET, 'admin/rows.csv', CONTENT, { contentType: 'text/csv' });
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 's3/rows.csv', Body: CONTENT, ContentType: 'text/csv' }));
    const head = (key: string) =>
      s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: key, ChecksumMode: ChecksumMode.ENABLED }));
    const [viaAdmin, viaS3] = await Promise.all([head('admin/rows.csv'), head('s3/rows.csv')]);

    expect(Buffer.from(await getBytes(s3, BUCKET, 'admin/rows.csv')).equals(CONTENT)).toBe(true);
    expect(viaAdmin.ETag).toBe(viaS3.ETag);
    expect(viaAdmin.ChecksumCRC64NVME).toBeDefined();
    expect(viaAdmin.ChecksumCRC64NVME).toBe(viaS3.ChecksumCRC64NVME);
    expect(viaAdmin.ContentType).toBe('text/csv');
    expect(put).toMatchObject({
      bucket: BUCKET,
      key: 'admin/rows.csv',
      size: CONTENT.length,
      etag: viaS3.ETag,
      content_type: 'text/csv',
      checksums: { CRC64NVME: viaS3.ChecksumCRC64NVME },
    });
    expect(readFileSync(join(lp.filesDir!, BUCKET, 'admin/rows.csv')).equals(CONTENT)).toBe(true);
  });

  it('answers 201 for a new object and 200 for one replaced, application/octet-stream without a content type', async () => {
    const send = () => lp.request(objectPath(BUCKET, 'admin/blob.bin'), { method: 'PUT', body: CONTENT });
    const created = await send();
    expect(created.status).toBe(201);
    expect(((await created.json()) as { content_type: string }).content_type).toBe('application/octet-stream');
    expect((await send()).status).toBe(200);
  });

  it('deletes an object: S3 HeadObject is then 404 and the plain file is gone', async () => {
    await lp.objstore.putObject(BUCKET, 'admin/gone.csv', CONTENT);
    await lp.objstore.deleteObject(BUCKET, 'admin/gone.csv');
    const error = await failure(s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'admin/gone.csv' })));
    expect(error.$metadata.httpStatusCode).toBe(404);
    expect(existsSync(join(lp.filesDir!, BUCKET, 'admin/gone.csv'))).toBe(false);
  });

  it('answers 404 in the API shape for an unknown bucket or key', async () => {
    expect(await refusal(lp.objstore.deleteObject(BUCKET, 'admin/never.csv'))).toMatchObject({
      status: 404,
      detail: `Object admin/never.csv not found in bucket ${BUCKET}`,
    });
    expect(await refusal(lp.objstore.deleteObject('no-such-bucket', 'a.csv'))).toMatchObject({
      status: 404,
      detail: 'Bucket no-such-bucket not found',
    });
    expect(await refusal(lp.objstore.putObject('no-such-bucket', 'a.csv', CONTENT))).toMatchObject({
      status: 404,
      detail: 'Bucket no-such-bucket not found',
    });
  });

  it('refuses a key over 1024 bytes with a 422 and stores nothing', async () => {
    const key = 'k'.repeat(1025);
    const error = await refusal(lp.objstore.putObject(BUCKET, key, CONTENT));
    expect(error.status).toBe(422);
    expect(JSON.stringify(error.detail)).toContain('at most 1024 bytes');
    expect((await lp.objstore.objects(BUCKET, { prefix: 'kkk' })).objects).toEqual([]);
  });
});

describe('with the memory storage', () => {
  let lp: InProcessLocalplane;

  beforeAll(async () => {
    lp = await createLocalplane({
      log: () => {},
      objstoreStorage: 'memory',
      limits: { objstore_memory_limit_mb: 1 },
    });
  });
  afterAll(() => lp?.stop());

  it('refuses an object past the budget with a 507 naming the limit, and keeps one within it', async () => {
    const error = await refusal(lp.objstore.putObject(BUCKET, 'big.bin', Buffer.alloc(2 * 1024 * 1024, 1)));
    expect(error.status).toBe(507);
    expect(String(error.detail)).toContain('objstore_memory_limit_mb');
    expect((await lp.objstore.objects(BUCKET)).objects.map((object) => object.key)).not.toContain('big.bin');

    await lp.objstore.putObject(BUCKET, 'small.bin', CONTENT);
    expect((await lp.objstore.object(BUCKET, 'small.bin')).size).toBe(CONTENT.length);
  });
});
