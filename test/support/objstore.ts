import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { DuckDBInstance } from '@duckdb/node-api';
import { onTestFinished } from 'vitest';
import type { FixtureKey } from './instance.ts';

export function s3For(endpoint: string, key: FixtureKey): S3Client {
  return new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: key.access_key_id, secretAccessKey: key.secret_access_key },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}

/** Every key under the prefix (ListObjectsV2 pages of at most 1,000). */
export async function listKeys(s3: S3Client, bucket: string, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const page = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }));
    keys.push(...(page.Contents ?? []).map((object) => object.Key!));
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return keys;
}

export async function getBytes(s3: S3Client, bucket: string, key: string): Promise<Uint8Array> {
  const object = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return object.Body!.transformToByteArray();
}

/**
 * Downloads the given keys through the S3 API into a fresh local folder, keeping their paths.
 * The folder is removed when the calling test finishes.
 */
export async function download(s3: S3Client, bucket: string, keys: readonly string[]): Promise<string> {
  const root = mkdtempSync(join(tmpdir(), 'localplane-test-download-'));
  onTestFinished(() => rmSync(root, { recursive: true, force: true }));
  for (const key of keys) {
    const path = join(root, key);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, await getBytes(s3, bucket, key));
  }
  return root;
}

/** Runs a DuckDB query and returns plain row objects (BigInts as numbers where safe). */
export async function duckdb<T = Record<string, unknown>>(sql: string): Promise<T[]> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    const reader = await connection.runAndReadAll(sql);
    return reader.getRowObjectsJson() as T[];
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}
