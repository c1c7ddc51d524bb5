/**
 * Every S3 operation the gateway can name is answered by its own handler (operations/dispatch.ts):
 * none is handed on. What s3rver's application used to answer is answered the same or as S3
 * answers it: CopyObject, CreateMultipartUpload, object tags, ACLs, bucket CORS and preflights,
 * the configurations no bucket has, NotImplemented and MethodNotAllowed, and NoSuchBucket for
 * every operation on a bucket that does not exist.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import type { ObjstoreKey } from '../../src/objstore/index.ts';
import {
  BUCKET_SUBRESOURCES,
  NAMED_OPERATIONS,
  OBJECT_SUBRESOURCES,
  type S3Operation,
} from '../../src/objstore/s3-operations.ts';
import { classifyOperation } from '../../src/objstore/server/classify.ts';
import { OPERATION_HANDLERS } from '../../src/objstore/server/operations/dispatch.ts';
import { parseTarget } from '../../src/objstore/server/target.ts';
import { forEachStorage, rawRequest, useObjstore, type RawResponse } from '../support/objstore-server.ts';
import { sendSigned, targetOf, xmlElement, type SignedRequest } from '../support/signed-requests.ts';

const BUCKET = 'dispatch';
const KEY: ObjstoreKey = {
  accessKeyId: 'LPDISPATCHKEY001',
  secretAccessKey: 'dispatch-secret-0123456789abcdefghijkl',
  permissions: ['create', 'delete', 'get', 'multipart', 'buckets'],
};
/** A workspace's key: the buckets it creates are its account's. */
const WORKSPACE_KEY: ObjstoreKey = { ...KEY, accessKeyId: 'LPDISPATCHWS0001', workspaceId: 'ws-dispatch' };

/** A request `classifyOperation` names `operation`, of an object `k` (or the bucket), in `bucket`. */
function requestFor(operation: S3Operation, bucket: string): SignedRequest | null {
  for (const [table, object] of [
    [BUCKET_SUBRESOURCES, false],
    [OBJECT_SUBRESOURCES, true],
  ] as const) {
    for (const [subresource, byMethod] of Object.entries(table)) {
      for (const [method, named] of Object.entries(byMethod)) {
        if (named !== operation) continue;
        const query: Record<string, string> = { [subresource]: '' };
        const headers: Record<string, string> =
          subresource === 'attributes' ? { 'x-amz-object-attributes': 'ETag' } : {};
        if (subresource === 'uploadId')
          Object.assign(query, { uploadId: 'f'.repeat(32), ...(method === 'PUT' ? { partNumber: '1' } : {}) });
        return { method, path: object ? `/${bucket}/k` : `/${bucket}`, query, headers };
      }
    }
  }
  const requests: Partial<Record<S3Operation, SignedRequest>> = {
    DeleteBucket: { method: 'DELETE', path: `/${bucket}` },
    HeadBucket: { method: 'HEAD', path: `/${bucket}` },
    ListObjects: { method: 'GET', path: `/${bucket}` },
    ListObjectsV2: { method: 'GET', path: `/${bucket}`, query: { 'list-type': '2' } },
    PostObject: {
      method: 'POST',
      path: `/${bucket}`,
      headers: { 'content-type': 'multipart/form-data; boundary=x' },
      body: '--x--\r\n',
    },
    GetObject: { method: 'GET', path: `/${bucket}/k` },
    HeadObject: { method: 'HEAD', path: `/${bucket}/k` },
    PutObject: { method: 'PUT', path: `/${bucket}/k`, body: 'x' },
    CopyObject: { method: 'PUT', path: `/${bucket}/k`, headers: { 'x-amz-copy-source': `/${BUCKET}/source` } },
    DeleteObject: { method: 'DELETE', path: `/${bucket}/k` },
    UploadPartCopy: {
      method: 'PUT',
      path: `/${bucket}/k`,
      query: { uploadId: 'f'.repeat(32), partNumber: '1' },
      headers: { 'x-amz-copy-source': `/${BUCKET}/source` },
    },
    Unknown: { method: 'GET', path: `/${bucket}/k`, query: { uploads: '' } },
  };
  return requests[operation] ?? null;
}

