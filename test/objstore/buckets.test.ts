/**
 * Buckets over the S3 API of a whole in-process instance: CreateBucket, DeleteBucket,
 * HeadBucket, GetBucketLocation and ListBuckets as S3 answers them, who owns a created bucket,
 * and created buckets through reset, snapshots, a kept data dir and the plain-file view.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import {
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteBucketCommand,
  DeleteObjectCommand,
  GetBucketLocationCommand,
  HeadBucketCommand,
  ListBucketsCommand,
  ListMultipartUploadsCommand,
  ListObjectsCommand,
  ListPartsCommand,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { createLocalplane, type InProcessLocalplane } from '../../src/index.ts';
import { inProcessApi } from '../support/in-process.ts';
import type { FixturesView } from '../support/instance.ts';
import { getBytes, s3For } from '../support/objstore.ts';
import { failure, type Credentials } from '../support/objstore-server.ts';
import { sendSigned, xmlElement } from '../support/signed-requests.ts';

const CREATED_AT = '2026-11-02T10:00:00.000Z';

let lp: InProcessLocalplane;
let fixtures: FixturesView;
let endpoint: string;
const clients: S3Client[] = [];

interface TestKey extends Credentials {
  access_key_id: string;
  secret_access_key: string;
}

const asKey = (accessKeyId: string, secretAccessKey: string): TestKey => ({
  accessKeyId,
  secretAccessKey,
  access_key_id: accessKeyId,
  secret_access_key: secretAccessKey,
});

let shared: TestKey;
let createOnly: TestKey;

function s3(key: TestKey): S3Client {
  const client = s3For(endpoint, { ...key, permissions: [] });
  clients.push(client);
  return client;
}

/** A key pair acting for a workspace's account, added over the admin API. */
async function workspaceKey(id: string, workspaceId: string): Promise<TestKey> {
  const key = asKey(id, `${id.toLowerCase()}-secret-0123456789`);
  const reply = await inProcessApi(lp).post('/_localplane/objstore/keys', {
    access_key_id: key.accessKeyId,
    secret_access_key: key.secretAccessKey,
    permissions: ['create', 'delete', 'get', 'multipart', 'buckets'],
    workspace_id: workspaceId,
  });
  expect(reply.status).toBe(201);
  expect(reply.body).toEqual({
    access_key_id: id,
    permissions: ['create', 'delete', 'get', 'multipart', 'buckets'],
    workspace_id: workspaceId,
  });
  expect(reply.text).not.toContain(key.secretAccessKey);
  return key;
}

const bucketNames = async (key: TestKey) =>
  ((await s3(key).send(new ListBucketsCommand({}))).Buckets ?? []).map((bucket) => bucket.Name);

async function bucketExists(key: TestKey, bucket: string): Promise<boolean> {
  const reply = await sendSigned(endpoint, key, { method: 'HEAD', path: `/${bucket}` });
  if (reply.status === 404) return false;
  expect(reply.status).toBe(200);
  return true;
}

beforeAll(async () => {
  lp = await createLocalplane({ freezeClock: true, log: () => {} });
  await lp.clock.set(CREATED_AT);
  fixtures = (await inProcessApi(lp).get<FixturesView>('/_localplane/fixtures')).body;
  endpoint = fixtures.objstore.endpoint_url;
  const full = fixtures.objstore.keys.find((key) => key.permissions.includes('buckets'))!;
  shared = asKey(full.access_key_id, full.secret_access_key);
  const limited = fixtures.objstore.keys.find(
    (key) => key.permissions.length === 1 && key.permissions[0] === 'create',
  )!;
  createOnly = asKey(limited.access_key_id, limited.secret_access_key);
});

afterEach(async () => {
  await lp.reset();
  await lp.clock.set(CREATED_AT);
});

afterAll(async () => {
  for (const client of clients) client.destroy();
  await lp?.stop();
});

