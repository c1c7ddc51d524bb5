/**
 * Snapshot files taken apart and put together again, to craft hostile ones. The format is
 * src/snapshots/format.ts's: a magic line, a JSON header line, then the database image and each
 * objstore file's bytes, in the header's order.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import Database from 'better-sqlite3';

export interface SnapshotParts {
  /** The first line, e.g. `localplane-snapshot 1`. */
  magic: string;
  /** The header as written (sizes and checksum are recomputed by snapshotBytes unless kept). */
  header: Record<string, unknown>;
  database: Buffer;
  objstore: { path: string; data: Buffer | null }[];
}

export function readSnapshotParts(file: string): SnapshotParts {
  const bytes = readFileSync(file);
  const magicEnd = bytes.indexOf(0x0a);
  const headerEnd = bytes.indexOf(0x0a, magicEnd + 1);
  const header = JSON.parse(bytes.subarray(magicEnd + 1, headerEnd).toString('utf8')) as Record<string, unknown>;
  const payload = bytes.subarray(headerEnd + 1);
  let offset = header.database_bytes as number;
  const objstore = (header.objstore as { path: string; bytes: number | null }[]).map(({ path, bytes: size }) => ({
    path,
    data: size === null ? null : Buffer.from(payload.subarray(offset, (offset += size))),
  }));
  return {
    magic: bytes.subarray(0, magicEnd).toString('latin1'),
    header,
    database: Buffer.from(payload.subarray(0, header.database_bytes as number)),
    objstore,
  };
}

/**
 * The file of these parts. The header's sizes, entries and checksum are those of the parts,
 * except the header fields given in `keep` (left as the header holds them, to craft a file
 * that lies about itself).
 */
export function snapshotBytes(
  parts: SnapshotParts,
  keep: readonly ('database_bytes' | 'objstore' | 'payload_sha256')[] = [],
): Buffer {
  const payload = Buffer.concat([
    parts.database,
    ...parts.objstore.flatMap((entry) => (entry.data ? [entry.data] : [])),
  ]);
  const computed: Record<string, unknown> = {
    database_bytes: parts.database.byteLength,
    objstore: parts.objstore.map((entry) => ({ path: entry.path, bytes: entry.data?.byteLength ?? null })),
    payload_sha256: createHash('sha256').update(payload).digest('hex'),
  };
  const header = { ...parts.header };
  for (const [field, value] of Object.entries(computed)) if (!keep.includes(field as never)) header[field] = value;
  return Buffer.concat([Buffer.from(`${parts.magic}\n${JSON.stringify(header)}\n`), payload]);
}

/**
 * The parts with their database image changed by `edit` (SQL on the image, opened in memory).
 * The image is written in WAL mode, which SQLite does not open in memory: it is read as a
 * rollback-journal database, as the restored instance's SQLite reads the unpacked file alike.
 */
export function withDatabase(parts: SnapshotParts, edit: (db: Database.Database) => void): SnapshotParts {
  const image = Buffer.from(parts.database);
  image[18] = 1;
  image[19] = 1;
  const db = new Database(image);
  try {
    edit(db);
    return { ...parts, database: db.serialize() };
  } finally {
    db.close();
  }
}
