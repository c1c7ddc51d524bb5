/**
 * Makes this folder's test data with localplane at commit 1182b23 (whose objstore stored
 * through s3rver's FilesystemStore): a data dir and a snapshot holding objects of every
 * kind, and what 1182b23 answered about them over S3 (expected.json).
 *
 *   git worktree add /tmp/lp-1182b23 1182b23 && (cd /tmp/lp-1182b23 && npm ci && npm run build)
 *   npx tsx test/objstore/data/1182b23/make.ts /tmp/lp-1182b23
 *
 * test/objstore/1182b23-data.test.ts starts the current code on both and expects the same answers.
 */
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import {
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  PutObjectCommand,
  PutObjectTaggingCommand,
  UploadPartCommand,
  type ChecksumAlgorithm,
  type S3Client,
} from '@aws-sdk/client-s3';

import { captureStore, s3ClientAt, withoutTimes } from '../../support/contents.ts';

const HERE = import.meta.dirname;
const FIXTURES = path.join(HERE, 'fixtures');
const FULL_KEY = { accessKeyId: 'LPTESTFULLACCESS0001', secretAccessKey: 'lp-test-secret-full-access-0001' };
/** The bucket the full key creates over S3 (the others are the fixtures'). */
const CREATED_BUCKET = 'made-over-s3';
const BUCKETS = ['exports', 'public-datasets', 'warehouse-landing', CREATED_BUCKET];
const MIB = 1024 * 1024;

/** Deterministic bytes: a 4 KiB block of a hash chain, repeated (so the archives stay small). */
function bytes(size: number, seed: string): Buffer {
  const block = Buffer.alloc(4096);
  let hash = createHash('sha256').update(seed).digest();
  for (let at = 0; at < block.length; at += hash.length) {
    hash.copy(block, at);
    hash = createHash('sha256').update(hash).digest();
  }
  const out = Buffer.alloc(size);
  for (let at = 0; at < size; at += block.length) block.copy(out, at);
  return out;
}

/** Brotli, whose long matches keep the repeated megabytes of the multipart objects to a few KiB (gzip's stop at 258 bytes). */
function compress(data: Buffer): Buffer {
  return brotliCompressSync(data, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_LGWIN]: 24, [constants.BROTLI_PARAM_SIZE_HINT]: data.length } });
}

interface Started {
  api: string;
  objstore: string;
  stop(): Promise<void>;
}

function start(checkout: string, dataDir: string, snapshotsDir: string): Promise<Started> {
  const child = spawn(
    process.execPath,
    [path.join(checkout, 'bin/localplane.js'), 'start', '--port', '0', '--objstore-port', '0', '--data-dir', dataDir, '--fixtures', FIXTURES, '--snapshots-dir', snapshotsDir, '-q'],
    { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, LOCALPLANE_CACHE_DIR: path.join(snapshotsDir, '..', 'cache') } },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const ready = /^localplane ready api=(\S+) objstore=(\S+)$/m.exec(out);
      if (ready) resolve({ api: ready[1]!, objstore: ready[2]!, stop: () => (child.kill('SIGTERM'), exited) });
    });
    void exited.then(() => reject(new Error(`localplane exited before it was ready: ${out}`)));
  });
}

async function multipart(
  s3: S3Client,
  bucket: string,
  key: string,
  parts: Buffer[],
  algorithm: ChecksumAlgorithm | undefined,
  complete: boolean,
  create: Record<string, unknown> = {},
): Promise<void> {
  const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key, ChecksumAlgorithm: algorithm, ...create }));
  const done = [];
  for (const [index, body] of parts.entries()) {
    const part = await s3.send(new UploadPartCommand({ Bucket: bucket, Key: key, UploadId, PartNumber: index + 1, Body: body, ChecksumAlgorithm: algorithm }));
    done.push({ PartNumber: index + 1, ETag: part.ETag, ChecksumCRC32: part.ChecksumCRC32, ChecksumCRC32C: part.ChecksumCRC32C, ChecksumSHA256: part.ChecksumSHA256, ChecksumSHA1: part.ChecksumSHA1 });
  }
  if (complete) await s3.send(new CompleteMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId, MultipartUpload: { Parts: done } }));
}

