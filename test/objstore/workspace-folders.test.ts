/**
 * The deployment-sources bucket over the S3 API of a whole in-process instance: one folder per
 * workspace, each reached only by that workspace's own keys (with their permissions, as in any
 * other bucket), none by keys of no workspace; listings show a key its own folder alone; upload
 * URLs still PUT the one tarball they were made for.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import {
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListBucketsCommand,
  ListMultipartUploadsCommand,
  ListObjectsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { createPresignedPost } from '@aws-sdk/s3-presigned-post';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { SOURCE_TARBALL_BUCKET } from '../../src/deployments/source-uploads.ts';
import { createLocalplane, type InProcessLocalplane } from '../../src/index.ts';
import { fixturesOf, inProcessApi } from '../support/in-process.ts';
import {
  createOnlyKey,
  fullKey,
  noCreateKey,
  workspaceByTier,
  type FixtureKey,
  type FixturesView,
  type FixtureWorkspace,
} from '../support/instance.ts';
import { getBytes, s3For } from '../support/objstore.ts';
import { failure } from '../support/objstore-server.ts';

const BUCKET = SOURCE_TARBALL_BUCKET;
const TARBALL = Buffer.from('workspace A source tarball (gzip bytes stand-in)');

let lp: InProcessLocalplane;
let fixtures: FixturesView;
let endpoint: string;
const clients: S3Client[] = [];

/** Two workspaces that may build from source. */
let workspaceA: FixtureWorkspace;
let workspaceB: FixtureWorkspace;
/** A's tarball, uploaded through its upload URL before each test. */
let tarballPath: string;
let keyA: FixtureKey;
let keyB: FixtureKey;

function s3(key: FixtureKey): S3Client {
  const client = s3For(endpoint, key);
  clients.push(client);
  return client;
}

/** A key pair acting for a workspace's account, added over the admin API. */
async function workspaceKey(id: string, workspace: FixtureWorkspace, permissions: string[]): Promise<FixtureKey> {
  const key = { access_key_id: id, secret_access_key: `${id.toLowerCase()}-secret-0123456789`, permissions };
  const reply = await inProcessApi(lp).post('/_localplane/objstore/keys', { ...key, workspace_id: workspace.id });
  expect(reply.status).toBe(201);
  return key;
}

/** The deploy flow's upload: a new internal_source deployment, its upload URL, the tarball PUT to it. */
async function uploadSource(workspace: FixtureWorkspace, tarball: Buffer): Promise<string> {
  const api = inProcessApi(lp, workspace);
  const created = await api.post('/v2/deployments', {
    name: `folders-${workspace.tier}`,
    source: 'internal_source',
    source_config: { deployment_type: 'dev' },
    source_revision_config: {},
    secrets: [],
  });
  expect(created.status).toBe(201);
  const upload = await api.post(`/v2/deployments/${created.body.id}/upload-url`);
  expect(upload.status).toBe(200);
  const put = await fetch(upload.body.upload_url, {
    method: 'PUT',
    body: new Uint8Array(tarball),
    headers: { 'Content-Type': 'application/gzip' },
  });
  expect(put.status).toBe(200);
  return upload.body.object_path;
}

const codeOf = async (promise: Promise<unknown>) => {
  const error = await failure(promise);
  return [error.$metadata.httpStatusCode, error.name];
};
const DENIED = [403, 'AccessDenied'];

/** A's tarball is there, byte for byte, over S3 and as a plain file. */
async function expectTarballIntact(): Promise<void> {
  expect(Buffer.from(await getBytes(s3(keyA), BUCKET, tarballPath)).equals(TARBALL)).toBe(true);
  expect(readFileSync(join(lp.filesDir!, BUCKET, tarballPath)).equals(TARBALL)).toBe(true);
}

const listed = async (key: FixtureKey, input: { Prefix?: string; Delimiter?: string } = {}) => {
  const page = await s3(key).send(new ListObjectsV2Command({ Bucket: BUCKET, ...input }));
  return {
    keys: (page.Contents ?? []).map((object) => object.Key),
    prefixes: (page.CommonPrefixes ?? []).map((prefix) => prefix.Prefix),
  };
};

beforeAll(async () => {
  lp = await createLocalplane({ log: () => {} });
  fixtures = await fixturesOf(lp);
  endpoint = fixtures.objstore.endpoint_url;
  workspaceA = workspaceByTier(fixtures, 'plus');
  workspaceB = workspaceByTier(fixtures, 'developer');
});

