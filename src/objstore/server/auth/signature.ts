import type { IncomingMessage } from 'node:http';
import querystring from 'node:querystring';

import type { QueryParameterBag } from '@smithy/types';

import { amzQueryParam, type CredentialScope, type RequestCredential } from './credentials.ts';
import { errors, GatewayError, type ErrorDetail, type S3ErrorSpec } from '../../s3-errors.ts';
import { headerBytesAsText } from '../header-bytes.ts';
import {
  calculateSignature,
  chunkSignatureChain,
  longDate,
  signaturesMatch,
  type ChunkSignatures,
  type RequestSignature,
} from './sigv4.ts';
import type { ParsedQuery, RequestTarget } from '../target.ts';
import type { ObjstoreKey } from '../../types.ts';

export interface SignatureCheck {
  /** The request as received. */
  req: IncomingMessage;
  /** Raw path and query as received, for the canonical request. */
  target: RequestTarget;
  credential: RequestCredential;
  /** The key the credential names; `key.secretAccessKey` derives the signing key. */
  key: ObjstoreKey;
  /** The storage's clock: wall time, the time clients sign with. */
  now: Date;
}

export type SignatureVerdict =
  | { error: S3ErrorSpec }
  | {
      error: null;
      chunks: ChunkSignatures;
      /**
       * The payload hash the signature covers, which the body is held to: the body's hex SHA-256,
       * UNSIGNED-PAYLOAD, or a STREAMING-* framing (`x-amz-content-sha256`, or a presigned URL's
       * `X-Amz-Content-Sha256`, UNSIGNED-PAYLOAD without one).
       */
      payloadHash: string;
    };

/** For bodies whose chunks carry no signatures: no chunk signature is right. */
export const NO_CHUNK_SIGNATURES: ChunkSignatures = { verifyChunk: () => false, verifyTrailer: () => false };

const MAX_CLOCK_SKEW_MS = 15 * 60 * 1000;
const MAX_PRESIGNED_EXPIRES_SECONDS = 7 * 24 * 60 * 60;
const UNSIGNED_PAYLOAD = 'UNSIGNED-PAYLOAD';
const SIGNED_CHUNK_PAYLOADS = new Set([
  'STREAMING-AWS4-HMAC-SHA256-PAYLOAD',
  'STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER',
]);
const PAYLOAD_KINDS = new Set([
  UNSIGNED_PAYLOAD,
  'STREAMING-UNSIGNED-PAYLOAD-TRAILER',
  ...SIGNED_CHUNK_PAYLOADS,
  'STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD',
  'STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD-TRAILER',
]);
const LONG_DATE = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/;

/** What a SigV4 request says about how it was signed. */
type SignatureClaim = {
  /** The request time as sent (X-Amz-Date, or the Date header), for error documents. */
  sentTime: string;
  time: Date;
  scope: CredentialScope;
  signedHeaders: readonly string[];
  payloadHash: string;
} & ({ presigned: false } | { presigned: true; /** X-Amz-Expires as sent. */ expires: string });

/** yyyyMMdd'T'HHmmss'Z' as a time; null unless it is exactly that and a real date. */
function parseLongDate(text: string): Date | null {
  const parts = LONG_DATE.exec(text);
  if (!parts) return null;
  const [, year, month, day, hour, minute, second] = parts.map(Number) as number[];
  const time = new Date(Date.UTC(year!, month! - 1, day!, hour!, minute!, second!));
  return longDate(time) === text ? time : null;
}

function parseHttpDate(text: string): Date | null {
  const time = Date.parse(text);
  return Number.isNaN(time) ? null : new Date(time);
}

function requireKnownPayloadHash(value: string): void {
  if (!PAYLOAD_KINDS.has(value) && !/^[0-9a-fA-F]{64}$/.test(value)) {
    throw new GatewayError(errors.invalidContentSha256(value));
  }
}

function headerValue(req: IncomingMessage, name: string): string | undefined {
  return req.headersDistinct[name]?.join(',');
}

