/**
 * Listing details S3 clients and conformance suites check: `encoding-type=url` exactly as S3
 * encodes (the ceph s3-tests cases), v1's Prefix as sent, StartAfter beside a continuation
 * token, an empty continuation-token, and Owner as ListBuckets names it.
 */
import {
  ListBucketsCommand,
  ListObjectsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { beforeAll, describe, expect, it } from 'vitest';

import type { ObjstoreKey } from '../../src/objstore/index.ts';
import { CHECKSUMS_WHEN_REQUIRED, forEachStorage, useObjstore } from '../support/objstore-server.ts';
import { sendSigned } from '../support/signed-requests.ts';

const BUCKET = 'listing';

const FULL: ObjstoreKey = {
  accessKeyId: 'LPFIDELITY000001',
  secretAccessKey: 'fidelity-secret-0123456789abcdefghij',
  permissions: ['create', 'delete', 'get', 'buckets'],
};

const KEYS = [
  'foo+1/bar',
  'foo/bar/xyzzy',
  'quux ab/thud',
  'asdf+b',
  'odd/tilde~star*(x)!',
  'odd/ü é',
  'page/1',
  'page/2',
  'page/3',
];

forEachStorage((storage) => {
  const ctx = useObjstore({
    directoryPrefix: 'objstore-listing-fidelity-',
    keys: [FULL],
    buckets: [BUCKET],
    clientConfig: CHECKSUMS_WHEN_REQUIRED,
    storage,
  });
  let client: S3Client;

  const list = (query: Record<string, string>) =>
    sendSigned(ctx.objstore.url, FULL, { method: 'GET', path: `/${BUCKET}`, query });
  const elements = (xml: string, name: string) =>
    [...xml.matchAll(new RegExp(`<${name}>([^<]*)</${name}>`, 'g'))].map((match) => match[1]);

  beforeAll(async () => {
    client = ctx.client(FULL);
    for (const key of KEYS) await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: key }));
  });

  describe('encoding-type=url', () => {
    // ceph s3-tests test_bucket_listv2_encoding_basic / test_bucket_list_encoding_basic.
    it.each([
      ['ListObjectsV2', { 'list-type': '2' }],
      ['ListObjects', {}],
    ])('%s encodes keys and common prefixes as S3 does: a space is %%20, + is %%2B, / stays', async (_, version) => {
      const { status, body } = await list({ ...version, delimiter: '/', 'encoding-type': 'url' });
      expect(status).toBe(200);
      expect(elements(body, 'Key')).toEqual(['asdf%2Bb']);
      expect(body).toContain('<Delimiter>/</Delimiter>');
      expect(elements(body.replace(/<Prefix><\/Prefix>/, ''), 'Prefix')).toEqual([
        'foo%2B1/',
        'foo/',
        'odd/',
        'page/',
        'quux%20ab/',
      ]);
    });

    it('keeps letters, digits, -_.* and /, and percent-encodes ~ ! ( ) and UTF-8 in upper case', async () => {
      const { body } = await list({ 'list-type': '2', prefix: 'odd/', 'encoding-type': 'url' });
      expect(elements(body, 'Key')).toEqual(['odd/tilde%7Estar*%28x%29%21', 'odd/%C3%BC%20%C3%A9']);
    });

    it('the SDK decodes what it asked to be encoded back to the keys', async () => {
      const page = await client.send(new ListObjectsV2Command({ Bucket: BUCKET, EncodingType: 'url' }));
      expect(page.Contents!.map((object) => decodeURIComponent(object.Key!))).toEqual(
        [...KEYS].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))),
      );
    });

    it("writes v1's Prefix as sent while V2 encodes it", async () => {
      const v1 = await list({ prefix: 'quux ab/', 'encoding-type': 'url' });
      expect(v1.body).toContain('<Prefix>quux ab/</Prefix>');
      expect(elements(v1.body, 'Key')).toEqual(['quux%20ab/thud']);
      const v2 = await list({ 'list-type': '2', prefix: 'quux ab/', 'encoding-type': 'url' });
      expect(v2.body).toContain('<Prefix>quux%20ab/</Prefix>');
    });

    it('encodes StartAfter and Marker', async () => {
      const v2 = await list({ 'list-type': '2', 'start-after': 'quux a', 'encoding-type': 'url' });
      expect(elements(v2.body, 'StartAfter')).toEqual(['quux%20a']);
      const v1 = await list({ marker: 'quux a', 'encoding-type': 'url' });
      expect(elements(v1.body, 'Marker')).toEqual(['quux%20a']);
    });
  });

  describe('continuation', () => {
    it('echoes StartAfter beside the continuation token on every page', async () => {
      const first = await list({ 'list-type': '2', prefix: 'page/', 'start-after': 'page/0', 'max-keys': '1' });
      const [token] = elements(first.body, 'NextContinuationToken');
      expect(token).toBeDefined();
      const second = await list({
        'list-type': '2',
        prefix: 'page/',
        'start-after': 'page/0',
        'max-keys': '1',
        'continuation-token': token!,
      });
      expect(second.status).toBe(200);
      expect(elements(second.body, 'StartAfter')).toEqual(['page/0']);
      expect(elements(second.body, 'ContinuationToken')).toEqual([token]);
      expect(elements(second.body, 'Key')).toEqual(['page/2']);
    });

    it('takes an empty continuation-token as none and echoes it, empty, as S3 does', async () => {
      const { status, body } = await list({ 'list-type': '2', prefix: 'page/', 'continuation-token': '' });
      expect(status).toBe(200);
      expect(body).toContain('<ContinuationToken></ContinuationToken>');
      expect(elements(body, 'Key')).toEqual(['page/1', 'page/2', 'page/3']);
      expect(
        (await client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'page/', ContinuationToken: '' })))
          .ContinuationToken,
      ).toBe('');
      expect(
        (await client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'page/' }))).ContinuationToken,
      ).toBeUndefined();
    });
  });

  describe('Owner', () => {
    it(
      'is the ID ListBuckets names: always on v1, with fetch-owner on V2, and no DisplayName (S3 dropped it in ' +
        'November 2025)',
      async () => {
        const { Owner: owner } = await client.send(new ListBucketsCommand({}));
        expect(owner).toEqual({ ID: expect.stringMatching(/^[0-9a-f]{64}$/) });

        const v1 = await client.send(new ListObjectsCommand({ Bucket: BUCKET, Prefix: 'page/' }));
        expect(v1.Contents!.map((object) => object.Owner)).toEqual([owner, owner, owner]);
        const v2 = await client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'page/', FetchOwner: true }));
        expect(v2.Contents!.map((object) => object.Owner)).toEqual([owner, owner, owner]);
        const withoutOwner = await client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'page/' }));
        expect(withoutOwner.Contents!.map((object) => object.Owner)).toEqual([undefined, undefined, undefined]);

        const raw = await list({});
        expect(raw.body).not.toContain('DisplayName');
      },
    );
  });
});
