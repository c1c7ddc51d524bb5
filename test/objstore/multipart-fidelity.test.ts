/**
 * Multipart uploads as AWS S3 answers them, through the real @aws-sdk/client-s3 (and raw
 * SigV4-signed requests where the SDK hides the answer): UploadPartCopy and its ranges,
 * CompleteMultipartUpload repeated and refused, `?partNumber=` reads, upload checksums
 * (composite and full-object) and GetObjectAttributes.
 */
import { createHash, randomBytes } from 'node:crypto';

import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  GetObjectAttributesCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListPartsCommand,
  PutObjectCommand,
  UploadPartCommand,
  UploadPartCopyCommand,
  type UploadPartCopyCommandInput,
  type ChecksumAlgorithm,
  type CompletedPart,
  type S3Client,
} from '@aws-sdk/client-s3';
import { Crc32, Crc64Nvme } from '@aws-sdk/checksums/crc';
import { Upload } from '@aws-sdk/lib-storage';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';

import type { ObjstoreKey } from '../../src/objstore/index.ts';
import { CHECKSUMS_WHEN_REQUIRED, failure, useObjstore } from '../support/objstore-server.ts';
import { sendSigned, xmlElement } from '../support/signed-requests.ts';

const BUCKET = 'exports';
const OTHER_BUCKET = 'archive';
const MiB = 1024 * 1024;

const FULL: ObjstoreKey = {
  accessKeyId: 'LPMPFIDFULL00001',
  secretAccessKey: 'mp-fidelity-full-secret-0123456789abcd',
  permissions: ['create', 'delete', 'get', 'multipart'],
};
/** May upload parts but not read objects: no UploadPartCopy. */
const WRITE_ONLY: ObjstoreKey = {
  accessKeyId: 'LPMPFIDWRITE0001',
  secretAccessKey: 'mp-fidelity-write-secret-0123456789abc',
  permissions: ['create', 'multipart'],
};

const ctx = useObjstore({
  directoryPrefix: 'objstore-multipart-fidelity-',
  keys: [FULL, WRITE_ONLY],
  buckets: [BUCKET, OTHER_BUCKET],
  clientConfig: CHECKSUMS_WHEN_REQUIRED,
});
let s3: S3Client;
let writeOnly: S3Client;

const md5Hex = (data: Buffer) => createHash('md5').update(data).digest('hex');
const sha256 = (data: Buffer) => createHash('sha256').update(data).digest();
const quoted = (text: string) => `"${text}"`;

/** S3's multipart ETag, computed here independently of the store. */
const multipartEtag = (parts: readonly Buffer[]) =>
  quoted(
    `${createHash('md5')
      .update(Buffer.concat(parts.map((part) => createHash('md5').update(part).digest())))
      .digest('hex')}-${parts.length}`,
  );

async function crc(checksum: Crc32 | Crc64Nvme, data: Buffer): Promise<Buffer> {
  checksum.update(data);
  return Buffer.from(await checksum.digest());
}

async function createUpload(key: string, ChecksumAlgorithm?: ChecksumAlgorithm): Promise<string> {
  return (await s3.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: key, ChecksumAlgorithm }))).UploadId!;
}

async function uploadParts(
  key: string,
  uploadId: string,
  parts: readonly Buffer[],
  ChecksumAlgorithm?: ChecksumAlgorithm,
): Promise<CompletedPart[]> {
  const completed: CompletedPart[] = [];
  for (const [index, Body] of parts.entries()) {
    const PartNumber = index + 1;
    const result = await s3.send(
      new UploadPartCommand({ Bucket: BUCKET, Key: key, UploadId: uploadId, PartNumber, Body, ChecksumAlgorithm }),
    );
    completed.push({
      PartNumber,
      ETag: result.ETag,
      ChecksumSHA256: result.ChecksumSHA256,
      ChecksumCRC32: result.ChecksumCRC32,
    });
  }
  return completed;
}

function complete(key: string, uploadId: string, parts: CompletedPart[]) {
  return s3.send(
    new CompleteMultipartUploadCommand({
      Bucket: BUCKET,
      Key: key,
      UploadId: uploadId,
      MultipartUpload: { Parts: parts },
    }),
  );
}

/** A multipart object of these parts, uploaded without checksums. */
async function multipartObject(key: string, parts: readonly Buffer[]) {
  const uploadId = await createUpload(key);
  return complete(key, uploadId, await uploadParts(key, uploadId, parts));
}

async function bodyOf(response: { Body?: { transformToByteArray(): Promise<Uint8Array> } }): Promise<Buffer> {
  return Buffer.from(await response.Body!.transformToByteArray());
}

/** A raw request signed with the full key, for what the SDK hides. */
const rawSigned = (method: string, path: string, query: Record<string, string>, headers: Record<string, string> = {}) =>
  sendSigned(ctx.objstore.url, FULL, { method, path, query, headers });

