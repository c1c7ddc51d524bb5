/**
 * Browser form uploads (POST object): `POST /<bucket>` with a multipart/form-data body whose
 * fields carry the object's key (`${filename}` standing for the file's name), its headers and
 * `x-amz-meta-*`, a base64 policy document and its SigV4 POST signature (`x-amz-algorithm`,
 * `x-amz-credential`, `x-amz-date`, `x-amz-signature`). The form authenticates the request, so
 * the gateway hands it here instead of checking a signed request. Fields after the file are
 * ignored, as S3 ignores them.
 *
 * The answer is S3's: 204 by default, 200 or 201 (with PostResponse) for `success_action_status`,
 * or 303 to `success_action_redirect` with the bucket, key and ETag in its query.
 */
import { createHash } from 'node:crypto';
import { writeFile } from 'node:fs/promises';

import type { ObjstoreKey, ObjstoreKeyLookup } from '../../types.ts';
import { authErrors } from '../auth/auth-errors.ts';
import { parseV4Credential } from '../auth/credentials.ts';
import { policySignature, signaturesMatch } from '../auth/sigv4.ts';
import { DEFAULT_CHECKSUM_ALGORITHM } from '../bodies/checksum-algorithms.ts';
import { objectChecksumHeaders, startChecksum } from '../bodies/checksums.ts';
import { errors, GatewayError, s3Error } from '../errors.ts';
import { validateObjectKey } from '../target.ts';
import { sendXmlResult } from '../xml.ts';
import { bucketExists, type OperationContext } from './context.ts';
import { parsePolicy, requireContentLengthInRange, requireFieldsAllowed, type FormFields } from './post-policy.ts';

/** A form's whole body is read into memory: S3 takes up to 5 GB, this store a fraction of it. */
export const MAX_FORM_BYTES = 256 * 1024 * 1024;

const SIGNING_FIELDS = ['x-amz-algorithm', 'x-amz-credential', 'x-amz-date', 'x-amz-signature'] as const;

export const formErrors = {
  notAForm: () =>
    s3Error(412, 'PreconditionFailed', 'At least one of the pre-conditions you specified did not hold', [
      ['Condition', 'Bucket POST must be of the enclosure-type multipart/form-data'],
    ]),
  malformedForm: () =>
    s3Error(400, 'MalformedPOSTRequest', 'The body of your POST request is not well-formed multipart/form-data.'),
  missingField: (name: string) =>
    s3Error(400, 'InvalidArgument', `Bucket POST must contain a field named '${name}'.  If it is specified, please check the order of the fields.`, [
      ['ArgumentName', name],
      ['ArgumentValue', ''],
    ]),
  noFile: () =>
    s3Error(400, 'InvalidArgument', 'POST requires exactly one file upload per request.', [
      ['ArgumentName', 'file'],
      ['ArgumentValue', '0'],
    ]),
  emptyKey: () => errors.invalidArgument('User key must have a length greater than 0.'),
  malformedCredential: (credential: string) =>
    s3Error(400, 'InvalidArgument', 'Error parsing the X-Amz-Credential parameter; the Credential is mal-formed; ' +
      'expecting "<YOUR-AKID>/YYYYMMDD/REGION/SERVICE/aws4_request".', [
      ['ArgumentName', 'x-amz-credential'],
      ['ArgumentValue', credential],
    ]),
} as const;

interface Form {
  /** Fields before the file, by lower-case name. */
  fields: Map<string, string>;
  file: File;
}

async function readForm(ctx: OperationContext, contentType: string): Promise<Form> {
  const body = await ctx.readBody(MAX_FORM_BYTES);
  let entries: FormData;
  try {
    const request = new Request('http://objstore.invalid/', {
      method: 'POST',
      headers: { 'content-type': contentType },
      body: new Uint8Array(body),
    });
    entries = await request.formData();
  } catch {
    throw new GatewayError(formErrors.malformedForm());
  }
  const fields = new Map<string, string>();
  for (const [name, value] of entries) {
    const field = name.toLowerCase();
    if (field === 'file') {
      if (typeof value === 'string') break;
      return { fields, file: value };
    }
    if (typeof value === 'string' && !fields.has(field)) fields.set(field, value);
  }
  throw new GatewayError(formErrors.noFile());
}

