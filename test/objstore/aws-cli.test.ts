/**
 * The aws CLI against a whole instance's objstore: ListObjectVersions paged by the CLI itself,
 * GetBucketVersioning, and `aws s3 rm --recursive` (ten DeleteObject calls at a time in one folder).
 * Without an `aws` on PATH this file fails on CI (.ci/install-python-tools installs Debian's
 * awscli) and is skipped elsewhere.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';

import { fullKey, useLocalplane } from '../support/instance.ts';
import { listKeys, s3For } from '../support/objstore.ts';

const awsMissing = spawnSync('aws', ['--version'], { stdio: 'ignore' }).status !== 0;
const skipped = awsMissing && !process.env.CI;

const ctx = useLocalplane({ freezeClock: true });
const bucket = () => ctx.fixtures.objstore.buckets[0]!;
const s3 = () => s3For(ctx.instance.objstoreUrl, fullKey(ctx.fixtures));

/** Runs the aws CLI with the fixtures' full-access key against the objstore; its exit status and output. */
function aws(...args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const key = fullKey(ctx.fixtures);
  const child = spawn('aws', ['--endpoint-url', ctx.instance.objstoreUrl, ...args], {
    env: {
      PATH: process.env.PATH,
      HOME: ctx.instance.dataDir,
      AWS_ACCESS_KEY_ID: key.access_key_id,
      AWS_SECRET_ACCESS_KEY: key.secret_access_key,
      AWS_DEFAULT_REGION: 'us-east-1',
      AWS_CONFIG_FILE: '/dev/null',
      AWS_SHARED_CREDENTIALS_FILE: '/dev/null',
      AWS_EC2_METADATA_DISABLED: 'true',
      AWS_PAGER: '',
      // The aws CLI retries a 5xx by itself: each request is tried once, so a 5xx fails the command.
      AWS_MAX_ATTEMPTS: '1',
    },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (data: Buffer) => (stdout += data.toString()));
  child.stderr.on('data', (data: Buffer) => (stderr += data.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

describe.skipIf(skipped)(`the aws CLI${skipped ? ' (skipped: no aws on PATH; apt-get install awscli)' : ''}`, () => {
  it(
    'lists object versions page by page (null, latest), reads the versioning configuration, and deletes a folder ' +
      'recursively',
    async () => {
      expect(awsMissing, 'an aws on PATH').toBe(false);
      const keys = Array.from({ length: 45 }, (_, index) => `cli/folder/object-${String(index).padStart(2, '0')}.txt`);
      for (const key of keys) await s3().send(new PutObjectCommand({ Bucket: bucket(), Key: key, Body: key }));

      // --page-size 10: the CLI follows NextKeyMarker / NextVersionIdMarker over five requests.
      const listed = await aws(
        's3api',
        'list-object-versions',
        '--bucket',
        bucket(),
        '--prefix',
        'cli/',
        '--page-size',
        '10',
        '--output',
        'json',
      );
      expect(listed.stderr).toBe('');
      expect(listed.status).toBe(0);
      const versions = (
        JSON.parse(listed.stdout) as { Versions: { Key: string; VersionId: string; IsLatest: boolean; Size: number }[] }
      ).Versions;
      expect(versions.map((version) => version.Key)).toEqual(keys);
      expect(
        versions.every(
          (version) => version.VersionId === 'null' && version.IsLatest && version.Size === version.Key.length,
        ),
      ).toBe(true);
      const journal = (await ctx.admin.request('GET', '/objstore/journal')).body as {
        operation: string;
        status: number;
      }[];
      expect(
        journal.filter((record) => record.operation === 'ListObjectVersions').map((record) => record.status),
      ).toEqual([200, 200, 200, 200, 200]);

      const versioning = await aws('s3api', 'get-bucket-versioning', '--bucket', bucket(), '--output', 'json');
      expect(versioning).toMatchObject({ status: 0, stdout: '', stderr: '' });

      const removed = await aws('s3', 'rm', '--recursive', `s3://${bucket()}/cli/`);
      expect(removed.stderr).toBe('');
      expect(removed.status).toBe(0);
      expect(removed.stdout.trim().split('\n')).toHaveLength(keys.length);
      expect(await listKeys(s3(), bucket(), 'cli/')).toEqual([]);
      const deletes = (
        (await ctx.admin.request('GET', '/objstore/journal')).body as { operation: string; status: number }[]
      ).filter((record) => record.operation === 'DeleteObject');
      expect(deletes.map((record) => record.status)).toEqual(keys.map(() => 204));
      // Neither view keeps the emptied folder.
      expect(existsSync(join(ctx.instance.filesDir!, bucket(), 'cli'))).toBe(false);
      expect(readdirSync(join(ctx.instance.dataDir, 'objstore', bucket()))).not.toContain('cli');
    },
  );
});
