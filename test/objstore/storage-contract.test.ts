// The behaviours every ObjstoreStorage implementation must have, run over each one on a temp dir.
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { text } from 'node:stream/consumers';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { GatewayError } from '../../src/objstore/s3-errors.ts';
import { createFileStorage } from '../../src/objstore/storage/files-storage.ts';
import { createMemoryStorage } from '../../src/objstore/storage/memory-storage.ts';
import type { ObjstoreStorage } from '../../src/objstore/storage/storage.ts';
import { receivedContent } from './support/storage-content.ts';

const md5 = (data: string) => createHash('md5').update(data).digest('hex');

/** The S3 error code a call fails with. */
async function s3ErrorCodeOf(call: () => unknown): Promise<string> {
  try {
    await call();
  } catch (error) {
    if (error instanceof GatewayError) return error.spec.code;
    throw error;
  }
  throw new Error('expected an S3 error');
}

function storageContract(name: string, open: (directory: string) => ObjstoreStorage, writesFiles: boolean): void {
  describe(`ObjstoreStorage contract: ${name}`, () => {
    const BUCKET = 'contract';
    let parent: string;
    let directory: string;
    let storage: ObjstoreStorage;

    beforeEach(async () => {
      parent = mkdtempSync(path.join(os.tmpdir(), 'localplane-storage-contract-'));
      directory = path.join(parent, 'store');
      storage = open(directory);
      await storage.ensureBuckets([BUCKET]);
    });
    afterEach(() => rmSync(parent, { recursive: true, force: true }));

    /** What the store's directory holds of bodies received and not placed (none without one). */
    const leftBehind = () =>
      existsSync(directory) ? readdirSync(directory).filter((name) => name.startsWith('.incoming-')) : [];

    async function put(
      key: string,
      data: string,
      metadata: Record<string, string> = {},
      bucket = BUCKET,
    ): Promise<void> {
      await storage.placeObject(bucket, key, await receivedContent(storage, data), md5(data), metadata);
    }

    async function startWithParts(key: string, parts: Record<number, string>): Promise<string> {
      const uploadId = await storage.startUpload(BUCKET, key, { 'content-type': 'text/csv' });
      for (const [number, data] of Object.entries(parts)) {
        await storage.placePart(
          BUCKET,
          uploadId,
          Number(number),
          await receivedContent(storage, data),
          md5(data),
          null,
        );
      }
      return uploadId;
    }

    describe('buckets', () => {
      it('are made by ensureBuckets and createBucket, which keep what an existing one holds', async () => {
        await put('kept', 'data');
        await storage.ensureBuckets([BUCKET, 'second']);
        await storage.createBucket('third');
        await storage.createBucket(BUCKET);
        expect((await storage.bucketNames()).sort()).toEqual([BUCKET, 'second', 'third']);
        expect(await storage.bucketExists('third')).toBe(true);
        expect(await storage.bucketExists('missing')).toBe(false);
        expect(await storage.objectKeys(BUCKET, '')).toEqual(['kept']);
        expect(await storage.bucketCreationDate('second')).toBeInstanceOf(Date);
        expect(await storage.bucketCreationDate('missing')).toBeNull();
      });

      it('hold objects, not uploads in progress', async () => {
        await storage.startUpload(BUCKET, 'pending', {});
        expect(await storage.hasObjects(BUCKET)).toBe(false);
        await put('deep/down/object', 'data');
        expect(await storage.hasObjects(BUCKET)).toBe(true);
      });

      it('go with everything in them, uploads in progress included', async () => {
        await put('a/b', 'data');
        const uploadId = await storage.startUpload(BUCKET, 'pending', {});
        await storage.deleteBucket(BUCKET);
        expect(await storage.bucketExists(BUCKET)).toBe(false);
        expect(await storage.bucketNames()).toEqual([]);
        await storage.createBucket(BUCKET);
        expect(await storage.objectKeys(BUCKET, '')).toEqual([]);
        expect(await storage.uploadKey(BUCKET, uploadId)).toBeNull();
      });

      it('are emptied and remade by reset, which drops every other bucket', async () => {
        await storage.createBucket('created');
        await put('object', 'data');
        await storage.startUpload(BUCKET, 'pending', {});
        await storage.reset([BUCKET, 'fresh']);
        expect((await storage.bucketNames()).sort()).toEqual([BUCKET, 'fresh']);
        expect(await storage.objectKeys(BUCKET, '')).toEqual([]);
        expect(await storage.uploadsInProgress(BUCKET)).toEqual([]);
      });
    });

    describe('objects', () => {
      it('are placed whole, with their ETag and metadata, and read back whole or by range', async () => {
        await storage.placeObject(
          BUCKET,
          'greeting.txt',
          await receivedContent(storage, 'hello, world'),
          md5('hello, world'),
          { 'content-type': 'text/plain', 'x-amz-meta-lang': 'en' },
        );
        expect(leftBehind()).toEqual([]);

        const head = await storage.headObject(BUCKET, 'greeting.txt');
        expect(head).toMatchObject({
          etag: JSON.stringify(md5('hello, world')),
          'content-length': 12,
          'content-type': 'text/plain',
          'x-amz-meta-lang': 'en',
        });
        expect(new Date(String(head!['last-modified'])).getTime()).not.toBeNaN();
        expect(await storage.objectExists(BUCKET, 'greeting.txt')).toBe(true);
        expect(await text(storage.readObject(BUCKET, 'greeting.txt', null))).toBe('hello, world');
        expect(await text(storage.readObject(BUCKET, 'greeting.txt', { start: 7, end: 11 }))).toBe('world');
        const opened = await storage.openObject(BUCKET, 'greeting.txt');
        expect(opened?.size).toBe(12);
        await put('greeting.txt', 'replaced while open');
        expect(await text(opened!.content)).toBe('hello, world');
        expect(await storage.openObject(BUCKET, 'missing')).toBeNull();
        await expect(text(storage.readObject(BUCKET, 'missing', null))).rejects.toMatchObject({ code: 'ENOENT' });
      });

      it('replace the object under their key', async () => {
        await put('key', 'first', { 'x-amz-meta-version': '1' });
        await put('key', 'second');
        const head = await storage.headObject(BUCKET, 'key');
        expect(head).toMatchObject({ etag: JSON.stringify(md5('second')), 'content-length': 6 });
        expect(head!['x-amz-meta-version']).toBeUndefined();
      });

      it('are not placed when the placement guard refuses, and what was received is dropped', async () => {
        await put('key', 'before');
        const refusal = new Error('refused');
        await expect(
          storage.placeObject(BUCKET, 'key', await receivedContent(storage, 'after'), md5('after'), {}, () =>
            Promise.reject(refusal),
          ),
        ).rejects.toBe(refusal);
        expect(leftBehind()).toEqual([]);
        expect(await text(storage.readObject(BUCKET, 'key', null))).toBe('before');
      });

      it('run the guard around the move that makes them visible', async () => {
        let seenBefore: boolean | null = null;
        await storage.placeObject(
          BUCKET,
          'new',
          await receivedContent(storage, 'data'),
          md5('data'),
          {},
          async (place) => {
            seenBefore = await storage.objectExists(BUCKET, 'new');
            await place();
          },
        );
        expect(seenBefore).toBe(false);
        expect(await storage.objectExists(BUCKET, 'new')).toBe(true);
      });

      it('are placed in a folder whose last object was deleted while they waited for their turn', async () => {
        await put('shared/folder/old', 'old');
        // The delete empties the folder (and removes it, in files) between the placement's start and its move.
        await storage.placeObject(
          BUCKET,
          'shared/folder/new',
          await receivedContent(storage, 'new'),
          md5('new'),
          {},
          async (place) => {
            await storage.deleteObject(BUCKET, 'shared/folder/old');
            await place();
          },
        );
        expect(await storage.objectKeys(BUCKET, '')).toEqual(['shared/folder/new']);
        expect(await text(storage.readObject(BUCKET, 'shared/folder/new', null))).toBe('new');
      });

      it('are missing after deleteObject, and headObject answers null for them', async () => {
        await put('a/b/c', 'data');
        await put('a/d', 'data');
        await storage.deleteObject(BUCKET, 'a/b/c');
        expect(await storage.headObject(BUCKET, 'a/b/c')).toBeNull();
        expect(await storage.objectExists(BUCKET, 'a/b/c')).toBe(false);
        expect(await storage.objectKeys(BUCKET, '')).toEqual(['a/d']);
        expect(await storage.headObject(BUCKET, 'never')).toBeNull();
      });

      it('are listed by prefix, and in key order with their sizes', async () => {
        const keys = ['b', 'a/x', 'a/y/z', 'a', 'ab', 'a-', 'é', 'a//double'];
        for (const key of keys) await put(key, key.repeat(2));
        expect((await storage.objectKeys(BUCKET, 'a/')).sort()).toEqual(['a//double', 'a/x', 'a/y/z']);
        expect((await storage.objectKeys(BUCKET, 'a')).sort()).toEqual(['a', 'a-', 'a//double', 'a/x', 'a/y/z', 'ab']);
        expect((await storage.objectKeys(BUCKET, '')).sort()).toEqual([...keys].sort());
        const sorted = [...keys].sort();
        expect(storage.listBucketObjects(BUCKET)).toEqual(
          sorted.map((key) => ({ key, size: Buffer.byteLength(key) * 2 })),
        );
      });

      it('keep the metadata of the request headers S3 stores, and refuse an invalid one', async () => {
        const metadata = storage.storedMetadata(BUCKET, 'key', {
          'content-type': 'text/plain',
          'x-amz-meta-owner': 'me',
          'x-amz-date': '20240101T000000Z',
        });
        expect(metadata).toMatchObject({ 'content-type': 'text/plain', 'x-amz-meta-owner': 'me' });
        expect(metadata['x-amz-date']).toBeUndefined();
        expect(
          await s3ErrorCodeOf(() => storage.storedMetadata(BUCKET, 'key', { 'x-amz-storage-class': 'NO_SUCH_CLASS' })),
        ).toBe('InvalidStorageClass');
      });

      it('keep a Tagging document as given, which goes with the object', async () => {
        const tagging = '<Tagging><TagSet><Tag><Key>k &amp; ü</Key><Value>v</Value></Tag></TagSet></Tagging>';
        await put('tagged', 'data');
        expect(await storage.objectTagging(BUCKET, 'tagged')).toBeNull();
        await storage.putObjectTagging(BUCKET, 'tagged', tagging);
        expect(await storage.objectTagging(BUCKET, 'tagged')).toBe(tagging);
        expect(await text(storage.readObject(BUCKET, 'tagged', null))).toBe('data');
        await put('tagged', 'new data');
        expect(await storage.objectTagging(BUCKET, 'tagged'), 'a new object under the key has no tags').toBeNull();
        await storage.putObjectTagging(BUCKET, 'tagged', tagging);
        await storage.deleteObject(BUCKET, 'tagged');
        expect(await storage.objectTagging(BUCKET, 'tagged')).toBeNull();
        await storage.putObjectTagging(BUCKET, 'tagged', tagging);
        expect(await storage.objectTagging(BUCKET, 'tagged'), 'no tags are kept for an object that is gone').toBeNull();
      });
    });

    describe('uploads', () => {
      it('in progress are found by id, with their key, start and creation headers', async () => {
        const uploadId = await storage.startUpload(BUCKET, 'big.csv', { 'content-type': 'text/csv' });
        const other = await storage.startUpload(BUCKET, 'other.csv', {});
        expect(await storage.uploadKey(BUCKET, uploadId)).toBe('big.csv');
        expect(await storage.uploadKey(BUCKET, 'no-such-upload')).toBeNull();
        const upload = await storage.uploadInProgress(BUCKET, uploadId);
        expect(upload).toMatchObject({ key: 'big.csv', uploadId, createHeaders: { 'content-type': 'text/csv' } });
        expect(upload!.initiated).toBeInstanceOf(Date);
        expect(await storage.uploadInProgress(BUCKET, 'no-such-upload')).toBeNull();
        const listed = await storage.uploadsInProgress(BUCKET);
        expect(listed.map((summary) => [summary.key, summary.uploadId]).sort()).toEqual([
          ['big.csv', uploadId],
          ['other.csv', other],
        ]);
      });

      it('list their parts by part number, a range of them at a time', async () => {
        const uploadId = await startWithParts('parts', { 3: 'three', 1: 'one', 10: 'ten', 2: 'two' });
        const all = await storage.uploadedParts(BUCKET, uploadId);
        expect(all.map((part) => [part.number, part.md5, part.size, part.checksum])).toEqual([
          [1, md5('one'), 3, null],
          [2, md5('two'), 3, null],
          [3, md5('three'), 5, null],
          [10, md5('ten'), 3, null],
        ]);
        expect(all.every((part) => part.lastModified instanceof Date)).toBe(true);
        expect(
          (await storage.uploadedParts(BUCKET, uploadId, { after: 1, limit: 2 })).map((part) => part.number),
        ).toEqual([2, 3]);
        expect((await storage.uploadedParts(BUCKET, uploadId, { after: 3 })).map((part) => part.number)).toEqual([10]);
        expect(await storage.uploadedParts(BUCKET, uploadId, { after: 10 })).toEqual([]);
        expect(await storage.uploadedParts(BUCKET, 'no-such-upload')).toEqual([]);
      });

      it('keep the checksum a part came with until it is uploaded again without one', async () => {
        const uploadId = await storage.startUpload(BUCKET, 'key', {});
        const place = async (data: string, checksum: { algorithm: 'CRC32'; value: string } | null) => {
          await storage.placePart(BUCKET, uploadId, 1, await receivedContent(storage, data), md5(data), checksum);
        };
        await place('first', { algorithm: 'CRC32', value: 'AAAAAA==' });
        expect((await storage.uploadedParts(BUCKET, uploadId))[0]!.checksum).toEqual({
          algorithm: 'CRC32',
          value: 'AAAAAA==',
        });
        await place('second!', null);
        expect((await storage.uploadedParts(BUCKET, uploadId))[0]).toMatchObject({
          md5: md5('second!'),
          size: 7,
          checksum: null,
        });
      });

      it('complete into the object of the parts listed, joined in order, and are kept only as their record', async () => {
        const uploadId = await startWithParts('joined.csv', { 1: 'a,b\n', 2: 'c,d\n', 3: 'unused' });
        const seen: Buffer[] = [];
        await storage.completeUpload(
          BUCKET,
          'joined.csv',
          uploadId,
          [1, 2],
          {
            etag: 'abc-2',
            onContent: (data) => seen.push(data),
            metadata: async () => ({ 'x-amz-checksum-type': 'FULL_OBJECT' }),
          },
          async () => 'the record',
        );
        expect(Buffer.concat(seen).toString()).toBe('a,b\nc,d\n');
        expect(await text(storage.readObject(BUCKET, 'joined.csv', null))).toBe('a,b\nc,d\n');
        expect(await storage.headObject(BUCKET, 'joined.csv')).toMatchObject({
          etag: '"abc-2"',
          'content-type': 'text/csv',
          'x-amz-checksum-type': 'FULL_OBJECT',
        });
        expect(await storage.uploadKey(BUCKET, uploadId)).toBeNull();
        expect(await storage.uploadsInProgress(BUCKET)).toEqual([]);
        expect(await storage.completedUpload(BUCKET, uploadId)).toBe('the record');
        expect(await storage.completedUpload(BUCKET, 'no-such-upload')).toBeNull();
      });

      it('do not complete when the placement guard refuses, and stay in progress', async () => {
        const uploadId = await startWithParts('refused', { 1: 'data' });
        const refusal = new Error('refused');
        const completion = { etag: 'abc-1', onContent: () => {}, metadata: async () => ({}) };
        await expect(
          storage.completeUpload(
            BUCKET,
            'refused',
            uploadId,
            [1],
            completion,
            async () => 'record',
            () => Promise.reject(refusal),
          ),
        ).rejects.toBe(refusal);
        expect(await storage.objectExists(BUCKET, 'refused')).toBe(false);
        expect(await storage.uploadKey(BUCKET, uploadId)).toBe('refused');
        expect(await storage.completedUpload(BUCKET, uploadId)).toBeNull();
      });

      it('are gone, parts and all, once removed', async () => {
        const uploadId = await startWithParts('removed', { 1: 'data' });
        await storage.removeUpload(BUCKET, uploadId);
        expect(await storage.uploadInProgress(BUCKET, uploadId)).toBeNull();
        expect(await storage.uploadedParts(BUCKET, uploadId)).toEqual([]);
        await storage.removeUpload(BUCKET, uploadId);
      });
    });

    describe('trees', () => {
      it('read the whole store, and installed, put it back in place of what the store holds then', async () => {
        await put('kept/object', 'snapshot');
        const uploadId = await startWithParts('pending', { 1: 'part' });
        const entries = storage.readTree();
        expect(
          entries.filter((entry) => entry.path.split('/').length === 1).map((entry) => [entry.path, entry.data]),
        ).toEqual([[BUCKET, null]]);
        expect(storage.objectsOf(entries)).toEqual([{ bucket: BUCKET, key: 'kept/object' }]);
        expect(storage.treeProblem(entries, [BUCKET])).toBeUndefined();

        await storage.deleteObject(BUCKET, 'kept/object');
        await put('later', 'after the snapshot');
        await storage.removeUpload(BUCKET, uploadId);
        storage.stageTree(entries, [BUCKET, 'created']).install();

        expect(await storage.objectKeys(BUCKET, '')).toEqual(['kept/object']);
        expect(await text(storage.readObject(BUCKET, 'kept/object', null))).toBe('snapshot');
        expect(await storage.uploadKey(BUCKET, uploadId)).toBe('pending');
        expect((await storage.bucketNames()).sort()).toEqual([BUCKET, 'created']);
        expect(storage.readTree().filter((entry) => entry.path !== 'created')).toEqual(entries);
        expect(readdirSync(parent)).toEqual(writesFiles ? ['store'] : []);
      });

      it('leave the store as it is when discarded', async () => {
        await put('object', 'data');
        const before = storage.readTree();
        const staged = storage.stageTree([{ path: BUCKET, data: null }], [BUCKET]);
        staged.discard();
        expect(storage.readTree()).toEqual(before);
        expect(readdirSync(parent)).toEqual(writesFiles ? ['store'] : []);
      });

      it('name what keeps entries from being the store', () => {
        const problems = [
          storage.treeProblem([{ path: 'unknown', data: null }], [BUCKET]),
          storage.treeProblem([{ path: '../outside', data: null }], [BUCKET]),
          storage.treeProblem([{ path: BUCKET, data: randomBytes(4) }], [BUCKET]),
          storage.treeProblem([{ path: `${BUCKET}/orphan/file`, data: randomBytes(4) }], [BUCKET]),
          storage.treeProblem(
            [
              { path: BUCKET, data: null },
              { path: BUCKET, data: null },
            ],
            [BUCKET],
          ),
        ];
        expect(problems.every((problem) => typeof problem === 'string' && problem.length > 0)).toBe(true);
      });
    });
  });
}

storageContract('files', createFileStorage, true);
storageContract('memory', () => createMemoryStorage({ budgetBytes: () => 2 ** 30 }), false);
