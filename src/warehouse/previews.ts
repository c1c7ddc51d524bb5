import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { InstanceLimits } from '../config.ts';
import { whyNotAFile } from '../objstore/file-view/file-view.ts';
import type { EmbeddedObjstore } from '../objstore/types.ts';
import { notFound } from '../shared/errors.ts';
import { queryAnswer } from './answers.ts';
import type { DuckDBProcess } from './duckdb-process.ts';
import { QueryError, QueryStopped } from './errors.ts';
import { PREVIEW_TEXT_BYTES, type PreviewResponse } from './schemas.ts';

export interface PreviewDeps {
  objstore: Pick<EmbeddedObjstore, 'headObject'>;
  /** The objstore's plain-file view: `<filesDir>/<bucket>/<key>`. */
  filesDir: string;
  duckdb: DuckDBProcess;
  limits: InstanceLimits;
}

const PARQUET_MAGIC = 'PAR1';
/** Characters DuckDB reads as a glob in a file name: such a file cannot be named to it alone. */
const GLOB_CHARACTERS = /[*?[]/;
const JSON_CONTENT_TYPE = /^application\/(json|x-ndjson|[\w.+-]+\+json)\b/i;
const JSON_KEY = /\.(json|jsonl|ndjson)$/i;

export const noSuchObject = (bucket: string, key: string) => `No object ${key} in bucket ${bucket}`;

/** The first bytes of a file, and whether it starts and ends with Parquet's magic. */
async function readHead(file: FileHandle, size: number): Promise<{ head: Buffer; parquet: boolean }> {
  const head = Buffer.alloc(Math.min(size, PREVIEW_TEXT_BYTES));
  await file.read(head, 0, head.length, 0);
  const tail = Buffer.alloc(4);
  if (size >= 12) await file.read(tail, 0, 4, size - 4);
  return {
    head,
    parquet:
      size >= 12 &&
      head.subarray(0, 4).toString('latin1') === PARQUET_MAGIC &&
      tail.toString('latin1') === PARQUET_MAGIC,
  };
}

/**
 * The bytes as UTF-8 text, when they are (a character cut at the end of a truncated head is left out); null for binary
 * (NUL bytes, invalid UTF-8).
 */
function asText(head: Buffer, truncated: boolean): string | null {
  if (head.includes(0)) return null;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(head, { stream: truncated });
  } catch {
    return null;
  }
}

/**
 * GET /_localplane/objstore/preview: an object's first rows (Parquet, read by DuckDB) or first 64 KiB (JSON, text) from
 * its plain file.
 */
export class ObjectPreviews {
  constructor(private readonly deps: PreviewDeps) {}

  async preview(bucket: string, key: string, rows: number): Promise<PreviewResponse> {
    // Checked before any file is named: the key's segments then stay inside the bucket's folder.
    const unfit = whyNotAFile(key);
    if (unfit !== null) throw notFound(`${noSuchObject(bucket, key)} as a plain file: ${unfit}`);
    const head = await this.deps.objstore.headObject(bucket, key);
    if (head === null) throw notFound(noSuchObject(bucket, key));
    const contentType = typeof head['content-type'] === 'string' ? head['content-type'] : null;
    const base = { bucket, key, content_type: contentType, size: Number(head['content-length']) };
    const path = join(this.deps.filesDir, bucket, key);
    let file: FileHandle;
    try {
      // The view holds files it made itself; a link in its place is not followed.
      file = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
    } catch {
      throw notFound(
        `${noSuchObject(bucket, key)} as a plain file: the objstore's plain-file view left it out (its path ` +
          `clashes with another object's)`,
      );
    }
    let read: { head: Buffer; parquet: boolean };
    let size: number;
    try {
      size = (await file.stat()).size;
      read = await readHead(file, size);
    } finally {
      await file.close();
    }
    if (read.parquet && !GLOB_CHARACTERS.test(path)) {
      const parquet = await this.parquet(path, rows);
      if (parquet)
        return { ...base, kind: 'parquet', schema: parquet.schema, rows: parquet.rows, total_rows: parquet.totalRows };
    }
    const truncated = size > PREVIEW_TEXT_BYTES;
    const text = read.parquet ? null : asText(read.head, truncated);
    if (text === null) return { ...base, kind: 'binary' };
    const json = JSON_KEY.test(key) || (contentType !== null && JSON_CONTENT_TYPE.test(contentType));
    return { ...base, kind: json ? 'json' : 'text', text, truncated };
  }

  /** The file as DuckDB reads it; null when DuckDB cannot (a damaged file with Parquet's magic). */
  private async parquet(path: string, rows: number) {
    const limits = this.deps.limits.get();
    try {
      return await this.deps.duckdb.previewParquet(path, rows, {
        timeLimitMs: limits.sql_time_limit_seconds * 1000,
        memoryLimitMb: limits.sql_memory_limit_mb,
      });
    } catch (error) {
      if (error instanceof QueryStopped) throw queryAnswer(error, limits);
      if (error instanceof QueryError) return null;
      throw error;
    }
  }
}