beforeEach(async () => {
  keyA = await workspaceKey('LPFOLDERSA0000001', workspaceA, ['create', 'delete', 'get', 'multipart']);
  keyB = await workspaceKey('LPFOLDERSB0000001', workspaceB, ['create', 'delete', 'get', 'multipart']);
  tarballPath = await uploadSource(workspaceA, TARBALL);
  expect(tarballPath.startsWith(`${workspaceA.id}/`)).toBe(true);
});

afterEach(async () => {
  await lp.reset();
});

afterAll(async () => {
  for (const client of clients) client.destroy();
  await lp?.stop();
});

describe('another workspace’s key', () => {
  it('can neither read, overwrite, copy, upload over nor delete a workspace’s tarball', async () => {
    const b = s3(keyB);
    expect(await codeOf(b.send(new GetObjectCommand({ Bucket: BUCKET, Key: tarballPath })))).toEqual(DENIED);
    // HEAD answers the status alone.
    expect((await codeOf(b.send(new HeadObjectCommand({ Bucket: BUCKET, Key: tarballPath }))))[0]).toBe(403);
    expect(
      await codeOf(b.send(new PutObjectCommand({ Bucket: BUCKET, Key: tarballPath, Body: 'overwritten by B' }))),
    ).toEqual(DENIED);
    expect(await codeOf(b.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: tarballPath })))).toEqual(DENIED);
    expect(await codeOf(b.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: tarballPath })))).toEqual(
      DENIED,
    );
    // Nor copy it out into its own folder.
    const copy = new CopyObjectCommand({
      Bucket: BUCKET,
      Key: `${workspaceB.id}/stolen.tar.gz`,
      CopySource: `${BUCKET}/${tarballPath}`,
    });
    expect(await codeOf(b.send(copy))).toEqual(DENIED);

    // DeleteObjects answers each key out of reach as an error of its own, Quiet or not.
    for (const Quiet of [false, true]) {
      const result = await b.send(
        new DeleteObjectsCommand({ Bucket: BUCKET, Delete: { Objects: [{ Key: tarballPath }], Quiet } }),
      );
      expect(result.Deleted ?? []).toEqual([]);
      expect(result.Errors).toEqual([{ Key: tarballPath, Code: 'AccessDenied', Message: 'Access denied.' }]);
    }
    await expectTarballIntact();
  });

  it('cannot upload into that folder with a browser form either', async () => {
    const post = await createPresignedPost(s3(keyB), { Bucket: BUCKET, Key: tarballPath });
    const form = new FormData();
    for (const [name, value] of Object.entries(post.fields)) form.append(name, value);
    form.append('file', new Blob(['posted by B']), 'source.tar.gz');
    const response = await fetch(post.url, { method: 'POST', body: form });
    expect(response.status).toBe(403);
    expect(await response.text()).toContain('<Code>AccessDenied</Code>');
    await expectTarballIntact();
  });

  it('works in its own folder, and nowhere else in the bucket', async () => {
    const b = s3(keyB);
    const own = `${workspaceB.id}/notes.txt`;
    await b.send(new PutObjectCommand({ Bucket: BUCKET, Key: own, Body: 'B' }));
    expect(Buffer.from(await getBytes(b, BUCKET, own)).toString()).toBe('B');
    // Not at the root, nor in a folder whose name only starts like its own.
    for (const key of ['stray.txt', `${workspaceB.id}`, `${workspaceB.id}-x/notes.txt`]) {
      expect(await codeOf(b.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: 'B' }))), key).toEqual(DENIED);
    }
    await b.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: own }));
  });
});

