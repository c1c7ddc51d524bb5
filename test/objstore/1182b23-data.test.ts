/**
 * The objstore reads what commit 1182b23 stored (through s3rver's FilesystemStore): a data dir
 * and a snapshot that commit made (test/objstore/data/1182b23, made by its make.ts), started
 * and restored by the current code, answer over S3 exactly what 1182b23 answered about them
 * (expected.json): bytes, ETags, metadata, checksums, parts, tags, uploads in progress, CORS.
 * Then the current code goes on with them: it completes the upload 1182b23 left unfinished,
 * retags and deletes its objects.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { brotliDecompressSync } from 'node:zlib';
import {
  CompleteMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  GetObjectTaggingCommand,
  HeadObjectCommand,
  ListPartsCommand,
  PutObjectTaggingCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { afterAll, describe, expect, it } from 'vitest';

import { createLocalplane, type InProcessLocalplane } from '../../src/index.ts';
import { getBytes } from '../support/objstore.ts';
import { readSnapshotParts, snapshotBytes } from '../support/snapshot-files.ts';
import { captureStore, s3ClientAt, withoutTimes, type CapturedStore } from './support/contents.ts';

const DATA = path.join(import.meta.dirname, 'data/1182b23');
const FIXTURES = path.join(DATA, 'fixtures');
const FULL_KEY = { accessKeyId: 'LPTESTFULLACCESS0001', secretAccessKey: 'lp-test-secret-full-access-0001' };
const expected = JSON.parse(readFileSync(path.join(DATA, 'expected.json'), 'utf8')) as CapturedStore;
const BUCKETS = Object.keys(expected);
const CREATED_BUCKET = 'made-over-s3';

const scratch = mkdtempSync(path.join(tmpdir(), 'localplane-1182b23-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function writeFile(file: string, data: Buffer): string {
  writeFileSync(file, data);
  return file;
}

/** The data dir 1182b23 left, unpacked with its files' times (an object's LastModified is its file's). */
function unpackDataDir(): string {
  const dataDir = path.join(scratch, 'data-dir');
  rmSync(dataDir, { recursive: true, force: true });
  mkdirSync(dataDir);
  execFileSync('tar', ['-xf', '-', '-C', dataDir], {
    input: brotliDecompressSync(readFileSync(path.join(DATA, 'data-dir.tar.br'))),
  });
  return dataDir;
}

/** The CORS headers of a signed GetObject a page of `origin` sends. */
async function corsHeadersOfGet(endpoint: string, origin: string): Promise<Record<string, string>> {
  const s3 = s3ClientAt(endpoint, FULL_KEY);
  let headers: Record<string, string> = {};
  s3.middlewareStack.add(
    (next) => async (args) => {
      (args.request as { headers: Record<string, string> }).headers['origin'] = origin;
      const result = await next(args);
      headers = (result.response as { headers: Record<string, string> }).headers;
      return result;
    },
    { step: 'finalizeRequest' },
  );
  await s3.send(new GetObjectCommand({ Bucket: CREATED_BUCKET, Key: 'inside.txt' }));
  return Object.fromEntries(Object.entries(headers).filter(([name]) => name.startsWith('access-control-')));
}

