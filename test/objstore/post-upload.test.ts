/**
 * Browser form uploads (POST object) as AWS S3 answers them, with forms made by the AWS SDK's own
 * `createPresignedPost` and sent as a browser sends them (multipart/form-data, the file last):
 * the policy signature, the policy's expiration and conditions, `${filename}`,
 * `success_action_status` and `success_action_redirect`.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';

import { GetObjectCommand, HeadObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { createPresignedPost, type PresignedPostOptions } from '@aws-sdk/s3-presigned-post';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';

import type { ObjstoreKey } from '../../src/objstore/index.ts';
import { CHECKSUMS_WHEN_REQUIRED, failure, useObjstore } from '../support/objstore-server.ts';

const BUCKET = 'uploads';

const WRITER: ObjstoreKey = {
  accessKeyId: 'LPPOSTWRITER0001',
  secretAccessKey: 'post-writer-secret-0123456789abcdefghij',
  permissions: ['create', 'get'],
};
const READER: ObjstoreKey = {
  accessKeyId: 'LPPOSTREADER0001',
  secretAccessKey: 'post-reader-secret-0123456789abcdefghij',
  permissions: ['get'],
};

/** How far the store's clock is ahead of wall time, for policies that expire. */
let clockOffsetMs = 0;

const ctx = useObjstore({
  directoryPrefix: 'objstore-post-upload-',
  keys: [WRITER, READER],
  buckets: [BUCKET],
  clientConfig: CHECKSUMS_WHEN_REQUIRED,
  now: () => Date.now() + clockOffsetMs,
});
let writer: S3Client;

const md5Hex = (data: string) => createHash('md5').update(data).digest('hex');
const codeOf = (xml: string) => /<Code>([^<]*)<\/Code>/.exec(xml)?.[1];
const messageOf = (xml: string) =>
  /<Message>([^<]*)<\/Message>/.exec(xml)?.[1]?.replaceAll('&quot;', '"').replaceAll('&apos;', "'");
const elementOf = (xml: string, name: string) => new RegExp(`<${name}>([^<]*)</${name}>`).exec(xml)?.[1];

interface FormOptions {
  /** Fields sent besides (or instead of) the signed ones. */
  extra?: Record<string, string>;
  /** Signed fields to leave out. */
  omit?: string[];
  file?: { name: string; content: string; type?: string } | null;
  contentType?: string;
}

/** A presigned POST for the key, made by the SDK with these options. */
async function presign(options: Omit<PresignedPostOptions, 'Bucket'>, client: S3Client = writer) {
  return createPresignedPost(client, { Bucket: BUCKET, ...options });
}

/** Sends the form as a browser does: the fields, then the file. */
async function submit(
  fields: Record<string, string>,
  { extra = {}, omit = [], file = { name: 'notes.txt', content: 'hello form' } }: FormOptions = {},
) {
  const form = new FormData();
  for (const [name, value] of Object.entries({ ...fields, ...extra }))
    if (!omit.includes(name)) form.append(name, value);
  if (file !== null)
    form.append('file', new Blob([file.content], { type: file.type ?? 'application/octet-stream' }), file.name);
  const response = await fetch(`${ctx.objstore.url}/${BUCKET}`, { method: 'POST', body: form, redirect: 'manual' });
  return { status: response.status, headers: response.headers, body: await response.text() };
}

beforeAll(() => {
  writer = ctx.client(WRITER);
});

beforeEach(async () => {
  clockOffsetMs = 0;
  await ctx.objstore.reset();
});

