import { closeSync, constants, openSync, readSync } from 'node:fs';
import type { Db } from '../shared/db.ts';
import type { Micros } from '../shared/time.ts';
import { NUMBER_RUN_COLUMNS, RUN_COLUMNS, type RunColumn } from './schema.ts';
import type { ColumnCells, RunColumnsPage, RunCursor } from './pages.ts';

/**
 * Runs laid out for export: a session's runs in export order, cut into chunks of
 * RUN_CHUNK_ROWS, each chunk holding every column's cells as an export page does (see
 * ColumnCells). An export reads them into memory it reuses: no SQLite decoding of each row, and
 * no buffer per chunk for the garbage collector.
 *
 * A chunk is, for each of RUN_COLUMNS in order, its values as float64 (`rows` of them, in this
 * machine's byte order, as the files never leave it), then, for each text column in order, its
 * bytes: as many as its values (byte lengths, NaN for NULL) add up to.
 *
 * Chunks come in sequences, each in export order: the template's chunks of a session's seeded
 * runs (written after the template's database in the same file, see `run_chunks`), and one per
 * batch of runs added at run time (added-run-chunks.ts). A page merges the sequences of its
 * session in cursor order.
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

/**
 * Runs per chunk of the template (one sequence per session): a 5,000-run page reads at most one
 * chunk more than it keeps.
 */
const RUN_CHUNK_ROWS = 512;

export const START_TIME_AT = RUN_COLUMNS.indexOf('start_time');
export const ID_AT = RUN_COLUMNS.indexOf('id');

/** Where a chunk is in its file, how many runs it holds, and its last run's cursor. */
export interface ChunkLocation {
  rows: number;
  /** Where its bytes begin in the file. */
  at: number;
  bytes: number;
  last: RunCursor;
}

/** One sequence of a session's chunks, in export order, in one file. */
export interface ChunkSequence {
  file: string;
  /** Up to `count` of its chunks whose last run comes after the cursor, in order. */
  chunksAfter(after: RunCursor, count: number): ChunkLocation[];
}

/** Runs' cells as a chunk holds them: a page's (all columns, in RUN_COLUMNS order) laid end to end. */
function chunkCells(page: RunColumnsPage): Buffer {
  const parts: Uint8Array[] = page.columns.map(
    (cells) => new Uint8Array(cells.values.buffer, cells.values.byteOffset, cells.values.byteLength),
  );
  for (const cells of page.columns) if (cells.text !== null) parts.push(...cells.text);
  return Buffer.concat(parts);
}

/** Whether each of RUN_COLUMNS holds text. */
export const IS_TEXT = RUN_COLUMNS.map((column) => !NUMBER_RUN_COLUMNS.has(column));

/**
 * A chunk's cells, as views into its bytes (a page reads hundreds of chunks: a chunk makes a
 * handful of objects, not one per column).
 */
class Chunk {
  /** Every column's values, column after column. */
  readonly floats: Float64Array;
  readonly starts: Float64Array;
  /** Where each text column's bytes begin (-1 for a number column). */
  private readonly textAt: number[];
  /** Per column, where each cell's bytes begin (rows + 1 of them), made for a column by indexText. */
  private offsets: Float64Array | undefined;
  private offsetsMade = 0;

  constructor(
    readonly rows: number,
    readonly bytes: Uint8Array,
  ) {
    const width = rows * 8;
    if (bytes.byteLength < RUN_COLUMNS.length * width)
      throw new Error(`a run chunk of ${rows} runs holds only ${bytes.byteLength} bytes`);
    // 8-aligned: the arena hands out aligned memory.
    this.floats = new Float64Array(bytes.buffer, bytes.byteOffset, RUN_COLUMNS.length * rows);
    this.starts = this.floats.subarray(START_TIME_AT * rows, (START_TIME_AT + 1) * rows);
    let at = RUN_COLUMNS.length * width;
    this.textAt = IS_TEXT.map((isText, column) => {
      if (!isText) return -1;
      const start = at;
      at += sumLengths(this.floats, column * rows, (column + 1) * rows);
      return start;
    });
    if (at !== bytes.byteLength) throw new Error(`a run chunk holds ${bytes.byteLength} bytes, its cells say ${at}`);
  }