/** A header-signed request's time: X-Amz-Date, or the Date header when it has none. */
function headerRequestTime(req: IncomingMessage): { sentTime: string; time: Date } {
  const amzDate = headerValue(req, 'x-amz-date');
  const httpDate = headerValue(req, 'date');
  const time = amzDate !== undefined ? parseLongDate(amzDate) : parseHttpDate(httpDate ?? '');
  if (time === null) throw new GatewayError(errors.missingRequestDate());
  return { sentTime: amzDate ?? httpDate ?? '', time };
}

function readHeaderClaim(req: IncomingMessage, credential: RequestCredential): SignatureClaim {
  const payloadHash = headerValue(req, 'x-amz-content-sha256');
  if (payloadHash === undefined) throw new GatewayError(errors.missingContentSha256());
  requireKnownPayloadHash(payloadHash);
  return {
    presigned: false,
    ...headerRequestTime(req),
    scope: credential.scope!,
    signedHeaders: credential.signedHeaders!,
    payloadHash,
  };
}

function requireExpires(expires: string): void {
  if (!/^-?\d+$/.test(expires)) throw new GatewayError(errors.expiresNotANumber());
  const seconds = Number(expires);
  if (seconds < 0) throw new GatewayError(errors.expiresNegative());
  if (seconds > MAX_PRESIGNED_EXPIRES_SECONDS) {
    throw new GatewayError(errors.expiresTooLong(MAX_PRESIGNED_EXPIRES_SECONDS));
  }
}

function readQueryClaim(query: ParsedQuery, credential: RequestCredential): SignatureClaim {
  const sentTime = credential.date!;
  const time = parseLongDate(sentTime);
  if (time === null) throw new GatewayError(errors.invalidPresignedDate());
  requireExpires(credential.expires!);
  // Presigned URLs sign no body, unless the URL names a payload hash itself (as the SDK's does).
  const payloadHash = amzQueryParam(query, 'X-Amz-Content-Sha256') ?? UNSIGNED_PAYLOAD;
  requireKnownPayloadHash(payloadHash);
  return {
    presigned: true,
    sentTime,
    time,
    scope: credential.scope!,
    signedHeaders: credential.signedHeaders!,
    payloadHash,
    expires: credential.expires!,
  };
}

/** What is wrong with a credential scope, in S3's words; any region is fine (the storage stands in for all). */
function scopeProblem({ date, service, terminator }: CredentialScope): string | null {
  if (!/^\d{8}$/.test(date))
    return `incorrect date format "${date}". This date in the credential must be in the format "yyyyMMdd".`;
  if (service !== 's3') return `incorrect service "${service}". This endpoint belongs to "s3".`;
  if (terminator !== 'aws4_request') return `incorrect terminal "${terminator}". This endpoint uses "aws4_request".`;
  return null;
}

function requireS3Scope(claim: SignatureClaim): void {
  const problem = scopeProblem(claim.scope);
  if (problem !== null) throw new GatewayError(errors.badScope(claim.presigned, problem));
  const requestDate = longDate(claim.time).slice(0, 8);
  if (claim.scope.date !== requestDate) {
    throw new GatewayError(errors.scopeDateMismatch(claim.presigned, claim.scope.date, requestDate));
  }
}

/** S3 requires Host and every x-amz-* header the request carries to be signed. */
function requireSignedHeaders(req: IncomingMessage, claim: SignatureClaim): void {
  const signed = new Set(claim.signedHeaders);
  const unsigned = Object.keys(req.headers).filter(
    (name) => (name === 'host' || name.startsWith('x-amz-')) && !signed.has(name),
  );
  if (unsigned.length > 0) throw new GatewayError(errors.headersNotSigned(unsigned));
}