const codeOf = (xml: string) => xmlElement(xml, 'Code');
const messageOf = (xml: string) => xmlElement(xml, 'Message');

beforeAll(() => {
  s3 = ctx.client(FULL);
  writeOnly = ctx.client(WRITE_ONLY);
});

beforeEach(async () => {
  await ctx.objstore.reset();
});

describe('UploadPartCopy', () => {
  it('copies a whole object and a byte range of another into parts, answered with CopyPartResult', async () => {
    const big = randomBytes(5 * MiB + 17);
    const small = randomBytes(300);
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'source/big.bin', Body: big }));
    await s3.send(new PutObjectCommand({ Bucket: OTHER_BUCKET, Key: 'source/small file.bin', Body: small }));
    const uploadId = await createUpload('joined.bin');

    const whole = await s3.send(
      new UploadPartCopyCommand({
        Bucket: BUCKET,
        Key: 'joined.bin',
        UploadId: uploadId,
        PartNumber: 1,
        CopySource: `${BUCKET}/source/big.bin`,
      }),
    );
    expect(whole.CopyPartResult?.ETag).toBe(quoted(md5Hex(big)));
    expect(whole.CopyPartResult?.LastModified).toBeInstanceOf(Date);

    const ranged = await s3.send(
      new UploadPartCopyCommand({
        Bucket: BUCKET,
        Key: 'joined.bin',
        UploadId: uploadId,
        PartNumber: 2,
        CopySource: `${OTHER_BUCKET}/source/small%20file.bin`,
        CopySourceRange: 'bytes=100-199',
      }),
    );
    const slice = small.subarray(100, 200);
    expect(ranged.CopyPartResult?.ETag).toBe(quoted(md5Hex(slice)));

    const parts = await s3.send(new ListPartsCommand({ Bucket: BUCKET, Key: 'joined.bin', UploadId: uploadId }));
    expect(parts.Parts?.map((part) => [part.PartNumber, part.Size, part.ETag])).toEqual([
      [1, big.length, quoted(md5Hex(big))],
      [2, 100, quoted(md5Hex(slice))],
    ]);

    const result = await complete('joined.bin', uploadId, [
      { PartNumber: 1, ETag: whole.CopyPartResult!.ETag },
      { PartNumber: 2, ETag: ranged.CopyPartResult!.ETag },
    ]);
    expect(result.ETag).toBe(multipartEtag([big, slice]));
    const object = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'joined.bin' }));
    expect((await bodyOf(object)).equals(Buffer.concat([big, slice]))).toBe(true);
  });

  it(
    'refuses ranges as S3 does: malformed or reversed InvalidArgument, past the start InvalidRequest, past the ' +
      'end InvalidArgument',
    async () => {
      await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'source.bin', Body: randomBytes(100) }));
      const uploadId = await createUpload('dest.bin');
      const copy = (CopySourceRange: string) =>
        failure(
          s3.send(
            new UploadPartCopyCommand({
              Bucket: BUCKET,
              Key: 'dest.bin',
              UploadId: uploadId,
              PartNumber: 1,
              CopySource: `${BUCKET}/source.bin`,
              CopySourceRange,
            }),
          ),
        );
      for (const malformed of ['bytes=5-1', 'bytes=0-', 'bytes=-10', 'bytes=a-b', 'bytes=0-1,3-4', 'items=0-1']) {
        const error = (await copy(malformed)) as Awaited<ReturnType<typeof copy>> & {
          ArgumentName?: string;
          ArgumentValue?: string;
        };
        expect([error.name, error.$metadata.httpStatusCode, error.ArgumentName, error.ArgumentValue]).toEqual([
          'InvalidArgument',
          400,
          'x-amz-copy-source-range',
          malformed,
        ]);
        expect(error.message).toMatch(/^The x-amz-copy-source-range value must be of the form bytes=first-last/);
      }
      const startsPast = await copy('bytes=100-120');
      expect([startsPast.name, startsPast.$metadata.httpStatusCode, startsPast.message]).toEqual([
        'InvalidRequest',
        400,
        'The specified copy range is invalid for the source object size',
      ]);
      const endsPast = await copy('bytes=10-100');
      expect([endsPast.name, endsPast.$metadata.httpStatusCode, endsPast.message]).toEqual([
        'InvalidArgument',
        400,
        'Range specified is not valid for source object of size: 100',
      ]);
      // Nothing was stored for any of them.
      expect(
        (await s3.send(new ListPartsCommand({ Bucket: BUCKET, Key: 'dest.bin', UploadId: uploadId }))).Parts ?? [],
      ).toEqual([]);
    },
  );

  it('answers NoSuchKey, NoSuchBucket, NoSuchUpload and AccessDenied (a key that may not read the source)', async () => {
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'source.bin', Body: 'bytes' }));
    const uploadId = await createUpload('dest.bin');
    const copy = (client: S3Client, CopySource: string, UploadId = uploadId) =>
      failure(
        client.send(
          new UploadPartCopyCommand({ Bucket: BUCKET, Key: 'dest.bin', UploadId, PartNumber: 1, CopySource }),
        ),
      );

    const missingKey = await copy(s3, `${BUCKET}/missing.bin`);
    expect([missingKey.name, missingKey.$metadata.httpStatusCode]).toEqual(['NoSuchKey', 404]);
    const missingBucket = await copy(s3, 'no-such-bucket/source.bin');
    expect([missingBucket.name, missingBucket.$metadata.httpStatusCode]).toEqual(['NoSuchBucket', 404]);
    const missingUpload = await copy(s3, `${BUCKET}/source.bin`, 'no-such-upload');
    expect([missingUpload.name, missingUpload.$metadata.httpStatusCode]).toEqual(['NoSuchUpload', 404]);
    const denied = await copy(writeOnly, `${BUCKET}/source.bin`);
    expect([denied.name, denied.$metadata.httpStatusCode]).toEqual(['AccessDenied', 403]);
  });
  it('honours x-amz-copy-source-if-* as CopyObject does: 412 PreconditionFailed, nothing stored', async () => {
    const put = await s3.send(
      new PutObjectCommand({ Bucket: BUCKET, Key: 'conditional-source.bin', Body: 'source bytes' }),
    );
    const uploadId = await createUpload('conditional-dest.bin');
    const copy = (conditions: Partial<UploadPartCopyCommandInput>) =>
      s3.send(
        new UploadPartCopyCommand({
          Bucket: BUCKET,
          Key: 'conditional-dest.bin',
          UploadId: uploadId,
          PartNumber: 1,
          CopySource: `${BUCKET}/conditional-source.bin`,
          ...conditions,
        }),
      );
    for (const conditions of [
      { CopySourceIfMatch: '"0123456789abcdef0123456789abcdef"' },
      { CopySourceIfNoneMatch: put.ETag },
    ]) {
      const refused = await failure(copy(conditions));
      expect([refused.name, refused.$metadata.httpStatusCode]).toEqual(['PreconditionFailed', 412]);
    }
    expect(
      (await s3.send(new ListPartsCommand({ Bucket: BUCKET, Key: 'conditional-dest.bin', UploadId: uploadId })))
        .Parts ?? [],
    ).toEqual([]);
    const copied = await copy({ CopySourceIfMatch: put.ETag });
    expect(copied.CopyPartResult?.ETag).toBe(put.ETag);
  });
});

