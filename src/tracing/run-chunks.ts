import { closeSync, openSync, readSync } from 'node:fs';
import type { Db } from '../shared/db.ts';
import type { AppendRegion } from '../shared/template-cache.ts';
import type { Micros } from '../shared/time.ts';
import { NUMBER_RUN_COLUMNS, RUN_COLUMNS, type RunColumn } from './schema.ts';
import type { ColumnCells, RunColumnsPage, RunCursor } from './pages.ts';

/**
 * The seeded runs laid out for export: each session's runs in export order, cut into chunks of
 * RUN_CHUNK_ROWS, each chunk holding every column's cells as an export page does (see
 * ColumnCells). They are written once, when the template is built, after the template's
 * database in the same file (SQLite reads only as many pages as its header counts), and
 * `run_chunks` says where each chunk is. An export of seeded runs reads them into memory it
 * reuses: no SQLite decoding of each row, and no buffer per chunk for the garbage collector.
 *
 * A chunk is, for each of RUN_COLUMNS in order, its values as float64 (`rows` of them, in this
 * machine's byte order, as the template never leaves it), then, for each text column in
 * order, its bytes: as many as its values (byte lengths, NaN for NULL) add up to.
 */
export const RUN_CHUNKS_DDL = `
CREATE TABLE IF NOT EXISTS run_chunks (
  session_id TEXT NOT NULL,
  last_start_time INTEGER NOT NULL,
  last_id TEXT NOT NULL,
  rows INTEGER NOT NULL,
  region_offset INTEGER NOT NULL,
  bytes INTEGER NOT NULL,
  PRIMARY KEY (session_id, last_start_time, last_id)
) WITHOUT ROWID;
`;

/** Runs per chunk: a 5,000-run export page reads at most one chunk more than it keeps. */
const RUN_CHUNK_ROWS = 512;

const START_TIME_AT = RUN_COLUMNS.indexOf('start_time');
const ID_AT = RUN_COLUMNS.indexOf('id');

/** A page of a session's runs after a cursor, all columns: what chunks are cut from. */
export type ReadAllColumns = (after: RunCursor | null, limit: number) => RunColumnsPage;

/**
 * Writes a session's chunks into the region and says where they are, from its runs read page by page in export order.
 */
export function writeRunChunks(db: Db, sessionId: string, read: ReadAllColumns, region: AppendRegion): void {
  const insert = db.prepare(
    'INSERT INTO run_chunks (session_id, last_start_time, last_id, rows, region_offset, bytes) VALUES (?, ?, ?, ?, ' +
      '?, ?)',
  );
  let after: RunCursor | null = null;
  for (;;) {
    const page = read(after, RUN_CHUNK_ROWS);
    if (page.rows === 0) return;
    after = page.last!;
    const bytes = chunkCells(page);
    insert.run(sessionId, after.startTime, after.id, page.rows, region.append(bytes), bytes.byteLength);
  }
}

function chunkCells(page: RunColumnsPage): Buffer {
  const parts: Uint8Array[] = page.columns.map(
    (cells) => new Uint8Array(cells.values.buffer, cells.values.byteOffset, cells.values.byteLength),
  );
  for (const cells of page.columns) if (cells.text !== null) parts.push(...cells.text);
  return Buffer.concat(parts);
}

/** A chunk's cells, column by column (RUN_COLUMNS order), as views into its bytes. */
interface Chunk {
  rows: number;
  /** Each column's values, as bytes (8-aligned: the arena hands out aligned memory). */
  values: Uint8Array[];
  text: (Uint8Array | null)[];
}

function parseChunk(rows: number, cells: Uint8Array): Chunk {
  const width = rows * 8;
  const values = RUN_COLUMNS.map((_, k) => cells.subarray(k * width, (k + 1) * width));
  let at = RUN_COLUMNS.length * width;
  const text = RUN_COLUMNS.map((_, k) => {
    if (NUMBER_RUN_COLUMNS.has(RUN_COLUMNS[k]!)) return null;
    const length = sumLengths(asFloats(values[k]!), 0, rows);
    const bytes = cells.subarray(at, at + length);
    at += length;
    return bytes;
  });
  if (at !== cells.byteLength) throw new Error(`a run chunk holds ${cells.byteLength} bytes, its cells say ${at}`);
  return { rows, values, text };
}

