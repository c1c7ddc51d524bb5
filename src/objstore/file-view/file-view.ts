/**
 * The plain-file view of the objstore: every object is also the ordinary file
 * `<directory>/<bucket>/<key>`, for readers that glob folders (DuckDB, Spark, pandas) and cannot
 * read the storage's own layout (s3rver's, with sidecar files).
 *
 * View files are hard links to the storage's object files, or copies where the file system refuses a
 * link. Writes replace an object's file with a new one (PutObject and CompleteMultipartUpload
 * rename a new file into place, CopyObject unlinks and creates), so after every write the view
 * links again whenever the two files differ.
 *
 * Keys that cannot be files are left out (and logged): a key ending in '/', one with an empty,
 * `.` or `..` segment, a NUL or a segment longer than a file name (all of which S3 takes), and a
 * key whose path clashes with another object's (`a` beside `a/b`: whichever was placed first stays).
 * The view only ever holds keys' own names, never the storage's.
 */
import type { Stats } from 'node:fs';
import { lstat, mkdir, readdir, rm, rmdir, stat } from 'node:fs/promises';
import path from 'node:path';

import { printable } from '../../shared/log-text.ts';
import { placeFile } from '../../shared/place-file.ts';
import { PRIVATE_FOLDER_MODE, resetToEmptyFolders } from '../../shared/private-files.ts';
import type { FileStorage } from '../storage/files-storage.ts';

/** Failures of placing a file where another object's file or folder is in the way. */
const PATH_CLASHES = new Set(['ENOTDIR', 'EEXIST', 'EISDIR']);

/** The longest file name most file systems take, in bytes. */
const NAME_MAX = 255;

/** Why a key cannot be the file `<bucket>/<key>`; null when it can. */
export function whyNotAFile(key: string): string | null {
  const segments = key.split('/');
  if (key.endsWith('/')) return "a key ending in '/' names a folder";
  if (segments.some((segment) => segment === '' || segment === '.' || segment === '..'))
    return "an empty, '.' or '..' segment names no file";
  if (key.includes('\0')) return 'a file name cannot hold NUL';
  if (segments.some((segment) => Buffer.byteLength(segment) > NAME_MAX))
    return 'a segment is longer than a file name (255 bytes)';
  return null;
}

export interface FileViewOptions {
  directory: string;
  storage: FileStorage;
  /** Every bucket there is now. */
  buckets: () => readonly string[];
  log: (line: string) => void;
}

function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | null)?.code;
}

async function statIfExists(file: string, read: (file: string) => Promise<Stats>): Promise<Stats | null> {
  try {
    return await read(file);
  } catch (error) {
    if (errorCode(error) === 'ENOENT' || errorCode(error) === 'ENOTDIR') return null;
    throw error;
  }
}

/** Paths of the files under `root`, relative and '/'-separated; none when `root` is missing. */
async function filesUnder(root: string): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(root, { recursive: true, withFileTypes: true });
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return [];
    throw error;
  }
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'));
}

export class FileView {
  /** Updates run one at a time: each one reads the storage as it is when its turn comes. */
  private tail: Promise<void> = Promise.resolve();

  constructor(private readonly options: FileViewOptions) {}

  get directory(): string {
    return this.options.directory;
  }

  /** Makes the file of one key match the storage: placed, replaced, or removed. */
  syncKey(bucket: string, key: string): Promise<void> {
    return this.enqueue(() => this.mirror(bucket, key));
  }

  /** Makes a whole bucket's files match the storage; a bucket that is gone loses its folder. */
  syncBucket(bucket: string): Promise<void> {
    return this.enqueue(() => this.rebuildBucket(bucket));
  }

  /**
   * Brings every bucket's files in step with the storage on start: made again from the storage's
   * objects, so nothing a data dir holds in the view's folder (a link planted there) is followed.
   */
  rebuild(): Promise<void> {
    return this.enqueue(async () => {
      const objects: { bucket: string; key: string }[] = [];
      for (const bucket of this.options.buckets()) {
        for (const key of await this.options.storage.objectKeys(bucket, '')) objects.push({ bucket, key });
      }
      await this.refill(objects);
    });
  }

