import { cpSync, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, sep } from 'node:path';
import type { S3Client } from '@aws-sdk/client-s3';
import { withoutNodeVersionNotice } from '../destinations/clients.ts';
import type { FixturesView } from '../admin/schemas.ts';
import { fixtureKey } from './api-client.ts';

/** Where `localplane demo` keeps a copy of its export's files, and `localplane query` reads them, by default. */
export const DEFAULT_DEMO_DIR = join(tmpdir(), 'localplane-demo');

/** Marks a folder as the demo's copy, which a later demo may empty (it never empties any other folder). */
const MARKER = '.localplane-demo';

/** A --dir the demo may not write into. */
export class DemoDirError extends Error {}

/** Empties the demo's copy folder for a new copy (creating it), refusing a non-empty folder that is not one. */
export function prepareDemoDir(dir: string): void {
  if (existsSync(dir) && readdirSync(dir).length > 0) {
    if (!existsSync(join(dir, MARKER)))
      throw new DemoDirError(
        `--dir ${dir} is not empty and holds no earlier demo's files: give an empty or new folder`,
      );
    rmSync(dir, { recursive: true, force: true });
  }
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, MARKER), 'files of `localplane demo`; the next demo replaces them\n');
}

/** Every file below a folder, as `/`-separated paths relative to it (the marker left out). */
export function filesBelow(folder: string): string[] {
  if (!existsSync(folder)) return [];
  return (readdirSync(folder, { recursive: true, withFileTypes: true }) as import('node:fs').Dirent[])
    .filter((entry) => entry.isFile() && entry.name !== MARKER)
    .map((entry) => relative(folder, join(entry.parentPath, entry.name)).split(sep).join('/'))
    .sort();
}

export function copyFolder(from: string, to: string): void {
  cpSync(from, to, { recursive: true });
}

/**
 * An S3 client of the objstore with one of the instance's fixture keys (the SDK loaded only then: it takes a tenth of a
 * second).
 */
export async function objstoreClient(fixtures: FixturesView, accessKeyId: string): Promise<S3Client> {
  const key = fixtureKey(fixtures, accessKeyId);
  const { S3Client } = await import('@aws-sdk/client-s3');
  return withoutNodeVersionNotice(
    () =>
      new S3Client({
        endpoint: fixtures.objstore.endpoint_url,
        region: 'us-east-1',
        forcePathStyle: true,
        credentials: { accessKeyId: key.access_key_id, secretAccessKey: key.secret_access_key },
      }),
  );
}

/**
 * Downloads every object under `<keyPrefix>` through the S3 API into `<to>`, keeping the key's
 * path below `<stripPrefix>`: how a user without the instance's data dir gets the files DuckDB reads.
 */
export async function downloadObjects(
  s3: S3Client,
  bucket: string,
  keyPrefix: string,
  stripPrefix: string,
  to: string,
): Promise<number> {
  const { GetObjectCommand, ListObjectsV2Command } = await import('@aws-sdk/client-s3');
  let token: string | undefined;
  let count = 0;
  do {
    const page = await s3.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: keyPrefix, ContinuationToken: token }),
    );
    for (const object of page.Contents ?? []) {
      const path = join(to, object.Key!.slice(stripPrefix.length).replace(/^\/+/, ''));
      mkdirSync(dirname(path), { recursive: true });
      const body = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: object.Key! }));
      writeFileSync(path, await body.Body!.transformToByteArray());
      count++;
    }
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return count;
}