describe('CompleteMultipartUpload', () => {
  it('answers a repeat with the same parts 200 and the same result, anything else about the upload NoSuchUpload', async () => {
    const parts = [randomBytes(5 * MiB), randomBytes(10)];
    const uploadId = await createUpload('repeat.bin');
    const listed = await uploadParts('repeat.bin', uploadId, parts);
    const first = await complete('repeat.bin', uploadId, listed);
    const again = await complete('repeat.bin', uploadId, listed);
    expect(again.ETag).toBe(first.ETag);
    expect(again.ETag).toBe(multipartEtag(parts));
    expect([again.Bucket, again.Key, again.Location]).toEqual([first.Bucket, first.Key, first.Location]);
    expect([again.ChecksumCRC64NVME, again.ChecksumType]).toEqual([first.ChecksumCRC64NVME, first.ChecksumType]);

    const otherParts = await failure(complete('repeat.bin', uploadId, listed.slice(0, 1)));
    expect([otherParts.name, otherParts.$metadata.httpStatusCode]).toEqual(['NoSuchUpload', 404]);
    const aborted = await failure(
      s3.send(new AbortMultipartUploadCommand({ Bucket: BUCKET, Key: 'repeat.bin', UploadId: uploadId })),
    );
    expect(aborted.name).toBe('NoSuchUpload');
    const partUpload = await failure(
      s3.send(
        new UploadPartCommand({ Bucket: BUCKET, Key: 'repeat.bin', UploadId: uploadId, PartNumber: 3, Body: 'late' }),
      ),
    );
    expect(partUpload.name).toBe('NoSuchUpload');
    expect((await s3.send(new ListMultipartUploadsCommand({ Bucket: BUCKET }))).Uploads ?? []).toEqual([]);
    const object = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'repeat.bin' }));
    expect((await bodyOf(object)).equals(Buffer.concat(parts))).toBe(true);
  });

  it(
    'refuses a part listed twice or out of order (InvalidPartOrder), a small part before the last ' +
      '(EntityTooSmall) and a wrong ETag (InvalidPart)',
    async () => {
      const uploadId = await createUpload('refused.bin');
      const listed = await uploadParts('refused.bin', uploadId, [
        randomBytes(5 * MiB),
        randomBytes(100),
        randomBytes(100),
      ]);
      const refusal = async (parts: CompletedPart[]) => {
        const error = await failure(complete('refused.bin', uploadId, parts));
        return [error.name, error.$metadata.httpStatusCode];
      };
      expect(await refusal([listed[0]!, listed[0]!])).toEqual(['InvalidPartOrder', 400]);
      expect(await refusal([listed[1]!, listed[0]!])).toEqual(['InvalidPartOrder', 400]);
      expect(await refusal([listed[0]!, listed[1]!, listed[2]!])).toEqual(['EntityTooSmall', 400]);
      expect(await refusal([listed[0]!, { ...listed[2]!, ETag: listed[1]!.ETag }])).toEqual(['InvalidPart', 400]);
      // The upload survives every refusal.
      const done = await complete('refused.bin', uploadId, [listed[0]!, listed[2]!]);
      expect(done.ETag).toMatch(/-2"$/);
    },
  );
});

