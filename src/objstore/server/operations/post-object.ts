/**
 * Browser form uploads (POST object): `POST /<bucket>` with a multipart/form-data body whose
 * fields carry the object's key (`${filename}` standing for the file's name), its headers and
 * `x-amz-meta-*`, a base64 policy document and its SigV4 POST signature (`x-amz-algorithm`,
 * `x-amz-credential`, `x-amz-date`, `x-amz-signature`). The form authenticates the request, so
 * the gateway hands it here instead of checking a signed request. The form is read as it
 * arrives (bodies/form-data.ts): its fields are checked (signature, policy, key) before its file
 * is read, and the file streams to a temporary file within the policy's content-length-range.
 * Fields after the file are ignored, as S3 ignores them.
 *
 * The answer is S3's: 204 by default, 200 or 201 (with PostResponse) for `success_action_status`,
 * or 303 to `success_action_redirect` with the bucket, key and ETag in its query.
 */
import { createHash } from 'node:crypto';

import type { IncomingContent } from '../../storage/storage.ts';
import type { ObjstoreKey } from '../../types.ts';
import { parseV4Credential } from '../auth/credentials.ts';
import { policySignature, signaturesMatch } from '../auth/sigv4.ts';
import { abandonBody, MAX_UPLOAD_BYTES } from '../bodies/body.ts';
import { DEFAULT_CHECKSUM_ALGORITHM } from '../../checksum-algorithms.ts';
import { objectChecksumHeaders, startChecksum } from '../bodies/checksums.ts';
import { FormDataReader, formBoundary, MAX_FORM_FIELDS_BYTES } from '../bodies/form-data.ts';
import { errors, GatewayError } from '../../s3-errors.ts';
import { sendContinue } from '../exchange.ts';
import { validateObjectKey } from '../target.ts';
import { sendXmlResult } from '../xml.ts';
import type { BucketHandler, OperationContext } from './context.ts';
import {
  maxContentLength,
  parsePolicy,
  requireContentLengthInRange,
  requireFieldsAllowed,
  type FormFields,
  type PostPolicy,
} from './post-policy.ts';

const SIGNING_FIELDS = ['x-amz-algorithm', 'x-amz-credential', 'x-amz-date', 'x-amz-signature'] as const;

function requireField(fields: FormFields, name: string): string {
  const value = fields.get(name);
  if (value === undefined) throw new GatewayError(errors.missingFormField(name));
  return value;
}

/**
 * Throws AccessDenied unless the key that signed the form may use the bucket, and reaches the object key once that is
 * known.
 */
function authorizeBucket(ctx: OperationContext, key: ObjstoreKey, objectKey: string | null): void {
  if (!ctx.buckets.mayReach(ctx.target.bucket!, objectKey, key)) throw new GatewayError(errors.accessDenied());
}

/**
 * Checks the form's signature over its policy and the key's permissions; answers the policy and the key that signed it.
 */
async function authenticate(ctx: OperationContext, fields: FormFields) {
  const policyText = fields.get('policy');
  // A form without a policy is an anonymous upload, which no bucket here allows.
  if (policyText === undefined) throw new GatewayError(errors.accessDenied());
  // A Signature Version 2 form (AWSAccessKeyId, signature) is refused as a SigV4-only region refuses it.
  if (!fields.has('x-amz-algorithm') && fields.has('awsaccesskeyid'))
    throw new GatewayError(errors.signatureVersionNotSupported());
  const [algorithm, credentialText, , signature] = SIGNING_FIELDS.map((name) => requireField(fields, name));
  if (algorithm !== 'AWS4-HMAC-SHA256') throw new GatewayError(errors.unsupportedAuthorizationType());
  const credential = parseV4Credential(credentialText!);
  if (credential === null) throw new GatewayError(errors.malformedFormCredential(credentialText!));
  ctx.exchange.accessKeyId = credential.accessKeyId;
  const key = ctx.keys.find(credential.accessKeyId);
  if (key === undefined) throw new GatewayError(errors.invalidAccessKeyId());
  const expected = await policySignature(key, credential.scope.date, credential.scope, policyText);
  if (!signaturesMatch(signature!, expected)) {
    throw new GatewayError(
      errors.signatureDoesNotMatch([
        ['AWSAccessKeyId', credential.accessKeyId],
        ['StringToSign', policyText],
        ['SignatureProvided', signature!],
      ]),
    );
  }
  if (!key.permissions.includes('create')) throw new GatewayError(errors.accessDenied());
  authorizeBucket(ctx, key, null);
  ctx.exchange.authenticated = true;
  return { policy: parsePolicy(policyText), signer: key };
}

