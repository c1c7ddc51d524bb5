/**
 * Version ids on the objstore's unversioned buckets, through the AWS SDK: ListObjectVersions,
 * GetBucketVersioning, and `versionId=null` on DeleteObject and DeleteObjects.
 */
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  UploadPartCopyCommand,
  DeleteObjectsCommand,
  GetBucketVersioningCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  ListObjectVersionsCommand,
  PutObjectCommand,
  PutObjectTaggingCommand,
  GetObjectTaggingCommand,
  type ListObjectVersionsCommandInput,
  type S3Client,
} from '@aws-sdk/client-s3';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';

import type { ObjstoreKey } from '../../src/objstore/index.ts';
import { failure, useObjstore } from '../support/objstore-server.ts';
import { sendSigned } from '../support/signed-requests.ts';

const FULL: ObjstoreKey = {
  accessKeyId: 'LPVERSIONS000001',
  secretAccessKey: 'versions-full-secret-0123456789abcd',
  permissions: ['create', 'delete', 'get', 'multipart', 'buckets'],
};

const ctx = useObjstore({ directoryPrefix: 'objstore-versions-', keys: [FULL], buckets: ['exports'] });
let s3: S3Client;
const BUCKET = 'exports';

const put = (key: string, body = `body of ${key}`) =>
  s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: body }));
const keysOf = async () =>
  ((await s3.send(new ListObjectsV2Command({ Bucket: BUCKET }))).Contents ?? []).map((object) => object.Key);
const versions = (input: Omit<ListObjectVersionsCommandInput, 'Bucket'> = {}) =>
  s3.send(new ListObjectVersionsCommand({ Bucket: BUCKET, ...input }));

beforeAll(() => {
  s3 = ctx.client(FULL);
});

beforeEach(async () => {
  await ctx.objstore.reset();
});

describe('ListObjectVersions', () => {
  it('lists every object as its one version, null and the latest, with what ListObjectsV2 shows of it', async () => {
    for (const key of ['b.txt', 'a/1.txt', 'a/2.txt', 'c d+e.txt']) await put(key);
    const listed = await versions();
    const objects = (await s3.send(new ListObjectsV2Command({ Bucket: BUCKET, FetchOwner: true }))).Contents!;
    expect(listed.Versions).toEqual(
      objects.map((object) => ({
        Key: object.Key,
        VersionId: 'null',
        IsLatest: true,
        LastModified: object.LastModified,
        ETag: object.ETag,
        Size: object.Size,
        Owner: object.Owner,
        StorageClass: 'STANDARD',
      })),
    );
    expect(listed.Versions!.map((version) => version.Key)).toEqual(['a/1.txt', 'a/2.txt', 'b.txt', 'c d+e.txt']);
    expect(listed).toMatchObject({
      Name: BUCKET,
      Prefix: '',
      KeyMarker: '',
      VersionIdMarker: '',
      MaxKeys: 1000,
      IsTruncated: false,
    });
    expect(listed.NextKeyMarker).toBeUndefined();
    expect(listed.DeleteMarkers).toBeUndefined();
  });

  it('pages by key-marker and version-id-marker as boto3 and the SDK page it, to the last version exactly once', async () => {
    const keys = Array.from({ length: 7 }, (_, index) => `k${index}`);
    for (const key of keys) await put(key);
    const seen: string[] = [];
    // The first page with both markers empty, as boto3's list_versions sends it.
    let markers: { KeyMarker?: string; VersionIdMarker?: string } = { KeyMarker: '', VersionIdMarker: '' };
    for (let page = 0; page < 10; page++) {
      const listed = await versions({ MaxKeys: 3, ...markers });
      seen.push(...listed.Versions!.map((version) => version.Key!));
      if (!listed.IsTruncated) break;
      expect(listed.NextVersionIdMarker).toBe('null');
      expect(listed.NextKeyMarker).toBe(listed.Versions!.at(-1)!.Key);
      markers = { KeyMarker: listed.NextKeyMarker, VersionIdMarker: listed.NextVersionIdMarker };
    }
    expect(seen).toEqual(keys);
    // A key marker alone starts after that key too.
    expect((await versions({ KeyMarker: 'k4' })).Versions!.map((version) => version.Key)).toEqual(['k5', 'k6']);
  });

  it('rolls keys up by prefix and delimiter, and URL-encodes names under encoding-type=url', async () => {
    for (const key of ['logs/2026/a.txt', 'logs/2026/b.txt', 'logs/top.txt', 'logs/sp ace.txt', 'other.txt'])
      await put(key);
    const listed = await versions({ Prefix: 'logs/', Delimiter: '/' });
    expect(listed.Versions!.map((version) => version.Key)).toEqual(['logs/sp ace.txt', 'logs/top.txt']);
    expect(listed.CommonPrefixes).toEqual([{ Prefix: 'logs/2026/' }]);
    expect(listed).toMatchObject({ Prefix: 'logs/', Delimiter: '/' });
    // A truncated page that ends on a common prefix resumes after the whole prefix.
    const first = await versions({ Prefix: 'logs/', Delimiter: '/', MaxKeys: 1 });
    expect(first).toMatchObject({
      IsTruncated: true,
      NextKeyMarker: 'logs/2026/',
      CommonPrefixes: [{ Prefix: 'logs/2026/' }],
    });
    expect(first.NextVersionIdMarker).toBeUndefined();
    const second = await versions({ Prefix: 'logs/', Delimiter: '/', MaxKeys: 1, KeyMarker: first.NextKeyMarker });
    expect(second.Versions!.map((version) => version.Key)).toEqual(['logs/sp ace.txt']);

    const raw = await sendSigned(ctx.objstore.url, FULL, {
      method: 'GET',
      path: `/${BUCKET}`,
      query: { versions: '', prefix: 'logs/sp', 'encoding-type': 'url' },
    });
    expect(raw.status).toBe(200);
    expect(raw.body).toContain('<EncodingType>url</EncodingType>');
    expect(raw.body).toContain('<Key>logs/sp%20ace.txt</Key><VersionId>null</VersionId><IsLatest>true</IsLatest>');
  });

  it('refuses a version-id-marker without a key marker, and a version id the bucket cannot have', async () => {
    await put('x');
    const withoutKey = await failure(versions({ VersionIdMarker: 'null' }));
    expect(withoutKey).toMatchObject({
      name: 'InvalidArgument',
      message: 'A version-id marker cannot be specified without a key marker.',
    });
    expect(withoutKey.$metadata.httpStatusCode).toBe(400);
    const unknownVersion = await failure(
      versions({ KeyMarker: 'x', VersionIdMarker: 'Eyn7lxdGE1WU1SU6QTbW1X6cbSIIRY0R' }),
    );
    expect(unknownVersion).toMatchObject({ name: 'InvalidArgument', message: 'Invalid version id specified' });
    const negative = await failure(versions({ MaxKeys: -1 }));
    expect(negative).toMatchObject({ name: 'InvalidArgument' });
    const missingBucket = await failure(s3.send(new ListObjectVersionsCommand({ Bucket: 'no-such-bucket' })));
    expect(missingBucket).toMatchObject({ name: 'NoSuchBucket' });
  });
});