forEachStorage((storage) => {
  const ctx = useObjstore({
    directoryPrefix: 'objstore-dispatch-',
    keys: [KEY, WORKSPACE_KEY],
    buckets: [BUCKET],
    storage,
  });

  const send = (request: SignedRequest, key: ObjstoreKey = KEY) => sendSigned(ctx.objstore.url, key, request);
  const codeOf = (response: RawResponse) => [response.status, xmlElement(response.body, 'Code') ?? null];
  const md5 = (data: string) => createHash('md5').update(data).digest('hex');
  const put = (key: string, body: string, headers: Record<string, string> = {}) =>
    send({ method: 'PUT', path: `/${BUCKET}/${key}`, body, headers });
  const head = (key: string, headers: Record<string, string> = {}) =>
    send({ method: 'HEAD', path: `/${BUCKET}/${key}`, headers });
  const copy = (key: string, source: string, headers: Record<string, string> = {}) =>
    send({
      method: 'PUT',
      path: `/${BUCKET}/${key}`,
      headers: { 'x-amz-copy-source': `/${BUCKET}/${source}`, ...headers },
    });
  const tagsOf = async (key: string) =>
    (await send({ method: 'GET', path: `/${BUCKET}/${key}`, query: { tagging: '' } })).body;

  describe('the dispatch table', () => {
    const named = [
      ...NAMED_OPERATIONS,
      ...[BUCKET_SUBRESOURCES, OBJECT_SUBRESOURCES].flatMap((table) =>
        Object.values(table).flatMap((byMethod) => Object.values(byMethod)),
      ),
    ];

    it('has one handler for every operation classifyOperation can name, and nothing else', () => {
      expect(Object.keys(OPERATION_HANDLERS).sort()).toEqual([...new Set(named)].sort());
    });

    it(
      'answers NoSuchBucket for every operation on a bucket that does not exist, whatever S3 would answer in one ' +
        'that does',
      async () => {
        const missing = 'no-such-bucket';
        const answers: Record<string, string> = {};
        const expected: Record<string, string> = {};
        for (const operation of Object.keys(OPERATION_HANDLERS) as S3Operation[]) {
          const request = requestFor(operation, missing);
          if (request === null) continue;
          const classified = classifyOperation(request.method, parseTarget(targetOf(request)), request.headers ?? {});
          expect(classified.operation, `${request.method} ${targetOf(request)}`).toBe(operation);
          answers[operation] = codeOf(await send(request)).join(' ');
          // A bucket's configuration other than CORS cannot be set by any key; a HEAD answer has no document.
          expected[operation] =
            classified.access.kind === 'refuse'
              ? '403 AccessDenied'
              : request.method === 'HEAD'
                ? '404 '
                : '404 NoSuchBucket';
        }
        expect(answers).toEqual(expected);
        expect(Object.keys(answers)).toHaveLength(
          Object.keys(OPERATION_HANDLERS).length - ['ListBuckets', 'CreateBucket', 'OptionsObject'].length,
        );
      },
    );
  });

  describe('CopyObject', () => {
    it('copies the bytes with the ETag, checksum, headers and tags of the source', async () => {
      await put('source', 'hello', {
        'content-type': 'text/plain',
        'x-amz-meta-k': 'v',
        'cache-control': 'no-cache',
        'x-amz-storage-class': 'STANDARD_IA',
      });
      await send({
        method: 'PUT',
        path: `/${BUCKET}/source`,
        query: { tagging: '' },
        body: '<Tagging><TagSet><Tag><Key>k</Key><Value>007</Value></Tag></TagSet></Tagging>',
      });
      const copied = await copy('copied', 'source');
      expect(copied.status).toBe(200);
      expect(xmlElement(copied.body, 'ETag')).toBe(`&quot;${md5('hello')}&quot;`);
      const source = await head('source', { 'x-amz-checksum-mode': 'ENABLED' });
      const copyHead = await head('copied', { 'x-amz-checksum-mode': 'ENABLED' });
      for (const name of [
        'etag',
        'content-type',
        'x-amz-meta-k',
        'cache-control',
        'x-amz-storage-class',
        'x-amz-checksum-crc64nvme',
        'content-length',
      ]) {
        expect(copyHead.headers[name], name).toBe(source.headers[name]);
      }
      expect(await tagsOf('copied')).toContain('<Tag><Key>k</Key><Value>007</Value></Tag>');
    });

    it('takes the headers of the request with REPLACE, and keeps the checksum and parts, which describe the bytes', async () => {
      await put('source', 'hello', { 'content-type': 'text/plain', 'x-amz-meta-k': 'v' });
      await copy('replaced', 'source', {
        'x-amz-metadata-directive': 'REPLACE',
        'content-type': 'text/csv',
        'x-amz-meta-n': 'w',
        'x-amz-tagging-directive': 'REPLACE',
      });
      const replaced = await head('replaced', { 'x-amz-checksum-mode': 'ENABLED' });
      expect([
        replaced.headers['content-type'],
        replaced.headers['x-amz-meta-n'],
        replaced.headers['x-amz-meta-k'],
      ]).toEqual(['text/csv', 'w', undefined]);
      expect(replaced.headers['x-amz-checksum-crc64nvme']).toBe(
        (await head('source', { 'x-amz-checksum-mode': 'ENABLED' })).headers['x-amz-checksum-crc64nvme'],
      );
      expect(await tagsOf('replaced')).toContain('<TagSet></TagSet>');

      const created = await send({ method: 'POST', path: `/${BUCKET}/parted`, query: { uploads: '' } });
      const uploadId = xmlElement(created.body, 'UploadId')!;
      await send({ method: 'PUT', path: `/${BUCKET}/parted`, query: { uploadId, partNumber: '1' }, body: 'part one' });
      await send({
        method: 'POST',
        path: `/${BUCKET}/parted`,
        query: { uploadId },
        body:
          `<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>"${md5('part one')}"</ETag></Part>` +
          '</CompleteMultipartUpload>',
      });
      await copy('parted-copy', 'parted', { 'x-amz-metadata-directive': 'REPLACE' });
      const part = await send({ method: 'HEAD', path: `/${BUCKET}/parted-copy`, query: { partNumber: '1' } });
      expect([part.status, part.headers['x-amz-mp-parts-count'], part.headers['etag']]).toEqual([
        206,
        '1',
        (await head('parted')).headers['etag'],
      ]);
    });

    it('refuses what S3 refuses, and writes nothing then', async () => {
      await put('source', 'hello');
      expect(codeOf(await copy('source', 'source'))).toEqual([400, 'InvalidRequest']);
      expect(
        codeOf(await copy('source', 'source', { 'x-amz-metadata-directive': 'REPLACE', 'content-type': 'a/b' })),
      ).toEqual([200, null]);
      expect(
        codeOf(
          await copy('bad-class', 'source', { 'x-amz-metadata-directive': 'REPLACE', 'x-amz-storage-class': 'BOGUS' }),
        ),
      ).toEqual([400, 'InvalidStorageClass']);
      expect(
        codeOf(await copy('bad-redirect', 'source', { 'x-amz-website-redirect-location': 'ftp://elsewhere' })),
      ).toEqual([400, 'InvalidArgument']);
      expect(codeOf(await copy('from-nothing', 'nothing'))).toEqual([404, 'NoSuchKey']);
      expect(
        codeOf(
          await send({
            method: 'PUT',
            path: `/${BUCKET}/x`,
            headers: { 'x-amz-copy-source': '/no-such-bucket/source' },
          }),
        ),
      ).toEqual([404, 'NoSuchBucket']);
      for (const key of ['bad-class', 'bad-redirect', 'from-nothing']) expect((await head(key)).status, key).toBe(404);
    });
  });

  describe('CreateMultipartUpload', () => {
    it('answers the upload and its checksum, and the object takes the headers it was created with', async () => {
      const created = await send({
        method: 'POST',
        path: `/${BUCKET}/upload`,
        query: { uploads: '' },
        headers: { 'content-type': 'text/x', 'x-amz-meta-m': '1', 'x-amz-checksum-algorithm': 'SHA256' },
      });
      expect([
        created.status,
        created.headers['x-amz-checksum-algorithm'],
        created.headers['x-amz-checksum-type'],
      ]).toEqual([200, 'SHA256', 'COMPOSITE']);
      expect([xmlElement(created.body, 'Bucket'), xmlElement(created.body, 'Key')]).toEqual([BUCKET, 'upload']);
      const uploadId = xmlElement(created.body, 'UploadId')!;
      const sha256 = createHash('sha256').update('data').digest('base64');
      await send({
        method: 'PUT',
        path: `/${BUCKET}/upload`,
        query: { uploadId, partNumber: '1' },
        body: 'data',
        headers: { 'x-amz-checksum-sha256': sha256 },
      });
      const completed = await send({
        method: 'POST',
        path: `/${BUCKET}/upload`,
        query: { uploadId },
        body:
          `<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>"${md5('data')}"</ETag>` +
          `<ChecksumSHA256>${sha256}</ChecksumSHA256></Part></CompleteMultipartUpload>`,
      });
      expect(completed.status).toBe(200);
      const object = await head('upload');
      expect([object.headers['content-type'], object.headers['x-amz-meta-m']]).toEqual(['text/x', '1']);
    });

    it(
      'refuses an unsupported checksum or storage class before the bucket is looked up, and takes a website ' +
        'redirect location',
      async () => {
        const create = (headers: Record<string, string>, bucket = BUCKET) =>
          send({ method: 'POST', path: `/${bucket}/upload`, query: { uploads: '' }, headers });
        expect(codeOf(await create({ 'x-amz-checksum-algorithm': 'MD5' }, 'no-such-bucket'))).toEqual([
          400,
          'InvalidRequest',
        ]);
        expect(codeOf(await create({ 'x-amz-storage-class': 'BOGUS' }))).toEqual([400, 'InvalidStorageClass']);
        expect(codeOf(await create({ 'x-amz-website-redirect-location': 'elsewhere' }))).toEqual([
          400,
          'InvalidArgument',
        ]);
        expect(codeOf(await create({ 'x-amz-website-redirect-location': '/elsewhere' }))).toEqual([200, null]);
        expect(codeOf(await create({}, 'no-such-bucket'))).toEqual([404, 'NoSuchBucket']);
      },
    );
  });

  describe('object tags', () => {
    it('are read back as put, escaped, and removed by DeleteObjectTagging', async () => {
      await put('tagged', 'data');
      expect(await tagsOf('tagged')).toBe(
        '<?xml version="1.0" encoding="UTF-8"?>\n<Tagging ' +
          'xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><TagSet></TagSet></Tagging>',
      );
      const tagging =
        '<Tagging><TagSet><Tag><Key>a &amp; ' +
        'b</Key><Value>007</Value></Tag><Tag><Key>c</Key><Value></Value></Tag></TagSet></Tagging>';
      await send({ method: 'PUT', path: `/${BUCKET}/tagged`, query: { tagging: '' }, body: tagging });
      expect(await tagsOf('tagged')).toContain(
        '<TagSet><Tag><Key>a &amp; b</Key><Value>007</Value></Tag><Tag><Key>c</Key><Value></Value></Tag></TagSet>',
      );
      expect(codeOf(await send({ method: 'DELETE', path: `/${BUCKET}/tagged`, query: { tagging: '' } }))).toEqual([
        204,
        null,
      ]);
      expect(await tagsOf('tagged')).toContain('<TagSet></TagSet>');
      expect(codeOf(await send({ method: 'GET', path: `/${BUCKET}/nothing`, query: { tagging: '' } }))).toEqual([
        404,
        'NoSuchKey',
      ]);
      expect(codeOf(await send({ method: 'DELETE', path: `/${BUCKET}/nothing`, query: { tagging: '' } }))).toEqual([
        404,
        'NoSuchKey',
      ]);
    });

    if (storage === 'files')
      it('written by s3rver (indented, texts unescaped) read back', async () => {
        await put('old', 'data');
        const document =
          '<Tagging>\n  <TagSet>\n    <Tag>\n      <Key>team</Key>\n      <Value>R&D</Value>\n    </Tag>\n  ' +
          '</TagSet>\n</Tagging>';
        writeFileSync(path.join(ctx.directory, BUCKET, 'old._S3rver_tagging.xml'), document);
        expect(await tagsOf('old')).toContain('<TagSet><Tag><Key>team</Key><Value>R&amp;D</Value></Tag></TagSet>');
      });
  });

  describe('ACLs', () => {
    it("answer the bucket's owner, as ListBuckets and ListObjects name it, with FULL_CONTROL", async () => {
      const bucket = 'dispatch-workspace';
      expect((await send({ method: 'PUT', path: `/${bucket}` }, WORKSPACE_KEY)).status).toBe(200);
      await send({ method: 'PUT', path: `/${bucket}/k`, body: 'x' }, WORKSPACE_KEY);
      const owner = xmlElement((await send({ method: 'GET', path: '/' }, WORKSPACE_KEY)).body, 'ID');
      const listed = xmlElement(
        (
          await send(
            { method: 'GET', path: `/${bucket}`, query: { 'list-type': '2', 'fetch-owner': 'true' } },
            WORKSPACE_KEY,
          )
        ).body,
        'ID',
      );
      expect(owner).toMatch(/^[0-9a-f]{64}$/);
      expect(listed).toBe(owner);
      for (const request of [
        { method: 'GET', path: `/${bucket}`, query: { acl: '' } },
        { method: 'GET', path: `/${bucket}/k`, query: { acl: '' } },
      ]) {
        const acl = (await send(request, WORKSPACE_KEY)).body;
        expect(acl).toContain(`<Owner><ID>${owner}</ID></Owner>`);
        // Each grant names its permission (s3cmd 2.3 reads it from the grant, and failed on s3rver's answer).
        expect(acl).toContain(
          `<Grant><Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" ` +
            `xsi:type="CanonicalUser"><ID>${owner}</ID></Grantee><Permission>FULL_CONTROL</Permission></Grant>`,
        );
      }
      expect(
        codeOf(await send({ method: 'GET', path: `/${bucket}/nothing`, query: { acl: '' } }, WORKSPACE_KEY)),
      ).toEqual([404, 'NoSuchKey']);
      expect(
        codeOf(
          await send(
            { method: 'PUT', path: `/${bucket}/k`, query: { acl: '' }, headers: { 'x-amz-acl': 'private' } },
            WORKSPACE_KEY,
          ),
        ),
      ).toEqual([501, 'NotImplemented']);
    });
  });

  describe('bucket CORS', () => {
    const RULES =
      '<CORSConfiguration><CORSRule><AllowedOrigin>http://a.example</AllowedOrigin>' +
      '<AllowedMethod>GET</AllowedMethod><AllowedMethod>PUT</AllowedMethod>' +
      '<AllowedHeader>x-amz-*</AllowedHeader><ExposeHeader>ETag</ExposeHeader>' +
      '<MaxAgeSeconds>600</MaxAgeSeconds></CORSRule>' +
      '<CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>HEAD</AllowedMethod></CORSRule></CORSConfiguration>';
    const putCors = (body: string) => send({ method: 'PUT', path: `/${BUCKET}`, query: { cors: '' }, body });
    const preflight = (headers: Record<string, string>, target = `/${BUCKET}/k`) =>
      rawRequest(ctx.objstore.url, 'OPTIONS', target, headers);

    it('are put, read back and deleted', async () => {
      expect(codeOf(await send({ method: 'GET', path: `/${BUCKET}`, query: { cors: '' } }))).toEqual([
        404,
        'NoSuchCORSConfiguration',
      ]);
      expect(codeOf(await putCors(RULES))).toEqual([200, null]);
      const read = (await send({ method: 'GET', path: `/${BUCKET}`, query: { cors: '' } })).body;
      expect(read).toContain(
        '<CORSRule><AllowedHeader>x-amz-*</AllowedHeader><AllowedMethod>GET</AllowedMethod>' +
          '<AllowedMethod>PUT</AllowedMethod><AllowedOrigin>http://a.example</AllowedOrigin>' +
          '<ExposeHeader>ETag</ExposeHeader><MaxAgeSeconds>600</MaxAgeSeconds></CORSRule>',
      );
      expect(codeOf(await send({ method: 'DELETE', path: `/${BUCKET}`, query: { cors: '' } }))).toEqual([204, null]);
      expect(codeOf(await send({ method: 'GET', path: `/${BUCKET}`, query: { cors: '' } }))).toEqual([
        404,
        'NoSuchCORSConfiguration',
      ]);
    });

    it.each([
      ['not well-formed', '<CORSConfiguration><CORSRule>', 'MalformedXML'],
      ['without a rule', '<CORSConfiguration></CORSConfiguration>', 'MalformedXML'],
      [
        'a rule without an origin',
        '<CORSConfiguration><CORSRule><AllowedMethod>GET</AllowedMethod></CORSRule></CORSConfiguration>',
        'MalformedXML',
      ],
      [
        'a method a rule may not allow',
        '<CORSConfiguration><CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>PATCH</AllowedMethod></CORSRule>' +
          '</CORSConfiguration>',
        'InvalidRequest',
      ],
      [
        'an origin with two wildcards',
        '<CORSConfiguration><CORSRule><AllowedOrigin>*.*</AllowedOrigin><AllowedMethod>GET</AllowedMethod></CORSRule>' +
          '</CORSConfiguration>',
        'InvalidRequest',
      ],
    ])('refuse a configuration %s', async (_, body, code) => {
      expect(codeOf(await putCors(body))).toEqual([400, code]);
    });

    it('answer preflights without authentication, from the rule that allows the origin, method and headers', async () => {
      await putCors(RULES);
      const allowed = await preflight({
        origin: 'http://a.example',
        'access-control-request-method': 'PUT',
        'access-control-request-headers': 'X-Amz-Date, x-amz-content-sha256',
      });
      expect(allowed.status).toBe(200);
      expect(allowed.headers).toMatchObject({
        'access-control-allow-origin': 'http://a.example',
        'access-control-allow-methods': 'GET, PUT',
        'access-control-allow-headers': 'x-amz-date, x-amz-content-sha256',
        'access-control-expose-headers': 'ETag',
        'access-control-max-age': '600',
      });
      expect(
        (await preflight({ origin: 'http://z.example', 'access-control-request-method': 'HEAD' })).headers[
          'access-control-allow-origin'
        ],
      ).toBe('*');
      expect(codeOf(await preflight({}))).toEqual([400, 'BadRequest']);
      expect(codeOf(await preflight({ origin: 'http://a.example' }))).toEqual([400, 'BadRequest']);
      expect(
        codeOf(
          await preflight({
            origin: 'http://a.example',
            'access-control-request-method': 'PUT',
            'access-control-request-headers': 'authorization',
          }),
        ),
      ).toEqual([403, 'CORSResponse']);
      expect(codeOf(await preflight({ origin: 'http://c.example', 'access-control-request-method': 'GET' }))).toEqual([
        403,
        'CORSResponse',
      ]);
      expect(
        codeOf(
          await preflight({ origin: 'http://a.example', 'access-control-request-method': 'GET' }, '/no-such-bucket/k'),
        ),
      ).toEqual([403, 'CORSResponse']);
    });

    if (storage === 'files')
      it('written by s3rver (indented) still apply', async () => {
        const document =
          '<CORSConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">\n  <CORSRule>\n    ' +
          '<AllowedOrigin>http://old.example</AllowedOrigin>\n    <AllowedMethod>GET</AllowedMethod>\n  ' +
          '</CORSRule>\n</CORSConfiguration>';
        writeFileSync(path.join(ctx.directory, BUCKET, '._S3rver_cors.xml'), document);
        expect((await preflight({ origin: 'http://old.example', 'access-control-request-method': 'GET' })).status).toBe(
          200,
        );
        const read = (await send({ method: 'GET', path: `/${BUCKET}`, query: { cors: '' } })).body;
        expect(read).toContain(
          '<CORSRule><AllowedMethod>GET</AllowedMethod><AllowedOrigin>http://old.example</AllowedOrigin></CORSRule>',
        );
      });
  });

  describe('what is not emulated', () => {
    it.each([
      ['GET', { policy: '' }, 404, 'NoSuchBucketPolicy'],
      ['GET', { tagging: '' }, 404, 'NoSuchTagSet'],
      ['GET', { lifecycle: '' }, 404, 'NoSuchLifecycleConfiguration'],
      ['GET', { website: '' }, 404, 'NoSuchWebsiteConfiguration'],
      ['GET', { replication: '' }, 404, 'ReplicationConfigurationNotFoundError'],
      ['GET', { 'object-lock': '' }, 404, 'ObjectLockConfigurationNotFoundError'],
      ['GET', { encryption: '' }, 501, 'NotImplemented'],
      ['GET', { logging: '' }, 501, 'NotImplemented'],
      ['GET', { delete: '' }, 405, 'MethodNotAllowed'],
    ])('%s bucket %o is %i %s', async (method, query, status, code) => {
      expect(codeOf(await send({ method, path: `/${BUCKET}`, query }))).toEqual([status, code]);
    });

    it.each([
      ['GET', { retention: '' }, 400, 'InvalidRequest'],
      ['PUT', { 'legal-hold': '' }, 400, 'InvalidRequest'],
      ['GET', { torrent: '' }, 501, 'NotImplemented'],
      ['POST', { select: '', 'select-type': '2' }, 501, 'NotImplemented'],
      ['POST', {}, 501, 'NotImplemented'],
      ['GET', { uploads: '' }, 405, 'MethodNotAllowed'],
      ['PUT', { attributes: '' }, 405, 'MethodNotAllowed'],
      ['DELETE', { restore: '' }, 405, 'MethodNotAllowed'],
    ])('%s object %o is %i %s, and changes nothing', async (method, query, status, code) => {
      await put('kept', 'kept');
      expect(codeOf(await send({ method, path: `/${BUCKET}/kept`, query, body: '<x/>' }))).toEqual([status, code]);
      expect((await head('kept')).headers['etag']).toBe(`"${md5('kept')}"`);
    });
  });
});

describe('the S3 error catalogue (s3-errors.ts)', () => {
  it('builds every error the server answers: no module of it makes one up, but a fault rule', () => {
    const server = path.join(import.meta.dirname, '..', '..', 'src', 'objstore', 'server');
    const made = readdirSync(server, { recursive: true, encoding: 'utf8' })
      .filter((file) => file.endsWith('.ts'))
      .flatMap((file) =>
        readFileSync(path.join(server, file), 'utf8')
          .split('\n')
          .filter((line) => /\bs3Error\(|\bcode: '/.test(line))
          .map((line) => `${file}: ${line.trim()}`),
      );
    expect(made).toEqual(['gateway.ts: throw new GatewayError(s3Error(fault.status, fault.code, fault.message));']);
  });
});
