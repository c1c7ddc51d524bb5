import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { crc32 } from 'node:zlib';

import {
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  type S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { SignatureV4 } from '@smithy/signature-v4';
import { beforeEach, describe, expect, it } from 'vitest';

import { AwsChunkedDecoder } from '../../src/objstore/server/bodies/aws-chunked.ts';
import type { ObjstoreKey } from '../../src/objstore/index.ts';
import {
  CHECKSUMS_WHEN_REQUIRED,
  failure,
  forEachStorage,
  NodeSha256,
  rawRequest,
  useObjstore,
  type RawResponse,
} from '../support/objstore-server.ts';

const BUCKET = 'exports';
const REGION = 'us-east-1';
const KEY: ObjstoreKey = {
  accessKeyId: 'LPBODIESKEY00001',
  secretAccessKey: 'bodies-secret-0123456789abcdefghijklmn',
  permissions: ['create', 'delete', 'get', 'multipart'],
};

/** Records the headers of the requests the client sends, as they go on the wire. */
function recordSentHeaders(client: S3Client): Record<string, string>[] {
  const sent: Record<string, string>[] = [];
  client.middlewareStack.add(
    (next) => async (args) => {
      sent.push({ ...(args.request as { headers: Record<string, string> }).headers });
      return next(args);
    },
    { step: 'deserialize', name: 'recordSentHeaders' },
  );
  return sent;
}

/** Deterministic, non-repeating-looking bytes. */
function patterned(size: number, seed = 1): Buffer {
  const data = Buffer.alloc(size);
  let state = seed;
  for (let i = 0; i < size; i++) {
    state = (state * 1103515245 + 12345) >>> 0;
    data[i] = state >>> 24;
  }
  return data;
}

function* piecesOf(data: Buffer, size: number): Generator<Buffer> {
  for (let at = 0; at < data.length; at += size) yield data.subarray(at, at + size);
}

const md5Hex = (data: Buffer | string) => createHash('md5').update(data).digest('hex');
const md5Base64 = (data: Buffer | string) => createHash('md5').update(data).digest('base64');
const sha256Hex = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');

async function bodyOf(client: S3Client, key: string): Promise<Buffer> {
  const response = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
  return Buffer.from(await response.Body!.transformToByteArray());
}

// --- Raw requests signed with @smithy/signature-v4 ------------------------------------------

function signer(): SignatureV4 {
  return new SignatureV4({ credentials: KEY, region: REGION, service: 's3', sha256: NodeSha256, uriEscapePath: false });
}

const codeOf = (xml: string) => /<Code>([^<]*)<\/Code>/.exec(xml)?.[1];
const XML_ENTITIES: Record<string, string> = { apos: "'", quot: '"', lt: '<', gt: '>', amp: '&' };
const messageOf = (xml: string) =>
  /<Message>([^<]*)<\/Message>/
    .exec(xml)?.[1]
    ?.replace(/&(apos|quot|lt|gt|amp);/g, (_, name: string) => XML_ENTITIES[name]!);

interface SignedPut {
  key: string;
  query?: Record<string, string>;
  /** Headers to sign besides host and x-amz-date; must include x-amz-content-sha256. */
  headers: Record<string, string>;
}

const EMPTY_SHA256 = sha256Hex('');

interface ChunkedOptions {
  /** Data bytes per chunk (the last one may be smaller). */
  chunkSize?: number;
  /** Trailer fields, `name:value` each. */
  trailer?: string[];
  /** Signs each chunk (and the trailer) in a chain from the request's seed signature. */
  signing?: { date: Date; seedSignature: string };
}

function scopeOf(date: Date): { amzDate: string; scope: string } {
  const amzDate = date
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
  return { amzDate, scope: `${amzDate.slice(0, 8)}/${REGION}/s3/aws4_request` };
}

/** The aws-chunked encoding of `data`, as an SDK sends it. */
async function awsChunked(
  data: Buffer,
  { chunkSize = 64 * 1024, trailer = [], signing }: ChunkedOptions = {},
): Promise<Buffer> {
  const chunks = [...piecesOf(data, chunkSize), Buffer.alloc(0)];
  const parts: Buffer[] = [];
  let previous = signing?.seedSignature ?? '';
  const signNext = async (kind: 'PAYLOAD' | 'TRAILER', hashes: string[]) => {
    const { amzDate, scope } = scopeOf(signing!.date);
    const stringToSign = [`AWS4-HMAC-SHA256-${kind}`, amzDate, scope, previous, ...hashes].join('\n');
    previous = await signer().sign(stringToSign, { signingDate: signing!.date });
    return previous;
  };
  for (const chunk of chunks) {
    const extension = signing ? `;chunk-signature=${await signNext('PAYLOAD', [EMPTY_SHA256, sha256Hex(chunk)])}` : '';
    parts.push(Buffer.from(`${chunk.length.toString(16)}${extension}\r\n`), chunk);
    if (chunk.length > 0) parts.push(Buffer.from('\r\n'));
  }
  const fields = trailer.map((field) => `${field}\r\n`).join('');
  const signedFields = trailer.map((field) => `${field}\n`).join('');
  const trailerSignature =
    signing && trailer.length > 0
      ? `x-amz-trailer-signature:${await signNext('TRAILER', [sha256Hex(signedFields)])}\r\n`
      : '';
  parts.push(Buffer.from(`${fields}${trailerSignature}\r\n`));
  return Buffer.concat(parts);
}

interface ChunkedPut {
  key: string;
  data: Buffer;
  payload?:
    | 'STREAMING-UNSIGNED-PAYLOAD-TRAILER'
    | 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD'
    | 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER';
  /** Announced in x-amz-trailer and sent after the final chunk. */
  trailer?: [name: string, value: string];
  headers?: Record<string, string>;
  chunkSize?: number;
  /** Changes the encoded body before it is sent. */
  edit?: (body: Buffer) => Buffer;
  query?: Record<string, string>;
}

type ChecksumAlgorithm = 'CRC32' | 'CRC32C' | 'CRC64NVME' | 'SHA1' | 'SHA256';

// Check values of "123456789" for each algorithm (the catalogue values, not this code's).
const CHECK_DATA = Buffer.from('123456789');
const CHECK_VALUES: Record<ChecksumAlgorithm, string> = {
  CRC32: 'cbf43926',
  CRC32C: 'e3069283',
  CRC64NVME: 'ae8b14860a799888',
  SHA1: 'f7c3bc1d808e04732adf679965ccc34ca7ae3441',
  SHA256: '15e2b0d3c33891ebb0f1ef609ec419420c20e320ce94c65fbc8c3312448eb225',
};
const checkValue = (algorithm: ChecksumAlgorithm) => Buffer.from(CHECK_VALUES[algorithm], 'hex').toString('base64');
const wrongValue = (algorithm: ChecksumAlgorithm) =>
  Buffer.alloc(CHECK_VALUES[algorithm].length / 2, 1).toString('base64');
const ALGORITHMS = Object.keys(CHECK_VALUES) as ChecksumAlgorithm[];
const outputField = (algorithm: ChecksumAlgorithm) =>
  `Checksum${algorithm}` as
    'ChecksumCRC32' | 'ChecksumCRC32C' | 'ChecksumCRC64NVME' | 'ChecksumSHA1' | 'ChecksumSHA256';
const headerName = (algorithm: ChecksumAlgorithm) => `x-amz-checksum-${algorithm.toLowerCase()}`;

function numberBytes(value: number): Buffer {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32BE(value);
  return bytes;
}

/** zlib's CRC32 (Node >= 20.15), independent of the code under test. */
const crc32Base64 = (data: Buffer) => numberBytes(crc32(data)).toString('base64');

// ---------------------------------------------------------------------------------------------

forEachStorage((storage) => {
  const ctx = useObjstore({ directoryPrefix: 'objstore-bodies-', keys: [KEY], buckets: [BUCKET], storage });

  /** A client at the SDK's default settings: streamed bodies go aws-chunked with a CRC32 trailer. */
  const defaultClient = () => ctx.client(KEY);

  /** A client that sends checksums only when told to, as the app's own client does. */
  const plainClient = () => ctx.client(KEY, CHECKSUMS_WHEN_REQUIRED);

  /**
   * The bodies being received that the files storage keeps beside the store (the memory storage writes none:
   * useObjstore checks it).
   */
  function incomingFiles(): string[] {
    return fs.readdirSync(ctx.directory).filter((name) => name.startsWith('.incoming-'));
  }

  /** Signs a PUT the way the SDK does; answers its headers and the seed signature of its chunks. */
  async function signPut({ key, query = {}, headers }: SignedPut, signingDate: Date) {
    const host = new URL(ctx.objstore.url).host;
    const signed = await signer().sign(
      {
        method: 'PUT',
        protocol: 'http:',
        hostname: host.split(':')[0]!,
        path: `/${BUCKET}/${key}`,
        query,
        headers: { host, ...headers },
      },
      { signingDate },
    );
    const seedSignature = /Signature=([0-9a-f]{64})/.exec(signed.headers['authorization']!)![1]!;
    const search = new URLSearchParams(query).toString();
    return { url: `/${BUCKET}/${key}${search ? `?${search}` : ''}`, headers: signed.headers, seedSignature };
  }

  /** PutObject with a plain body; `x-amz-content-sha256` defaults to the body's hash. */
  async function rawPut(key: string, body: Buffer, headers: Record<string, string> = {}): Promise<RawResponse> {
    const signed = await signPut({ key, headers: { 'x-amz-content-sha256': sha256Hex(body), ...headers } }, new Date());
    return rawRequest(
      ctx.objstore.url,
      'PUT',
      signed.url,
      { ...signed.headers, 'content-length': String(body.length) },
      body,
    );
  }

  /** PutObject (or UploadPart, with `query`) with an aws-chunked body. */
  async function chunkedPut({
    key,
    data,
    payload = 'STREAMING-UNSIGNED-PAYLOAD-TRAILER',
    trailer,
    headers = {},
    chunkSize,
    edit = (body) => body,
    query,
  }: ChunkedPut): Promise<RawResponse> {
    const date = new Date();
    const signed = await signPut(
      {
        key,
        query,
        headers: {
          'content-encoding': 'aws-chunked',
          'x-amz-content-sha256': payload,
          'x-amz-decoded-content-length': String(data.length),
          ...(trailer ? { 'x-amz-trailer': trailer[0] } : {}),
          ...headers,
        },
      },
      date,
    );
    const signing = payload.startsWith('STREAMING-AWS4') ? { date, seedSignature: signed.seedSignature } : undefined;
    const body = edit(
      await awsChunked(data, { chunkSize, trailer: trailer ? [`${trailer[0]}:${trailer[1]}`] : [], signing }),
    );
    return rawRequest(
      ctx.objstore.url,
      'PUT',
      signed.url,
      { ...signed.headers, 'content-length': String(body.length) },
      body,
    );
  }

  beforeEach(async () => {
    await ctx.objstore.reset();
  });

  describe('streamed uploads from the SDK at its default settings', () => {
    it.each([0, 1, 64 * 1024 + 1, 10 * 1024 * 1024])(
      'PutObject of %i bytes from a Readable round-trips',
      async (size) => {
        const client = defaultClient();
        const sent = recordSentHeaders(client);
        const data = patterned(size);
        const put = await client.send(
          new PutObjectCommand({
            Bucket: BUCKET,
            Key: 'streamed',
            Body: Readable.from(piecesOf(data, 64 * 1024)),
            ContentLength: size,
          }),
        );
        // The trap: the SDK frames a streamed body as aws-chunked with a checksum trailer.
        expect(sent[0]).toMatchObject({
          'content-encoding': 'aws-chunked',
          'x-amz-content-sha256': 'STREAMING-UNSIGNED-PAYLOAD-TRAILER',
          'x-amz-trailer': 'x-amz-checksum-crc32',
        });
        expect(put.ETag).toBe(`"${md5Hex(data)}"`);
        expect(put.ChecksumCRC32).toBe(crc32Base64(data));

        // The default client asks for the checksum and checks the bytes against it.
        expect((await bodyOf(client, 'streamed')).equals(data)).toBe(true);
        const head = await client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'streamed' }));
        expect(head.ContentLength).toBe(size);
        expect(head.ETag).toBe(`"${md5Hex(data)}"`);
        expect(head.ContentEncoding).toBeUndefined();
        expect(incomingFiles()).toEqual([]);
      },
    );

    it('PutObject from a file stream without ContentLength round-trips', async () => {
      const data = patterned(3 * 1024 * 1024 + 5, 7);
      const file = path.join(ctx.directory, '..', `${path.basename(ctx.directory)}-source.bin`);
      fs.writeFileSync(file, data);
      try {
        const client = defaultClient();
        const put = await client.send(
          new PutObjectCommand({ Bucket: BUCKET, Key: 'from-file', Body: fs.createReadStream(file) }),
        );
        expect(put.ETag).toBe(`"${md5Hex(data)}"`);
        expect((await bodyOf(client, 'from-file')).equals(data)).toBe(true);
      } finally {
        fs.rmSync(file, { force: true });
      }
    });

    it('keeps other content encodings and drops aws-chunked', async () => {
      const client = defaultClient();
      const sent = recordSentHeaders(client);
      const data = patterned(20_000, 3);
      await client.send(
        new PutObjectCommand({
          Bucket: BUCKET,
          Key: 'gz',
          Body: Readable.from([data]),
          ContentLength: data.length,
          ContentEncoding: 'gzip',
        }),
      );
      expect(sent[0]!['content-encoding']).toMatch(/aws-chunked/);
      const head = await client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'gz' }));
      expect(head.ContentEncoding).toBe('gzip');
      expect(head.ContentLength).toBe(data.length);
    });

    it('lib-storage Upload of a small stream round-trips in one PutObject', async () => {
      const client = defaultClient();
      const data = patterned(1024 * 1024 + 3, 11);
      const result = await new Upload({
        client,
        params: { Bucket: BUCKET, Key: 'single', Body: Readable.from(piecesOf(data, 64 * 1024)) },
      }).done();
      expect(result.ETag).toBe(`"${md5Hex(data)}"`);
      const stored = await bodyOf(client, 'single');
      expect(md5Hex(stored)).toBe(md5Hex(data));
      expect(stored.equals(data)).toBe(true);
    });

    it('lib-storage Upload of a large stream round-trips in several parts', async () => {
      const client = defaultClient();
      const sent = recordSentHeaders(client);
      const data = patterned(11 * 1024 * 1024 + 123, 13);
      await new Upload({
        client,
        params: { Bucket: BUCKET, Key: 'multi', Body: Readable.from(piecesOf(data, 64 * 1024)) },
        partSize: 5 * 1024 * 1024,
      }).done();
      const parts = sent.filter((headers) => headers['x-amz-checksum-crc32'] !== undefined);
      expect(parts).toHaveLength(3);
      const stored = await bodyOf(client, 'multi');
      expect(stored.length).toBe(data.length);
      expect(md5Hex(stored)).toBe(md5Hex(data));
    });

    it('UploadPart with a streamed (aws-chunked) body stores the part as sent', async () => {
      const client = defaultClient();
      const sent = recordSentHeaders(client);
      const first = patterned(5 * 1024 * 1024, 17);
      const second = patterned(70_000, 19);
      const { UploadId } = await client.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: 'parts' }));
      const etags: string[] = [];
      for (const [index, data] of [first, second].entries()) {
        const part = await client.send(
          new UploadPartCommand({
            Bucket: BUCKET,
            Key: 'parts',
            UploadId,
            PartNumber: index + 1,
            Body: Readable.from(piecesOf(data, 64 * 1024)),
            ContentLength: data.length,
          }),
        );
        expect(part.ETag).toBe(`"${md5Hex(data)}"`);
        expect(part.ChecksumCRC32).toBe(crc32Base64(data));
        etags.push(part.ETag!);
      }
      expect(sent.filter((headers) => headers['content-encoding'] === 'aws-chunked')).toHaveLength(2);
      await client.send(
        new CompleteMultipartUploadCommand({
          Bucket: BUCKET,
          Key: 'parts',
          UploadId,
          MultipartUpload: { Parts: etags.map((ETag, index) => ({ ETag, PartNumber: index + 1 })) },
        }),
      );
      expect((await bodyOf(client, 'parts')).equals(Buffer.concat([first, second]))).toBe(true);
    });

    it('refuses chunks under 8 KiB before the last one, as S3 does, and keeps the previous object', async () => {
      const client = defaultClient();
      const previous = patterned(1000, 23);
      await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'small-chunks', Body: previous }));
      const data = patterned(30_000, 29);
      const error = await failure(
        client.send(
          new PutObjectCommand({
            Bucket: BUCKET,
            Key: 'small-chunks',
            Body: Readable.from(piecesOf(data, 100)),
            ContentLength: data.length,
          }),
        ),
      );
      expect(error.$metadata?.httpStatusCode).toBe(403);
      expect(error.name).toBe('InvalidChunkSizeError');
      expect((await bodyOf(client, 'small-chunks')).equals(previous)).toBe(true);
      expect(incomingFiles()).toEqual([]);
    });
  });

  describe('checksums', () => {
    it.each(ALGORITHMS)('accepts a right %s in a header and in a trailer, and answers it back', async (algorithm) => {
      const client = defaultClient();
      const sent = recordSentHeaders(client);
      const inHeader = await client.send(
        new PutObjectCommand({ Bucket: BUCKET, Key: 'in-header', Body: CHECK_DATA, ChecksumAlgorithm: algorithm }),
      );
      const inTrailer = await client.send(
        new PutObjectCommand({
          Bucket: BUCKET,
          Key: 'in-trailer',
          Body: Readable.from([CHECK_DATA]),
          ContentLength: CHECK_DATA.length,
          ChecksumAlgorithm: algorithm,
        }),
      );
      expect(sent[0]![headerName(algorithm)]).toBe(checkValue(algorithm));
      expect(sent[1]).toMatchObject({ 'x-amz-trailer': headerName(algorithm) });
      for (const [key, put] of [
        ['in-header', inHeader],
        ['in-trailer', inTrailer],
      ] as const) {
        expect(put[outputField(algorithm)]).toBe(checkValue(algorithm));
        expect(put.ChecksumType).toBe('FULL_OBJECT');
        const head = await client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: key, ChecksumMode: 'ENABLED' }));
        expect(head[outputField(algorithm)]).toBe(checkValue(algorithm));
        expect(head.ChecksumType).toBe('FULL_OBJECT');
        expect((await bodyOf(client, key)).equals(CHECK_DATA)).toBe(true);
      }
    });

    it.each(ALGORITHMS)(
      'refuses a wrong %s in a header or a trailer with BadDigest, keeping the previous object',
      async (algorithm) => {
        const client = plainClient();
        await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'kept', Body: 'previous' }));
        const message = `The ${algorithm} you specified did not match the calculated checksum.`;

        const viaSdk = await failure(
          client.send(
            new PutObjectCommand({
              Bucket: BUCKET,
              Key: 'kept',
              Body: CHECK_DATA,
              [outputField(algorithm)]: wrongValue(algorithm),
            }),
          ),
        );
        expect(viaSdk.name).toBe('BadDigest');
        expect(viaSdk.$metadata?.httpStatusCode).toBe(400);
        expect(viaSdk.message).toBe(message);

        const inTrailer = await chunkedPut({
          key: 'kept',
          data: CHECK_DATA,
          trailer: [headerName(algorithm), wrongValue(algorithm)],
        });
        expect(inTrailer.status).toBe(400);
        expect(codeOf(inTrailer.body)).toBe('BadDigest');
        expect(messageOf(inTrailer.body)).toBe(message);

        expect((await bodyOf(client, 'kept')).toString()).toBe('previous');
        expect(incomingFiles()).toEqual([]);
      },
    );

    it('answers the default CRC64NVME for an upload without a checksum', async () => {
      const client = plainClient();
      const put = await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'plain', Body: CHECK_DATA }));
      expect(put.ChecksumCRC64NVME).toBe(checkValue('CRC64NVME'));
      const head = await client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'plain', ChecksumMode: 'ENABLED' }));
      expect(head.ChecksumCRC64NVME).toBe(checkValue('CRC64NVME'));
    });

    it('answers the stored checksum only when asked for the whole object', async () => {
      const client = defaultClient();
      const data = patterned(50_000, 31);
      await client.send(
        new PutObjectCommand({ Bucket: BUCKET, Key: 'ranged', Body: data, ChecksumAlgorithm: 'SHA256' }),
      );
      const head = await client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'ranged' }));
      expect(head.ChecksumSHA256).toBeUndefined();
      // The default client validates a checksum it is given, which would fail for a range.
      const range = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'ranged', Range: 'bytes=100-199' }));
      expect(range.ChecksumSHA256).toBeUndefined();
      expect(Buffer.from(await range.Body!.transformToByteArray()).equals(data.subarray(100, 200))).toBe(true);
    });

    if (storage === 'files')
      it('answers checksums the SDK checks: a stored object damaged on disk fails its GetObject', async () => {
        const client = defaultClient();
        const data = patterned(10_000, 37);
        await client.send(
          new PutObjectCommand({ Bucket: BUCKET, Key: 'damaged', Body: data, ChecksumAlgorithm: 'CRC32C' }),
        );
        const file = path.join(ctx.directory, BUCKET, 'damaged._S3rver_object');
        const damaged = Buffer.from(data);
        damaged[5000] ^= 0xff;
        fs.writeFileSync(file, damaged);
        const response = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'damaged' }));
        await expect(response.Body!.transformToByteArray()).rejects.toThrow(/Checksum mismatch/);
      });

    it('refuses malformed checksum requests with S3 errors', async () => {
      const invalidHeader = await rawPut('bad', CHECK_DATA, { 'x-amz-checksum-crc32': CHECK_VALUES.CRC32 });
      expect([invalidHeader.status, codeOf(invalidHeader.body), messageOf(invalidHeader.body)]).toEqual([
        400,
        'InvalidRequest',
        'Value for x-amz-checksum-crc32 header is invalid.',
      ]);

      const invalidTrailer = await chunkedPut({
        key: 'bad',
        data: CHECK_DATA,
        trailer: ['x-amz-checksum-sha1', 'not base64'],
      });
      expect([invalidTrailer.status, messageOf(invalidTrailer.body)]).toEqual([
        400,
        'Value for x-amz-checksum-sha1 trailing header is invalid.',
      ]);

      const two = await rawPut('bad', CHECK_DATA, {
        'x-amz-checksum-crc32': checkValue('CRC32'),
        'x-amz-checksum-crc32c': checkValue('CRC32C'),
      });
      expect([two.status, messageOf(two.body)]).toEqual([
        400,
        'Expecting a single x-amz-checksum- header. Multiple checksum Types are not allowed.',
      ]);

      const algorithmOnly = await rawPut('bad', CHECK_DATA, { 'x-amz-sdk-checksum-algorithm': 'CRC32' });
      expect(codeOf(algorithmOnly.body)).toBe('InvalidRequest');

      const unknownTrailer = await chunkedPut({
        key: 'bad',
        data: CHECK_DATA,
        trailer: ['x-amz-checksum-md4', 'AAAA'],
      });
      expect([unknownTrailer.status, messageOf(unknownTrailer.body)]).toEqual([
        400,
        'The value specified in the x-amz-trailer header is not supported',
      ]);

      const announcedNotSent = await chunkedPut({
        key: 'bad',
        data: CHECK_DATA,
        trailer: ['x-amz-checksum-crc32', checkValue('CRC32')],
        edit: (body) => Buffer.from(body.toString('latin1').replace(/x-amz-checksum-crc32:[^\r]*\r\n/, ''), 'latin1'),
      });
      expect([announcedNotSent.status, codeOf(announcedNotSent.body)]).toEqual([400, 'MalformedTrailerError']);

      const plainBodyWithTrailer = await rawPut('bad', CHECK_DATA, { 'x-amz-trailer': 'x-amz-checksum-crc32' });
      expect(codeOf(plainBodyWithTrailer.body)).toBe('MalformedTrailerError');

      const head = await plainClient()
        .send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'bad' }))
        .catch((err: Error) => err.name);
      expect(head).toBe('NotFound');
      expect(incomingFiles()).toEqual([]);
    });
  });

  describe('Content-MD5 and x-amz-content-sha256', () => {
    it('accepts a right Content-MD5 and refuses a wrong or malformed one', async () => {
      const client = plainClient();
      const data = patterned(4096, 41);
      const right = await client.send(
        new PutObjectCommand({ Bucket: BUCKET, Key: 'md5', Body: data, ContentMD5: md5Base64(data) }),
      );
      expect(right.ETag).toBe(`"${md5Hex(data)}"`);

      const wrong = await failure(
        client.send(
          new PutObjectCommand({ Bucket: BUCKET, Key: 'md5', Body: patterned(4096, 43), ContentMD5: md5Base64(data) }),
        ),
      );
      expect([wrong.$metadata?.httpStatusCode, wrong.name, wrong.message]).toEqual([
        400,
        'BadDigest',
        'The Content-MD5 you specified did not match what we received.',
      ]);

      for (const malformed of ['not base64!', md5Hex(data), Buffer.from('eleven byte').toString('base64'), '']) {
        const response = await rawPut('md5', data, { 'content-md5': malformed });
        expect([response.status, codeOf(response.body), messageOf(response.body)]).toEqual([
          400,
          'InvalidDigest',
          'The Content-MD5 you specified was invalid.',
        ]);
      }
      expect((await bodyOf(client, 'md5')).equals(data)).toBe(true);
    });

    it('checks a Content-MD5 on a part', async () => {
      const client = plainClient();
      const data = patterned(1000, 47);
      const { UploadId } = await client.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: 'part-md5' }));
      const wrong = await failure(
        client.send(
          new UploadPartCommand({
            Bucket: BUCKET,
            Key: 'part-md5',
            UploadId,
            PartNumber: 1,
            Body: data,
            ContentMD5: md5Base64('other'),
          }),
        ),
      );
      expect(wrong.name).toBe('BadDigest');
      // The refused part was not stored.
      const complete = await failure(
        client.send(
          new CompleteMultipartUploadCommand({
            Bucket: BUCKET,
            Key: 'part-md5',
            UploadId,
            MultipartUpload: { Parts: [{ ETag: `"${md5Hex(data)}"`, PartNumber: 1 }] },
          }),
        ),
      );
      expect(complete.name).toBe('InvalidPart');
    });

    it('checks a hex x-amz-content-sha256 against the body', async () => {
      const data = patterned(2048, 53);
      const right = await rawPut('sha', data);
      expect(right.status).toBe(200);
      expect(right.headers.etag).toBe(`"${md5Hex(data)}"`);

      const mismatch = await rawPut('sha', patterned(2048, 59), { 'x-amz-content-sha256': sha256Hex(data) });
      expect([mismatch.status, codeOf(mismatch.body), messageOf(mismatch.body)]).toEqual([
        400,
        'XAmzContentSHA256Mismatch',
        "The provided 'x-amz-content-sha256' header does not match what was computed.",
      ]);
      expect((await bodyOf(plainClient(), 'sha')).equals(data)).toBe(true);

      const nonsense = await rawPut('sha', data, { 'x-amz-content-sha256': 'SOMETHING-ELSE' });
      expect([nonsense.status, codeOf(nonsense.body)]).toEqual([400, 'InvalidArgument']);
    });
  });

  describe('aws-chunked framing', () => {
    const DATA = patterned(2 * 8192 + 100, 61);

    beforeEach(async () => {
      await plainClient().send(new PutObjectCommand({ Bucket: BUCKET, Key: 'framed', Body: 'previous' }));
    });

    async function expectPrevious(): Promise<void> {
      expect((await bodyOf(plainClient(), 'framed')).toString()).toBe('previous');
      expect(incomingFiles()).toEqual([]);
    }

    it('decodes signed chunks, with and without a signed trailer', async () => {
      const signed = await chunkedPut({
        key: 'signed',
        data: DATA,
        payload: 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD',
        chunkSize: 8192,
      });
      expect(signed.status).toBe(200);
      expect(signed.headers.etag).toBe(`"${md5Hex(DATA)}"`);

      const crc32c = checkValue('CRC32C');
      const withTrailer = await chunkedPut({
        key: 'signed-trailer',
        data: CHECK_DATA,
        payload: 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER',
        trailer: ['x-amz-checksum-crc32c', crc32c],
      });
      expect(withTrailer.status).toBe(200);
      expect(withTrailer.headers['x-amz-checksum-crc32c']).toBe(crc32c);

      const client = plainClient();
      expect((await bodyOf(client, 'signed')).equals(DATA)).toBe(true);
      expect((await bodyOf(client, 'signed-trailer')).equals(CHECK_DATA)).toBe(true);
    });

    it('refuses a chunk whose signature does not match', async () => {
      const response = await chunkedPut({
        key: 'framed',
        data: DATA,
        payload: 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD',
        chunkSize: 8192,
        edit: (body) => {
          const at = body.lastIndexOf('chunk-signature=') + 'chunk-signature='.length;
          body[at] = body[at] === 0x30 ? 0x31 : 0x30;
          return body;
        },
      });
      expect([response.status, codeOf(response.body)]).toEqual([403, 'SignatureDoesNotMatch']);
      await expectPrevious();
    });

    it('refuses a first chunk whose signature does not match, though its bytes went on before it was checked', async () => {
      // The chunk is hashed as it streams and checked at its end: nothing of it may become the object.
      const data = patterned(4 * 1024 * 1024 + 100, 63);
      const response = await chunkedPut({
        key: 'framed',
        data,
        payload: 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD',
        chunkSize: 4 * 1024 * 1024,
        edit: (body) => {
          const at = body.indexOf('chunk-signature=') + 'chunk-signature='.length;
          body[at] = body[at] === 0x30 ? 0x31 : 0x30;
          return body;
        },
      });
      expect([response.status, codeOf(response.body)]).toEqual([403, 'SignatureDoesNotMatch']);
      await expectPrevious();
    });

    it.each([
      ['a body that ends before the final chunk', (body: Buffer) => body.subarray(0, body.lastIndexOf('0\r\n'))],
      [
        'a chunk size that is not hexadecimal',
        (body: Buffer) => Buffer.concat([Buffer.from('zz'), body.subarray(body.indexOf('\r\n'))]),
      ],
      [
        'chunk data not followed by CRLF',
        (body: Buffer) => Buffer.from(body.toString('latin1').replace('\r\n0\r\n', 'xx0\r\n'), 'latin1'),
      ],
      ['bytes after the end', (body: Buffer) => Buffer.concat([body, Buffer.from('2\r\nab\r\n')])],
    ])('refuses %s with IncompleteBody', async (_name, edit) => {
      const response = await chunkedPut({ key: 'framed', data: DATA, chunkSize: 8192, edit });
      expect([response.status, codeOf(response.body)]).toEqual([400, 'IncompleteBody']);
      await expectPrevious();
    });

    it.each([DATA.length + 1, DATA.length - 1])(
      'refuses a decoded length of %i that the content does not have',
      async (declared) => {
        const response = await chunkedPut({
          key: 'framed',
          data: DATA,
          headers: { 'x-amz-decoded-content-length': String(declared) },
        });
        expect([response.status, codeOf(response.body)]).toEqual([400, 'IncompleteBody']);
        await expectPrevious();
      },
    );

    it('answers a body that outgrows its decoded length while it is still arriving', async () => {
      const response = await chunkedPut({
        key: 'framed',
        data: patterned(8 * 1024 * 1024, 71),
        headers: { 'x-amz-decoded-content-length': '100000' },
      });
      expect([response.status, codeOf(response.body)]).toEqual([400, 'IncompleteBody']);
      expect(response.headers.connection).toBe('close');
      await expectPrevious();
    });

    it('refuses an aws-chunked body without a decoded length', async () => {
      const date = new Date();
      const noLength = await signPut(
        {
          key: 'framed',
          headers: { 'content-encoding': 'aws-chunked', 'x-amz-content-sha256': 'STREAMING-UNSIGNED-PAYLOAD-TRAILER' },
        },
        date,
      );
      const body = await awsChunked(DATA);
      const missing = await rawRequest(
        ctx.objstore.url,
        'PUT',
        noLength.url,
        { ...noLength.headers, 'content-length': String(body.length) },
        body,
      );
      expect([missing.status, codeOf(missing.body)]).toEqual([411, 'MissingContentLength']);
      await expectPrevious();
    });

    it('stores a part sent aws-chunked without its framing', async () => {
      const client = plainClient();
      const { UploadId } = await client.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: 'raw-part' }));
      const part = await chunkedPut({
        key: 'raw-part',
        data: DATA,
        query: { partNumber: '1', uploadId: UploadId! },
        trailer: ['x-amz-checksum-crc32', crc32Base64(DATA)],
      });
      expect(part.status).toBe(200);
      expect(part.headers.etag).toBe(`"${md5Hex(DATA)}"`);
      await client.send(
        new CompleteMultipartUploadCommand({
          Bucket: BUCKET,
          Key: 'raw-part',
          UploadId,
          MultipartUpload: { Parts: [{ ETag: part.headers.etag as string, PartNumber: 1 }] },
        }),
      );
      expect((await bodyOf(client, 'raw-part')).equals(DATA)).toBe(true);
    });
  });
});