describe("CompleteMultipartUpload with the whole object's checksum", () => {
  it(
    'checks an x-amz-checksum-* header against the object: a wrong value is BadDigest, another algorithm ' +
      'InvalidRequest, and the upload stays',
    async () => {
      const parts = [randomBytes(5 * MiB), randomBytes(123)];
      const whole = Buffer.concat(parts);
      const uploadId = await createUpload('checked.bin');
      const listed = await uploadParts('checked.bin', uploadId, parts);
      const completeWith = (checksum: { ChecksumCRC64NVME?: string; ChecksumCRC32?: string }) =>
        s3.send(
          new CompleteMultipartUploadCommand({
            Bucket: BUCKET,
            Key: 'checked.bin',
            UploadId: uploadId,
            MultipartUpload: { Parts: listed },
            ...checksum,
          }),
        );

      const wrongValue = await failure(
        completeWith({
          ChecksumCRC64NVME: (await crc(new Crc64Nvme(), Buffer.from('other bytes'))).toString('base64'),
        }),
      );
      expect([wrongValue.name, wrongValue.$metadata.httpStatusCode, wrongValue.message]).toEqual([
        'BadDigest',
        400,
        'The CRC64NVME you specified did not match the calculated checksum.',
      ]);
      const otherAlgorithm = await failure(
        completeWith({ ChecksumCRC32: (await crc(new Crc32(), whole)).toString('base64') }),
      );
      expect([otherAlgorithm.name, otherAlgorithm.$metadata.httpStatusCode, otherAlgorithm.message]).toEqual([
        'InvalidRequest',
        400,
        'Checksum Type mismatch occurred, expected checksum Type: crc64nvme, actual checksum Type: crc32',
      ]);
      // Nothing was placed, and the upload is still in progress.
      expect((await failure(s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'checked.bin' })))).name).toBe(
        'NotFound',
      );
      expect(
        (await s3.send(new ListPartsCommand({ Bucket: BUCKET, Key: 'checked.bin', UploadId: uploadId }))).Parts,
      ).toHaveLength(2);

      const right = (await crc(new Crc64Nvme(), whole)).toString('base64');
      const done = await completeWith({ ChecksumCRC64NVME: right });
      expect([done.ChecksumCRC64NVME, done.ChecksumType]).toEqual([right, 'FULL_OBJECT']);
      expect(
        (await bodyOf(await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'checked.bin' })))).equals(whole),
      ).toBe(true);
    },
  );

  it("checks a COMPOSITE checksum, the checksum of the parts' checksums, sent with its part count or without", async () => {
    const parts = [randomBytes(5 * MiB), randomBytes(7)];
    const uploadId = await createUpload('composite.bin', 'SHA256');
    const listed = await uploadParts('composite.bin', uploadId, parts, 'SHA256');
    const composite = createHash('sha256')
      .update(Buffer.concat(parts.map(sha256)))
      .digest('base64');
    const completeWith = (ChecksumSHA256: string) =>
      s3.send(
        new CompleteMultipartUploadCommand({
          Bucket: BUCKET,
          Key: 'composite.bin',
          UploadId: uploadId,
          MultipartUpload: { Parts: listed },
          ChecksumSHA256,
        }),
      );
    expect((await failure(completeWith(sha256(Buffer.from('x')).toString('base64')))).name).toBe('BadDigest');
    expect((await failure(completeWith(`${composite}-3`))).name).toBe('BadDigest');
    const done = await completeWith(`${composite}-2`);
    expect([done.ChecksumSHA256, done.ChecksumType]).toEqual([`${composite}-2`, 'COMPOSITE']);
    // Completed: the same request again answers the same result.
    const again = await completeWith(composite);
    expect([again.ChecksumSHA256, again.ChecksumType]).toEqual([`${composite}-2`, 'COMPOSITE']);
  });
});