describe('POST object', () => {
  it(
    'stores the file under the key (with ${filename}), its Content-Type and metadata, and answers 201 with ' +
      'PostResponse',
    async () => {
      const { url, fields } = await presign({
        Key: 'incoming/${filename}',
        Fields: { 'Content-Type': 'text/plain', 'x-amz-meta-owner': 'ada', success_action_status: '201' },
        Conditions: [['content-length-range', 1, 1024]],
      });
      expect(url).toBe(`${ctx.objstore.url}/${BUCKET}`);
      const response = await submit(fields);
      expect(response.status).toBe(201);
      const etag = `"${md5Hex('hello form')}"`;
      expect(response.headers.get('etag')).toBe(etag);
      expect(response.headers.get('content-type')).toBe('application/xml');
      expect([
        elementOf(response.body, 'Bucket'),
        elementOf(response.body, 'Key'),
        elementOf(response.body, 'ETag'),
      ]).toEqual([BUCKET, 'incoming/notes.txt', '&quot;' + md5Hex('hello form') + '&quot;']);
      expect(elementOf(response.body, 'Location')).toBe(`${ctx.objstore.url}/${BUCKET}/incoming/notes.txt`);

      const object = await writer.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'incoming/notes.txt' }));
      expect(await object.Body!.transformToString()).toBe('hello form');
      expect([object.ETag, object.ContentType, object.Metadata]).toEqual([etag, 'text/plain', { owner: 'ada' }]);
      expect(ctx.journal().at(-2)).toMatchObject({
        operation: 'PostObject',
        accessKeyId: WRITER.accessKeyId,
        status: 201,
        key: 'incoming/notes.txt',
      });
    },
  );

  it('answers 204 by default and 200 when asked, with ETag and Location', async () => {
    const plain = await presign({ Key: 'plain.txt' });
    const noContent = await submit(plain.fields);
    expect([noContent.status, noContent.body]).toEqual([204, '']);
    expect(noContent.headers.get('etag')).toBe(`"${md5Hex('hello form')}"`);
    expect(noContent.headers.get('location')).toBe(`${ctx.objstore.url}/${BUCKET}/plain.txt`);

    const ok = await presign({ Key: 'ok.txt', Fields: { success_action_status: '200' } });
    expect((await submit(ok.fields, { file: { name: 'x', content: 'second' } })).status).toBe(200);
    const head = await writer.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'ok.txt' }));
    expect(head.ContentLength).toBe('second'.length);
  });

  it('redirects to success_action_redirect with 303 and the bucket, key and ETag in its query', async () => {
    const { fields } = await presign({
      Key: 'redirected.txt',
      Fields: { success_action_redirect: 'https://app.example/done?from=form' },
    });
    const response = await submit(fields);
    expect(response.status).toBe(303);
    const location = new URL(response.headers.get('location')!);
    expect(`${location.origin}${location.pathname}`).toBe('https://app.example/done');
    expect(Object.fromEntries(location.searchParams)).toEqual({
      from: 'form',
      bucket: BUCKET,
      key: 'redirected.txt',
      etag: `"${md5Hex('hello form')}"`,
    });
  });

  it(
    'refuses a policy signed with another secret (SignatureDoesNotMatch), an unknown key, and a key that may not ' +
      'create',
    async () => {
      const forged = ctx.client({
        accessKeyId: WRITER.accessKeyId,
        secretAccessKey: 'not-the-writer-secret-0123456789abcdef',
      });
      const mismatch = await submit((await presign({ Key: 'forged.txt' }, forged)).fields);
      expect([mismatch.status, codeOf(mismatch.body)]).toEqual([403, 'SignatureDoesNotMatch']);
      expect(mismatch.body).not.toContain(WRITER.secretAccessKey);

      const stranger = ctx.client({
        accessKeyId: 'LPPOSTUNKNOWN001',
        secretAccessKey: 'unknown-secret-0123456789abcdefghijkl',
      });
      const unknown = await submit((await presign({ Key: 'stranger.txt' }, stranger)).fields);
      expect([unknown.status, codeOf(unknown.body)]).toEqual([403, 'InvalidAccessKeyId']);

      const denied = await submit((await presign({ Key: 'reader.txt' }, ctx.client(READER))).fields);
      expect([denied.status, codeOf(denied.body)]).toEqual([403, 'AccessDenied']);
      expect((await failure(writer.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'forged.txt' })))).name).toBe(
        'NotFound',
      );
    },
  );

  it(
    'refuses what the policy does not allow: a failed condition, a field it does not name, an expired policy ' +
      "(AccessDenied, S3's messages)",
    async () => {
      const { fields } = await presign({ Key: 'exact.txt', Fields: { 'Content-Type': 'text/plain' } });
      const otherKey = await submit(fields, { extra: { key: 'elsewhere.txt' } });
      expect([otherKey.status, codeOf(otherKey.body), messageOf(otherKey.body)]).toEqual([
        403,
        'AccessDenied',
        'Invalid according to Policy: Policy Condition failed: ["eq", "$key", "exact.txt"]',
      ]);
      const extraField = await submit(fields, { extra: { 'x-amz-meta-sneaky': 'yes' } });
      expect(messageOf(extraField.body)).toBe('Invalid according to Policy: Extra input fields: x-amz-meta-sneaky');
      // x-ignore- fields need no condition.
      expect((await submit(fields, { extra: { 'x-ignore-tracking': '1' } })).status).toBe(204);

      const shortLived = await presign({ Key: 'brief.txt', Expires: 60 });
      clockOffsetMs = 61_000;
      const expired = await submit(shortLived.fields);
      expect([expired.status, codeOf(expired.body), messageOf(expired.body)]).toEqual([
        403,
        'AccessDenied',
        'Invalid according to Policy: Policy expired.',
      ]);
    },
  );

  it('refuses files outside content-length-range (EntityTooSmall / EntityTooLarge with the sizes)', async () => {
    const { fields } = await presign({ Key: 'sized.bin', Conditions: [['content-length-range', 5, 10]] });
    const small = await submit(fields, { file: { name: 'a', content: 'abc' } });
    expect([
      small.status,
      codeOf(small.body),
      elementOf(small.body, 'ProposedSize'),
      elementOf(small.body, 'MinSizeAllowed'),
    ]).toEqual([400, 'EntityTooSmall', '3', '5']);
    const large = await submit(fields, { file: { name: 'a', content: 'abcdefghijkl' } });
    expect([
      large.status,
      codeOf(large.body),
      elementOf(large.body, 'ProposedSize'),
      elementOf(large.body, 'MaxSizeAllowed'),
    ]).toEqual([400, 'EntityTooLarge', '12', '10']);
    expect((await submit(fields, { file: { name: 'a', content: 'abcdefg' } })).status).toBe(204);
  });

  it('refuses a body that is not a form, a form without a file or a key, and a form without a signature', async () => {
    const notAForm = await fetch(`${ctx.objstore.url}/${BUCKET}`, {
      method: 'POST',
      body: 'key=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    const notAFormBody = await notAForm.text();
    expect([notAForm.status, codeOf(notAFormBody)]).toEqual([412, 'PreconditionFailed']);

    const { fields } = await presign({ Key: 'fields.txt' });
    const noFile = await submit(fields, { file: null });
    expect([noFile.status, codeOf(noFile.body), messageOf(noFile.body)]).toEqual([
      400,
      'InvalidArgument',
      'POST requires exactly one file upload per request.',
    ]);
    const noKey = await submit(fields, { omit: ['key'] });
    expect([noKey.status, codeOf(noKey.body)]).toEqual([400, 'InvalidArgument']);
    expect(messageOf(noKey.body)).toMatch(/^Bucket POST must contain a field named 'key'/);
    const unsigned = await submit(fields, { omit: ['X-Amz-Signature'] });
    expect([unsigned.status, codeOf(unsigned.body)]).toEqual([400, 'InvalidArgument']);
    const signatureV2 = await submit({
      key: 'v2.txt',
      AWSAccessKeyId: WRITER.accessKeyId,
      policy: fields['Policy']!,
      signature: 'c2lnbmF0dXJl',
    });
    expect([signatureV2.status, codeOf(signatureV2.body)]).toEqual([400, 'InvalidRequest']);
    expect(messageOf(signatureV2.body)).toBe(
      'The authorization mechanism you have provided is not supported. Please use AWS4-HMAC-SHA256.',
    );
    const form = new FormData();
    for (const [name, value] of Object.entries(fields)) form.append(name, value);
    form.append('file', new Blob(['x']), 'x');
    const noBucket = await fetch(`${ctx.objstore.url}/no-such-bucket`, { method: 'POST', body: form });
    expect([noBucket.status, codeOf(await noBucket.text())]).toEqual([404, 'NoSuchBucket']);
    const anonymous = await submit({ key: 'anonymous.txt' });
    expect([anonymous.status, codeOf(anonymous.body)]).toEqual([403, 'AccessDenied']);
  });
});