describe('the aws-chunked decoder and chunk signatures', () => {
  it('checks every chunk signature in order, the final empty chunk and the trailer included', async () => {
    const data = patterned(8192 + 10, 67);
    const seedSignature = 'a'.repeat(64);
    const body = await awsChunked(data, {
      chunkSize: 8192,
      trailer: ['x-amz-checksum-crc32:AAAAAA=='],
      signing: { date: new Date(), seedSignature },
    });
    const calls: string[] = [];
    const decoder = new AwsChunkedDecoder({
      signatures: {
        verifyChunk: (chunkSha256, signature) => {
          calls.push(`chunk ${chunkSha256} ${signature.slice(0, 8)}`);
          return true;
        },
        verifyTrailer: (lines, signature) => {
          calls.push(`trailer ${JSON.stringify(lines)} ${signature.slice(0, 8)}`);
          return true;
        },
      },
      signedTrailer: true,
    });
    // Fed in awkward pieces, as a socket may deliver them.
    const decoded = [...piecesOf(body, 7)].flatMap((piece) => decoder.decode(piece));
    expect(Buffer.concat(decoded).equals(data)).toBe(true);
    expect(decoder.end()).toEqual(new Map([['x-amz-checksum-crc32', 'AAAAAA==']]));
    const signatures = [
      ...body.toString('latin1').matchAll(/(?:chunk-signature=|x-amz-trailer-signature:)([0-9a-f]{8})/g),
    ].map((m) => m[1]);
    expect(calls).toEqual([
      `chunk ${sha256Hex(data.subarray(0, 8192))} ${signatures[0]}`,
      `chunk ${sha256Hex(data.subarray(8192))} ${signatures[1]}`,
      `chunk ${sha256Hex('')} ${signatures[2]}`,
      `trailer "x-amz-checksum-crc32:AAAAAA==\\n" ${signatures[3]}`,
    ]);
  });

  it('stops at the first chunk whose signature is refused', () => {
    const decoder = new AwsChunkedDecoder({
      signatures: { verifyChunk: (chunkSha256) => chunkSha256 !== sha256Hex('abc'), verifyTrailer: () => true },
      signedTrailer: false,
    });
    const signature = 'b'.repeat(64);
    expect(() => decoder.decode(Buffer.from(`3;chunk-signature=${signature}\r\nabc\r\n`))).toThrow(
      /SignatureDoesNotMatch/,
    );
  });
});
