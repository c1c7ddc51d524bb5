/**
 * The snapshot file: one file holding an instance's whole state (the database and the objstore
 * together), in the spirit of the Firebase emulator's export/import.
 *
 *   localplane-snapshot <version>\n
 *   <header: one line of JSON>\n
 *   <payload: the database image, then each objstore file's bytes, in the header's order>
 *
 * The header names the payload's parts and sizes and its SHA-256, so a truncated or altered
 * file is refused before anything is restored.
 */
import { createHash } from 'node:crypto';
import { readSync, renameSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { z } from 'zod';

import type { ObjstoreTreeEntry } from '../objstore/types.ts';
import { withFileOpen, writePrivateFile } from '../shared/private-files.ts';

export const SNAPSHOT_FORMAT_VERSION = 1;
const MAGIC = 'localplane-snapshot';

/**
 * The largest snapshot file written or read: a restore reads the whole file into memory and
 * keeps it there while the file is unchanged (see Snapshots), so its size is what it may cost.
 */
export const MAX_SNAPSHOT_BYTES = 1024 ** 3;
export const MAX_SNAPSHOT_SIZE_IN_WORDS = '1 GiB';
/** `localplane-snapshot <version>`, with room for a version of nine digits. */
const MAX_FIRST_LINE_BYTES = 32;

/** Everything a snapshot holds. */
export interface SnapshotContent {
  /** The fixture template the database was started from (its content key: fixtures, seed, code). */
  template: string;
  seed: number;
  clock: { now: number; frozen: boolean };
  /** How many ids of the seeded sequence were handed out. */
  idsDrawn: number;
  /** The limits in force (validated again on restore). */
  limits: unknown;
  /** The instance's own SQLite database, as one file image. */
  database: Uint8Array;
  objstore: ObjstoreTreeEntry[];
}

/**
 * The fields of SnapshotContent that the instance's state parts save and load (the others say which instance took it).
 */
export const SNAPSHOT_SECTION_FIELDS = [
  'clock',
  'idsDrawn',
  'limits',
  'database',
  'objstore',
] as const satisfies readonly (keyof SnapshotContent)[];

/** A snapshot file that cannot be written, read or restored: its message says why, in a sentence. */
export class SnapshotFileError extends Error {
  constructor(
    message: string,
    /** The file is not there at all (as opposed to unreadable, damaged or foreign). */
    readonly missing = false,
  ) {
    super(message);
  }
}

const header = z.strictObject({
  template: z.string(),
  seed: z.int(),
  clock: z.strictObject({ now: z.int(), frozen: z.boolean() }),
  ids_drawn: z.int().min(0),
  limits: z.unknown(),
  database_bytes: z.int().min(0),
  objstore: z.array(z.strictObject({ path: z.string().min(1), bytes: z.int().min(0).nullable() })),
  payload_sha256: z.string().regex(/^[0-9a-f]{64}$/),
});

const sha256 = (parts: readonly Uint8Array[]) => {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part);
  return hash.digest('hex');
};

/** Writes the file whole or not at all (a new hidden file beside it, renamed into place); returns its size. */
export function writeSnapshotFile(path: string, content: SnapshotContent): number {
  const payload = [content.database, ...content.objstore.flatMap((entry) => (entry.data ? [entry.data] : []))];
  const headerLine = JSON.stringify({
    template: content.template,
    seed: content.seed,
    clock: content.clock,
    ids_drawn: content.idsDrawn,
    limits: content.limits,
    database_bytes: content.database.byteLength,
    objstore: content.objstore.map((entry) => ({ path: entry.path, bytes: entry.data?.byteLength ?? null })),
    payload_sha256: sha256(payload),
  } satisfies z.input<typeof header>);
  const head = Buffer.from(`${MAGIC} ${SNAPSHOT_FORMAT_VERSION}\n${headerLine}\n`);
  const size = payload.reduce((sum, part) => sum + part.byteLength, head.byteLength);
  if (size > MAX_SNAPSHOT_BYTES) {
    throw new SnapshotFileError(
      `cannot write the snapshot file ${path}: the state takes ${size} bytes, more than ` +
        `the ${MAX_SNAPSHOT_SIZE_IN_WORDS} a snapshot file may hold`,
    );
  }
  const file = Buffer.concat([head, ...payload]);
  const partial = join(dirname(path), `.${basename(path)}.partial-${process.pid}`);
  try {
    writePrivateFile(partial, file);
    renameSync(partial, path);
  } catch (error) {
    rmSync(partial, { force: true });
    throw new SnapshotFileError(`cannot write the snapshot file ${path}: ${(error as Error).message}`);
  }
  return file.byteLength;
}