describe('GetObject / HeadObject ?partNumber', () => {
  it("answers a multipart object's part with 206, its Content-Range and the part count", async () => {
    const parts = [randomBytes(5 * MiB), randomBytes(5 * MiB), randomBytes(1000)];
    const { ETag } = await multipartObject('parts.bin', parts);
    const total = 10 * MiB + 1000;

    const second = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'parts.bin', PartNumber: 2 }));
    expect(second.$metadata.httpStatusCode).toBe(206);
    expect([second.ContentRange, second.ContentLength, second.PartsCount, second.ETag]).toEqual([
      `bytes ${5 * MiB}-${10 * MiB - 1}/${total}`,
      5 * MiB,
      3,
      ETag,
    ]);
    expect((await bodyOf(second)).equals(parts[1]!)).toBe(true);

    const last = await s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'parts.bin', PartNumber: 3 }));
    expect(last.$metadata.httpStatusCode).toBe(206);
    expect([last.ContentRange, last.ContentLength, last.PartsCount]).toEqual([
      `bytes ${10 * MiB}-${total - 1}/${total}`,
      1000,
      3,
    ]);

    const beyond = await rawSigned('GET', `/${BUCKET}/parts.bin`, { partNumber: '4' });
    expect([beyond.status, codeOf(beyond.body), messageOf(beyond.body)]).toEqual([
      416,
      'InvalidPartNumber',
      'The requested partnumber is not satisfiable',
    ]);
    const beyondHead = await failure(
      s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'parts.bin', PartNumber: 4 })),
    );
    expect(beyondHead.$metadata.httpStatusCode).toBe(416);
  });

  it(
    'answers an object put in one piece as its own part 1 (206, no part count) and refuses bad part numbers and ' +
      'ranges beside them',
    async () => {
      const body = randomBytes(2048);
      await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'single.bin', Body: body }));
      const first = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'single.bin', PartNumber: 1 }));
      expect(first.$metadata.httpStatusCode).toBe(206);
      expect([first.ContentRange, first.ContentLength, first.PartsCount]).toEqual([
        'bytes 0-2047/2048',
        2048,
        undefined,
      ]);
      expect((await bodyOf(first)).equals(body)).toBe(true);

      const second = await rawSigned('GET', `/${BUCKET}/single.bin`, { partNumber: '2' });
      expect([second.status, codeOf(second.body)]).toEqual([416, 'InvalidPartNumber']);
      for (const partNumber of ['0', '10001', 'one']) {
        const invalid = await rawSigned('GET', `/${BUCKET}/single.bin`, { partNumber });
        expect([invalid.status, codeOf(invalid.body), messageOf(invalid.body)]).toEqual([
          400,
          'InvalidArgument',
          'Part number must be an integer between 1 and 10000, inclusive',
        ]);
      }
      const withRange = await rawSigned('GET', `/${BUCKET}/single.bin`, { partNumber: '1' }, { range: 'bytes=0-1' });
      expect([withRange.status, codeOf(withRange.body), messageOf(withRange.body)]).toEqual([
        400,
        'InvalidRequest',
        'Cannot specify both Range header and partNumber query parameter',
      ]);
      const missing = await failure(
        s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'missing.bin', PartNumber: 1 })),
      );
      expect(missing.name).toBe('NoSuchKey');
    },
  );
});