  value(column: number, row: number): number {
    return this.floats[column * this.rows + row]!;
  }

  /** Where cell `row` of text column `column` begins in the chunk's bytes (`rows` for where the column ends). */
  textOffset(column: number, row: number): number {
    if ((this.offsetsMade & (1 << column)) !== 0) return this.offsets![column * (this.rows + 1) + row]!;
    return this.textAt[column]! + sumLengths(this.floats, column * this.rows, column * this.rows + row);
  }

  /** Makes where each cell of a text column begins, for a page that takes many slices of the chunk's cells. */
  indexText(column: number): void {
    const bit = 1 << column;
    if ((this.offsetsMade & bit) !== 0) return;
    const { rows } = this;
    const offsets = (this.offsets ??= new Float64Array(RUN_COLUMNS.length * (rows + 1)));
    const base = column * (rows + 1);
    const lengths = column * rows;
    offsets[base] = this.textAt[column]!;
    for (let i = 0; i < rows; i++) {
      const length = this.floats[lengths + i]!;
      offsets[base + i + 1] = offsets[base + i]! + (length === length ? length : 0);
    }
    this.offsetsMade |= bit;
  }

  /** The bytes of cells `from` to `to` (exclusive) of a text column. */
  text(column: number, from: number, to: number): Uint8Array {
    return this.bytes.subarray(this.textOffset(column, from), this.textOffset(column, to));
  }
}

/** The sum of the lengths `from` to `to` (exclusive) of a text column's cells (NaN for NULL). */
function sumLengths(lengths: Float64Array, from: number, to: number): number {
  let sum = 0;
  for (let i = from; i < to; i++) {
    const length = lengths[i]!;
    if (length === length) sum += length;
  }
  return sum;
}

/** The id of a chunk's run, as bytes. */
const idBytes = (chunk: Chunk, row: number): Uint8Array => chunk.text(ID_AT, row, row + 1);

/**
 * Memory reused from page to page: an export reads tens of MB a second, and as new buffers their
 * garbage made V8 collect the old generation after nearly every page. What a page hands out are
 * views into it, valid until the next page starts.
 */
class PageArena {
  private memory = new ArrayBuffer(0);
  private used = 0;
  /** What the page took in all, beyond the memory it began with as well. */
  private taken = 0;

  /** Starts a page, dropping the last page's views; `bytes` is what it is known to need. */
  reset(bytes = 0): void {
    const needed = Math.max(bytes, this.taken);
    if (this.memory.byteLength < needed) this.memory = new ArrayBuffer(Math.ceil(needed * 1.1));
    this.used = 0;
    this.taken = 0;
  }

  /**
   * The next `bytes` (rounded up to 8, so that float64 views stay aligned). When the memory is
   * full, the page goes on in a new block (the views handed out keep the old one), and the next
   * page starts with room for all of this one.
   */
  take(bytes: number): Uint8Array {
    const rounded = (bytes + 7) & ~7;
    this.taken += rounded;
    if (this.used + rounded > this.memory.byteLength) {
      this.memory = new ArrayBuffer(Math.max(rounded, this.memory.byteLength));
      this.used = 0;
    }
    const view = new Uint8Array(this.memory, this.used, bytes);
    this.used += rounded;
    return view;
  }
}

/** The chunks a page is read from (its text stays there), and its columns' cells. */
const chunkMemory = new PageArena();
const pageMemory = new PageArena();

/** Chunk locations a sequence is asked for at a time. */
const LOCATIONS_AT_A_TIME = 16;

