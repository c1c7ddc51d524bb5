/**
 * Request documents built to hurt the parser (deep nesting, element names that are JavaScript's
 * own properties, entities, wrong roots), sent to every operation that reads one: each is
 * S3's MalformedXML (400), never a 500, and nothing changes.
 */
import { createHash } from 'node:crypto';

import {
  CreateMultipartUploadCommand,
  HeadObjectCommand,
  PutObjectCommand,
  type S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { beforeAll, describe, expect, it } from 'vitest';

import type { ObjstoreKey } from '../../src/objstore/index.ts';
import { useObjstore } from '../support/objstore-server.ts';
import { sendSigned, xmlElement } from '../support/signed-requests.ts';

const FULL: ObjstoreKey = {
  accessKeyId: 'LPDOCSFULL000001',
  secretAccessKey: 'documents-full-secret-0123456789abcdef',
  permissions: ['create', 'delete', 'get', 'multipart', 'buckets'],
};

const ctx = useObjstore({ directoryPrefix: 'objstore-request-documents-', keys: [FULL], buckets: ['exports'] });
let s3: S3Client;

beforeAll(() => {
  s3 = ctx.client(FULL);
});

const nested = (root: string, levels: number, inner = '') =>
  `<${root}>${'<a>'.repeat(levels)}${inner}${'</a>'.repeat(levels)}</${root}>`;

/** Documents each operation must refuse as MalformedXML, with its root element, nested at most `deepest` levels. */
function hostileDocuments(root: string, child: string, deepest: number): Record<string, string> {
  const nested200 = `${'<a>'.repeat(200)}${'</a>'.repeat(200)}`;
  return {
    [`nested ${deepest} levels deep`]: nested(root, deepest),
    'nested 1,000 levels deep': nested(root, 1_000),
    'a child nested 200 levels deep': `<${root}>${child.replace('>', `>${nested200}`)}</${root}>`,
    'an element named __proto__': `<${root}><__proto__><Key>k</Key></__proto__>${child}</${root}>`,
    'an element named constructor': `<${root}><constructor>k</constructor>${child}</${root}>`,
    'an internal entity': `<!DOCTYPE d [<!ENTITY x "k">]><${root}>${child.replace('k<', '&x;<')}</${root}>`,
    'an external entity':
      `<!DOCTYPE d [<!ENTITY x SYSTEM ` + `"file:///etc/passwd">]><${root}>${child.replace('k<', '&x;<')}</${root}>`,
    'another root': `<Other>${child}</Other>`,
    'two roots': `<${root}>${child}</${root}><${root}>${child}</${root}>`,
    'unclosed nesting': `<${root}>${'<a>'.repeat(deepest)}`,
  };
}

async function expectMalformed(
  request: { method: string; path: string; query?: Record<string, string> },
  body: string,
  what: string,
): Promise<void> {
  const headers = { 'content-md5': createHash('md5').update(body).digest('base64') };
  const reply = await sendSigned(ctx.objstore.url, FULL, { ...request, headers, body });
  expect(reply.status, `${what}: ${reply.body.slice(0, 200)}`).toBe(400);
  expect(xmlElement(reply.body, 'Code'), what).toBe('MalformedXML');
}

describe('request documents that are not what S3 reads', () => {
  it('DeleteObjects answers MalformedXML and deletes nothing', async () => {
    await s3.send(new PutObjectCommand({ Bucket: 'exports', Key: 'k', Body: 'kept' }));
    const documents = {
      ...hostileDocuments('Delete', '<Object><Key>k</Key></Object>', 100_000),
      'a huge document (60,000 keys)': `<Delete>${'<Object><Key>k</Key></Object>'.repeat(60_000)}</Delete>`,
    };
    for (const [what, body] of Object.entries(documents)) {
      await expectMalformed({ method: 'POST', path: '/exports', query: { delete: '' } }, body, what);
    }
    expect((await s3.send(new HeadObjectCommand({ Bucket: 'exports', Key: 'k' }))).ContentLength).toBe(4);
  });

  it('CompleteMultipartUpload answers MalformedXML and the upload stays in progress', async () => {
    const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'exports', Key: 'upload' }));
    const { ETag } = await s3.send(
      new UploadPartCommand({ Bucket: 'exports', Key: 'upload', UploadId, PartNumber: 1, Body: 'k' }),
    );
    const part = `<Part><PartNumber>1</PartNumber><ETag>${ETag}</ETag><X>k</X></Part>`;
    for (const [what, body] of Object.entries(hostileDocuments('CompleteMultipartUpload', part, 100_000))) {
      await expectMalformed({ method: 'POST', path: '/exports/upload', query: { uploadId: UploadId! } }, body, what);
    }
    const listed = await sendSigned(ctx.objstore.url, FULL, {
      method: 'GET',
      path: '/exports/upload',
      query: { uploadId: UploadId! },
    });
    expect(listed.status).toBe(200);
    expect(xmlElement(listed.body, 'PartNumber')).toBe('1');
  });

  it('CreateBucket answers MalformedXML and makes no bucket', async () => {
    // A configuration is at most 64 KiB, so its nesting stays under that.
    const documents = hostileDocuments(
      'CreateBucketConfiguration',
      '<LocationConstraint>k</LocationConstraint>',
      5_000,
    );
    for (const [what, body] of Object.entries(documents)) {
      await expectMalformed({ method: 'PUT', path: '/hostile-configuration' }, body, what);
    }
    const head = await sendSigned(ctx.objstore.url, FULL, { method: 'HEAD', path: '/hostile-configuration' });
    expect(head.status).toBe(404);
  });
});
