/**
 * The files storage's on-disk layout, s3rver 3.7.1's (lib/stores/filesystem.js, which every
 * data dir and snapshot so far was written in), the objstore's own temporary files beside it,
 * and how a key becomes file names in it. The only module that knows a file suffix, a sidecar
 * name or where uploads in progress live; everything else asks it.
 *
 * - An object is `<bucket>/<key folders>/<name>._S3rver_object`, beside the sidecars
 *   `._S3rver_object.md5` (its unquoted ETag), `._S3rver_metadata.json` (its stored headers,
 *   indented JSON) and, once tagged, `._S3rver_tagging.xml` (its Tagging document); a bucket's
 *   CORS configuration is the same with no name: `<bucket>/._S3rver_cors.xml`. (s3rver kept a
 *   website configuration as `._S3rver_website.xml` too, which nothing reads any more.)
 * - An upload in progress is `<bucket>/._S3rver_uploads/<uploadId>/`: a `key` file (the key it was
 *   started for), a `metadata` file (the CreateMultipartUpload headers, as JSON), and per part
 *   `<partNumber>` with its MD5 in `<partNumber>.md5` and the checksum it came with, if any (JSON),
 *   in `<partNumber>.checksum`, written once the part is whole. A completed upload keeps
 *   only a `completed` file there (no `key`: it is no longer in progress).
 * - An upload still arriving is a `.incoming-<uuid>` file in the root, which the storage never takes
 *   for a bucket (only directories are), on the same filesystem as the objects so a rename puts
 *   it in place.
 *
 * Key segments become folder names and the object's name as they are, unless that could be
 * mistaken for the layout's own files or cannot be a file name: a folder holding `._S3rver_`
 * (which every file of the layout does, so a key `report.csv._S3rver_object/x` would take the
 * place of the object `report.csv`), an empty, `.` or `..` segment, a NUL, a segment too long
 * for a file name with its suffix, or one starting with the escape marks below. Such a segment
 * is escaped: `%%` then the segment with `%`, `.` and NUL percent-encoded (so it holds no
 * `._S3rver_`), cut into names of at most 200 bytes, each after the first marked `%+` (it
 * continues the segment rather than starting the next one). Keys without such a segment are
 * stored as s3rver stores them, so existing data dirs and snapshots read the same.
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';

import { PRIVATE_FOLDER_MODE } from '../../shared/private-files.ts';

const SUFFIX_MARK = '._S3rver_';
const OBJECT_SUFFIX = `${SUFFIX_MARK}object`;
const UPLOADS_DIRECTORY = `${SUFFIX_MARK}uploads`;
const INCOMING_PREFIX = '.incoming-';
const PART_FILE = /^\d+$/;

const ESCAPED = '%%';
const CONTINUED = '%+';
/** The longest file name most file systems take, in bytes. */
const NAME_MAX = 255;
/** The longest suffix a key's name gets: `._S3rver_metadata.json`. */
const LONGEST_SUFFIX = `${SUFFIX_MARK}metadata.json`.length;
/** Escaped names are cut at this many bytes (of the encoded segment), well under NAME_MAX with any suffix. */
const ESCAPED_NAME_BYTES = 200;
const ESCAPED_CHARACTERS = /[%.\0]/g;
/** One piece an escaped segment may be cut after: a percent-encoded character, or any one code point. */
const ENCODED_PIECE = /%[0-9A-F]{2}|[^]/gu;

/** The files of one object: its content, its two sidecars, and its tags when it has some. */
export interface ObjectFiles {
  content: string;
  md5: string;
  metadata: string;
  tagging: string;
}

/** A bucket is the folder `<root>/<bucket>`, its user's alone. */
export function bucketDirectory(root: string, bucket: string): string {
  return path.join(root, bucket);
}
export const BUCKET_MODE = PRIVATE_FOLDER_MODE;

function isPlainSegment(segment: string, last: boolean): boolean {
  return (
    (segment !== '' || last) &&
    segment !== '.' &&
    segment !== '..' &&
    !segment.includes('\0') &&
    !segment.startsWith(ESCAPED) &&
    !segment.startsWith(CONTINUED) &&
    // The object's own name never becomes a folder, so only folders could be taken for the layout's files.
    (last || !segment.includes(SUFFIX_MARK)) &&
    Buffer.byteLength(segment) <= NAME_MAX - (last ? LONGEST_SUFFIX : 0)
  );
}

function escapedNames(segment: string): string[] {
  const encoded = segment.replace(
    ESCAPED_CHARACTERS,
    (character) => `%${character.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`,
  );
  const names = [ESCAPED];
  let bytes = 0;
  for (const piece of encoded.match(ENCODED_PIECE) ?? []) {
    const size = Buffer.byteLength(piece);
    if (bytes + size > ESCAPED_NAME_BYTES) {
      names.push(CONTINUED);
      bytes = 0;
    }
    names[names.length - 1] += piece;
    bytes += size;
  }
  return names;
}

