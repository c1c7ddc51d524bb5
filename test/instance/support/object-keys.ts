/**
 * Generated object keys for the robustness suite: what a hostile or careless client may name an
 * object. S3 takes any key of at most 1,024 bytes of UTF-8 and refuses longer ones with
 * KeyTooLongError, so each generated key either round-trips or gets exactly that refusal.
 */
import {
  CreateBucketCommand,
  DeleteBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
} from '@aws-sdk/client-s3';
import fc from 'fast-check';
import { expect } from 'vitest';

import type { FixtureKey } from '../../support/instance.ts';
import { s3For } from '../../support/objstore.ts';

/** S3's limit on a key, in bytes of UTF-8. */
export const MAX_KEY_BYTES = 1024;

/** The names of s3rver's files beside an object, its uploads folder and part files, and the store's temporary files. */
const LAYOUT_NAMES = [
  '._S3rver_object',
  '._S3rver_object.md5',
  '._S3rver_metadata.json',
  '._S3rver_tagging.xml',
  '._S3rver_uploads',
  '._S3rver_cors.xml',
  '.incoming-6d7f0a1e-0000-4000-8000-000000000000',
  '.md5',
  '.checksum',
  'key',
  'metadata',
  'completed',
];

const plainName = fc.stringMatching(/^[a-z0-9][a-z0-9._-]{0,11}$/);
const controlCharacter = fc.integer({ min: 0, max: 0x1f }).map((code) => String.fromCharCode(code));

const segment = fc.oneof(
  { arbitrary: plainName, weight: 4 },
  {
    arbitrary: fc
      .tuple(fc.option(plainName, { nil: '' }), fc.constantFrom(...LAYOUT_NAMES))
      .map(([name, suffix]) => name + suffix),
    weight: 4,
  },
  {
    arbitrary: fc.constantFrom(
      '',
      '.',
      '..',
      '...',
      '%',
      '%%',
      '%+',
      '%25',
      '%2E',
      '%2F',
      '+',
      ' ',
      '?',
      '#',
      '=',
      '&',
    ),
    weight: 3,
  },
  {
    arbitrary: fc.string({
      unit: fc.oneof(controlCharacter, fc.constantFrom('\u007f', '\u0085', '\u2028', '\u202e', '\ufeff')),
      minLength: 1,
      maxLength: 4,
    }),
    weight: 2,
  },
  { arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 8 }), weight: 2 },
  // Segments around a file name's 255 bytes, and keys up to and past S3's 1,024.
  {
    arbitrary: fc
      .tuple(fc.constantFrom('a', 'é', '😀', '%', '.', '\u0001'), fc.integer({ min: 200, max: 1100 }))
      .map(([unit, bytes]) => unit.repeat(Math.ceil(bytes / Buffer.byteLength(unit)))),
    weight: 2,
  },
);

/** Keys of one to six segments (never empty: that would name the bucket). */
export const objectKeys: fc.Arbitrary<string> = fc
  .array(segment, { minLength: 1, maxLength: 6 })
  .map((segments) => segments.join('/'))
  .filter((key) => key !== '');

/**
 * Another key the store's own names in `key` could spoil (`report.csv` for `report.csv._S3rver_object/x`); null when it
 * names none.
 */
export function neighbourOf(key: string): string | null {
  const at = key.indexOf('._S3rver_');
  if (at <= 0) return null;
  return key.slice(0, at);
}

export interface ObjectKeyChecker {
  /** Creates the (new) bucket the keys go to. */
  createBucket(): Promise<void>;
  /**
   * The key round-trips (put, head, get, listed under its own name, delete) without disturbing its neighbour, or is
   * KeyTooLongError; never a 5xx.
   */
  check(key: string): Promise<void>;
  /** Deletes the bucket, emptied by every check. */
  deleteBucket(): Promise<void>;
  close(): void;
}

/** Checks keys in `bucket` of a running objstore, with a key that may create and delete buckets. */
export function objectKeyChecker(objstoreUrl: string, credentials: FixtureKey, bucket: string): ObjectKeyChecker {
  const s3 = s3For(objstoreUrl, credentials);
  const put = (key: string, body: string) => s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
  const read = async (key: string) =>
    (await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }))).Body!.transformToString();
  const listed = async (prefix: string) => {
    const page = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, EncodingType: 'url' }));
    return (page.Contents ?? []).map((object) => decodeURIComponent(object.Key!));
  };
  const statusOf = (error: unknown) => (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;

  async function check(key: string): Promise<void> {
    const what = JSON.stringify(key);
    const body = `object ${what}`;
    try {
      await put(key, body);
    } catch (error) {
      expect(statusOf(error), `${what}: ${String(error)}`).toBeLessThan(500);
      expect(Buffer.byteLength(key), `${what} refused: ${String(error)}`).toBeGreaterThan(MAX_KEY_BYTES);
      expect((error as Error).name, what).toBe('KeyTooLongError');
      return;
    }
    expect(Buffer.byteLength(key), `${what} is over ${MAX_KEY_BYTES} bytes, yet stored`).toBeLessThanOrEqual(
      MAX_KEY_BYTES,
    );
    expect((await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }))).ContentLength, what).toBe(
      Buffer.byteLength(body),
    );
    expect(await read(key), what).toBe(body);
    expect(await listed(key), what).toContain(key);
    const neighbour = neighbourOf(key);
    if (neighbour !== null) {
      await put(neighbour, 'neighbour');
      expect(await read(neighbour), `${JSON.stringify(neighbour)} beside ${what}`).toBe('neighbour');
      expect(await read(key), what).toBe(body);
      await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: neighbour }));
    }
    await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
    expect(await listed(key), what).not.toContain(key);
  }

  return {
    createBucket: async () => void (await s3.send(new CreateBucketCommand({ Bucket: bucket }))),
    check,
    deleteBucket: async () => void (await s3.send(new DeleteBucketCommand({ Bucket: bucket }))),
    close: () => s3.destroy(),
  };
}