const uriEncode = (text: string) =>
  encodeURIComponent(text).replace(/[!'()*]/g, (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`);

/**
 * S3's canonical URI: each path segment decoded and URI-encoded once again, so a path signed as
 * the SDKs encode it matches however the client spelled its escapes (`%7E` or `~`, `%c3` or `%C3`).
 */
function canonicalPath(rawPath: string): string {
  return rawPath
    .split('/')
    .map((segment) => uriEncode(querystring.unescape(segment)))
    .join('/');
}

/** The query as S3 reads it ('+' is a space), which the signer encodes canonically. */
function canonicalQueryInput(query: ParsedQuery): QueryParameterBag {
  return Object.fromEntries(
    Object.entries(query).filter((entry): entry is [string, string | string[]] => entry[1] !== undefined),
  );
}

/** The signer hashes text as UTF-8, S3 the bytes received: give it the text whose UTF-8 they are. */
function signedHeaderValues(req: IncomingMessage, names: readonly string[]): Record<string, string> {
  return Object.fromEntries(names.map((name) => [name, headerBytesAsText(headerValue(req, name) ?? '')]));
}

const hexBytes = (text: string) =>
  Buffer.from(text)
    .toString('hex')
    .replace(/(..)(?!$)/g, '$1 ');

/** The strings S3 shows with SignatureDoesNotMatch, so a client can see what was signed. */
function mismatchDetails(credential: RequestCredential, calculated: RequestSignature): ErrorDetail[] {
  return [
    ['AWSAccessKeyId', credential.accessKeyId],
    ['StringToSign', calculated.stringToSign],
    ['SignatureProvided', credential.signature],
    ['StringToSignBytes', hexBytes(calculated.stringToSign)],
    ['CanonicalRequest', calculated.canonicalRequest],
    ['CanonicalRequestBytes', hexBytes(calculated.canonicalRequest)],
  ];
}

/** Checked only once the signature matched, as S3 does. */
function requireTimely(claim: SignatureClaim, now: Date): void {
  const serverTime = now.getTime();
  const requestTime = claim.time.getTime();
  if (!claim.presigned) {
    if (Math.abs(serverTime - requestTime) > MAX_CLOCK_SKEW_MS) {
      throw new GatewayError(errors.requestTimeTooSkewed(claim.sentTime, serverTime, MAX_CLOCK_SKEW_MS));
    }
    return;
  }
  if (requestTime - serverTime > MAX_CLOCK_SKEW_MS) {
    throw new GatewayError(errors.requestNotYetValid(claim.sentTime, serverTime));
  }
  const expiresAt = requestTime + Number(claim.expires) * 1000;
  if (serverTime > expiresAt) throw new GatewayError(errors.requestExpired(claim.expires, expiresAt, serverTime));
}

async function verifySignatureV4(check: SignatureCheck): Promise<{ chunks: ChunkSignatures; payloadHash: string }> {
  const { req, target, credential, key, now } = check;
  const claim =
    credential.mechanism === 'sigv4-header'
      ? readHeaderClaim(req, credential)
      : readQueryClaim(target.query, credential);
  requireS3Scope(claim);
  requireSignedHeaders(req, claim);

  const credentials = { accessKeyId: key.accessKeyId, secretAccessKey: key.secretAccessKey };
  const scope = { region: claim.scope.region, service: claim.scope.service };
  const calculated = await calculateSignature(credentials, {
    method: req.method ?? 'GET',
    path: canonicalPath(target.rawPath),
    query: canonicalQueryInput(target.query),
    headers: signedHeaderValues(req, claim.signedHeaders),
    payloadHash: claim.payloadHash,
    time: claim.time,
    scope,
  });
  if (!signaturesMatch(credential.signature, calculated.signature)) {
    throw new GatewayError(errors.signatureDoesNotMatch(mismatchDetails(credential, calculated)));
  }
  requireTimely(claim, now);

  const { payloadHash } = claim;
  if (!SIGNED_CHUNK_PAYLOADS.has(payloadHash)) return { chunks: NO_CHUNK_SIGNATURES, payloadHash };
  return { chunks: await chunkSignatureChain(credentials, claim.time, scope, calculated.signature), payloadHash };
}

/**
 * Verifies the request's AWS Signature Version 4 (Authorization header or presigned query)
 * against the key's secret, then its time: within 15 minutes of the storage's clock, or for a
 * presigned URL, not yet past X-Amz-Expires. SigV2 is refused as a SigV4-only region does.
 *
 * Answers the S3 error to refuse the request with, or the payload hash it was signed with and
 * the chunk signatures of its body.
 * It never logs or returns the secret.
 */
export async function verifySignature(check: SignatureCheck): Promise<SignatureVerdict> {
  try {
    if (check.credential.mechanism === 'sigv2-header' || check.credential.mechanism === 'sigv2-query') {
      return { error: errors.signatureVersionNotSupported() };
    }
    return { error: null, ...(await verifySignatureV4(check)) };
  } catch (err) {
    if (err instanceof GatewayError) return { error: err.spec };
    throw err;
  }
}
