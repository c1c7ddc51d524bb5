import type { RunCursor } from './pages.ts';
import { copyRange, ID_AT, IS_TEXT, START_TIME_AT } from './run-chunks.ts';
import { RUN_COLUMNS, type RunRow } from './schema.ts';

/** A chunk made of runs, and the session they belong to. */
export interface BuiltChunk {
  sessionId: string;
  rows: number;
  last: RunCursor;
  bytes: Uint8Array;
}

const COLUMNS = RUN_COLUMNS.length;
const TEXT_COLUMNS = RUN_COLUMNS.flatMap((_, k) => (IS_TEXT[k] ? [k] : []));
/** The id is the first text column: its bytes begin a record's text. */
if (TEXT_COLUMNS[0] !== ID_AT) throw new Error('the runs chunk builder expects id as the first text column');

/**
 * Chunks (run-chunks.ts) made from runs as they are stored, without reading them back from
 * SQLite: each run's cells are laid out as it comes (a record of its values, as an export page
 * holds them, then its text), and the runs are sorted into chunks in export order when asked.
 * The cells are what SQLite gives back for the values it was given: numbers as they are, text
 * as its UTF-8 bytes, NULL as NaN.
 */
export class RunChunkBuilder {
  private memory = new ArrayBuffer(0);
  private bytes = Buffer.from(this.memory);
  private floats = new Float64Array(this.memory);
  private used = 0;
  /** Where the chunk handed out last is made. */
  private output = new ArrayBuffer(0);
  /** Where each run's record begins, its start time and its session, in the order they came. */
  private records: number[] = [];
  private starts: number[] = [];
  private sessions: string[] = [];

  get size(): number {
    return this.records.length;
  }

  add(run: RunRow): void {
    // Room for the most its text can take (3 UTF-8 bytes a UTF-16 unit): measuring it first cost as much as writing it.
    let most = COLUMNS * 8;
    for (const k of TEXT_COLUMNS) {
      const cell = run[RUN_COLUMNS[k]!];
      if (cell !== null) {
        if (typeof cell !== 'string') throw new TypeError(`run ${run.id}: ${RUN_COLUMNS[k]} is not text`);
        most += cell.length * 3;
      }
    }
    this.reserve(most);
    const at = this.used;
    const values = at / 8;
    let textAt = at + COLUMNS * 8;
    for (let k = 0; k < COLUMNS; k++) {
      const column = RUN_COLUMNS[k]!;
      const cell = run[column];
      if (cell === null) this.floats[values + k] = NaN;
      else if (IS_TEXT[k]) {
        const written = this.bytes.write(cell as string, textAt, 'utf8');
        this.floats[values + k] = written;
        textAt += written;
      } else if (typeof cell === 'number') this.floats[values + k] = cell;
      else throw new TypeError(`run ${run.id}: ${column} is not a number`);
    }
    this.used = (textAt + 7) & ~7;
    this.records.push(at);
    this.starts.push(run.start_time);
    this.sessions.push(run.session_id);
  }

  /**
   * The runs added since the last call, as chunks of at most `rowsPerChunk` runs of one session, each session's in
   * export order; the builder is empty after. A chunk's bytes are good until the next chunk is asked for.
   */
  *chunks(rowsPerChunk: number): Generator<BuiltChunk> {
    const { records, sessions } = this;
    const order = this.sorted();
    for (let from = 0; from < order.length;) {
      const sessionId = sessions[order[from]!]!;
      let to = from + 1;
      while (to < order.length && to - from < rowsPerChunk && sessions[order[to]!] === sessionId) to++;
      yield this.chunk(
        sessionId,
        order.slice(from, to).map((run) => records[run]!),
      );
      from = to;
    }
    this.clear();
  }

  /** Gives back its memory (the runs added since the last chunks are forgotten). */
  release(): void {
    this.clear();
    this.memory = new ArrayBuffer(0);
    this.bytes = Buffer.from(this.memory);
    this.floats = new Float64Array(this.memory);
    this.output = new ArrayBuffer(0);
  }

  /** Forgets the runs added since the last chunks. */
  clear(): void {
    this.records = [];
    this.starts = [];
    this.sessions = [];
    this.used = 0;
  }

  /**
   * The runs (their positions in `records`) by session (in any order: a session's runs need only be together), then
   * in export order: start time, then the id's bytes (SQLite's BINARY collation).
   */
  private sorted(): number[] {
    const { records, starts, sessions } = this;
    return records
      .map((_, run) => run)
      .sort((a, b) => {
        if (sessions[a] !== sessions[b]) return sessions[a]! < sessions[b]! ? -1 : 1;
        const byStart = starts[a]! - starts[b]!;
        return byStart !== 0 ? byStart : Buffer.compare(this.id(records[a]!), this.id(records[b]!));
      });
  }

  private chunk(sessionId: string, records: readonly number[]): BuiltChunk {
    const rows = records.length;
    let textBytes = 0;
    for (const record of records) for (const k of TEXT_COLUMNS) textBytes += this.length(record, k);
    const size = COLUMNS * rows * 8 + textBytes;
    if (this.output.byteLength < size) this.output = new ArrayBuffer((size * 1.25 + 7) & ~7);
    const memory = this.output;
    const values = new Float64Array(memory, 0, COLUMNS * rows);
    records.forEach((record, i) => {
      for (let k = 0; k < COLUMNS; k++) values[k * rows + i] = this.floats[record / 8 + k]!;
    });
    const bytes = new Uint8Array(memory, 0, size);
    // Each record's text, column after column: where its next column's bytes begin.
    const textAt = records.map((record) => record + COLUMNS * 8);
    let at = COLUMNS * rows * 8;
    const source = this.bytes;
    for (const k of TEXT_COLUMNS) {
      records.forEach((record, i) => {
        const from = textAt[i]!;
        textAt[i] = from + this.length(record, k);
        at = copyRange(bytes, at, source, from, textAt[i]!);
      });
    }
    const last = records[rows - 1]!;
    return {
      sessionId,
      rows,
      last: { startTime: this.floats[last / 8 + START_TIME_AT]!, id: this.id(last).toString('utf8') },
      bytes,
    };
  }

  /** The byte length of a record's cell of text column `k` (0 for NULL). */
  private length(record: number, k: number): number {
    const length = this.floats[record / 8 + k]!;
    return length === length ? length : 0;
  }

  /** A record's id, as bytes: the first of its text. */
  private id(record: number): Buffer {
    const at = record + COLUMNS * 8;
    return this.bytes.subarray(at, at + this.length(record, ID_AT));
  }

  /** Makes room for `bytes` more, keeping what is there. */
  private reserve(bytes: number): void {
    const needed = this.used + bytes;
    if (needed <= this.memory.byteLength) return;
    const memory = new ArrayBuffer((Math.max(needed, this.memory.byteLength * 2) + 7) & ~7);
    new Uint8Array(memory).set(this.bytes.subarray(0, this.used));
    this.memory = memory;
    this.bytes = Buffer.from(memory);
    this.floats = new Float64Array(memory);
  }
}