/** What tells one version of a file from another (a new snapshot is a new file renamed into place). */
export type SnapshotFileIdentity = string;

/**
 * Opens a snapshot file without waiting on it and checks that it is a regular file of at most
 * MAX_SNAPSHOT_BYTES; `use` gets its identity and how to read it (or not, when the identity is
 * that of a file already read). Throws SnapshotFileError for a missing, unreadable, not regular
 * or too large file, before reading a byte of it.
 */
export function openSnapshotFile<T>(
  path: string,
  use: (identity: SnapshotFileIdentity, read: () => SnapshotContent) => T,
): T {
  try {
    return withFileOpen(path, (descriptor, stats) => {
      if (!stats.isFile())
        throw new SnapshotFileError(
          `cannot read the snapshot file ${path}: it is not a regular file (a named pipe, a device or a folder)`,
        );
      if (stats.size > MAX_SNAPSHOT_BYTES) {
        throw new SnapshotFileError(
          `cannot read the snapshot file ${path}: it is ${stats.size} bytes, larger than ` +
            `the ${MAX_SNAPSHOT_SIZE_IN_WORDS} a snapshot file may hold`,
        );
      }
      const { dev, ino, size, mtimeMs } = stats;
      return use(`${dev}:${ino}:${size}:${mtimeMs}`, () => parseSnapshotFile(path, readWhole(descriptor, size)));
    });
  } catch (error) {
    if (error instanceof SnapshotFileError) throw error;
    if ((error as NodeJS.ErrnoException).code === 'ENOENT')
      throw new SnapshotFileError(`the snapshot file ${path} does not exist`, true);
    throw new SnapshotFileError(`cannot read the snapshot file ${path}: ${(error as Error).message}`);
  }
}

/** The file's first `size` bytes, or fewer when it is shorter by now. */
function readWhole(descriptor: number, size: number): Buffer {
  const file = Buffer.allocUnsafe(size);
  let read = 0;
  while (read < size) {
    const count = readSync(descriptor, file, read, size - read, read);
    if (count === 0) break;
    read += count;
  }
  return file.subarray(0, read);
}

/**
 * Checks a snapshot file's bytes (`path` names it in the errors); throws SnapshotFileError for a foreign, other-version
 * or damaged one.
 */
export function parseSnapshotFile(path: string, file: Buffer): SnapshotContent {
  const damaged = (why: string) => new SnapshotFileError(`${path} is not a usable localplane snapshot: ${why}`);
  const firstLineEnd = file.subarray(0, MAX_FIRST_LINE_BYTES + 1).indexOf(0x0a);
  const [magic, version] = file.subarray(0, Math.max(firstLineEnd, 0)).toString('latin1').split(' ');
  if (magic !== MAGIC || firstLineEnd === -1 || !/^\d{1,9}$/.test(version ?? ''))
    throw damaged('it does not start as a snapshot file does');
  if (version !== String(SNAPSHOT_FORMAT_VERSION)) {
    throw damaged(`it is of format version ${version}, this localplane reads version ${SNAPSHOT_FORMAT_VERSION}`);
  }
  const headerEnd = file.indexOf(0x0a, firstLineEnd + 1);
  if (headerEnd === -1) throw damaged('its header is cut short');
  let parsed: z.output<typeof header>;
  try {
    parsed = header.parse(JSON.parse(file.subarray(firstLineEnd + 1, headerEnd).toString('utf8')));
  } catch {
    throw damaged('its header is damaged');
  }
  const payload = file.subarray(headerEnd + 1);
  const expectedBytes = parsed.database_bytes + parsed.objstore.reduce((sum, entry) => sum + (entry.bytes ?? 0), 0);
  if (payload.byteLength !== expectedBytes)
    throw damaged(`it holds ${payload.byteLength} bytes of data, its header announces ${expectedBytes}`);
  if (sha256([payload]) !== parsed.payload_sha256) throw damaged('its data does not match its checksum');
  let offset = parsed.database_bytes;
  const objstore = parsed.objstore.map(({ path: entryPath, bytes }) => {
    const data = bytes === null ? null : payload.subarray(offset, (offset += bytes));
    return { path: entryPath, data };
  });
  return {
    template: parsed.template,
    seed: parsed.seed,
    clock: parsed.clock,
    idsDrawn: parsed.ids_drawn,
    limits: parsed.limits,
    database: payload.subarray(0, parsed.database_bytes),
    objstore,
  };
}