/** A sequence as a page reads it: its current chunk and row, and the locations of the chunks after it. */
class SequenceHead {
  chunk!: Chunk;
  row = 0;
  private pending: ChunkLocation[] = [];
  private exhausted = false;
  private lastFetched: RunCursor | undefined;

  constructor(
    private readonly sequence: ChunkSequence,
    /** The sequence's rank: of two runs on the same cursor, the lower rank's comes first. */
    readonly rank: number,
    private readonly files: OpenFiles,
  ) {}

  /** Reads the first chunk that ends after the cursor and stands on its first run after it; false when none does. */
  start(after: RunCursor): boolean {
    this.fetch(after);
    if (!this.next()) return false;
    this.row = firstAfter(this.chunk, after);
    return true;
  }

  /** Moves to the next chunk; false when the sequence has no more. */
  next(): boolean {
    if (this.pending.length === 0 && !this.exhausted) this.fetch(this.lastFetched!);
    if (this.pending.length === 0) return false;
    const location = this.pending.shift()!;
    this.chunk = new Chunk(location.rows, this.files.read(this.sequence.file, location));
    this.row = 0;
    return true;
  }

  private fetch(after: RunCursor): void {
    this.pending = this.sequence.chunksAfter(after, LOCATIONS_AT_A_TIME);
    this.exhausted = this.pending.length < LOCATIONS_AT_A_TIME;
    this.lastFetched = this.pending.at(-1)?.last;
  }

  startTime(): number {
    return this.chunk.starts[this.row]!;
  }
}

/** Whether run `row` of `head`'s chunk comes before the run `other` stands on, in cursor order. */
function comesBefore(head: SequenceHead, row: number, other: SequenceHead): boolean {
  const start = head.chunk.starts[row]!;
  const otherStart = other.startTime();
  if (start !== otherStart) return start < otherStart;
  const order = Buffer.compare(idBytes(head.chunk, row), idBytes(other.chunk, other.row));
  return order !== 0 ? order < 0 : head.rank < other.rank;
}

/** The files a page reads chunks from, each opened once for the page. */
class OpenFiles {
  private readonly descriptors = new Map<string, number>();

  read(file: string, location: ChunkLocation): Uint8Array {
    let descriptor = this.descriptors.get(file);
    if (descriptor === undefined) {
      // Never through a link: a data dir from elsewhere may hold one in place of the added runs' file.
      descriptor = openSync(file, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
      this.descriptors.set(file, descriptor);
    }
    const cells = chunkMemory.take(location.bytes);
    const read = readSync(descriptor, cells, 0, location.bytes, location.at);
    if (read !== location.bytes) throw new Error(`${file} ends inside a run chunk: it is damaged`);
    return cells;
  }

  close(): void {
    for (const descriptor of this.descriptors.values()) closeSync(descriptor);
  }
}

/** A binary heap of sequence heads, the one standing on the first run in cursor order on top. */
class HeadHeap {
  private readonly heads: SequenceHead[] = [];

  get top(): SequenceHead | undefined {
    return this.heads[0];
  }

  push(head: SequenceHead): void {
    const heads = this.heads;
    let at = heads.push(head) - 1;
    while (at > 0) {
      const parent = (at - 1) >> 1;
      if (!comesBefore(head, head.row, heads[parent]!)) break;
      heads[at] = heads[parent]!;
      at = parent;
    }
    heads[at] = head;
  }