/** The float64 values the bytes hold. */
const asFloats = (bytes: Uint8Array): Float64Array =>
  new Float64Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 8);

/** The bytes of cells `from` to `to` (exclusive) of a text column, whose values are their lengths (NaN for NULL). */
function sumLengths(lengths: Float64Array, from: number, to: number): number {
  let sum = 0;
  for (let i = from; i < to; i++) {
    const length = lengths[i]!;
    if (length === length) sum += length;
  }
  return sum;
}

/** A slice of a chunk that a page keeps: rows `from` to `to` (exclusive). */
interface Slice {
  chunk: Chunk;
  starts: Float64Array;
  from: number;
  to: number;
}

type ChunkRow = [rows: number, regionOffset: number, bytes: number, lastStartTime: Micros];

/**
 * Reads export pages of seeded runs from the template's chunks, when the template has them: one
 * built before they existed, kept in a data dir, has none.
 */
export class RunChunkReader {
  private readonly chunks;

  private constructor(
    db: Db,
    /** The template file, and where in it the chunks begin: after the pages of its database. */
    private readonly file: string,
    private readonly regionStart: number,
  ) {
    this.chunks = db
      .prepare<[string, Micros, string]>(
        'SELECT rows, region_offset, bytes, last_start_time FROM seed.run_chunks WHERE session_id = ? AND ' +
          '(last_start_time, last_id) > (?, ?) ORDER BY last_start_time, last_id',
      )
      .raw();
  }

  /** The reader of the template attached as `seed`, or null when the template has no chunks. */
  static of(db: Db): RunChunkReader | null {
    const columns = db.prepare<[], string>("SELECT name FROM pragma_table_info('run_chunks', 'seed')").pluck().all();
    if (!columns.includes('region_offset')) return null;
    const file = db.prepare<[], string>("SELECT file FROM pragma_database_list WHERE name = 'seed'").pluck().get()!;
    const regionStart =
      (db.pragma('seed.page_count', { simple: true }) as number) *
      (db.pragma('seed.page_size', { simple: true }) as number);
    return new RunChunkReader(db, file, regionStart);
  }

  /** The seeded runs of the session in [after, to), at most `limit`, in export order. */
  page(query: {
    sessionId: string;
    after: RunCursor;
    to: Micros;
    limit: number;
    columns: readonly RunColumn[];
  }): RunColumnsPage {
    const { after, to, limit } = query;
    const chunks = this.read(this.chunksOfPage(query.sessionId, after, to, limit));
    const slices: Slice[] = [];
    let rows = 0;
    for (const chunk of chunks) {
      const starts = asFloats(chunk.values[START_TIME_AT]!);
      const from = slices.length === 0 ? firstAfter(chunk, starts, after) : 0;
      let end = from;
      while (end < chunk.rows && rows + (end - from) < limit && starts[end]! < to) end++;
      if (end > from) slices.push({ chunk, starts, from, to: end });
      rows += end - from;
      if (end < chunk.rows || rows === limit) break;
    }
    if (rows === 0) return { rows, columns: [], last: null };
    const last = slices.at(-1)!;
    const lastId = lastText(last.chunk, ID_AT, last.to);
    const columns = joinColumns(
      slices,
      rows,
      query.columns.map((column) => RUN_COLUMNS.indexOf(column)),
    );
    return { rows, columns, last: { startTime: last.starts[last.to - 1]!, id: lastId } };
  }

  /**
   * The chunks a page may take rows from: the first ends after the cursor (some of its rows may
   * be before it), and they go on until the rows of the others fill the page, or one reaches `to`.
   */
  private chunksOfPage(sessionId: string, after: RunCursor, to: Micros, limit: number): ChunkRow[] {
    const wanted: ChunkRow[] = [];
    let rowsAfterFirst = 0;
    for (const row of this.chunks.iterate(sessionId, after.startTime, after.id) as IterableIterator<ChunkRow>) {
      wanted.push(row);
      if (wanted.length > 1) rowsAfterFirst += row[0];
      if (rowsAfterFirst >= limit || row[3] >= to) break;
    }
    return wanted;
  }