function requireField(fields: FormFields, name: string): string {
  const value = fields.get(name);
  if (value === undefined) throw new GatewayError(formErrors.missingField(name));
  return value;
}

/** Who may upload with a form, and when it is. */
export interface FormUploadOptions {
  keys: ObjstoreKeyLookup;
  now: () => Date;
  /** Throws AccessDenied unless the key that signed the form may use the bucket, and reaches the object key once that is known. */
  authorizeBucket(key: ObjstoreKey, objectKey: string | null): void;
}

/** Checks the form's signature over its policy and the key's permissions; answers the policy and the key that signed it. */
async function authenticate(ctx: OperationContext, fields: FormFields, { keys, authorizeBucket }: FormUploadOptions) {
  const policyText = fields.get('policy');
  // A form without a policy is an anonymous upload, which no bucket here allows.
  if (policyText === undefined) throw new GatewayError(errors.accessDenied());
  // A Signature Version 2 form (AWSAccessKeyId, signature) is refused as a SigV4-only region refuses it.
  if (!fields.has('x-amz-algorithm') && fields.has('awsaccesskeyid')) throw new GatewayError(authErrors.signatureVersionNotSupported());
  const [algorithm, credentialText, , signature] = SIGNING_FIELDS.map((name) => requireField(fields, name));
  if (algorithm !== 'AWS4-HMAC-SHA256') throw new GatewayError(errors.unsupportedAuthorizationType());
  const credential = parseV4Credential(credentialText!);
  if (credential === null) throw new GatewayError(formErrors.malformedCredential(credentialText!));
  ctx.exchange.accessKeyId = credential.accessKeyId;
  const key = keys.find(credential.accessKeyId);
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
  authorizeBucket(key, null);
  ctx.exchange.authenticated = true;
  return { policy: parsePolicy(policyText), signer: key };
}

const rfc3986 = (text: string) => encodeURIComponent(text).replace(/[!'()*]/g, (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`);

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
  const location = `http://${req.headers.host ?? 'localhost'}/${rfc3986(bucket)}/${key.split('/').map(rfc3986).join('/')}`;
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

/** POST object into the bucket the request names. */
export async function postObject(ctx: OperationContext, options: FormUploadOptions): Promise<void> {
  const bucket = ctx.target.bucket!;
  const contentType = ctx.exchange.req.headers['content-type'] ?? '';
  if (!/^multipart\/form-data\s*;/i.test(contentType)) throw new GatewayError(formErrors.notAForm());
  if (!(await bucketExists(ctx))) throw new GatewayError(errors.noSuchBucket(bucket));
  const { fields, file } = await readForm(ctx, contentType);
  const keyTemplate = requireField(fields, 'key');
  const { policy, signer } = await authenticate(ctx, fields, options);
  requireFieldsAllowed(policy, new Map([...fields, ['bucket', bucket]]), options.now());

  const key = keyTemplate.replaceAll('${filename}', file.name);
  if (key === '') throw new GatewayError(formErrors.emptyKey());
  validateObjectKey(key);
  options.authorizeBucket(signer, key);
  const content = Buffer.from(await file.arrayBuffer());
  requireContentLengthInRange(policy, content.length);

  ctx.exchange.key = key;
  const metadata = ctx.storage.storedMetadata(bucket, key, Object.fromEntries(fields));
  const checksum = startChecksum(DEFAULT_CHECKSUM_ALGORITHM);
  checksum.update(content);
  const md5 = createHash('md5').update(content).digest('hex');
  const staged = ctx.storage.incomingFile();
  await writeFile(staged, content, { flag: 'wx' });
  await ctx.storage.placeObject(bucket, key, staged, md5, {
    ...metadata,
    ...objectChecksumHeaders(DEFAULT_CHECKSUM_ALGORITHM, await checksum.digest()),
  });
  respond(ctx, fields, bucket, key, md5);
}