async function populate(s3: S3Client): Promise<void> {
  const put = (Bucket: string, Key: string, Body: Buffer | string, more: Record<string, unknown> = {}) => s3.send(new PutObjectCommand({ Bucket, Key, Body, ...more }));
  await s3.send(new CreateBucketCommand({ Bucket: CREATED_BUCKET }));

  await put('exports', 'small.txt', 'hello, store\n', { ContentType: 'text/plain; charset=utf-8' });
  await put('exports', 'empty.bin', '');
  await put('exports', 'docs/report.csv.gz', gzipSync('id,name\n1,ada\n2,grace\n'), {
    ContentType: 'text/csv',
    ContentEncoding: 'gzip',
    CacheControl: 'max-age=60',
    ContentDisposition: 'attachment; filename="report.csv"',
    ContentLanguage: 'en-GB',
    Expires: new Date('2030-01-01T00:00:00Z'),
    Metadata: { owner: 'ada', 'run-id': '42', note: 'two words' },
    StorageClass: 'STANDARD_IA',
    WebsiteRedirectLocation: '/elsewhere',
  });
  await put('exports', 'checksums/sha256.bin', bytes(1000, 'sha256'), { ChecksumAlgorithm: 'SHA256' });
  await put('exports', 'checksums/crc32c.bin', bytes(1000, 'crc32c'), { ChecksumAlgorithm: 'CRC32C' });
  await put('exports', 'checksums/sha1.bin', bytes(1000, 'sha1'), { ChecksumAlgorithm: 'SHA1' });

  await multipart(s3, 'exports', 'multipart/two-parts.bin', [bytes(5 * MIB, 'part 1'), bytes(1000, 'part 2')], 'CRC32', true, {
    ContentType: 'application/x-parts',
    Metadata: { kind: 'multipart' },
  });
  await multipart(s3, 'exports', 'multipart/one-part-sha256.bin', [bytes(3000, 'one part')], 'SHA256', true);
  await multipart(s3, 'exports', 'multipart/no-checksum.bin', [bytes(2000, 'no checksum')], undefined, true, { ContentDisposition: 'inline' });
  await multipart(s3, 'exports', 'unfinished/upload.bin', [bytes(5 * MIB, 'unfinished 1'), bytes(50, 'unfinished 2')], 'CRC32C', false, {
    ContentType: 'application/x-unfinished',
    Metadata: { state: 'unfinished' },
  });
  await multipart(s3, 'exports', 'unfinished/no-checksum.bin', [bytes(70, 'unfinished, no checksum')], undefined, false);
  await multipart(s3, 'exports', 'unfinished/no-parts.bin', [], undefined, false);

  await put('exports', 'tagged/object.json', '{"tagged":true}', { ContentType: 'application/json' });
  await s3.send(
    new PutObjectTaggingCommand({
      Bucket: 'exports',
      Key: 'tagged/object.json',
      Tagging: { TagSet: [{ Key: 'project', Value: 'localplane' }, { Key: 'with space', Value: 'a b+c-d.e_f:g/h=i@j' }, { Key: 'unicode', Value: 'ü東' }] },
    }),
  );

  for (const key of [
    'unicode/naïve café/東京 ☃.txt',
    'spaces in key/a b.txt',
    'deep/a/b/c/d.txt',
    'folder-marker/',
    'percent%20and+plus&amp.txt',
    'a//double-slash',
    'report.csv._S3rver_object/inside',
    `long/${'ü'.repeat(130)}/${'x'.repeat(300)}`,
  ]) {
    await put('exports', key, key.endsWith('/') ? '' : `the object ${key}\n`);
  }

  await s3.send(new CopyObjectCommand({ Bucket: 'exports', Key: 'copies/small-copy.txt', CopySource: 'exports/small.txt' }));
  await s3.send(
    new CopyObjectCommand({
      Bucket: 'exports',
      Key: 'copies/replaced.txt',
      CopySource: 'exports/docs/report.csv.gz',
      MetadataDirective: 'REPLACE',
      ContentType: 'text/x-replaced',
      Metadata: { replaced: 'yes' },
    }),
  );

  await put('public-datasets', 'open/data.csv', 'a,b\n1,2\n', { ContentType: 'text/csv' });
  await put(CREATED_BUCKET, 'inside.txt', 'in a bucket made over S3\n');
}