describe('upload checksums', () => {
  it(
    'echoes ChecksumAlgorithm, checks it on every part, lists part checksums and gives the object the COMPOSITE ' +
      'checksum',
    async () => {
      const parts = [randomBytes(5 * MiB), randomBytes(4321)];
      const created = await s3.send(
        new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: 'sha.bin', ChecksumAlgorithm: 'SHA256' }),
      );
      expect([created.ChecksumAlgorithm, created.ChecksumType]).toEqual(['SHA256', 'COMPOSITE']);
      const uploadId = created.UploadId!;
      const listed = await uploadParts('sha.bin', uploadId, parts, 'SHA256');
      const partDigests = parts.map(sha256);
      expect(listed.map((part) => part.ChecksumSHA256)).toEqual(partDigests.map((digest) => digest.toString('base64')));

      const listing = await s3.send(new ListPartsCommand({ Bucket: BUCKET, Key: 'sha.bin', UploadId: uploadId }));
      expect([listing.ChecksumAlgorithm, listing.ChecksumType]).toEqual(['SHA256', 'COMPOSITE']);
      expect(listing.Parts?.map((part) => part.ChecksumSHA256)).toEqual(listed.map((part) => part.ChecksumSHA256));
      const uploads = await s3.send(new ListMultipartUploadsCommand({ Bucket: BUCKET }));
      expect(uploads.Uploads?.map((upload) => [upload.Key, upload.ChecksumAlgorithm, upload.ChecksumType])).toEqual([
        ['sha.bin', 'SHA256', 'COMPOSITE'],
      ]);

      const composite = `${sha256(Buffer.concat(partDigests)).toString('base64')}-2`;
      const result = await complete('sha.bin', uploadId, listed);
      expect([result.ChecksumSHA256, result.ChecksumType]).toEqual([composite, 'COMPOSITE']);

      const head = await s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'sha.bin', ChecksumMode: 'ENABLED' }));
      expect([head.ChecksumSHA256, head.ChecksumType]).toEqual([composite, 'COMPOSITE']);
      const plainHead = await s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'sha.bin' }));
      expect(plainHead.ChecksumSHA256).toBeUndefined();
      const part = await s3.send(
        new GetObjectCommand({ Bucket: BUCKET, Key: 'sha.bin', PartNumber: 2, ChecksumMode: 'ENABLED' }),
      );
      expect(part.ChecksumSHA256).toBe(partDigests[1]!.toString('base64'));
      expect((await bodyOf(part)).equals(parts[1]!)).toBe(true);
    },
  );

  it(
    "completes a lib-storage upload from a client with the SDK's default checksum settings (CRC32 parts), and " +
      'reads it back validated',
    async () => {
      const defaults = ctx.client(FULL, {
        requestChecksumCalculation: 'WHEN_SUPPORTED',
        responseChecksumValidation: 'WHEN_SUPPORTED',
      });
      const body = randomBytes(6 * MiB);
      const result = await new Upload({
        client: defaults,
        params: { Bucket: BUCKET, Key: 'defaults.bin', Body: body },
        partSize: 5 * MiB,
      }).done();
      expect(result.ETag).toBe(multipartEtag([body.subarray(0, 5 * MiB), body.subarray(5 * MiB)]));
      const read = await defaults.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'defaults.bin' }));
      expect(read.ChecksumType).toBe('COMPOSITE');
      expect(read.ChecksumCRC32).toMatch(/-2$/);
      expect((await bodyOf(read)).equals(body)).toBe(true);
    },
  );

  it(
    'refuses parts without the upload checksum or with another one, and a Complete that leaves them out or gets ' +
      'them wrong',
    async () => {
      const uploadId = await createUpload('strict.bin', 'SHA256');
      const upload = (Body: string, ChecksumAlgorithm?: ChecksumAlgorithm) =>
        failure(
          s3.send(
            new UploadPartCommand({
              Bucket: BUCKET,
              Key: 'strict.bin',
              UploadId: uploadId,
              PartNumber: 1,
              Body,
              ChecksumAlgorithm,
            }),
          ),
        );
      const without = await upload('no checksum');
      expect([without.name, without.$metadata.httpStatusCode, without.message]).toEqual([
        'InvalidRequest',
        400,
        'Checksum Type mismatch occurred, expected checksum Type: sha256, actual checksum Type: null',
      ]);
      const other = await upload('crc32 instead', 'CRC32');
      expect(other.message).toBe(
        'Checksum Type mismatch occurred, expected checksum Type: sha256, actual checksum Type: crc32',
      );

      const listed = await uploadParts('strict.bin', uploadId, [Buffer.from('only part')], 'SHA256');
      const missing = await failure(complete('strict.bin', uploadId, [{ PartNumber: 1, ETag: listed[0]!.ETag }]));
      expect([missing.name, missing.message]).toEqual([
        'InvalidRequest',
        'The upload was created using a sha256 checksum. The complete request must include the checksum for each ' +
          'part. It was missing for part 1 in the request.',
      ]);
      const wrong = await failure(
        complete('strict.bin', uploadId, [
          { PartNumber: 1, ETag: listed[0]!.ETag, ChecksumSHA256: sha256(Buffer.from('other')).toString('base64') },
        ]),
      );
      expect([wrong.name, wrong.$metadata.httpStatusCode]).toEqual(['InvalidPart', 400]);

      const bad = await rawSigned(
        'POST',
        `/${BUCKET}/strict.bin`,
        { uploads: '' },
        { 'x-amz-checksum-algorithm': 'MD5' },
      );
      expect([bad.status, codeOf(bad.body)]).toEqual([400, 'InvalidRequest']);
      expect(messageOf(bad.body)).toBe(
        'Checksum algorithm provided is unsupported. Please try again with any of the valid types: [CRC32, CRC32C, ' +
          'CRC64NVME, SHA1, SHA256]',
      );
    },
  );

  it(
    'gives CRC64NVME uploads, and CRC32 ones asking for it, the FULL_OBJECT checksum of the whole content; ' +
      'SHA256 cannot have one',
    async () => {
      const parts = [randomBytes(5 * MiB), randomBytes(999)];
      const body = Buffer.concat(parts);
      const full = async (key: string, ChecksumAlgorithm: ChecksumAlgorithm, ChecksumType?: 'FULL_OBJECT') => {
        const created = await s3.send(
          new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: key, ChecksumAlgorithm, ChecksumType }),
        );
        expect([created.ChecksumAlgorithm, created.ChecksumType]).toEqual([ChecksumAlgorithm, 'FULL_OBJECT']);
        const listed: CompletedPart[] = [];
        for (const [index, Body] of parts.entries()) {
          const part = await s3.send(
            new UploadPartCommand({
              Bucket: BUCKET,
              Key: key,
              UploadId: created.UploadId,
              PartNumber: index + 1,
              Body,
              ChecksumAlgorithm,
            }),
          );
          listed.push({
            PartNumber: index + 1,
            ETag: part.ETag,
            ChecksumCRC32: part.ChecksumCRC32,
            ChecksumCRC64NVME: part.ChecksumCRC64NVME,
          });
        }
        return complete(key, created.UploadId!, listed);
      };
      const nvme = await full('nvme.bin', 'CRC64NVME');
      expect([nvme.ChecksumCRC64NVME, nvme.ChecksumType]).toEqual([
        (await crc(new Crc64Nvme(), body)).toString('base64'),
        'FULL_OBJECT',
      ]);
      const crc32 = await full('crc32-full.bin', 'CRC32', 'FULL_OBJECT');
      expect([crc32.ChecksumCRC32, crc32.ChecksumType]).toEqual([
        (await crc(new Crc32(), body)).toString('base64'),
        'FULL_OBJECT',
      ]);
      const head = await s3.send(
        new HeadObjectCommand({ Bucket: BUCKET, Key: 'crc32-full.bin', ChecksumMode: 'ENABLED' }),
      );
      expect([head.ChecksumCRC32, head.ChecksumType]).toEqual([crc32.ChecksumCRC32, 'FULL_OBJECT']);

      const refused = await failure(
        s3.send(
          new CreateMultipartUploadCommand({
            Bucket: BUCKET,
            Key: 'sha-full.bin',
            ChecksumAlgorithm: 'SHA256',
            ChecksumType: 'FULL_OBJECT',
          }),
        ),
      );
      expect([refused.name, refused.$metadata.httpStatusCode, refused.message]).toEqual([
        'InvalidRequest',
        400,
        'The FULL_OBJECT checksum type cannot be used with the sha256 checksum algorithm.',
      ]);
    },
  );

  it("refuses a Complete naming another checksum type than the upload's, or an object size that is not the parts'", async () => {
    const uploadId = await createUpload('declared.bin', 'SHA256');
    const listed = await uploadParts('declared.bin', uploadId, [Buffer.from('twelve bytes')], 'SHA256');
    const completeWith = (extra: { ChecksumType?: 'FULL_OBJECT' | 'COMPOSITE'; MpuObjectSize?: number }) =>
      s3.send(
        new CompleteMultipartUploadCommand({
          Bucket: BUCKET,
          Key: 'declared.bin',
          UploadId: uploadId,
          MultipartUpload: { Parts: listed },
          ...extra,
        }),
      );
    const otherType = await failure(completeWith({ ChecksumType: 'FULL_OBJECT' }));
    expect([otherType.name, otherType.$metadata.httpStatusCode, otherType.message]).toEqual([
      'InvalidRequest',
      400,
      'The upload was created using the COMPOSITE checksum mode. The complete request must use the same checksum mode.',
    ]);
    const otherSize = await failure(completeWith({ MpuObjectSize: 13 }));
    expect([otherSize.name, otherSize.message]).toEqual([
      'InvalidRequest',
      "The provided 'x-amz-mp-object-size' header does not match what was computed.",
    ]);
    const done = await completeWith({ ChecksumType: 'COMPOSITE', MpuObjectSize: 12 });
    expect(done.ChecksumType).toBe('COMPOSITE');
  });

  it(
    'gives lib-storage uploads with a CRC32 algorithm the composite CRC32, and uploads without one the ' +
      'full-object CRC64NVME',
    async () => {
      const body = randomBytes(11 * MiB);
      await new Upload({
        client: s3,
        params: { Bucket: BUCKET, Key: 'crc32.bin', Body: body, ChecksumAlgorithm: 'CRC32' },
        partSize: 5 * MiB,
      }).done();
      const pieces = [body.subarray(0, 5 * MiB), body.subarray(5 * MiB, 10 * MiB), body.subarray(10 * MiB)];
      const partCrcs = await Promise.all(pieces.map((piece) => crc(new Crc32(), piece)));
      const composite = `${(await crc(new Crc32(), Buffer.concat(partCrcs))).toString('base64')}-3`;
      const head = await s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'crc32.bin', ChecksumMode: 'ENABLED' }));
      expect([head.ChecksumCRC32, head.ChecksumType]).toEqual([composite, 'COMPOSITE']);

      await multipartObject('plain.bin', pieces);
      const fullObject = (await crc(new Crc64Nvme(), body)).toString('base64');
      const plain = await s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'plain.bin', ChecksumMode: 'ENABLED' }));
      expect([plain.ChecksumCRC64NVME, plain.ChecksumType]).toEqual([fullObject, 'FULL_OBJECT']);
      // A client that validates response checksums (the SDK's default) reads it back.
      const validating = ctx.client(FULL, { responseChecksumValidation: 'WHEN_SUPPORTED' });
      const read = await validating.send(
        new GetObjectCommand({ Bucket: BUCKET, Key: 'plain.bin', ChecksumMode: 'ENABLED' }),
      );
      expect((await bodyOf(read)).equals(body)).toBe(true);
    },
  );
});