describe('GetBucketVersioning', () => {
  it('answers an empty configuration (versioning never enabled), and NoSuchBucket for a bucket that does not exist', async () => {
    const configuration = await s3.send(new GetBucketVersioningCommand({ Bucket: BUCKET }));
    expect(configuration.Status).toBeUndefined();
    expect(configuration.MFADelete).toBeUndefined();
    const raw = await sendSigned(ctx.objstore.url, FULL, {
      method: 'GET',
      path: `/${BUCKET}`,
      query: { versioning: '' },
    });
    expect(raw.body).toBe(
      '<?xml version="1.0" encoding="UTF-8"?>\n<VersioningConfiguration ' +
        'xmlns="http://s3.amazonaws.com/doc/2006-03-01/"></VersioningConfiguration>',
    );
    expect(await failure(s3.send(new GetBucketVersioningCommand({ Bucket: 'no-such-bucket' })))).toMatchObject({
      name: 'NoSuchBucket',
    });
  });
});

describe('DeleteObject', () => {
  it(
    'deletes with or without versionId=null (naming the version deleted), and answers 204 for a key that holds ' +
      'nothing',
    async () => {
      await put('one');
      await put('two');
      const plain = await s3.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: 'one' }));
      expect(plain.$metadata.httpStatusCode).toBe(204);
      expect(plain.VersionId).toBeUndefined();
      const byVersion = await s3.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: 'two', VersionId: 'null' }));
      expect(byVersion.$metadata.httpStatusCode).toBe(204);
      expect(byVersion.VersionId).toBe('null');
      expect(await keysOf()).toEqual([]);
      const nothing = await s3.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: 'never-there' }));
      expect(nothing.$metadata.httpStatusCode).toBe(204);
    },
  );

  it('refuses any other version id and keeps the object', async () => {
    await put('kept');
    const refused = await failure(
      s3.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: 'kept', VersionId: '3HL4kqtJlcpXroDTDmJ+rmSpXd3dIbrHY' })),
    );
    expect(refused).toMatchObject({ name: 'InvalidArgument', message: 'Invalid version id specified' });
    expect(refused.$metadata.httpStatusCode).toBe(400);
    expect(await keysOf()).toEqual(['kept']);
  });

  it("takes the object's tags with it, as an overwrite does: a new object under the key has none", async () => {
    const tagsOf = async (key: string) =>
      (await s3.send(new GetObjectTaggingCommand({ Bucket: BUCKET, Key: key }))).TagSet;
    const tag = (key: string) =>
      s3.send(
        new PutObjectTaggingCommand({ Bucket: BUCKET, Key: key, Tagging: { TagSet: [{ Key: 'team', Value: 'a' }] } }),
      );
    await put('tagged');
    await tag('tagged');
    expect(await tagsOf('tagged')).toEqual([{ Key: 'team', Value: 'a' }]);
    await s3.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: 'tagged' }));
    await put('tagged');
    expect(await tagsOf('tagged')).toEqual([]);
    await tag('tagged');
    await put('tagged', 'overwritten');
    expect(await tagsOf('tagged')).toEqual([]);
  });

  it('leaves a missing bucket to NoSuchBucket', async () => {
    expect(
      await failure(s3.send(new DeleteObjectCommand({ Bucket: 'no-such-bucket', Key: 'x', VersionId: 'null' }))),
    ).toMatchObject({ name: 'NoSuchBucket' });
  });
});

