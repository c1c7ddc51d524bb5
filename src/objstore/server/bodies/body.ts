/**
 * Receiving the body of an upload (PutObject, UploadPart) as S3 does: aws-chunked framing
 * decoded as it arrives, the decoded bytes handed to the storage while they are hashed, and every integrity check the
 * request asks for (Content-MD5,
 * `x-amz-checksum-*` header or trailer, a hex `x-amz-content-sha256`, the decoded length)
 * passed before the caller may make the bytes visible.
 */
import { createHash, type Hash } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { Writable, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

import { AwsChunkedDecoder } from './aws-chunked.ts';
import {
  isValidChecksumValue,
  readChecksumRequest,
  startChecksum,
  type ChecksumRequest,
  type RunningChecksum,
} from './checksums.ts';
import type { ChecksumAlgorithm } from '../../checksum-algorithms.ts';
import { signedContentSha256 } from './signed-payload.ts';
import type { OperationContext } from '../operations/context.ts';
import { errors, GatewayError } from '../../s3-errors.ts';
import { sendContinue, type Exchange } from '../exchange.ts';
import type { IncomingContent, ObjstoreStorage } from '../../storage/storage.ts';

/** S3's limit for one PutObject, one part or one browser form's file. */
export const MAX_UPLOAD_BYTES = 5 * 1024 ** 3;

type Framing = { kind: 'plain' } | { kind: 'aws-chunked'; signed: boolean; trailer: boolean };

const STREAMING_PAYLOADS: Readonly<Record<string, Framing>> = {
  'STREAMING-UNSIGNED-PAYLOAD-TRAILER': { kind: 'aws-chunked', signed: false, trailer: true },
  'STREAMING-AWS4-HMAC-SHA256-PAYLOAD': { kind: 'aws-chunked', signed: true, trailer: false },
  'STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER': { kind: 'aws-chunked', signed: true, trailer: true },
};

/** What the headers of an upload say about its body: how it is framed and what to check it against. */
export interface BodyPlan {
  framing: Framing;
  /**
   * Size of the body's content (decoded, for aws-chunked); null for a plain body sent with
   * `Transfer-Encoding: chunked`, whose size shows only at its end.
   */
  length: number | null;
  /** Base64 Content-MD5. */
  contentMd5: string | null;
  /** Hex SHA-256 the request was signed with (`x-amz-content-sha256`, or a presigned URL's). */
  contentSha256: string | null;
  checksum: ChecksumRequest;
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(',') : value;
}

/**
 * The payload hash the signature holds the body to decides the framing and the SHA-256 to check; the signature itself
 * is verified by the gateway.
 */
function readPayloadHash(value: string | null): { framing: Framing; contentSha256: string | null } {
  if (value === null || value === 'UNSIGNED-PAYLOAD') return { framing: { kind: 'plain' }, contentSha256: null };
  const contentSha256 = signedContentSha256(value);
  if (contentSha256 !== null) return { framing: { kind: 'plain' }, contentSha256 };
  const framing = STREAMING_PAYLOADS[value];
  if (framing === undefined) throw new GatewayError(errors.unsupportedPayloadHash());
  return { framing, contentSha256: null };
}

function readLength(headers: IncomingHttpHeaders, framing: Framing): number | null {
  const declared = header(headers, framing.kind === 'plain' ? 'content-length' : 'x-amz-decoded-content-length');
  const transferEncoding = header(headers, 'transfer-encoding');
  if (declared === undefined && framing.kind === 'plain' && transferEncoding !== undefined) {
    // S3 takes a plain body in HTTP chunks; no other transfer coding.
    if (transferEncoding.trim().toLowerCase() === 'chunked') return null;
    throw new GatewayError(errors.transferEncodingNotImplemented());
  }
  if (declared === undefined || !/^\d{1,16}$/.test(declared)) throw new GatewayError(errors.missingContentLength());
  const length = Number(declared);
  if (length > MAX_UPLOAD_BYTES) throw new GatewayError(errors.entityTooLarge());
  return length;
}

function readContentMd5(headers: IncomingHttpHeaders): string | null {
  const value = header(headers, 'content-md5');
  if (value === undefined) return null;
  if (!/^[A-Za-z0-9+/]{22}==$/.test(value)) throw new GatewayError(errors.invalidContentMd5());
  return value;
}

/**
 * Reads and checks everything the headers and the payload hash (`OperationContext.payloadHash`)
 * say about the body; throws before any of it is read.
 */
export function planBody(headers: IncomingHttpHeaders, payloadHash: string | null): BodyPlan {
  const { framing, contentSha256 } = readPayloadHash(payloadHash);
  const length = readLength(headers, framing);
  const contentMd5 = readContentMd5(headers);
  const checksum = readChecksumRequest(headers);
  const bodyHasTrailer = framing.kind === 'aws-chunked' && framing.trailer;
  if (checksum.source === 'trailer' && !bodyHasTrailer) throw new GatewayError(errors.malformedTrailer());
  return { framing, length, contentMd5, contentSha256, checksum };
}

/** The stored Content-Encoding: aws-chunked only describes the transfer, so S3 drops it. */
export function storedContentEncoding(contentEncoding: string | undefined): string | undefined {
  if (contentEncoding === undefined) return undefined;
  const kept = contentEncoding
    .split(',')
    .map((coding) => coding.trim())
    .filter((coding) => coding !== '' && coding.toLowerCase() !== 'aws-chunked');
  return kept.length === 0 ? undefined : kept.join(', ');
}

interface VerifiedChecksum {
  algorithm: ChecksumAlgorithm;
  /** Base64, as in `x-amz-checksum-*`. */
  value: string;
}

/** The hashes of the content, computed as it passes through. */
class ContentDigests {
  private readonly md5 = createHash('md5');
  private readonly sha256: Hash | null;
  private readonly checksum: { algorithm: ChecksumAlgorithm; running: RunningChecksum } | null;

  constructor(plan: BodyPlan, checksumAlgorithm: ChecksumAlgorithm | null) {
    this.sha256 = plan.contentSha256 === null ? null : createHash('sha256');
    this.checksum =
      checksumAlgorithm === null ? null : { algorithm: checksumAlgorithm, running: startChecksum(checksumAlgorithm) };
  }

  update(data: Buffer): void {
    this.md5.update(data);
    this.sha256?.update(data);
    this.checksum?.running.update(data);
  }

  async results(): Promise<{ md5: Buffer; sha256: string | null; checksum: VerifiedChecksum | null }> {
    const checksum = this.checksum && {
      algorithm: this.checksum.algorithm,
      value: await this.checksum.running.digest(),
    };
    return { md5: this.md5.digest(), sha256: this.sha256?.digest('hex') ?? null, checksum };
  }
}

/** Hands the content of the body to the storage, decoding aws-chunked framing on the way. */
class ContentSpool extends Writable {
  size = 0;
  trailer = new Map<string, string>();

  constructor(
    private readonly content: IncomingContent,
    private readonly decoder: AwsChunkedDecoder | null,
    private readonly digests: ContentDigests,
    private readonly expectedSize: number | null,
  ) {
    super();
  }

  override _write(piece: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.append([piece]).then(() => callback(), callback);
  }

  /** The pieces that arrived while the last write was under way, in one write. */
  override _writev(pieces: { chunk: Buffer }[], callback: (error?: Error | null) => void): void {
    this.append(pieces.map(({ chunk }) => chunk)).then(() => callback(), callback);
  }

  override _final(callback: (error?: Error | null) => void): void {
    try {
      if (this.decoder) this.trailer = this.decoder.end();
      callback();
    } catch (err) {
      callback(err as Error);
    }
  }

  private async append(pieces: Buffer[]): Promise<void> {
    const content = this.decoder ? pieces.flatMap((piece) => this.decoder!.decode(piece)) : pieces;
    for (const data of content) {
      this.size += data.length;
      // Stop as soon as the content outgrows its announced size instead of spooling the rest.
      if (this.expectedSize === null) {
        if (this.size > MAX_UPLOAD_BYTES) throw new GatewayError(errors.entityTooLarge());
      } else if (this.size > this.expectedSize) {
        throw new GatewayError(errors.decodedLengthMismatch());
      }
      this.digests.update(data);
    }
    await this.content.write(content);
  }
}

/**
 * Pipes the request into `sink` until the sink has finished. On failure the request is left
 * undestroyed, so an error response can still reach the client.
 */
function pipeRequest(req: IncomingMessage, sink: Writable): Promise<void> {
  return new Promise((resolve, reject) => {
    const settle = (err?: Error) => {
      req.off('error', settle);
      req.off('close', onClose);
      sink.off('error', settle);
      sink.off('finish', onFinish);
      if (err === undefined) return resolve();
      req.unpipe(sink);
      // A write still in flight may fail after this; the destroyed sink swallows it.
      sink.on('error', () => {});
      sink.destroy();
      reject(err);
    };
    const onFinish = () => settle();
    const onClose = () => {
      if (!req.complete) settle(new Error('request aborted'));
    };
    req.on('error', settle);
    req.on('close', onClose);
    sink.on('error', settle);
    sink.on('finish', onFinish);
    req.pipe(sink);
  });
}

/** Leaves the rest of a refused body unread: drained and discarded, and the connection closed after the answer. */
export function abandonBody(exchange: Exchange): void {
  if (exchange.req.complete) return;
  if (!exchange.res.headersSent) exchange.res.setHeader('Connection', 'close');
  exchange.req.resume();
}

function checkTrailer(plan: BodyPlan, trailer: Map<string, string>): string | null {
  const { checksum } = plan;
  const expected = checksum.source === 'trailer' ? checksum.header : null;
  if ([...trailer.keys()].some((name) => name !== expected)) throw new GatewayError(errors.malformedTrailer());
  if (checksum.source !== 'trailer') return null;
  const value = trailer.get(checksum.header);
  if (value === undefined) throw new GatewayError(errors.malformedTrailer());
  if (!isValidChecksumValue(checksum.algorithm, value)) {
    throw new GatewayError(errors.invalidChecksumValue(checksum.header, 'trailing header'));
  }
  return value;
}

export interface ReceivedBody {
  /** The content, kept by the storage: the caller places it or discards it. */
  content: IncomingContent;
  /** Hex MD5 of the content (its ETag). */
  md5: string;
  /** The checksum of the content: the one the upload came with (verified), else the default one if asked for. */
  checksum: VerifiedChecksum | null;
}

async function verifyContent(
  plan: BodyPlan,
  spool: ContentSpool,
  digests: ContentDigests,
): Promise<Omit<ReceivedBody, 'content'>> {
  if (plan.length !== null && spool.size !== plan.length) throw new GatewayError(errors.decodedLengthMismatch());
  const trailerChecksum = checkTrailer(plan, spool.trailer);
  const { md5, sha256, checksum } = await digests.results();
  if (plan.contentSha256 !== null && sha256 !== plan.contentSha256) {
    throw new GatewayError(errors.contentSha256Mismatch());
  }
  if (plan.contentMd5 !== null && md5.toString('base64') !== plan.contentMd5) {
    throw new GatewayError(errors.badContentMd5());
  }
  const requested = plan.checksum.source === 'header' ? plan.checksum.value : trailerChecksum;
  if (checksum !== null && requested !== null && checksum.value !== requested) {
    throw new GatewayError(errors.badChecksum(checksum.algorithm));
  }
  return { md5: md5.toString('hex'), checksum };
}

async function spoolContent(
  exchange: Exchange,
  content: IncomingContent,
  decoder: AwsChunkedDecoder | null,
  digests: ContentDigests,
  expectedSize: number | null,
): Promise<ContentSpool> {
  const spool = new ContentSpool(content, decoder, digests, expectedSize);
  sendContinue(exchange);
  await pipeRequest(exchange.req, spool);
  await content.close();
  return spool;
}

/**
 * Reads the body of an upload into the storage and verifies it against `plan`. On any
 * failure what was kept is discarded and the rest of the body is left unread.
 *
 * `defaultChecksum` is computed when the upload asks for no checksum (S3 gives new objects one).
 */
export async function receiveBody(
  ctx: OperationContext,
  plan: BodyPlan,
  defaultChecksum: ChecksumAlgorithm | null,
): Promise<ReceivedBody> {
  const { framing } = plan;
  const decoder =
    framing.kind === 'aws-chunked'
      ? new AwsChunkedDecoder({
          signatures: framing.signed ? ctx.chunkSignatures : null,
          signedTrailer: framing.signed && framing.trailer,
        })
      : null;
  const digests = new ContentDigests(plan, plan.checksum.source === 'none' ? defaultChecksum : plan.checksum.algorithm);
  let content: IncomingContent | undefined;
  try {
    content = await ctx.storage.receive(plan.length);
    const spool = await spoolContent(ctx.exchange, content, decoder, digests, plan.length);
    return { content, ...(await verifyContent(plan, spool, digests)) };
  } catch (err) {
    abandonBody(ctx.exchange);
    await content?.discard();
    throw err;
  }
}

/**
 * Reads a plain body that comes with no S3 framing or digests to check (the admin API's upload) into the storage as
 * receiveBody does, with the same ETag and the `defaultChecksum` S3 gives a new object. On failure what was kept is
 * discarded.
 */
export async function receiveContent(
  storage: ObjstoreStorage,
  source: Readable,
  length: number | null,
  defaultChecksum: ChecksumAlgorithm,
): Promise<ReceivedBody> {
  if (length !== null && length > MAX_UPLOAD_BYTES) throw new GatewayError(errors.entityTooLarge());
  const plan: BodyPlan = {
    framing: { kind: 'plain' },
    length,
    contentMd5: null,
    contentSha256: null,
    checksum: { source: 'none' },
  };
  const digests = new ContentDigests(plan, defaultChecksum);
  let content: IncomingContent | undefined;
  try {
    content = await storage.receive(length);
    const spool = new ContentSpool(content, null, digests, length);
    await pipeline(source, spool);
    await content.close();
    return { content, ...(await verifyContent(plan, spool, digests)) };
  } catch (err) {
    await content?.discard();
    throw err;
  }
}