describe('the form, read as it arrives', () => {
  const BOUNDARY = 'form-boundary-0123';
  const field = ([name, value]: [string, string]) =>
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
  const filePart = (name: string) =>
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: ` +
    `text/plain\r\n\r\n`;

  /** A form's body as a browser sends it: the fields, the file, fields after it, the closing boundary. */
  const formText = (before: Record<string, string>, content: string, after: Record<string, string> = {}) =>
    `${Object.entries(before).map(field).join('')}${filePart('notes.txt')}${content}\r\n` +
    `${Object.entries(after).map(field).join('')}--${BOUNDARY}--\r\n`;

  async function post(body: string, contentType = `multipart/form-data; boundary=${BOUNDARY}`) {
    const response = await fetch(`${ctx.objstore.url}/${BUCKET}`, {
      method: 'POST',
      body,
      headers: { 'content-type': contentType },
    });
    return { status: response.status, body: await response.text() };
  }

  const incomingFiles = () => fs.readdirSync(ctx.directory).filter((name) => name.startsWith('.incoming-'));

  it("refuses more than S3's 20 KiB of fields before the file (MaxPostPreDataLengthExceeded)", async () => {
    const { fields } = await presign({ Key: 'padded.txt' });
    const over = await submit(fields, { extra: { 'x-ignore-padding': 'p'.repeat(20 * 1024) } });
    expect([over.status, codeOf(over.body), elementOf(over.body, 'MaxPostPreDataLengthBytes')]).toEqual([
      400,
      'MaxPostPreDataLengthExceeded',
      '20480',
    ]);
    expect((await submit(fields, { extra: { 'x-ignore-padding': 'p'.repeat(16 * 1024) } })).status).toBe(204);
  });

  it('authenticates the form from its fields, before its file has arrived', async () => {
    const forged = ctx.client({
      accessKeyId: WRITER.accessKeyId,
      secretAccessKey: 'not-the-writer-secret-0123456789abcdef',
    });
    const { fields } = await presign({ Key: 'never-ending.bin' }, forged);
    // A file announced as 1 GiB, of which the first MiB is sent before the answer is awaited.
    const head = `${Object.entries(fields).map(field).join('')}${filePart('never-ending.bin')}`;
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const request = http.request(`${ctx.objstore.url}/${BUCKET}`, {
        method: 'POST',
        headers: {
          'content-type': `multipart/form-data; boundary=${BOUNDARY}`,
          'content-length': String(head.length + 1024 ** 3),
        },
      });
      request.on('response', (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          resolve({ status: response.statusCode!, body: Buffer.concat(chunks).toString() });
          request.destroy();
        });
      });
      request.on('error', reject);
      request.write(head);
      request.write(Buffer.alloc(1024 * 1024, 'x'));
    });
    expect([answer.status, codeOf(answer.body)]).toEqual([403, 'SignatureDoesNotMatch']);
    expect((await failure(writer.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'never-ending.bin' })))).name).toBe(
      'NotFound',
    );
    expect(incomingFiles()).toEqual([]);
  });

  it('refuses a file past content-length-range with its whole size, and keeps none of it', async () => {
    const { fields } = await presign({ Key: 'bounded.bin', Conditions: [['content-length-range', 0, 1024]] });
    const large = await post(formText(fields, 'x'.repeat(3 * 1024 * 1024)));
    expect([large.status, codeOf(large.body), elementOf(large.body, 'ProposedSize')]).toEqual([
      400,
      'EntityTooLarge',
      String(3 * 1024 * 1024),
    ]);
    expect((await failure(writer.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'bounded.bin' })))).name).toBe(
      'NotFound',
    );
    expect(incomingFiles()).toEqual([]);
  });

  it('ignores fields after the file, as S3 does, and reads file names as browsers escape them', async () => {
    const { fields } = await presign({ Key: 'quoted/${filename}' });
    const late = await post(
      formText(fields, 'late', { 'x-amz-meta-late': 'unnamed by the policy', key: 'elsewhere.txt' }),
    );
    expect(late.status).toBe(204);
    expect((await writer.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'quoted/notes.txt' }))).Metadata).toEqual(
      {},
    );

    const quoted = await submit(fields, { file: { name: 'say "hi"\r\n.txt', content: 'quoted' } });
    expect(quoted.status).toBe(204);
    const object = await writer.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'quoted/say "hi"\r\n.txt' }));
    expect(await object.Body!.transformToString()).toBe('quoted');
  });

  it(
    "reads fields sent with a filename= parameter as fields, as S3 does (Python's requests sends every field of " +
      '`files=` so)',
    async () => {
      const { fields } = await presign({ Key: 'requests/${filename}' });
      const asFiles = ([name, value]: [string, string]) =>
        `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"; filename="${name}"\r\nContent-Type: ` +
        `application/octet-stream\r\n\r\n${value}\r\n`;
      const body = `${Object.entries(fields).map(asFiles).join('')}${filePart('upload.csv')}a,b\r\n--${BOUNDARY}--\r\n`;
      const stored = await post(body);
      expect(stored.status).toBe(204);
      const object = await writer.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'requests/upload.csv' }));
      expect(await object.Body!.transformToString()).toBe('a,b');
    },
  );

  it('refuses a body that is not well-formed multipart/form-data (MalformedPOSTRequest), storing nothing', async () => {
    const { fields } = await presign({ Key: 'malformed.txt' });
    const whole = formText(fields, 'content');
    const malformed = [
      post(whole, 'multipart/form-data; charset=utf-8'),
      post(whole.slice(0, whole.lastIndexOf(`\r\n--${BOUNDARY}--`))),
      post(whole.replace('Content-Disposition: form-data; name="key"', 'Content-Disposition: form-data')),
      post(
        whole.replace(
          `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"`,
          `--${BOUNDARY}garbage\r\nContent-Disposition: form-data; name="file"`,
        ),
      ),
    ];
    for (const response of await Promise.all(malformed))
      expect([response.status, codeOf(response.body)]).toEqual([400, 'MalformedPOSTRequest']);
    expect((await failure(writer.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'malformed.txt' })))).name).toBe(
      'NotFound',
    );
    expect(incomingFiles()).toEqual([]);
  });
});
