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
import { readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { z } from 'zod';

import type { ObjstoreTreeEntry } from '../objstore/types.ts';

export const SNAPSHOT_FORMAT_VERSION = 1;
const MAGIC = 'localplane-snapshot';

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

/** Writes the file whole or not at all (a new file renamed into place); returns its size. */
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
  const file = Buffer.concat([Buffer.from(`${MAGIC} ${SNAPSHOT_FORMAT_VERSION}\n${headerLine}\n`), ...payload]);
  const partial = `${path}.partial-${process.pid}`;
  try {
    writeFileSync(partial, file);
    renameSync(partial, path);
  } catch (error) {
    rmSync(partial, { force: true });
    throw new SnapshotFileError(`cannot write the snapshot file ${path}: ${(error as Error).message}`);
  }
  return file.byteLength;
}

/** What tells one version of a file from another (a new snapshot is a new file renamed into place); throws as readSnapshotFile for a missing file. */
export function snapshotFileIdentity(path: string): string {
  try {
    const { dev, ino, size, mtimeMs } = statSync(path);
    return `${dev}:${ino}:${size}:${mtimeMs}`;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new SnapshotFileError(`the snapshot file ${path} does not exist`, true);
    throw new SnapshotFileError(`cannot read the snapshot file ${path}: ${(error as Error).message}`);
  }
}

/** Reads and checks a snapshot file; throws SnapshotFileError for a missing, foreign, other-version or damaged one. */
export function readSnapshotFile(path: string): SnapshotContent {
  let file: Buffer;
  try {
    file = readFileSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new SnapshotFileError(`the snapshot file ${path} does not exist`, true);
    throw new SnapshotFileError(`cannot read the snapshot file ${path}: ${(error as Error).message}`);
  }
  const damaged = (why: string) => new SnapshotFileError(`${path} is not a usable localplane snapshot: ${why}`);
  const firstLineEnd = file.indexOf(0x0a);
  const firstLine = file.subarray(0, firstLineEnd === -1 ? Math.min(file.length, 64) : firstLineEnd).toString('latin1');
  const [magic, version] = firstLine.split(' ');
  if (magic !== MAGIC || firstLineEnd === -1) throw damaged('it does not start as a snapshot file does');
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
  if (payload.byteLength !== expectedBytes) throw damaged(`it holds ${payload.byteLength} bytes of data, its header announces ${expectedBytes}`);
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