describe('the fixtures', () => {
  it('give the full-access keys the buckets permission, and no other', () => {
    const withBuckets = fixtures.objstore.keys
      .filter((key) => key.permissions.includes('buckets'))
      .map((key) => key.access_key_id);
    expect(withBuckets).toEqual(['LPTESTFULLACCESS0001', 'LPTESTROTATION000004']);
  });
});

describe('CreateBucket', () => {
  it('creates a bucket with Location /name, usable at once, dated by the emulator clock', async () => {
    const client = s3(shared);
    const created = await client.send(new CreateBucketCommand({ Bucket: 'fresh-bucket' }));
    expect(created.Location).toBe('/fresh-bucket');
    expect(created.$metadata.httpStatusCode).toBe(200);

    await client.send(new PutObjectCommand({ Bucket: 'fresh-bucket', Key: 'a/b.txt', Body: 'hello' }));
    expect(Buffer.from(await getBytes(client, 'fresh-bucket', 'a/b.txt')).toString()).toBe('hello');

    const head = await client.send(new HeadBucketCommand({ Bucket: 'fresh-bucket' }));
    expect(head.BucketRegion).toBe('us-east-1');
    const listed = (await client.send(new ListBucketsCommand({}))).Buckets!.find(
      (bucket) => bucket.Name === 'fresh-bucket',
    );
    expect(listed).toEqual({ Name: 'fresh-bucket', CreationDate: new Date(CREATED_AT), BucketRegion: 'us-east-1' });
  });

  it('answers BucketAlreadyOwnedByYou for the caller own bucket and for a configured one', async () => {
    const client = s3(shared);
    await client.send(new CreateBucketCommand({ Bucket: 'twice' }));
    for (const bucket of ['twice', 'exports']) {
      const reply = await sendSigned(endpoint, shared, { method: 'PUT', path: `/${bucket}` });
      expect(reply.status).toBe(409);
      expect(xmlElement(reply.body, 'Code')).toBe('BucketAlreadyOwnedByYou');
      expect(reply.body).toContain(`<BucketName>${bucket}</BucketName>`);
    }
  });

  it('refuses a key without the buckets permission with AccessDenied', async () => {
    const error = await failure(s3(createOnly).send(new CreateBucketCommand({ Bucket: 'not-mine' })));
    expect(error.name).toBe('AccessDenied');
    expect(error.$metadata.httpStatusCode).toBe(403);
    expect(await bucketExists(shared, 'not-mine')).toBe(false);
  });

  it.each([
    ['ab', 'too short'],
    ['a'.repeat(64), 'too long'],
    ['Upper-case', 'upper case'],
    ['under_score', 'an underscore'],
    ['-leading-hyphen', 'a leading hyphen'],
    ['trailing-hyphen-', 'a trailing hyphen'],
    ['trailing.dot.', 'a trailing dot'],
    ['double..dot', 'two dots in a row'],
    ['192.168.5.4', 'an IP address'],
    ['xn--punycode', 'the xn-- prefix'],
    ['sthree-bucket', 'the sthree- prefix'],
    ['name-s3alias', 'the -s3alias suffix'],
    ['name--ol-s3', 'the --ol-s3 suffix'],
    ['name.mrap', 'the .mrap suffix'],
  ])('refuses %j (%s) with InvalidBucketName', async (name) => {
    const reply = await sendSigned(endpoint, shared, { method: 'PUT', path: `/${name}` });
    expect(reply.status).toBe(400);
    expect(xmlElement(reply.body, 'Code')).toBe('InvalidBucketName');
  });

  it('accepts names at the edges of the rules', async () => {
    for (const name of ['abc', 'a'.repeat(63), '0-9.a-b', 'xn-single-hyphen', '192.168.5.com']) {
      const reply = await sendSigned(endpoint, shared, { method: 'PUT', path: `/${name}` });
      expect(reply.status, name).toBe(200);
    }
  });

  it('remembers a LocationConstraint for GetBucketLocation, HeadBucket and ListBuckets', async () => {
    const client = s3(shared);
    await client.send(
      new CreateBucketCommand({ Bucket: 'in-ireland', CreateBucketConfiguration: { LocationConstraint: 'eu-west-1' } }),
    );
    expect((await client.send(new GetBucketLocationCommand({ Bucket: 'in-ireland' }))).LocationConstraint).toBe(
      'eu-west-1',
    );
    expect((await client.send(new HeadBucketCommand({ Bucket: 'in-ireland' }))).BucketRegion).toBe('eu-west-1');
    const listed = (await client.send(new ListBucketsCommand({}))).Buckets!.find(
      (bucket) => bucket.Name === 'in-ireland',
    );
    expect(listed?.BucketRegion).toBe('eu-west-1');

    // us-east-1 is the default: an empty LocationConstraint, as S3 writes it.
    await client.send(new CreateBucketCommand({ Bucket: 'in-virginia' }));
    const location = await sendSigned(endpoint, shared, {
      method: 'GET',
      path: '/in-virginia',
      query: { location: '' },
    });
    expect(location.status).toBe(200);
    expect(location.body).toMatch(
      /<LocationConstraint xmlns="http:\/\/s3\.amazonaws\.com\/doc\/2006-03-01\/"><\/LocationConstraint>$/,
    );
    expect((await client.send(new GetBucketLocationCommand({ Bucket: 'exports' }))).LocationConstraint).toBeUndefined();
  });

  it('refuses a LocationConstraint of us-east-1 or of no region, and a malformed body', async () => {
    const configuration = (inner: string) =>
      `<CreateBucketConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">${inner}</CreateBucketConfiguration>`;
    const cases: [string, number, string][] = [
      [configuration('<LocationConstraint>us-east-1</LocationConstraint>'), 400, 'InvalidLocationConstraint'],
      [configuration('<LocationConstraint>moon-base</LocationConstraint>'), 400, 'InvalidLocationConstraint'],
      ['<CreateBucketConfiguration><LocationConstraint>eu-west-1</LocationConstraint>', 400, 'MalformedXML'],
      ['<Other><LocationConstraint>eu-west-1</LocationConstraint></Other>', 400, 'MalformedXML'],
      ['not xml at all', 400, 'MalformedXML'],
    ];
    for (const [body, status, code] of cases) {
      const reply = await sendSigned(endpoint, shared, { method: 'PUT', path: '/configured-badly', body });
      expect([reply.status, xmlElement(reply.body, 'Code')], body).toEqual([status, code]);
    }
    expect(await bucketExists(shared, 'configured-badly')).toBe(false);

    const empty = await sendSigned(endpoint, shared, {
      method: 'PUT',
      path: '/configured-emptily',
      body: configuration(''),
    });
    expect(empty.status).toBe(200);
  });
});