describe('DeleteObjects', () => {
  it('deletes entries with VersionId null and reports the version, and refuses other version ids per key', async () => {
    for (const key of ['v1', 'v2', 'v3']) await put(key);
    const result = await s3.send(
      new DeleteObjectsCommand({
        Bucket: BUCKET,
        Delete: {
          Objects: [{ Key: 'v1', VersionId: 'null' }, { Key: 'v2' }, { Key: 'v3', VersionId: 'not-a-version' }],
        },
      }),
    );
    expect(result.Deleted).toEqual([{ Key: 'v1', VersionId: 'null' }, { Key: 'v2' }]);
    expect(result.Errors).toEqual([
      { Key: 'v3', VersionId: 'not-a-version', Code: 'InvalidArgument', Message: 'Invalid version id specified' },
    ]);
    expect(await keysOf()).toEqual(['v3']);
    expect((await s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'v3' }))).ContentLength).toBe(
      'body of v3'.length,
    );
  });

  it(
    "empties a bucket as s3-tests' cleanup does: ListObjectVersions pages into quiet DeleteObjects that bypass " +
      'governance retention',
    async () => {
      for (let index = 0; index < 300; index++) await put(`nuke/${String(index).padStart(3, '0')}`);
      let markers: { KeyMarker?: string; VersionIdMarker?: string } = {};
      for (let truncated = true; truncated;) {
        const listed = await versions({ MaxKeys: 128, ...markers });
        markers = { KeyMarker: listed.NextKeyMarker, VersionIdMarker: listed.NextVersionIdMarker };
        truncated = listed.IsTruncated!;
        const objects = [...(listed.Versions ?? []), ...(listed.DeleteMarkers ?? [])].map(({ Key, VersionId }) => ({
          Key,
          VersionId,
        }));
        if (objects.length === 0) continue;
        const deleted = await s3.send(
          new DeleteObjectsCommand({
            Bucket: BUCKET,
            Delete: { Objects: objects, Quiet: true },
            BypassGovernanceRetention: true,
          }),
        );
        expect(deleted.Errors ?? []).toEqual([]);
      }
      expect(await keysOf()).toEqual([]);
      expect((await versions()).Versions).toBeUndefined();
    },
  );
});

describe('copy sources with ?versionId=null', () => {
  it("UploadPartCopy and CopyObject copy the object's one version; any other version id is InvalidArgument", async () => {
    await put('source/part.bin', 'the source bytes');
    const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: 'assembled.bin' }));
    const part = await s3.send(
      new UploadPartCopyCommand({
        Bucket: BUCKET,
        Key: 'assembled.bin',
        UploadId,
        PartNumber: 1,
        CopySource: `${BUCKET}/source/part.bin?versionId=null`,
        CopySourceRange: 'bytes=4-9',
      }),
    );
    await s3.send(
      new CompleteMultipartUploadCommand({
        Bucket: BUCKET,
        Key: 'assembled.bin',
        UploadId,
        MultipartUpload: { Parts: [{ PartNumber: 1, ETag: part.CopyPartResult!.ETag }] },
      }),
    );
    expect(
      await (await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'assembled.bin' }))).Body!.transformToString(),
    ).toBe('source');

    await s3.send(
      new CopyObjectCommand({
        Bucket: BUCKET,
        Key: 'copied.bin',
        CopySource: `${BUCKET}/source/part.bin?versionId=null`,
      }),
    );
    expect(
      await (await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'copied.bin' }))).Body!.transformToString(),
    ).toBe('the source bytes');

    const other = await s3.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: 'never.bin' }));
    const refusedPart = await failure(
      s3.send(
        new UploadPartCopyCommand({
          Bucket: BUCKET,
          Key: 'never.bin',
          UploadId: other.UploadId,
          PartNumber: 1,
          CopySource: `${BUCKET}/source/part.bin?versionId=3HL4kqtJlcpXroDTDmJ`,
        }),
      ),
    );
    expect(refusedPart).toMatchObject({ name: 'InvalidArgument', message: 'Invalid version id specified' });
    await s3.send(new AbortMultipartUploadCommand({ Bucket: BUCKET, Key: 'never.bin', UploadId: other.UploadId }));
    const refusedCopy = await failure(
      s3.send(
        new CopyObjectCommand({
          Bucket: BUCKET,
          Key: 'never.bin',
          CopySource: `${BUCKET}/source/part.bin?versionId=abc`,
        }),
      ),
    );
    expect(refusedCopy).toMatchObject({ name: 'InvalidArgument', message: 'Invalid version id specified' });
    expect(await keysOf()).toEqual(['assembled.bin', 'copied.bin', 'source/part.bin']);
  });
});