const rfc3986 = (text: string) =>
  encodeURIComponent(text).replace(/[!'()*]/g, (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`);

function redirectTarget(redirect: string, bucket: string, key: string, etag: string): string | null {
  let url: URL;
  try {
    url = new URL(redirect);
  } catch {
    return null;
  }
  url.searchParams.append('bucket', bucket);
  url.searchParams.append('key', key);
  url.searchParams.append('etag', etag);
  return url.toString();
}

function respond(ctx: OperationContext, fields: FormFields, bucket: string, key: string, md5: string): void {
  const { req, res } = ctx.exchange;
  const etag = JSON.stringify(md5);
  const path = [bucket, ...key.split('/')].map(rfc3986).join('/');
  const location = `http://${req.headers.host ?? 'localhost'}/${path}`;
  res.setHeader('ETag', etag);
  res.setHeader('Location', location);
  const redirect = fields.get('success_action_redirect') ?? fields.get('redirect');
  const redirectTo = redirect === undefined ? null : redirectTarget(redirect, bucket, key, etag);
  if (redirectTo !== null) {
    res.statusCode = 303;
    res.setHeader('Location', redirectTo);
    res.setHeader('Content-Length', 0);
    res.end();
    return;
  }
  const status = fields.get('success_action_status');
  if (status === '201') {
    sendXmlResult(res, 'PostResponse', { Location: location, Bucket: bucket, Key: key, ETag: etag }, 201);
    return;
  }
  res.statusCode = status === '200' ? 200 : 204;
  res.setHeader('Content-Length', 0);
  res.end();
}

/** The form's file, kept by the storage, with its ETag and checksum. */
interface ReceivedFile {
  content: IncomingContent;
  md5: string;
  checksum: string;
}

/**
 * Streams the form's file to the storage, hashing it. At most the policy's largest size is
 * kept: beyond it the file is only counted, for the ProposedSize of EntityTooLarge (up to S3's
 * limit for an object). What was kept is discarded on any failure.
 */
async function receiveFile(ctx: OperationContext, form: FormDataReader, policy: PostPolicy): Promise<ReceivedFile> {
  const maxSize = maxContentLength(policy, MAX_UPLOAD_BYTES);
  const content = await ctx.storage.receive();
  const md5 = createHash('md5');
  const checksum = startChecksum(DEFAULT_CHECKSUM_ALGORITHM);
  let size = 0;
  try {
    for await (const piece of form.fileContent()) {
      size += piece.length;
      if (size > MAX_UPLOAD_BYTES) throw new GatewayError(errors.formTooLarge(size, MAX_UPLOAD_BYTES));
      if (size > maxSize) continue;
      md5.update(piece);
      checksum.update(piece);
      await content.write([piece]);
    }
    await content.close();
    requireContentLengthInRange(policy, size);
    return { content, md5: md5.digest('hex'), checksum: await checksum.digest() };
  } catch (err) {
    await content.discard();
    throw err;
  }
}

interface ReceivedForm {
  fields: FormFields;
  key: string;
  file: ReceivedFile;
}

/** Reads the form: its fields, then (once they authenticate the form and meet its policy) its file. */
async function receiveForm(ctx: OperationContext, form: FormDataReader): Promise<ReceivedForm> {
  const { fields, fileName } = await form.readHead();
  const keyTemplate = requireField(fields, 'key');
  const { policy, signer } = await authenticate(ctx, fields);
  requireFieldsAllowed(policy, new Map([...fields, ['bucket', ctx.target.bucket!]]), ctx.now());
  const key = keyTemplate.replaceAll('${filename}', fileName);
  if (key === '') throw new GatewayError(errors.emptyFormKey());
  validateObjectKey(key);
  authorizeBucket(ctx, signer, key);
  const file = await receiveFile(ctx, form, policy);
  // Read to its end when it is short, so the connection can serve the client's next request.
  await form.skipRest(MAX_FORM_FIELDS_BYTES);
  return { fields, key, file };
}

/** POST object into the bucket the request names: a form, before the bucket is looked up. */
export const postObject: BucketHandler = (ctx) => {
  const contentType = ctx.exchange.req.headers['content-type'] ?? '';
  if (!/^multipart\/form-data\s*;/i.test(contentType)) throw new GatewayError(errors.notAForm());
  return () => receiveObject(ctx, formBoundary(contentType));
};

async function receiveObject(ctx: OperationContext, boundary: string): Promise<void> {
  const bucket = ctx.target.bucket!;
  const form = new FormDataReader(ctx.exchange.req, boundary);
  let upload: ReceivedForm;
  try {
    sendContinue(ctx.exchange);
    upload = await receiveForm(ctx, form);
  } finally {
    await form.close();
    abandonBody(ctx.exchange);
  }
  const { fields, key, file } = upload;
  ctx.exchange.key = key;
  const metadata = ctx.storage.storedMetadata(bucket, key, Object.fromEntries(fields));
  await ctx.storage.placeObject(bucket, key, file.content, file.md5, {
    ...metadata,
    ...objectChecksumHeaders(DEFAULT_CHECKSUM_ALGORITHM, file.checksum),
  });
  respond(ctx, fields, bucket, key, file.md5);
}