/**
 * A CORS configuration as s3rver's PutBucketCors wrote it (1182b23 refused PutBucketCors, so it
 * is written with s3rver's own model, into the stopped store).
 */
function writeCors(checkout: string, dataDir: string): void {
  const { getConfigModel } = createRequire(path.join(checkout, 'package.json'))('s3rver/lib/models/config.js') as {
    getConfigModel(type: string): { validate(xml: string): { toXML(space: number): string } };
  };
  const xml =
    '<CORSConfiguration><CORSRule><AllowedOrigin>https://app.example</AllowedOrigin><AllowedMethod>GET</AllowedMethod><AllowedMethod>PUT</AllowedMethod>' +
    '<AllowedHeader>*</AllowedHeader><ExposeHeader>ETag</ExposeHeader><MaxAgeSeconds>600</MaxAgeSeconds></CORSRule></CORSConfiguration>';
  writeFileSync(path.join(dataDir, 'objstore', CREATED_BUCKET, '._S3rver_cors.xml'), getConfigModel('cors').validate(xml).toXML(2), { mode: 0o600 });
}

async function main(): Promise<void> {
  const checkout = path.resolve(process.argv[2] ?? '');
  const commit = execFileSync('git', ['-C', checkout, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  if (commit !== '1182b23') throw new Error(`${checkout} is at ${commit}, not 1182b23`);
  const work = mkdtempSync(path.join(tmpdir(), 'objstore-1182b23-'));
  try {
    const dataDir = path.join(work, 'data');
    const snapshots = path.join(work, 'snapshots');
    let instance = await start(checkout, dataDir, snapshots);
    await populate(s3ClientAt(instance.objstore, FULL_KEY));
    await instance.stop();
    writeCors(checkout, dataDir);

    instance = await start(checkout, dataDir, snapshots);
    const saved = await fetch(`${instance.api}/_localplane/snapshot`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'objstore' }) });
    if (!saved.ok) throw new Error(`snapshot: ${saved.status} ${await saved.text()}`);
    await instance.stop();
    writeFileSync(path.join(HERE, 'data-dir.tar.br'), compress(execFileSync('tar', ['-cf', '-', '-C', dataDir, '.'], { maxBuffer: 64 * MIB })));
    writeFileSync(path.join(HERE, 'snapshot.br'), compress(readFileSync(path.join(snapshots, 'objstore'))));

    // What 1182b23 answers, on a copy of the data dir (a read may write: s3rver makes a missing .md5).
    const copy = path.join(work, 'copy');
    cpSync(dataDir, copy, { recursive: true, preserveTimestamps: true });
    instance = await start(checkout, copy, snapshots);
    const expected = await captureStore(s3ClientAt(instance.objstore, FULL_KEY), BUCKETS);
    // The same objects restored from the snapshot, into the instance that answered.
    const restored = await fetch(`${instance.api}/_localplane/restore`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'objstore' }) });
    if (!restored.ok) throw new Error(`restore: ${restored.status} ${await restored.text()}`);
    const fromSnapshot = await captureStore(s3ClientAt(instance.objstore, FULL_KEY), BUCKETS);
    await instance.stop();
    if (JSON.stringify(withoutTimes(expected)) !== JSON.stringify(withoutTimes(fromSnapshot))) throw new Error('1182b23 answers its snapshot differently from its data dir');
    writeFileSync(path.join(HERE, 'expected.json'), `${JSON.stringify(expected, null, 1)}\n`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