/**
 * The names a key is stored under in its bucket folder: its folders, then the name its files' suffixes are added to.
 */
function storedNames(key: string): string[] {
  const segments = key.split('/');
  return segments.flatMap((segment, index) => {
    const last = index === segments.length - 1;
    return isPlainSegment(segment, last) ? [segment] : escapedNames(segment);
  });
}

/**
 * The key so far after one more stored name below it (`keySoFar` null in the bucket folder
 * itself): a new segment, or the rest of the last one. null when the name cannot be a key's.
 */
export function followStoredName(keySoFar: string | null, name: string): string | null {
  if (name.startsWith(CONTINUED))
    return keySoFar === null ? null : keySoFar + decodeEscaped(name.slice(CONTINUED.length));
  const segment = name.startsWith(ESCAPED) ? decodeEscaped(name.slice(ESCAPED.length)) : name;
  return keySoFar === null ? segment : `${keySoFar}/${segment}`;
}

function decodeEscaped(encoded: string): string {
  return encoded.replace(/%([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/** Whether a folder in a bucket (at any depth) holds keys, rather than the layout's own files (uploads in progress). */
export function isKeyFolder(name: string): boolean {
  return !name.includes(SUFFIX_MARK);
}

/** The stored name of the key whose content file this is (a file name), or null for any other file. */
export function nameOfObjectFile(fileName: string): string | null {
  return fileName.endsWith(OBJECT_SUFFIX) ? fileName.slice(0, -OBJECT_SUFFIX.length) : null;
}

/** The key whose content file this is (its path below the bucket folder, '/'-separated), or null for any other file. */
export function keyOfObjectFile(relativePath: string): string | null {
  const names = relativePath.split('/');
  const name = nameOfObjectFile(names.pop()!);
  if (name === null || !names.every(isKeyFolder)) return null;
  let key: string | null = null;
  for (const folder of names) {
    key = followStoredName(key, folder);
    if (key === null) return null;
  }
  key = followStoredName(key, name);
  return key === '' ? null : key;
}

/**
 * `<root>/<bucket>/<key's folders>/<key's name>._S3rver_<resource>`, or with no key
 * `<root>/<bucket>/._S3rver_<resource>` (what s3rver's FilesystemStore.getResourcePath gives,
 * with the key's names as above).
 */
export function resourceFile(root: string, bucket: string, key: string | undefined, resource: string): string {
  const names = storedNames(key ?? '');
  const name = names.pop()!;
  return path.join(root, bucket, ...names, `${name}${SUFFIX_MARK}${resource}`);
}

export function objectFiles(root: string, bucket: string, key: string): ObjectFiles {
  return {
    content: resourceFile(root, bucket, key, 'object'),
    md5: resourceFile(root, bucket, key, 'object.md5'),
    metadata: resourceFile(root, bucket, key, 'metadata.json'),
    tagging: resourceFile(root, bucket, key, 'tagging.xml'),
  };
}

/** A bucket's CORS configuration: `<root>/<bucket>/._S3rver_cors.xml`. */
export function bucketCorsFile(root: string, bucket: string): string {
  return resourceFile(root, bucket, undefined, 'cors.xml');
}

export function uploadsDirectory(root: string, bucket: string): string {
  return path.join(bucketDirectory(root, bucket), UPLOADS_DIRECTORY);
}

export function uploadDirectory(root: string, bucket: string, uploadId: string): string {
  return path.join(uploadsDirectory(root, bucket), uploadId);
}

/** The files of an upload in progress that describe it. */
export function uploadFiles(directory: string): { key: string; createHeaders: string; completed: string } {
  return {
    key: path.join(directory, 'key'),
    createHeaders: path.join(directory, 'metadata'),
    completed: path.join(directory, 'completed'),
  };
}

export function partFiles(
  uploadDirectory: string,
  partNumber: number,
): { content: string; md5: string; checksum: string } {
  const content = path.join(uploadDirectory, String(partNumber));
  return { content, md5: `${content}.md5`, checksum: `${content}.checksum` };
}

/** The part number whose content file this is (a name in an upload's directory), or null. */
export function partNumberOfFile(name: string): number | null {
  return PART_FILE.test(name) ? Number(name) : null;
}

/** A new temporary file beside the storage. */
export function incomingFile(root: string): string {
  return path.join(root, `${INCOMING_PREFIX}${randomUUID()}`);
}

/** Whether a file in the storage's root is an upload still arriving (or abandoned by a killed process). */
export function isIncomingFile(name: string): boolean {
  return name.startsWith(INCOMING_PREFIX);
}