describe('DeleteBucket and HeadBucket', () => {
  it(
    'deletes an empty bucket (204), refuses one with objects (BucketNotEmpty), and then knows none ' + '(NoSuchBucket)',
    async () => {
      const client = s3(shared);
      await client.send(new CreateBucketCommand({ Bucket: 'short-lived' }));
      await client.send(new PutObjectCommand({ Bucket: 'short-lived', Key: 'object', Body: 'x' }));

      const notEmpty = await failure(client.send(new DeleteBucketCommand({ Bucket: 'short-lived' })));
      expect([notEmpty.name, notEmpty.$metadata.httpStatusCode]).toEqual(['BucketNotEmpty', 409]);

      await client.send(new DeleteObjectCommand({ Bucket: 'short-lived', Key: 'object' }));
      const deleted = await client.send(new DeleteBucketCommand({ Bucket: 'short-lived' }));
      expect(deleted.$metadata.httpStatusCode).toBe(204);

      const head = await sendSigned(endpoint, shared, { method: 'HEAD', path: '/short-lived' });
      expect([head.status, head.body]).toEqual([404, '']);
      const again = await sendSigned(endpoint, shared, { method: 'DELETE', path: '/short-lived' });
      expect([again.status, xmlElement(again.body, 'Code')]).toEqual([404, 'NoSuchBucket']);
      expect(again.body).toContain('<BucketName>short-lived</BucketName>');
    },
  );

  it('keeps the configured buckets: no account may delete them', async () => {
    const reply = await sendSigned(endpoint, shared, { method: 'DELETE', path: '/warehouse-landing' });
    expect([reply.status, xmlElement(reply.body, 'Code')]).toEqual([403, 'AccessDenied']);
    expect(await bucketExists(shared, 'warehouse-landing')).toBe(true);
  });

  it('answers HeadBucket with the region header, and 404 with an empty body for no bucket', async () => {
    const head = await sendSigned(endpoint, shared, { method: 'HEAD', path: '/exports' });
    expect(head.status).toBe(200);
    expect(head.headers['x-amz-bucket-region']).toBe('us-east-1');
    const missing = await sendSigned(endpoint, shared, { method: 'HEAD', path: '/never-created' });
    expect([missing.status, missing.body, missing.headers['x-amz-bucket-region']]).toEqual([404, '', undefined]);
  });
});