  private read(rows: readonly ChunkRow[]): Chunk[] {
    if (rows.length === 0) return [];
    chunkMemory.reset(rows.reduce((sum, [, , bytes]) => sum + bytes + 8, 0));
    const descriptor = openSync(this.file, 'r');
    try {
      return rows.map(([chunkRows, offset, bytes]) => {
        const cells = chunkMemory.take(bytes);
        const read = readSync(descriptor, cells, 0, bytes, this.regionStart + offset);
        if (read !== bytes) throw new Error(`the template ${this.file} ends inside a run chunk: it is damaged`);
        return parseChunk(chunkRows, cells);
      });
    } finally {
      closeSync(descriptor);
    }
  }
}

/**
 * The first row of the chunk after the cursor, in (start_time, id) order; ids compare as SQLite's BINARY collation
 * does.
 */
function firstAfter(chunk: Chunk, starts: Float64Array, after: RunCursor): number {
  let row = 0;
  while (row < chunk.rows && starts[row]! < after.startTime) row++;
  if (row === chunk.rows || starts[row]! > after.startTime) return row;
  const id = Buffer.from(after.id);
  const lengths = asFloats(chunk.values[ID_AT]!);
  const text = chunk.text[ID_AT]!;
  let at = sumLengths(lengths, 0, row);
  for (; row < chunk.rows && starts[row] === after.startTime; row++) {
    const next = at + lengths[row]!;
    if (Buffer.compare(text.subarray(at, next), id) > 0) break;
    at = next;
  }
  return row;
}

/** The text of the cell before row `end` of a text column. */
function lastText(chunk: Chunk, column: number, end: number): string {
  const lengths = asFloats(chunk.values[column]!);
  const to = sumLengths(lengths, 0, end);
  return Buffer.from(chunk.text[column]!.subarray(to - lengths[end - 1]!, to)).toString('utf8');
}

/**
 * Memory reused from page to page: an export reads tens of MB a second, and as new buffers their
 * garbage made V8 collect the old generation after nearly every page. What a page hands out are
 * views into it, valid until the next page is read.
 */
class PageArena {
  private memory = new ArrayBuffer(0);
  private used = 0;

  /** Makes room for `bytes` in all, dropping the last page's cells. */
  reset(bytes: number): void {
    this.used = 0;
    if (this.memory.byteLength < bytes) this.memory = new ArrayBuffer(Math.ceil(bytes * 1.1));
  }

  /** The next `bytes` (rounded up to 8, so that float64 views stay aligned). */
  take(bytes: number): Uint8Array {
    const view = new Uint8Array(this.memory, this.used, bytes);
    this.used += (bytes + 7) & ~7;
    return view;
  }
}

/** The chunks a page is read from (its text stays there), and its columns' values. */
const chunkMemory = new PageArena();
const pageMemory = new PageArena();

/** The page's columns: each one's values copied together, its text the pieces of the chunks' text it takes. */
function joinColumns(slices: readonly Slice[], rows: number, columns: readonly number[]): ColumnCells[] {
  pageMemory.reset(columns.length * rows * 8);
  return columns.map((column) => {
    const valueBytes = pageMemory.take(rows * 8);
    let row = 0;
    for (const { chunk, from, to } of slices) {
      valueBytes.set(chunk.values[column]!.subarray(from * 8, to * 8), row * 8);
      row += to - from;
    }
    const values = new Float64Array(valueBytes.buffer, valueBytes.byteOffset, rows);
    if (slices[0]!.chunk.text[column] === null) return { values, text: null };
    const text = slices.map(({ chunk, from, to }) => {
      const lengths = asFloats(chunk.values[column]!);
      const start = sumLengths(lengths, 0, from);
      return chunk.text[column]!.subarray(start, start + sumLengths(lengths, from, to));
    });
    return { values, text };
  });
}
