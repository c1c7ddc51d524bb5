/**
 * The `files` storage writes s3rver 3.7.1's layout (lib/stores/filesystem.js), file for file, as
 * every data dir and snapshot so far holds it: these are the files an older localplane reads, and
 * what test/objstore/1182b23-data.test.ts reads back from one. The behaviours every storage
 * shares are test/objstore/storage-contract.test.ts's.
 */
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { createFileStorage } from '../../src/objstore/storage/files-storage.ts';
import type { ObjstoreStorage } from '../../src/objstore/storage/storage.ts';
import { receivedContent } from './support/storage-content.ts';

const md5 = (data: string) => createHash('md5').update(data).digest('hex');
const BUCKET = 'files';

/** Every file under `folder`, '/'-separated, with its content. */
function filesUnder(folder: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const entry of readdirSync(folder, { recursive: true, withFileTypes: true })) {
    if (entry.isFile())
      files[path.relative(folder, path.join(entry.parentPath, entry.name)).split(path.sep).join('/')] = readFileSync(
        path.join(entry.parentPath, entry.name),
        'utf8',
      );
  }
  return files;
}

describe('the files storage', () => {
  let parent: string;
  let root: string;
  let storage: ObjstoreStorage;
  beforeEach(async () => {
    parent = mkdtempSync(path.join(os.tmpdir(), 'localplane-files-storage-'));
    root = path.join(parent, 'objstore');
    storage = createFileStorage(root);
    await storage.ensureBuckets([BUCKET]);
  });
  afterEach(() => rmSync(parent, { recursive: true, force: true }));

  async function put(key: string, data: string, metadata: Record<string, string>): Promise<void> {
    await storage.placeObject(BUCKET, key, await receivedContent(storage, data), md5(data), metadata);
  }

  it(
    'keeps an object as s3rver did: its content, its unquoted MD5 and its metadata as indented JSON, beside each ' +
      "other under the key's folders",
    async () => {
      const metadata = storage.storedMetadata(BUCKET, 'a/b c/ü.txt', {
        'content-length': '5',
        'x-amz-meta-z': '1',
        'content-type': 'text/plain',
        'x-amz-date': 'today',
      });
      await put('a/b c/ü.txt', 'hello', metadata);
      await storage.putObjectTagging(BUCKET, 'a/b c/ü.txt', '<Tagging><TagSet></TagSet></Tagging>');
      expect(filesUnder(path.join(root, BUCKET))).toEqual({
        'a/b c/ü.txt._S3rver_object': 'hello',
        'a/b c/ü.txt._S3rver_object.md5': md5('hello'),
        'a/b c/ü.txt._S3rver_metadata.json':
          '{\n  "content-type": "text/plain",\n  "content-length": "5",\n  "x-amz-meta-z": "1"\n}',
        'a/b c/ü.txt._S3rver_tagging.xml': '<Tagging><TagSet></TagSet></Tagging>',
      });
      await storage.deleteObject(BUCKET, 'a/b c/ü.txt');
      expect(readdirSync(path.join(root, BUCKET))).toEqual([]);
    },
  );

  it(
    'keeps an upload as s3rver did: the key and the creation headers as JSON, each part with its MD5 (and ' +
      "checksum), then only the completion's record",
    async () => {
      const uploadId = await storage.startUpload(BUCKET, 'big.bin', {
        'content-type': 'application/x-big',
        'x-amz-meta-k': 'v',
      });
      await storage.placePart(BUCKET, uploadId, 1, await receivedContent(storage, 'part one'), md5('part one'), {
        algorithm: 'CRC32',
        value: 'AAAAAA==',
      });
      const upload = `._S3rver_uploads/${uploadId}`;
      expect(filesUnder(path.join(root, BUCKET))).toEqual({
        [`${upload}/key`]: 'big.bin',
        [`${upload}/metadata`]: '{"content-type":"application/x-big","x-amz-meta-k":"v"}',
        [`${upload}/1`]: 'part one',
        [`${upload}/1.md5`]: md5('part one'),
        [`${upload}/1.checksum`]: '{"algorithm":"CRC32","value":"AAAAAA=="}',
      });
      await storage.completeUpload(
        BUCKET,
        'big.bin',
        uploadId,
        [1],
        { etag: 'etag-1', onContent: () => {}, metadata: async () => ({ 'x-amz-checksum-type': 'COMPOSITE' }) },
        async () => 'the record',
      );
      expect(filesUnder(path.join(root, BUCKET))).toEqual({
        [`${upload}/completed`]: 'the record',
        'big.bin._S3rver_object': 'part one',
        'big.bin._S3rver_object.md5': 'etag-1',
        'big.bin._S3rver_metadata.json':
          '{\n  "content-type": "application/x-big",\n  "x-amz-meta-k": "v",\n  "x-amz-checksum-type": "COMPOSITE"\n}',
      });
    },
  );

  it("keeps a bucket's CORS configuration as s3rver did, beside its objects", async () => {
    await storage.setBucketCors(BUCKET, '<CORSConfiguration/>');
    expect(filesUnder(path.join(root, BUCKET))).toEqual({ '._S3rver_cors.xml': '<CORSConfiguration/>' });
    await put('object', 'data', {});
    expect(await storage.objectKeys(BUCKET, '')).toEqual(['object']);
  });

  it('reads an object s3rver left: its head from its files, and an ETag made (and kept) for one without an MD5 file', async () => {
    const folder = path.join(root, BUCKET, 'copied');
    mkdirSync(folder);
    writeFileSync(path.join(folder, 'object._S3rver_object'), 'copied bytes');
    writeFileSync(
      path.join(folder, 'object._S3rver_metadata.json'),
      '{\n  "content-type": "text/x-copied",\n  "x-amz-meta-from": "s3rver"\n}',
    );
    utimesSync(
      path.join(folder, 'object._S3rver_object'),
      new Date('2026-10-01T12:00:00Z'),
      new Date('2026-10-01T12:00:00Z'),
    );
    expect(await storage.headObject(BUCKET, 'copied/object')).toEqual({
      'content-type': 'text/x-copied',
      'x-amz-meta-from': 's3rver',
      etag: `"${md5('copied bytes')}"`,
      'last-modified': 'Thu, 01 Oct 2026 12:00:00 GMT',
      'content-length': 12,
    });
    expect(readFileSync(path.join(folder, 'object._S3rver_object.md5'), 'utf8')).toBe(md5('copied bytes'));
    expect(statSync(path.join(folder, 'object._S3rver_object.md5')).mode & 0o777).toBe(0o600);
    expect(await storage.objectExists(BUCKET, 'copied/object')).toBe(true);
    expect(await storage.objectExists(BUCKET, 'copied')).toBe(false);
    expect(await storage.headObject(BUCKET, 'copied')).toBeNull();
  });

  it('takes the folders at its root for its buckets, made when the folder was', async () => {
    writeFileSync(path.join(root, 'not-a-bucket'), '');
    expect(await storage.bucketNames()).toEqual([BUCKET]);
    expect(await storage.bucketExists('not-a-bucket')).toBe(false);
    expect(await storage.bucketCreationDate('not-a-bucket')).toBeNull();
    expect(await storage.bucketCreationDate(BUCKET)).toEqual(statSync(path.join(root, BUCKET)).birthtime);
    await storage.deleteBucket(BUCKET);
    expect(existsSync(path.join(root, BUCKET))).toBe(false);
  });
});