  pop(): SequenceHead | undefined {
    const heads = this.heads;
    const top = heads[0];
    const last = heads.pop();
    if (heads.length === 0 || last === undefined) return top;
    let at = 0;
    for (;;) {
      const left = 2 * at + 1;
      if (left >= heads.length) break;
      const right = left + 1;
      const child = right < heads.length && comesBefore(heads[right]!, heads[right]!.row, heads[left]!) ? right : left;
      if (!comesBefore(heads[child]!, heads[child]!.row, last)) break;
      heads[at] = heads[child]!;
      at = child;
    }
    heads[at] = last;
    return top;
  }
}

/** A slice of a chunk that a page keeps: rows `from` to `to` (exclusive). */
interface Slice {
  chunk: Chunk;
  from: number;
  to: number;
}

/**
 * The runs of the sequences in [after, to), at most `limit`, in export order (on one cursor, the
 * earlier sequence's run first): each sequence read from its first chunk ending after the cursor,
 * and merged.
 */
export function readChunkPage(
  sequences: readonly ChunkSequence[],
  query: { after: RunCursor; to: Micros; limit: number; columns: readonly RunColumn[] },
): RunColumnsPage {
  const { after, to, limit } = query;
  chunkMemory.reset();
  const files = new OpenFiles();
  try {
    const heap = new HeadHeap();
    sequences.forEach((sequence, rank) => {
      const head = new SequenceHead(sequence, rank, files);
      if (head.start(after)) heap.push(head);
    });
    const slices: Slice[] = [];
    let rows = 0;
    for (let head = heap.pop(); head !== undefined && rows < limit; head = heap.pop()) {
      const { chunk } = head;
      const from = head.row;
      if (chunk.starts[from]! >= to) break;
      // The head's runs up to the next sequence's first run.
      const next = heap.top;
      let end = from + 1;
      while (
        end < chunk.rows &&
        rows + (end - from) < limit &&
        chunk.starts[end]! < to &&
        (next === undefined || comesBefore(head, end, next))
      )
        end++;
      slices.push({ chunk, from, to: end });
      rows += end - from;
      head.row = end;
      if (end < chunk.rows || head.next()) heap.push(head);
    }
    if (rows === 0) return { rows, columns: [], last: null };
    const last = slices.at(-1)!;
    const columns = joinColumns(
      slices,
      rows,
      query.columns.map((column) => RUN_COLUMNS.indexOf(column)),
    );
    return {
      rows,
      columns,
      last: { startTime: last.chunk.starts[last.to - 1]!, id: textOf(idBytes(last.chunk, last.to - 1)) },
    };
  } finally {
    files.close();
  }
}

const textOf = (bytes: Uint8Array): string => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString();

/**
 * The first row of the chunk after the cursor, in (start_time, id) order; ids compare as SQLite's BINARY collation
 * does.
 */
function firstAfter(chunk: Chunk, after: RunCursor): number {
  const { starts } = chunk;
  let row = 0;
  while (row < chunk.rows && starts[row]! < after.startTime) row++;
  if (row === chunk.rows || starts[row]! > after.startTime) return row;
  const id = Buffer.from(after.id);
  while (row < chunk.rows && starts[row] === after.startTime && Buffer.compare(idBytes(chunk, row), id) <= 0) row++;
  return row;
}

/**
 * A page's text cells are copied together when it holds more slices than this (sequences merged
 * run by run); fewer are handed on as the chunks' pieces, which the Arrow writer copies once.
 */
const MAX_TEXT_PIECES = 64;
/** Shorter copies are made element by element: a typed array's view and set cost more. */
const SHORT_COPY = 32;

/** Copies `source`'s elements `start` to `end` (exclusive) into `target` at `at`; returns where the copy ends. */
export function copyRange<T extends Float64Array | Uint8Array>(
  target: T,
  at: number,
  source: T,
  start: number,
  end: number,
): number {
  if (end - start < SHORT_COPY) for (let i = start; i < end; i++) target[at++] = source[i]!;
  else {
    target.set(source.subarray(start, end), at);
    at += end - start;
  }
  return at;
}

/** The page's columns: each one's values copied together, its text the chunks' pieces or a copy of them. */
function joinColumns(slices: readonly Slice[], rows: number, columns: readonly number[]): ColumnCells[] {
  pageMemory.reset(columns.length * rows * 8);
  const copyText = slices.length > MAX_TEXT_PIECES;
  return columns.map((column) => {
    const bytes = pageMemory.take(rows * 8);
    const values = new Float64Array(bytes.buffer, bytes.byteOffset, rows);
    let row = 0;
    for (const { chunk, from, to } of slices) {
      const base = column * chunk.rows;
      row = copyRange(values, row, chunk.floats, base + from, base + to);
    }
    if (!IS_TEXT[column]) return { values, text: null };
    if (copyText) return { values, text: [joinText(slices, column)] };
    return { values, text: slices.map(({ chunk, from, to }) => chunk.text(column, from, to)) };
  });
}

/** The text of the slices' cells of a column, copied together. */
function joinText(slices: readonly Slice[], column: number): Uint8Array {
  let bytes = 0;
  for (const { chunk, from, to } of slices) {
    chunk.indexText(column);
    bytes += chunk.textOffset(column, to) - chunk.textOffset(column, from);
  }
  const target = pageMemory.take(bytes);
  let at = 0;
  for (const { chunk, from, to } of slices)
    at = copyRange(target, at, chunk.bytes, chunk.textOffset(column, from), chunk.textOffset(column, to));
  return target;
}

/** A page of a session's runs after a cursor, all columns: what chunks are cut from. */
type ReadAllColumns = (after: RunCursor | null, limit: number) => RunColumnsPage;

/** Where a chunk went, as its writer records it. */
type RecordChunk = (chunk: { rows: number; last: RunCursor; at: number; bytes: number }) => void;

/** Writes runs' chunks, from their pages read in export order, into the region; `record` says where each went. */
export function writeChunks(read: ReadAllColumns, region: { append(bytes: Uint8Array): number }, record: RecordChunk) {
  let after: RunCursor | null = null;
  for (;;) {
    const page = read(after, RUN_CHUNK_ROWS);
    if (page.rows === 0) return;
    after = page.last!;
    const bytes = chunkCells(page);
    record({ rows: page.rows, last: after, at: region.append(bytes), bytes: bytes.byteLength });
  }
}

type LocationRow = [rows: number, at: number, bytes: number, lastStartTime: Micros, lastId: string];

/** Locations from rows of (rows, offset, bytes, last_start_time, last_id), the offsets from `base`. */
export const locationsOf = (rows: readonly unknown[], base: number): ChunkLocation[] =>
  (rows as LocationRow[]).map(([count, at, bytes, startTime, id]) => ({
    rows: count,
    at: base + at,
    bytes,
    last: { startTime, id },
  }));

/**
 * The template's chunks of seeded runs (attached as `seed`), one sequence per session, when the
 * template has them: one built before they existed, kept in a data dir, has none.
 */
export class TemplateRunChunks {
  private readonly locations;