  /** Resolves once every update asked for so far, and those they led to, is done. */
  async settled(): Promise<void> {
    for (let tail = this.tail; ; tail = this.tail) {
      await tail;
      if (tail === this.tail) return;
    }
  }

  /** Back to empty bucket folders, after the storage was reset. */
  reset(): Promise<void> {
    return this.enqueue(async () => this.emptyFolders());
  }

  /**
   * After the storage's contents were replaced wholesale (a restored snapshot): empty folders, then these objects'
   * files.
   */
  replace(objects: readonly { bucket: string; key: string }[]): Promise<void> {
    return this.enqueue(() => this.refill(objects));
  }

  private async refill(objects: readonly { bucket: string; key: string }[]): Promise<void> {
    this.emptyFolders();
    for (const { bucket, key } of objects) await this.mirror(bucket, key);
  }

  /** Synchronous, as the storage's own reset is: faster than a round trip through libuv's pool per folder. */
  private emptyFolders(): void {
    resetToEmptyFolders(this.options.directory, this.options.buckets());
  }

  /** Never rejects: a view that cannot follow is logged, and must not fail the S3 request. */
  private enqueue(update: () => Promise<void>): Promise<void> {
    const run = this.tail.then(update).catch((error: unknown) => {
      this.options.log(
        `objstore files view: update failed: ${printable(error instanceof Error ? error.message : String(error))}`,
      );
    });
    this.tail = run;
    return run;
  }

  private bucketFolder(bucket: string): string {
    return path.join(this.options.directory, bucket);
  }

  /** For keys `whyNotAFile` passes, so the file stays inside its bucket folder. */
  private fileOf(bucket: string, key: string): string {
    return path.join(this.bucketFolder(bucket), ...key.split('/'));
  }

  private leaveOut(bucket: string, key: string, reason: string): void {
    this.options.log(`objstore files view: ${printable(`${bucket}/${key}`)} is left out: ${reason}`);
  }

  private async mirror(bucket: string, key: string): Promise<void> {
    const objectFile = this.options.storage.objectContentFile(bucket, key);
    const object = await statIfExists(objectFile, stat);
    const unfit = whyNotAFile(key);
    if (unfit !== null) {
      if (object) this.leaveOut(bucket, key, unfit);
      return;
    }
    const file = this.fileOf(bucket, key);
    if (!object) return this.remove(bucket, file);
    try {
      const current = await statIfExists(file, lstat);
      if (current && current.ino === object.ino && current.dev === object.dev) return;
      await mkdir(path.dirname(file), { recursive: true, mode: PRIVATE_FOLDER_MODE });
      await placeFile(objectFile, file);
    } catch (error) {
      if (!PATH_CLASHES.has(errorCode(error) ?? '')) throw error;
      this.leaveOut(bucket, key, 'another object uses its path as a folder, or a folder of it as a file');
    }
  }

  /** Removes a key's file (never a folder other keys live in) and the folders it leaves empty. */
  private async remove(bucket: string, file: string): Promise<void> {
    const current = await statIfExists(file, lstat);
    if (!current || current.isDirectory()) return;
    await rm(file, { force: true });
    const root = this.bucketFolder(bucket);
    for (let folder = path.dirname(file); folder.startsWith(root + path.sep); folder = path.dirname(folder)) {
      try {
        await rmdir(folder);
      } catch {
        return;
      }
    }
  }

  private async rebuildBucket(bucket: string): Promise<void> {
    const folder = this.bucketFolder(bucket);
    if (!(await this.options.storage.bucketExists(bucket))) {
      await rm(folder, { recursive: true, force: true });
      return;
    }
    await mkdir(folder, { recursive: true, mode: PRIVATE_FOLDER_MODE });
    // Files first, so ones whose objects are gone make way before the storage's objects are placed.
    for (const key of await filesUnder(folder)) await this.mirror(bucket, key);
    for (const key of await this.options.storage.objectKeys(bucket, '')) await this.mirror(bucket, key);
  }
}
