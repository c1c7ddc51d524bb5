import {
  DeleteObjectsCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
  S3ServiceException,
  type ServiceInputTypes,
  type ServiceOutputTypes,
} from '@aws-sdk/client-s3';
import { createHash } from 'node:crypto';

import type { FinalizeRequestMiddleware } from '@smithy/types';
import { beforeAll, describe, expect, it } from 'vitest';

import type { ObjstoreKey } from '../../src/objstore/index.ts';
import { useObjstore } from '../support/objstore-server.ts';

const FULL: ObjstoreKey = {
  accessKeyId: 'LPDELFULL0000001',
  secretAccessKey: 'delete-full-secret-0123456789abcdef',
  permissions: ['create', 'delete', 'get', 'multipart'],
};
const NO_DELETE: ObjstoreKey = {
  accessKeyId: 'LPDELNODELETE001',
  secretAccessKey: 'delete-none-secret-0123456789abcdef',
  permissions: ['create', 'get'],
};

const ctx = useObjstore({
  directoryPrefix: 'objstore-delete-objects-',
  keys: [FULL, NO_DELETE],
  buckets: ['exports', 'other'],
});
let full: S3Client;
let noDelete: S3Client;

const put = (bucket: string, key: string) =>
  full.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: `body of ${key}` }));
const keysOf = async (bucket: string) =>
  ((await full.send(new ListObjectsV2Command({ Bucket: bucket }))).Contents ?? []).map((object) => object.Key);
const deleteKeys = (client: S3Client, bucket: string, keys: string[], quiet?: boolean) =>
  client.send(
    new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: keys.map((Key) => ({ Key })), Quiet: quiet } }),
  );

beforeAll(() => {
  full = ctx.client(FULL);
  noDelete = ctx.client(NO_DELETE);
});

describe('DeleteObjects', () => {
  it('deletes the listed keys, reports missing ones as deleted, and never leaves the bucket', async () => {
    await put('exports', 'a.txt');
    await put('exports', 'dir/b & c.txt');
    await put('exports', 'kept.txt');
    await put('other', 'secret.txt');
    const result = await deleteKeys(full, 'exports', ['a.txt', 'dir/b & c.txt', 'missing.txt', '../other/secret.txt']);
    expect(result.Deleted?.map((entry) => entry.Key)).toEqual([
      'a.txt',
      'dir/b & c.txt',
      'missing.txt',
      '../other/secret.txt',
    ]);
    expect(result.Errors ?? []).toEqual([]);
    expect(await keysOf('exports')).toEqual(['kept.txt']);
    const secret = await full.send(new GetObjectCommand({ Bucket: 'other', Key: 'secret.txt' }));
    expect(await secret.Body!.transformToString()).toBe('body of secret.txt');
  });

  it('answers nothing per key in quiet mode', async () => {
    await put('exports', 'quiet.txt');
    const result = await deleteKeys(full, 'exports', ['quiet.txt'], true);
    expect(result.Deleted ?? []).toEqual([]);
    expect(await keysOf('exports')).not.toContain('quiet.txt');
  });

  it('refuses a key pair without the delete permission, and more than 1,000 keys', async () => {
    await put('exports', 'protected.txt');
    const refused = await deleteKeys(noDelete, 'exports', ['protected.txt']).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(S3ServiceException);
    expect((refused as S3ServiceException).name).toBe('AccessDenied');
    const tooMany = await deleteKeys(
      full,
      'exports',
      Array.from({ length: 1001 }, (_, index) => `k${index}`),
    ).catch((error: unknown) => error);
    expect((tooMany as S3ServiceException).name).toBe('MalformedXML');
    expect(await keysOf('exports')).toContain('protected.txt');
  });

  it('leaves a missing bucket to NoSuchBucket', async () => {
    const missing = await deleteKeys(full, 'no-such-bucket', ['x']).catch((error: unknown) => error);
    expect((missing as S3ServiceException).name).toBe('NoSuchBucket');
  });

  /** DeleteObjects with `body` sent as the request document instead of the SDK's own (signed as sent). */
  const deleteWithBody = async (body: string) => {
    const client = ctx.client(FULL);
    const replaceBody: FinalizeRequestMiddleware<ServiceInputTypes, ServiceOutputTypes> = (next) => (args) => {
      const request = args.request as { headers: Record<string, string>; body: unknown };
      for (const name of Object.keys(request.headers)) {
        if (/^(x-amz-checksum-|x-amz-sdk-checksum|content-md5)/i.test(name)) delete request.headers[name];
      }
      request.body = body;
      request.headers['content-length'] = String(Buffer.byteLength(body));
      request.headers['content-md5'] = createHash('md5').update(body).digest('base64');
      return next(args);
    };
    client.middlewareStack.addRelativeTo(replaceBody, { relation: 'before', toMiddleware: 'awsAuthMiddleware' });
    return deleteKeys(client, 'exports', ['placeholder']).catch((error: unknown) => error);
  };

  it('reads keys with entity and character references, and refuses a document that is not well-formed XML', async () => {
    await put('exports', 'x & y z.txt');
    await put('exports', 'whole.txt');
    const deleted = await deleteWithBody(
      '<?xml version="1.0" encoding="UTF-8"?><Delete ' +
        'xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Object><Key>x &amp; y&#x20;z.txt</Key></Object></Delete>',
    );
    expect(deleted).not.toBeInstanceOf(Error);
    expect(await keysOf('exports')).not.toContain('x & y z.txt');
    for (const malformed of [
      '<Delete><Object><Key>whole.txt</Key></Object>',
      '<Delete><Object><Key>whole&txt</Key></Object></Delete>',
      '<Delete><Object><Key>whole.txt</Key></Object></Delete><Delete/>',
      '<Delete><Object><Key>whole.txt</Key></Object></Delete',
      '<Delete><Object><Key>whole&nbsp;txt</Key></Object></Delete>',
    ]) {
      const refused = await deleteWithBody(malformed);
      expect((refused as S3ServiceException).name, malformed).toBe('MalformedXML');
      expect((refused as S3ServiceException).$metadata.httpStatusCode).toBe(400);
    }
    expect(await keysOf('exports')).toContain('whole.txt');
  });
});