  private constructor(
    db: Db,
    private readonly file: string,
    /** Where in the template file the chunks begin: after the pages of its database. */
    private readonly regionStart: number,
  ) {
    this.locations = db
      .prepare<[string, Micros, string, number]>(
        'SELECT rows, region_offset, bytes, last_start_time, last_id FROM seed.run_chunks WHERE session_id = ? AND ' +
          '(last_start_time, last_id) > (?, ?) ORDER BY last_start_time, last_id LIMIT ?',
      )
      .raw();
  }

  /** The chunks of the template attached as `seed`, or null when it has none. */
  static of(db: Db): TemplateRunChunks | null {
    const columns = db.prepare<[], string>("SELECT name FROM pragma_table_info('run_chunks', 'seed')").pluck().all();
    if (!columns.includes('region_offset')) return null;
    const file = db.prepare<[], string>("SELECT file FROM pragma_database_list WHERE name = 'seed'").pluck().get()!;
    const regionStart =
      (db.pragma('seed.page_count', { simple: true }) as number) *
      (db.pragma('seed.page_size', { simple: true }) as number);
    return new TemplateRunChunks(db, file, regionStart);
  }

  sequence(sessionId: string): ChunkSequence {
    return {
      file: this.file,
      chunksAfter: (after, count) =>
        locationsOf(this.locations.all(sessionId, after.startTime, after.id, count), this.regionStart),
    };
  }
}