describe('keys of no workspace (the fixture keys)', () => {
  it('reach none of the bucket: no read, overwrite by a create-only key, delete by a key without create, listing', async () => {
    expect(
      await codeOf(s3(fullKey(fixtures)).send(new GetObjectCommand({ Bucket: BUCKET, Key: tarballPath }))),
    ).toEqual(DENIED);
    const overwrite = new PutObjectCommand({
      Bucket: BUCKET,
      Key: tarballPath,
      Body: 'overwritten by a create-only key',
    });
    expect(await codeOf(s3(createOnlyKey(fixtures)).send(overwrite))).toEqual(DENIED);
    expect(
      await codeOf(s3(noCreateKey(fixtures)).send(new DeleteObjectCommand({ Bucket: BUCKET, Key: tarballPath }))),
    ).toEqual(DENIED);
    const deleteMany = new DeleteObjectsCommand({ Bucket: BUCKET, Delete: { Objects: [{ Key: tarballPath }] } });
    expect(await codeOf(s3(noCreateKey(fixtures)).send(deleteMany))).toEqual(DENIED);
    expect(await codeOf(s3(fullKey(fixtures)).send(new ListObjectsV2Command({ Bucket: BUCKET })))).toEqual(DENIED);
    await expectTarballIntact();

    // ListBuckets lists the buckets a key may use: not this one for them, and it for a workspace's key.
    const names = async (key: FixtureKey) =>
      ((await s3(key).send(new ListBucketsCommand({}))).Buckets ?? []).map((bucket) => bucket.Name);
    expect(await names(fullKey(fixtures))).not.toContain(BUCKET);
    expect(await names(keyA)).toContain(BUCKET);
  });
});

describe('a workspace’s own keys', () => {
  it('hold their permissions in their folder as in any bucket', async () => {
    const createOnly = s3(await workspaceKey('LPFOLDERSACREATE1', workspaceA, ['create']));
    const noCreate = s3(await workspaceKey('LPFOLDERSANOCRE01', workspaceA, ['get', 'delete']));
    const extra = `${workspaceA.id}/extra.tar.gz`;

    // create: PutObject (a new key, or over one, as S3's s3:PutObject), never a read or a delete.
    await createOnly.send(new PutObjectCommand({ Bucket: BUCKET, Key: extra, Body: 'extra' }));
    expect(await codeOf(createOnly.send(new GetObjectCommand({ Bucket: BUCKET, Key: extra })))).toEqual(DENIED);
    expect(await codeOf(createOnly.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: tarballPath })))).toEqual(
      DENIED,
    );
    // Without create: reads and deletes, never writes.
    expect(await codeOf(noCreate.send(new PutObjectCommand({ Bucket: BUCKET, Key: tarballPath, Body: 'x' })))).toEqual(
      DENIED,
    );
    await expectTarballIntact();
    expect(Buffer.from(await getBytes(noCreate, BUCKET, extra)).toString()).toBe('extra');
    await noCreate.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: extra }));
    expect(await codeOf(noCreate.send(new HeadObjectCommand({ Bucket: BUCKET, Key: extra })))).toEqual([
      404,
      'NotFound',
    ]);
  });
});

describe('listings', () => {
  it('show a key its own folder alone, whatever the prefix', async () => {
    const pathB = await uploadSource(workspaceB, Buffer.from('B tarball'));
    const folderA = `${workspaceA.id}/`;
    const folderB = `${workspaceB.id}/`;

    expect(await listed(keyA)).toEqual({ keys: [tarballPath], prefixes: [] });
    expect(await listed(keyB)).toEqual({ keys: [pathB], prefixes: [] });
    expect(await listed(keyA, { Delimiter: '/' })).toEqual({ keys: [], prefixes: [folderA] });
    expect(await listed(keyB, { Delimiter: '/' })).toEqual({ keys: [], prefixes: [folderB] });
    expect(await listed(keyA, { Prefix: folderB })).toEqual({ keys: [], prefixes: [] });
    expect(await listed(keyA, { Prefix: workspaceA.id.slice(0, 8) })).toEqual({ keys: [tarballPath], prefixes: [] });
    expect(await listed(keyA, { Prefix: folderA })).toEqual({ keys: [tarballPath], prefixes: [] });
    const v1 = await s3(keyB).send(new ListObjectsCommand({ Bucket: BUCKET }));
    expect((v1.Contents ?? []).map((object) => object.Key)).toEqual([pathB]);
  });

  it('of uploads in progress show a key its own folder’s alone', async () => {
    await s3(keyA).send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: `${workspaceA.id}/big.tar.gz` }));
    await s3(keyB).send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: `${workspaceB.id}/big.tar.gz` }));
    const uploads = async (key: FixtureKey) =>
      ((await s3(key).send(new ListMultipartUploadsCommand({ Bucket: BUCKET }))).Uploads ?? []).map(
        (upload) => upload.Key,
      );
    expect(await uploads(keyA)).toEqual([`${workspaceA.id}/big.tar.gz`]);
    expect(await uploads(keyB)).toEqual([`${workspaceB.id}/big.tar.gz`]);
  });
});