async function goOnWith(lp: InProcessLocalplane, s3: S3Client, endpoint: string): Promise<void> {
  // The CORS rules s3rver wrote let their origin in, preflight and request.
  const preflight = (origin: string) =>
    fetch(`${endpoint}/${CREATED_BUCKET}/inside.txt`, {
      method: 'OPTIONS',
      headers: { origin, 'access-control-request-method': 'PUT' },
    });
  expect((await preflight('https://app.example')).status).toBe(200);
  expect((await preflight('https://other.example')).status).toBe(403);
  expect(await corsHeadersOfGet(endpoint, 'https://app.example')).toMatchObject({
    'access-control-allow-origin': 'https://app.example',
    'access-control-expose-headers': 'ETag',
    'access-control-max-age': '600',
  });
  await expect(corsHeadersOfGet(endpoint, 'https://other.example')).rejects.toThrow(/no CORS rule/);

  // The upload 1182b23 left unfinished completes with the parts it took, their ETags and checksums.
  const uploadId = expected['exports']!.uploads.map((upload) => upload as { Key: string; UploadId: string }).find(
    ({ Key }) => Key === 'unfinished/upload.bin',
  )!.UploadId;
  const { Parts } = await s3.send(
    new ListPartsCommand({ Bucket: 'exports', Key: 'unfinished/upload.bin', UploadId: uploadId }),
  );
  await s3.send(
    new CompleteMultipartUploadCommand({
      Bucket: 'exports',
      Key: 'unfinished/upload.bin',
      UploadId: uploadId,
      MultipartUpload: {
        Parts: Parts!.map(({ PartNumber, ETag, ChecksumCRC32C }) => ({ PartNumber, ETag, ChecksumCRC32C })),
      },
    }),
  );
  const completed = await s3.send(
    new HeadObjectCommand({ Bucket: 'exports', Key: 'unfinished/upload.bin', ChecksumMode: 'ENABLED' }),
  );
  expect(completed).toMatchObject({
    ContentLength: 5 * 1024 * 1024 + 50,
    ContentType: 'application/x-unfinished',
    Metadata: { state: 'unfinished' },
    ChecksumType: 'COMPOSITE',
  });
  expect(completed.ETag).toMatch(/-2"$/);
  expect(completed.ChecksumCRC32C).toMatch(/-2$/);
  expect((await getBytes(s3, 'exports', 'unfinished/upload.bin')).length).toBe(5 * 1024 * 1024 + 50);

  // Tags 1182b23 wrote are replaced, and an object goes with its tags and the folders it leaves empty.
  await s3.send(
    new PutObjectTaggingCommand({
      Bucket: 'exports',
      Key: 'tagged/object.json',
      Tagging: { TagSet: [{ Key: 'again', Value: 'ü 2' }] },
    }),
  );
  expect((await s3.send(new GetObjectTaggingCommand({ Bucket: 'exports', Key: 'tagged/object.json' }))).TagSet).toEqual(
    [{ Key: 'again', Value: 'ü 2' }],
  );
  await s3.send(new DeleteObjectCommand({ Bucket: 'exports', Key: 'tagged/object.json' }));
  await s3.send(new DeleteObjectCommand({ Bucket: 'exports', Key: 'deep/a/b/c/d.txt' }));
  const bucketFolder = path.join(lp.dataDir, 'objstore', 'exports');
  expect(existsSync(path.join(bucketFolder, 'tagged'))).toBe(false);
  expect(existsSync(path.join(bucketFolder, 'deep'))).toBe(false);
  expect(readdirSync(bucketFolder)).toContain('small.txt._S3rver_object');
}

describe('what 1182b23 stored', () => {
  let lp: InProcessLocalplane | undefined;
  afterAll(async () => lp?.stop());

  it('a data dir it wrote starts, and its objects, uploads and CORS rules answer as 1182b23 answered them', async () => {
    lp = await createLocalplane({ dataDir: unpackDataDir(), fixturesDir: FIXTURES, log: () => {} });
    const endpoint = await lp.objstoreEndpoint();
    const s3 = s3ClientAt(endpoint, FULL_KEY);
    expect(await captureStore(s3, BUCKETS)).toEqual(expected);
    await goOnWith(lp, s3, endpoint);
    await lp.stop();
    lp = undefined;
  });

  it('a snapshot it wrote restores, and answers as 1182b23 answered it (objects as new as the restore)', async () => {
    lp = await createLocalplane({ dataDir: path.join(scratch, 'fresh'), fixturesDir: FIXTURES, log: () => {} });
    // A snapshot restores only onto the fixture template it was taken with, whose key covers the
    // generator's sources, which have changed since: the file is 1182b23's but for that key.
    const own = path.join(scratch, 'own.snapshot');
    await lp.snapshot(own);
    const parts = readSnapshotParts(
      writeFile(
        path.join(scratch, '1182b23.snapshot'),
        brotliDecompressSync(readFileSync(path.join(DATA, 'snapshot.br'))),
      ),
    );
    const snapshot = writeFile(
      path.join(scratch, 'objstore.snapshot'),
      snapshotBytes({ ...parts, header: { ...parts.header, template: readSnapshotParts(own).header.template } }),
    );
    await lp.restore(snapshot);
    const endpoint = await lp.objstoreEndpoint();
    const s3 = s3ClientAt(endpoint, FULL_KEY);
    expect(withoutTimes(await captureStore(s3, BUCKETS))).toEqual(withoutTimes(expected));
    await goOnWith(lp, s3, endpoint);
    await lp.stop();
    lp = undefined;
  });
});