describe('GetObjectAttributes', () => {
  it('answers ETag, Checksum, ObjectParts (paged), StorageClass and ObjectSize of a multipart object', async () => {
    const parts = [randomBytes(5 * MiB), randomBytes(5 * MiB), randomBytes(77)];
    const uploadId = await createUpload('attributes.bin', 'SHA256');
    const listed = await uploadParts('attributes.bin', uploadId, parts, 'SHA256');
    const result = await complete('attributes.bin', uploadId, listed);

    const attributes = await s3.send(
      new GetObjectAttributesCommand({
        Bucket: BUCKET,
        Key: 'attributes.bin',
        ObjectAttributes: ['ETag', 'Checksum', 'ObjectParts', 'StorageClass', 'ObjectSize'],
        MaxParts: 2,
      }),
    );
    expect(attributes.ETag).toBe(result.ETag!.replace(/"/g, ''));
    expect(attributes.Checksum).toEqual({ ChecksumSHA256: result.ChecksumSHA256, ChecksumType: 'COMPOSITE' });
    expect([attributes.StorageClass, attributes.ObjectSize]).toEqual(['STANDARD', 10 * MiB + 77]);
    expect(attributes.LastModified).toBeInstanceOf(Date);
    expect(attributes.ObjectParts).toMatchObject({
      TotalPartsCount: 3,
      PartNumberMarker: '0',
      NextPartNumberMarker: '2',
      MaxParts: 2,
      IsTruncated: true,
    });
    expect(attributes.ObjectParts?.Parts).toEqual(
      parts.slice(0, 2).map((part, index) => ({
        PartNumber: index + 1,
        Size: part.length,
        ChecksumSHA256: sha256(part).toString('base64'),
      })),
    );
    const rest = await s3.send(
      new GetObjectAttributesCommand({
        Bucket: BUCKET,
        Key: 'attributes.bin',
        ObjectAttributes: ['ObjectParts'],
        PartNumberMarker: '2',
      }),
    );
    expect(rest.ObjectParts?.Parts?.map((part) => part.PartNumber)).toEqual([3]);
    expect(rest.ObjectParts?.IsTruncated).toBe(false);
    expect(rest.ETag).toBeUndefined();
  });

  it(
    'answers a multipart object uploaded without a checksum algorithm its part count alone, as S3 documents for ' +
      'general purpose buckets',
    async () => {
      await multipartObject('no-algorithm.bin', [randomBytes(5 * MiB), randomBytes(10)]);
      const attributes = await s3.send(
        new GetObjectAttributesCommand({
          Bucket: BUCKET,
          Key: 'no-algorithm.bin',
          ObjectAttributes: ['ObjectParts', 'Checksum'],
        }),
      );
      expect(attributes.ObjectParts).toEqual({ TotalPartsCount: 2 });
      expect(attributes.Checksum?.ChecksumType).toBe('FULL_OBJECT');
    },
  );

  it('answers an object put in one piece without ObjectParts, and refuses unknown attributes and missing keys', async () => {
    const body = Buffer.from('one piece');
    const put = await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'single.txt', Body: body }));
    const attributes = await s3.send(
      new GetObjectAttributesCommand({
        Bucket: BUCKET,
        Key: 'single.txt',
        ObjectAttributes: ['ETag', 'ObjectParts', 'ObjectSize', 'Checksum'],
      }),
    );
    expect(attributes.ETag).toBe(put.ETag!.replace(/"/g, ''));
    expect(attributes.ObjectParts).toBeUndefined();
    expect(attributes.ObjectSize).toBe(body.length);
    expect(attributes.Checksum).toEqual({
      ChecksumCRC64NVME: (await crc(new Crc64Nvme(), body)).toString('base64'),
      ChecksumType: 'FULL_OBJECT',
    });

    const unknown = await rawSigned(
      'GET',
      `/${BUCKET}/single.txt`,
      { attributes: '' },
      { 'x-amz-object-attributes': 'ETag,Colour' },
    );
    expect([unknown.status, codeOf(unknown.body), messageOf(unknown.body)]).toEqual([
      400,
      'InvalidArgument',
      'Invalid attribute name specified.',
    ]);
    const none = await rawSigned('GET', `/${BUCKET}/single.txt`, { attributes: '' });
    expect([none.status, codeOf(none.body)]).toEqual([400, 'InvalidRequest']);
    const missing = await failure(
      s3.send(new GetObjectAttributesCommand({ Bucket: BUCKET, Key: 'missing.txt', ObjectAttributes: ['ETag'] })),
    );
    expect([missing.name, missing.$metadata.httpStatusCode]).toEqual(['NoSuchKey', 404]);
    const noBucket = await failure(
      s3.send(
        new GetObjectAttributesCommand({ Bucket: 'no-such-bucket', Key: 'single.txt', ObjectAttributes: ['ETag'] }),
      ),
    );
    expect([noBucket.name, noBucket.$metadata.httpStatusCode]).toEqual(['NoSuchBucket', 404]);
  });
});