describe('accounts', () => {
  it("keeps a workspace's bucket to that workspace: BucketAlreadyExists and AccessDenied for the others", async () => {
    const [acme, globex] = fixtures.workspaces;
    const acmeKey = await workspaceKey('LPACMEBUCKETS0001', acme!.id);
    const globexKey = await workspaceKey('LPGLOBEXBUCKETS001', globex!.id);
    await s3(acmeKey).send(new CreateBucketCommand({ Bucket: 'acme-only' }));
    await s3(acmeKey).send(new PutObjectCommand({ Bucket: 'acme-only', Key: 'k', Body: 'acme data' }));

    const taken = await sendSigned(endpoint, globexKey, { method: 'PUT', path: '/acme-only' });
    expect([taken.status, xmlElement(taken.body, 'Code')]).toEqual([409, 'BucketAlreadyExists']);
    const own = await sendSigned(endpoint, acmeKey, { method: 'PUT', path: '/acme-only' });
    expect([own.status, xmlElement(own.body, 'Code')]).toEqual([409, 'BucketAlreadyOwnedByYou']);

    for (const key of [globexKey, shared]) {
      const head = await sendSigned(endpoint, key, { method: 'HEAD', path: '/acme-only' });
      // The region is named on the refusal too, as S3 names it.
      expect([head.status, head.body, head.headers['x-amz-bucket-region']]).toEqual([403, '', 'us-east-1']);
      const read = await sendSigned(endpoint, key, { method: 'GET', path: '/acme-only/k' });
      expect([read.status, xmlElement(read.body, 'Code')]).toEqual([403, 'AccessDenied']);
      const copy = await sendSigned(endpoint, key, {
        method: 'PUT',
        path: '/exports/stolen',
        headers: { 'x-amz-copy-source': '/acme-only/k' },
      });
      expect([copy.status, xmlElement(copy.body, 'Code')]).toEqual([403, 'AccessDenied']);
    }

    expect(await bucketNames(acmeKey)).toContain('acme-only');
    expect(await bucketNames(globexKey)).not.toContain('acme-only');
    expect(await bucketNames(shared)).not.toContain('acme-only');
    // Every account sees the configured buckets.
    expect(await bucketNames(globexKey)).toEqual(expect.arrayContaining(fixtures.objstore.buckets));
  });

  it("lets every account use the shared account's buckets, created or configured", async () => {
    const [acme] = fixtures.workspaces;
    const acmeKey = await workspaceKey('LPACMEBUCKETS0002', acme!.id);
    await s3(shared).send(new CreateBucketCommand({ Bucket: 'team-shared' }));
    await s3(acmeKey).send(new PutObjectCommand({ Bucket: 'team-shared', Key: 'k', Body: 'x' }));
    expect(await bucketNames(acmeKey)).toContain('team-shared');
    const again = await sendSigned(endpoint, acmeKey, { method: 'PUT', path: '/team-shared' });
    expect(xmlElement(again.body, 'Code')).toBe('BucketAlreadyOwnedByYou');
  });

  it('names the same Owner in ListBuckets and in ListObjects, one per account', async () => {
    const [acme] = fixtures.workspaces;
    const acmeKey = await workspaceKey('LPACMEBUCKETS0003', acme!.id);
    await s3(acmeKey).send(new CreateBucketCommand({ Bucket: 'acme-owned' }));
    await s3(acmeKey).send(new PutObjectCommand({ Bucket: 'acme-owned', Key: 'k', Body: 'x' }));
    await s3(shared).send(new PutObjectCommand({ Bucket: 'exports', Key: 'owner-check', Body: 'x' }));

    const acmeOwner = (await s3(acmeKey).send(new ListBucketsCommand({}))).Owner;
    const sharedOwner = (await s3(shared).send(new ListBucketsCommand({}))).Owner;
    expect(acmeOwner).toEqual({ ID: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(sharedOwner).toEqual({ ID: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(acmeOwner!.ID).not.toBe(sharedOwner!.ID);

    const acmeObjects = await s3(acmeKey).send(new ListObjectsCommand({ Bucket: 'acme-owned' }));
    expect(acmeObjects.Contents![0]!.Owner).toEqual(acmeOwner);
    const sharedObjects = await s3(acmeKey).send(new ListObjectsCommand({ Bucket: 'exports', Prefix: 'owner-check' }));
    expect(sharedObjects.Contents![0]!.Owner).toEqual(sharedOwner);

    // An upload in progress is the bucket owner's too, as its Owner and Initiator.
    const { UploadId } = await s3(acmeKey).send(
      new CreateMultipartUploadCommand({ Bucket: 'acme-owned', Key: 'in-progress' }),
    );
    const parts = await s3(acmeKey).send(new ListPartsCommand({ Bucket: 'acme-owned', Key: 'in-progress', UploadId }));
    expect([parts.Owner, parts.Initiator]).toEqual([acmeOwner, { ...acmeOwner }]);
    const uploads = await s3(acmeKey).send(new ListMultipartUploadsCommand({ Bucket: 'acme-owned' }));
    expect([uploads.Uploads![0]!.Owner, uploads.Uploads![0]!.Initiator]).toEqual([acmeOwner, { ...acmeOwner }]);
  });

  it('refuses a key for a workspace that does not exist', async () => {
    const reply = await inProcessApi(lp).post('/_localplane/objstore/keys', {
      access_key_id: 'LPNOWORKSPACE0001',
      secret_access_key: 'secret-0123456789',
      permissions: ['buckets'],
      workspace_id: '00000000-0000-4000-8000-000000000009',
    });
    expect(reply.status).toBe(404);
    expect(reply.body).toEqual({ detail: 'Workspace 00000000-0000-4000-8000-000000000009 not found' });
  });
});

describe('ListBuckets', () => {
  it('pages by max-buckets with an opaque ContinuationToken, filters by prefix and echoes it', async () => {
    const client = s3(shared);
    const names = ['page-a', 'page-b', 'page-c', 'page-d', 'page-e'];
    for (const name of names) await client.send(new CreateBucketCommand({ Bucket: name }));
    // Not the deployment-sources bucket: only a workspace's keys reach (a folder of) it.
    const everything = [...fixtures.objstore.buckets, ...names].sort();

    const seen: string[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      const page = await client.send(new ListBucketsCommand({ MaxBuckets: 2, ContinuationToken: token }));
      expect(page.Buckets!.length).toBeLessThanOrEqual(2);
      seen.push(...page.Buckets!.map((bucket) => bucket.Name!));
      token = page.ContinuationToken;
      pages++;
    } while (token);
    expect(seen).toEqual(everything);
    expect(pages).toBe(Math.ceil(everything.length / 2));

    const prefixed = await client.send(new ListBucketsCommand({ Prefix: 'page-', MaxBuckets: 3 }));
    expect(prefixed.Prefix).toBe('page-');
    expect(prefixed.Buckets!.map((bucket) => bucket.Name)).toEqual(['page-a', 'page-b', 'page-c']);
    const rest = await client.send(
      new ListBucketsCommand({ Prefix: 'page-', MaxBuckets: 3, ContinuationToken: prefixed.ContinuationToken }),
    );
    expect(rest.Buckets!.map((bucket) => bucket.Name)).toEqual(['page-d', 'page-e']);
    expect(rest.ContinuationToken).toBeUndefined();

    const unpaged = await client.send(new ListBucketsCommand({}));
    expect(unpaged.Buckets!.map((bucket) => bucket.Name)).toEqual(everything);
    expect(unpaged.ContinuationToken).toBeUndefined();
    expect(unpaged.Prefix).toBeUndefined();
  });

  it('refuses max-buckets out of range and a token it did not hand out; an empty token is none', async () => {
    for (const maxBuckets of ['0', '10001', '-1', 'many']) {
      const reply = await sendSigned(endpoint, shared, {
        method: 'GET',
        path: '/',
        query: { 'max-buckets': maxBuckets },
      });
      expect([reply.status, xmlElement(reply.body, 'Code')], maxBuckets).toEqual([400, 'InvalidArgument']);
    }
    const forged = await sendSigned(endpoint, shared, {
      method: 'GET',
      path: '/',
      query: { 'continuation-token': 'bm90IGEgdG9rZW4=' },
    });
    expect([forged.status, xmlElement(forged.body, 'Code')]).toEqual([400, 'InvalidArgument']);
    const empty = await sendSigned(endpoint, shared, { method: 'GET', path: '/', query: { 'continuation-token': '' } });
    expect(empty.status).toBe(200);
    expect(empty.body).not.toContain('<ContinuationToken>');
  });
});

describe('created buckets through the harness', () => {
  it('are reset away; a one-workspace reset drops only that workspace’s buckets and keys', async () => {
    const [acme, globex] = fixtures.workspaces;
    const acmeKey = await workspaceKey('LPACMERESET000001', acme!.id);
    const globexKey = await workspaceKey('LPGLOBEXRESET0001', globex!.id);
    await s3(acmeKey).send(new CreateBucketCommand({ Bucket: 'acme-reset' }));
    await s3(acmeKey).send(new PutObjectCommand({ Bucket: 'acme-reset', Key: 'k', Body: 'x' }));
    await s3(globexKey).send(new CreateBucketCommand({ Bucket: 'globex-reset' }));
    await s3(shared).send(new CreateBucketCommand({ Bucket: 'shared-reset' }));

    await lp.reset({ workspaceId: acme!.id });
    expect(await bucketExists(shared, 'acme-reset')).toBe(false);
    expect(existsSync(join(lp.filesDir!, 'acme-reset'))).toBe(false);
    expect(await bucketExists(globexKey, 'globex-reset')).toBe(true);
    expect(await bucketExists(shared, 'shared-reset')).toBe(true);
    const revoked = await sendSigned(endpoint, acmeKey, { method: 'GET', path: '/' });
    expect(xmlElement(revoked.body, 'Code')).toBe('InvalidAccessKeyId');
    // The name is free again.
    await s3(shared).send(new CreateBucketCommand({ Bucket: 'acme-reset' }));

    await lp.reset();
    for (const bucket of ['acme-reset', 'shared-reset']) expect(await bucketExists(shared, bucket)).toBe(false);
    expect(await bucketNames(shared)).toEqual([...fixtures.objstore.buckets].sort());
  });

  it('appear in the plain-file view, and leave it when deleted', async () => {
    const client = s3(shared);
    await client.send(new CreateBucketCommand({ Bucket: 'viewed' }));
    expect(existsSync(join(lp.filesDir!, 'viewed'))).toBe(true);
    await client.send(new PutObjectCommand({ Bucket: 'viewed', Key: 'dir/file.csv', Body: 'a,b\n' }));
    expect(readFileSync(join(lp.filesDir!, 'viewed', 'dir', 'file.csv'), 'utf8')).toBe('a,b\n');
    await client.send(new DeleteObjectCommand({ Bucket: 'viewed', Key: 'dir/file.csv' }));
    await client.send(new DeleteBucketCommand({ Bucket: 'viewed' }));
    expect(existsSync(join(lp.filesDir!, 'viewed'))).toBe(false);
  });

  it('are in snapshots, with their owner, region and objects', async () => {
    const [acme] = fixtures.workspaces;
    const acmeKey = await workspaceKey('LPACMESNAP0000001', acme!.id);
    await s3(acmeKey).send(
      new CreateBucketCommand({ Bucket: 'snapped', CreateBucketConfiguration: { LocationConstraint: 'eu-central-1' } }),
    );
    await s3(acmeKey).send(new PutObjectCommand({ Bucket: 'snapped', Key: 'k', Body: 'kept' }));
    const dir = mkdtempSync(join(tmpdir(), 'localplane-buckets-snapshot-'));
    try {
      const file = join(dir, 'state.lpsnap');
      await lp.snapshot(file);
      await lp.reset();
      expect(await bucketExists(shared, 'snapped')).toBe(false);

      await lp.restore(file);
      expect((await s3(acmeKey).send(new HeadBucketCommand({ Bucket: 'snapped' }))).BucketRegion).toBe('eu-central-1');
      expect(Buffer.from(await getBytes(s3(acmeKey), 'snapped', 'k')).toString()).toBe('kept');
      expect(readFileSync(join(lp.filesDir!, 'snapped', 'k'), 'utf8')).toBe('kept');
      const foreign = await sendSigned(endpoint, shared, { method: 'HEAD', path: '/snapped' });
      expect(foreign.status).toBe(403);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a kept --data-dir', () => {
  it('keeps created buckets, their owner and their objects across a restart', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'localplane-buckets-datadir-'));
    try {
      const first = await createLocalplane({ dataDir, log: () => {} });
      const firstEndpoint = await first.objstoreEndpoint();
      const firstClient = s3For(firstEndpoint, { ...shared, permissions: [] });
      await firstClient.send(
        new CreateBucketCommand({ Bucket: 'kept-bucket', CreateBucketConfiguration: { LocationConstraint: 'EU' } }),
      );
      await firstClient.send(new PutObjectCommand({ Bucket: 'kept-bucket', Key: 'k', Body: 'still here' }));
      firstClient.destroy();
      await first.stop();

      const second = await createLocalplane({ dataDir, log: () => {} });
      try {
        const secondClient = s3For(await second.objstoreEndpoint(), { ...shared, permissions: [] });
        expect(
          (await secondClient.send(new GetBucketLocationCommand({ Bucket: 'kept-bucket' }))).LocationConstraint,
        ).toBe('EU');
        expect((await secondClient.send(new HeadBucketCommand({ Bucket: 'kept-bucket' }))).BucketRegion).toBe(
          'eu-west-1',
        );
        expect(Buffer.from(await getBytes(secondClient, 'kept-bucket', 'k')).toString()).toBe('still here');
        expect(readFileSync(join(second.filesDir!, 'kept-bucket', 'k'), 'utf8')).toBe('still here');
        secondClient.destroy();
      } finally {
        await second.stop();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
