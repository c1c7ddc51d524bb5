/**
 * Parquet encoding of exported runs.
 *
 * The runs, column by column (as the tracing store reads a page, or made from row objects),
 * are written by hand as an Arrow IPC stream (one record batch) into a reused byte buffer,
 * which parquet-wasm (arrow-rs' Parquet writer compiled to WebAssembly) reads with
 * `Table.fromIPCStream` and turns into a Parquet file with `writeParquet`, in the calling thread.
 *
 * Column types follow what the real service writes: UTF-8 strings for ids, text and JSON
 * text; `is_root` boolean; token counts int64; costs float64; timestamps
 *  - `v2_beta`: Arrow Timestamp(MICROSECOND, "UTC") -> Parquet TIMESTAMP(MICROS, isAdjustedToUTC=true)
 *  - `v1`:      Arrow Timestamp(NANOSECOND)         -> Parquet TIMESTAMP(NANOS, isAdjustedToUTC=false)
 * All columns are nullable.
 *
 * Why the IPC stream is framed by hand: with apache-arrow's `makeData` +
 * `RecordBatchStreamWriter`, every column is a fresh allocation that is copied again when
 * the stream is joined, which made the JS side several times slower than the Parquet encoding
 * itself. Here each column buffer (validity bitmap, offsets, UTF-8 bytes, fixed-width values)
 * is written exactly once, in place, into the stream buffer; apache-arrow only encodes the
 * flatbuffer message headers.
 */
import {
  Bool,
  Field,
  Float64,
  Int64,
  Message,
  Schema,
  TimestampMicrosecond,
  TimestampNanosecond,
  Utf8,
  type DataType,
} from 'apache-arrow';
import { BufferRegion, FieldNode, RecordBatch as RecordBatchHeader } from 'apache-arrow/ipc/metadata/message';
import {
  Compression as WasmCompression,
  EnabledStatistics,
  Table as WasmTable,
  WriterPropertiesBuilder,
  writeParquet,
} from 'parquet-wasm/node';
import { RUN_COLUMN_KINDS, RUN_COLUMNS, type RunColumn, type RunColumnKind, type RunRow } from '../tracing/schema.ts';
import type { ColumnCells } from '../tracing/pages.ts';
import type { Compression, FormatVersion } from './schemas.ts';

export interface ParquetEncodeOptions {
  formatVersion: FormatVersion;
  compression: Compression;
  /** Subset of RUN_COLUMNS; always written in the order of RUN_COLUMNS. */
  columns: readonly RunColumn[];
  /** Maximum rows per row group. */
  rowGroupSize: number;
}

/** Written to the file footer's `created_by`. */
const CREATED_BY = 'localplane';

/**
 * Upper bound for the Arrow data of one file. The writer holds the IPC copy and the decoded
 * table at once in a 32-bit (4 GiB) WebAssembly memory; running out of it would abort the
 * instance for the rest of the process, so larger inputs are refused. (The bound also keeps
 * every string column below 2 GiB, the limit of its Int32 offsets, so one record batch will do.)
 */
const MAX_ARROW_BYTES = 1536 * 1024 * 1024;

/**
 * Columns whose values are unique per run or per trace, or large free text: dictionary
 * encoding does not pay off for them (a file holds far more distinct values than a 1 MiB
 * dictionary page), so it is switched off to save the hashing work. Every other
 * column keeps the writer's default (dictionary, falling back to plain when it grows).
 */
const NO_DICTIONARY: ReadonlySet<RunColumn> = new Set<RunColumn>([
  'id',
  'trace_id',
  'parent_run_id',
  'parent_run_ids',
  'dotted_order',
  'inputs',
  'outputs',
  'error',
  'extra',
  'events',
  'feedback_stats',
  'start_time',
  'end_time',
  'first_token_time',
]);

/**
 * Large JSON / free-text columns: min/max statistics on them help no reader (nobody prunes
 * on the lexical order of JSON) but cost comparisons per value, so they are not written.
 * The other columns keep page + chunk statistics (e.g. pruning on start_time or ids).
 */
const NO_STATISTICS: ReadonlySet<RunColumn> = new Set<RunColumn>([
  'inputs',
  'outputs',
  'error',
  'extra',
  'events',
  'feedback_stats',
]);

const WASM_COMPRESSION: Record<Compression, WasmCompression> = {
  none: WasmCompression.UNCOMPRESSED,
  gzip: WasmCompression.GZIP,
  snappy: WasmCompression.SNAPPY,
  zstandard: WasmCompression.ZSTD,
};

interface Plan {
  columns: RunColumn[];
  kinds: RunColumnKind[];
  /** The indexes in `columns` of the string columns. */
  stringColumns: number[];
  nanos: boolean;
  schemaMessage: Uint8Array;
  /** Fixed-width bytes per row, all columns (offsets, values, bitmaps). */
  fixedPerRow: number;
  bufferCount: number;
  codec: WasmCompression;
  rowGroupSize: number;
}

/** The exported columns, in the order they are written (and a page of cells lists them). */
export function exportedColumns(columns: readonly RunColumn[]): RunColumn[] {
  const wanted = new Set<string>(columns);
  for (const c of wanted) {
    if (!Object.hasOwn(RUN_COLUMN_KINDS, c)) throw new Error(`unknown column: ${c}`);
  }
  const exported = RUN_COLUMNS.filter((c) => wanted.has(c));
  if (exported.length === 0) throw new Error('at least one column must be exported');
  return exported;
}

/** Encodes the runs as one complete Parquet file. */
export function encodeRunsParquet(rows: readonly RunRow[], options: ParquetEncodeOptions): Uint8Array {
  return encodeColumnsParquet(rows.length, cellsOf(rows, exportedColumns(options.columns)), options);
}

/**
 * Encodes `rows` runs given column by column (the cells of exportedColumns(options.columns),
 * in that order) as one complete Parquet file.
 */
export function encodeColumnsParquet(
  rows: number,
  columns: readonly ColumnCells[],
  options: ParquetEncodeOptions,
): Uint8Array {
  const plan = makePlan(options);
  const out = new StreamBuffer(keptBuffer ?? Buffer.alloc(0));
  keptBuffer = null;
  try {
    writeStream(out, rows, columns, plan);
    if (out.pos > MAX_ARROW_BYTES) {
      throw new RangeError(
        `${rows} runs take ${out.pos} bytes as Arrow data, more than the ` +
          `${MAX_ARROW_BYTES} bytes allowed; write fewer runs per file`,
      );
    }
    return writeParquetFile(out.bytes(), plan);
  } finally {
    keepBuffer(out.buf);
  }
}

/** Row objects as cells: a text column's values are the UTF-8 byte lengths of its cells (NaN for null). */
function cellsOf(rows: readonly RunRow[], columns: readonly RunColumn[]): ColumnCells[] {
  return columns.map((column) => {
    const values = new Float64Array(rows.length);
    if (RUN_COLUMN_KINDS[column] !== 'string') {
      rows.forEach((row, i) => (values[i] = (row[column] as number | null) ?? NaN));
      return { values, text: null };
    }
    const texts = rows.map((row) => row[column] as string | null);
    const text = Buffer.allocUnsafe(
      texts.reduce((bytes, cell) => bytes + (cell === null ? 0 : Buffer.byteLength(cell)), 0),
    );
    let at = 0;
    texts.forEach((cell, i) => {
      values[i] = cell === null ? NaN : text.write(cell, at);
      at += cell === null ? 0 : values[i]!;
    });
    return { values, text: [text] };
  });
}

function makePlan(options: ParquetEncodeOptions): Plan {
  const { formatVersion, compression, rowGroupSize } = options;
  if (formatVersion !== 'v1' && formatVersion !== 'v2_beta') {
    throw new Error(`unknown format version: ${String(formatVersion)}`);
  }
  const codec = Object.hasOwn(WASM_COMPRESSION, compression) ? WASM_COMPRESSION[compression] : undefined;
  if (codec === undefined) throw new Error(`unknown compression: ${String(compression)}`);
  if (!Number.isInteger(rowGroupSize) || rowGroupSize < 1) {
    throw new Error(`rowGroupSize must be a positive integer, got ${rowGroupSize}`);
  }
  const columns = exportedColumns(options.columns);
  const kinds = columns.map((c) => RUN_COLUMN_KINDS[c]);
  let fixedPerRow = 0;
  let bufferCount = 0;
  for (const k of kinds) {
    fixedPerRow += FIXED_BYTES_PER_ROW[k] + 0.125;
    bufferCount += BUFFERS_PER_KIND[k];
  }
  return {
    columns,
    kinds,
    stringColumns: kinds.flatMap((kind, c) => (kind === 'string' ? [c] : [])),
    nanos: formatVersion === 'v1',
    schemaMessage: Message.encode(Message.from(arrowSchemaFor(columns, formatVersion))),
    fixedPerRow,
    bufferCount,
    codec,
    rowGroupSize,
  };
}

function writeParquetFile(ipc: Uint8Array, plan: Plan): Uint8Array {
  let builder = new WriterPropertiesBuilder()
    .setCompression(plan.codec)
    .setMaxRowGroupSize(plan.rowGroupSize)
    .setCreatedBy(CREATED_BY);
  for (const c of plan.columns) {
    if (NO_DICTIONARY.has(c)) builder = builder.setColumnDictionaryEnabled(c, false);
    if (NO_STATISTICS.has(c)) builder = builder.setColumnStatisticsEnabled(c, EnabledStatistics.None);
  }
  // Every builder method, build() and writeParquet() take ownership of (and free) their
  // receiver / arguments on the wasm side; the explicit free() below only runs when a step
  // fails before ownership was handed over.
  const properties = builder.build();
  let table: WasmTable;
  try {
    table = WasmTable.fromIPCStream(ipc);
  } catch (err) {
    properties.free();
    throw err;
  }
  return writeParquet(table, properties);
}

// ---------------------------------------------------------------------------------------
// Buffer reuse. Writing into freshly allocated memory costs a page fault per 4 KiB, a large
// share of the encoding time, so the stream buffer is kept between calls if it is at most
// MAX_KEPT_BUFFER_BYTES, until nothing has been encoded for KEEP_BUFFER_MS.

const MAX_KEPT_BUFFER_BYTES = 512 * 1024 * 1024;
const KEEP_BUFFER_MS = 15_000;
let keptBuffer: Buffer | null = null;
let releaseTimer: ReturnType<typeof setTimeout> | null = null;

function keepBuffer(buf: Buffer): void {
  if (buf.length <= MAX_KEPT_BUFFER_BYTES) keptBuffer = buf;
  releaseTimer ??= setTimeout(() => {
    keptBuffer = null;
  }, KEEP_BUFFER_MS).unref();
  releaseTimer.refresh(); // (re)arms it, also after it has fired
}

// ---------------------------------------------------------------------------------------
// Arrow IPC stream

/** The Arrow schema of the exported columns, which parquet-wasm turns into the file's Parquet schema. */
export function arrowSchemaFor(columns: readonly RunColumn[], formatVersion: FormatVersion): Schema {
  return new Schema(columns.map((c) => new Field(c, arrowType(RUN_COLUMN_KINDS[c], formatVersion), true)));
}

function arrowType(kind: RunColumnKind, formatVersion: FormatVersion): DataType {
  switch (kind) {
    case 'string':
      return new Utf8();
    case 'bool':
      return new Bool();
    case 'int64':
      return new Int64();
    case 'float64':
      return new Float64();
    case 'timestamp':
      return formatVersion === 'v2_beta' ? new TimestampMicrosecond('UTC') : new TimestampNanosecond();
  }
}

const BUFFERS_PER_KIND: Record<RunColumnKind, number> = {
  string: 3, // validity, offsets, data
  timestamp: 2, // validity, data
  bool: 2,
  int64: 2,
  float64: 2,
};
const FIXED_BYTES_PER_ROW: Record<RunColumnKind, number> = {
  string: 4, // offsets (data counted separately)
  timestamp: 8,
  bool: 1,
  int64: 8,
  float64: 8,
};

/**
 * Serializes the rows as one Arrow IPC stream (schema message, one record batch,
 * end-of-stream marker), as handed to parquet-wasm. Exported for tests.
 */
export function encodeArrowIpcStream(
  rows: readonly RunRow[],
  columns: readonly RunColumn[],
  formatVersion: FormatVersion,
): Uint8Array {
  const plan = makePlan({ formatVersion, compression: 'none', columns, rowGroupSize: 1 });
  const out = new StreamBuffer(Buffer.alloc(0));
  writeStream(out, rows.length, cellsOf(rows, plan.columns), plan);
  return out.bytes();
}

function writeStream(out: StreamBuffer, rows: number, columns: readonly ColumnCells[], plan: Plan): void {
  let textBytes = 0;
  for (const c of plan.stringColumns) textBytes += byteLength(columns[c]!.text!);
  const headerBytes = plan.schemaMessage.byteLength + 40 * plan.bufferCount + 576; // generous
  out.reset(headerBytes + Math.ceil(rows * plan.fixedPerRow) + 8 * plan.bufferCount + textBytes);
  out.writeMessage(plan.schemaMessage);
  if (rows > 0) writeRecordBatch(out, rows, columns, plan);
  out.writeEndOfStream();
}

const align8 = (n: number): number => (n + 7) & ~7;

const byteLength = (pieces: readonly Uint8Array[]): number => pieces.reduce((sum, piece) => sum + piece.byteLength, 0);

/** A growable byte buffer holding an IPC stream; its memory is reused across streams. */
class StreamBuffer {
  buf: Buffer;
  pos = 0;

  constructor(buf: Buffer) {
    this.buf = buf;
  }

  /** Starts a new stream, making sure `capacity` bytes are available. */
  reset(capacity: number): void {
    this.pos = 0;
    // with headroom, so that a reused buffer fits the next, slightly larger stream too
    if (this.buf.length < capacity) this.buf = Buffer.allocUnsafeSlow(Math.max(64, Math.ceil(capacity * 1.1)));
  }

  ensure(extra: number): void {
    if (this.pos + extra > this.buf.length) this.grow(this.pos + extra);
  }

  grow(minCapacity: number): void {
    const capacity = Math.max(minCapacity, Math.floor(this.buf.length * 1.5));
    const next = Buffer.allocUnsafeSlow(capacity);
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  /** Zero-fills up to the next multiple of 8 (capacity must be ensured). */
  pad8(): void {
    const end = align8(this.pos);
    if (end > this.pos) this.buf.fill(0, this.pos, end);
    this.pos = end;
  }

  /** Encapsulated message: continuation marker, metadata length, flatbuffer, padding. */
  writeMessage(flatbuffer: Uint8Array): void {
    const metaLength = align8(8 + flatbuffer.byteLength);
    this.ensure(metaLength);
    writeMessagePrefix(this.buf, this.pos, metaLength, flatbuffer);
    this.pos += metaLength;
  }

  writeEndOfStream(): void {
    this.ensure(8);
    this.buf.writeInt32LE(-1, this.pos);
    this.buf.writeInt32LE(0, this.pos + 4);
    this.pos += 8;
  }

  bytes(): Uint8Array {
    return new Uint8Array(this.buf.buffer, this.buf.byteOffset, this.pos);
  }
}

function writeMessagePrefix(buf: Buffer, at: number, metaLength: number, flatbuffer: Uint8Array): void {
  buf.writeInt32LE(-1, at);
  buf.writeInt32LE(metaLength - 8, at + 4);
  buf.set(flatbuffer, at + 8);
  buf.fill(0, at + 8 + flatbuffer.byteLength, at + metaLength);
}

function encodeBatchHeader(
  length: number,
  nodes: FieldNode[],
  regions: BufferRegion[],
  bodyLength: number,
): Uint8Array {
  return Message.encode(Message.from(new RecordBatchHeader(length, nodes, regions, null), bodyLength));
}

// Scratch space for the batch's validity bitmap / value bits / offsets (reused, grown on demand).
let scratchOffsets = new Int32Array(0);
let scratchValidity = new Uint8Array(0);
let scratchBits = new Uint8Array(0);

function writeRecordBatch(out: StreamBuffer, n: number, columns: readonly ColumnCells[], plan: Plan): void {
  const { kinds } = plan;
  const bitmapBytes = (n + 7) >> 3;
  if (scratchOffsets.length < n + 1) scratchOffsets = new Int32Array(n + 1);
  if (scratchValidity.length < bitmapBytes) {
    scratchValidity = new Uint8Array(bitmapBytes);
    scratchBits = new Uint8Array(bitmapBytes);
  }

  // The header precedes the body but depends on the body layout. All its fields are
  // fixed-width (and non-zero, so none is elided), so its size is known up front: reserve
  // it, write the body, then fill it in.
  const nodes: FieldNode[] = [];
  const regions: BufferRegion[] = [];
  for (const k of kinds) {
    nodes.push(new FieldNode(n, 0));
    for (let j = 0; j < BUFFERS_PER_KIND[k]; j++) regions.push(new BufferRegion(0, 0));
  }
  const reservedMeta = align8(8 + encodeBatchHeader(n, nodes, regions, 8).byteLength);
  out.ensure(reservedMeta);
  const headerAt = out.pos;
  out.pos += reservedMeta;
  const bodyStart = out.pos;
  nodes.length = 0;
  regions.length = 0;

  for (let c = 0; c < kinds.length; c++) {
    const { values, text } = columns[c]!;
    const kind = kinds[c];
    const textBytes = text === null ? 0 : byteLength(text);
    const validity = scratchValidity.subarray(0, bitmapBytes);
    validity.fill(0);
    // validity bitmap region first; filled in once the column has been scanned
    out.ensure(align8(bitmapBytes) + 8 * n + 16 + textBytes);
    const validityAt = out.pos;
    out.pos += align8(bitmapBytes);
    let nulls: number;
    if (kind === 'string') {
      const offsetsAt = out.pos;
      const offsetsBytes = 4 * (n + 1);
      out.pos += align8(offsetsBytes);
      const dataAt = out.pos;
      nulls = fillOffsets(values, n, validity, scratchOffsets);
      if (scratchOffsets[n] !== textBytes || textBytes > 0x7fffffff) {
        throw new RangeError(
          `column ${plan.columns[c]}: ${textBytes} bytes of text where the cells' lengths add up ` +
            `to ${scratchOffsets[n]}`,
        );
      }
      for (const piece of text!) {
        out.buf.set(piece, out.pos);
        out.pos += piece.byteLength;
      }
      out.pad8();
      out.buf.set(new Uint8Array(scratchOffsets.buffer, 0, offsetsBytes), offsetsAt);
      out.buf.fill(0, offsetsAt + offsetsBytes, dataAt);
      regions.push(new BufferRegion(validityAt - bodyStart, bitmapBytes));
      regions.push(new BufferRegion(offsetsAt - bodyStart, offsetsBytes));
      regions.push(new BufferRegion(dataAt - bodyStart, textBytes));
    } else if (kind === 'bool') {
      const bits = scratchBits.subarray(0, bitmapBytes);
      bits.fill(0);
      nulls = fillBits(values, n, validity, bits);
      const dataAt = out.pos;
      out.buf.set(bits, dataAt);
      out.pos += bitmapBytes;
      out.pad8();
      regions.push(new BufferRegion(validityAt - bodyStart, bitmapBytes));
      regions.push(new BufferRegion(dataAt - bodyStart, bitmapBytes));
    } else {
      const dataAt = out.pos;
      const base = out.buf.byteOffset + dataAt; // 8-aligned: buffers come from allocUnsafeSlow
      nulls =
        kind === 'float64'
          ? fillFloat64(values, n, validity, new Float64Array(out.buf.buffer, base, n))
          : fillInt64(
              values,
              n,
              validity,
              new Int32Array(out.buf.buffer, base, 2 * n),
              kind === 'timestamp' && plan.nanos ? 1000 : 1,
            );
      out.pos += 8 * n;
      regions.push(new BufferRegion(validityAt - bodyStart, bitmapBytes));
      regions.push(new BufferRegion(dataAt - bodyStart, 8 * n));
    }
    out.buf.set(validity, validityAt);
    out.buf.fill(0, validityAt + bitmapBytes, validityAt + align8(bitmapBytes));
    nodes.push(new FieldNode(n, nulls));
  }

  const header = encodeBatchHeader(n, nodes, regions, out.pos - bodyStart);
  const metaLength = align8(8 + header.byteLength);
  if (metaLength !== reservedMeta) {
    // Not expected; shift the body so the stream stays well-formed regardless.
    const bodyLength = out.pos - bodyStart;
    out.ensure(metaLength - reservedMeta);
    out.buf.copyWithin(headerAt + metaLength, bodyStart, bodyStart + bodyLength);
    out.pos = headerAt + metaLength + bodyLength;
  }
  writeMessagePrefix(out.buf, headerAt, metaLength, header);
}

/** A string column's offsets from its cells' byte lengths (NaN: null, no bytes). */
function fillOffsets(lengths: Float64Array, n: number, validity: Uint8Array, offsets: Int32Array): number {
  let nulls = 0;
  let at = 0;
  offsets[0] = 0;
  for (let i = 0; i < n; i++) {
    const length = lengths[i]!;
    if (length !== length) {
      nulls++;
    } else {
      validity[i >> 3] |= 1 << (i & 7);
      at += length;
    }
    offsets[i + 1] = at;
  }
  return nulls;
}

function fillBits(values: Float64Array, n: number, validity: Uint8Array, bits: Uint8Array): number {
  let nulls = 0;
  for (let i = 0; i < n; i++) {
    const v = values[i]!;
    if (v !== v) {
      nulls++;
    } else {
      validity[i >> 3] |= 1 << (i & 7);
      if (v === 1) bits[i >> 3] |= 1 << (i & 7);
    }
  }
  return nulls;
}

function fillFloat64(values: Float64Array, n: number, validity: Uint8Array, out: Float64Array): number {
  let nulls = 0;
  for (let i = 0; i < n; i++) {
    const v = values[i]!;
    if (v !== v) {
      nulls++;
      out[i] = 0;
    } else {
      validity[i >> 3] |= 1 << (i & 7);
      out[i] = v;
    }
  }
  return nulls;
}

const TWO_32 = 4294967296;

/**
 * Int64 / timestamp values from JS integers (|v| < 2^53), multiplied by `scale` (1000 turns
 * microseconds into nanoseconds, beyond 2^53) and written as two little-endian 32-bit halves:
 * exact, and no BigInt per value.
 */
function fillInt64(values: Float64Array, n: number, validity: Uint8Array, words: Int32Array, scale: number): number {
  let nulls = 0;
  for (let i = 0; i < n; i++) {
    const raw = values[i]!;
    if (raw !== raw) {
      nulls++;
      words[2 * i] = 0;
      words[2 * i + 1] = 0;
      continue;
    }
    validity[i >> 3] |= 1 << (i & 7);
    const v = Math.trunc(raw);
    let hi = Math.floor(v / TWO_32);
    let lo = v - hi * TWO_32; // 0 <= lo < 2^32
    if (scale !== 1) {
      const loScaled = lo * scale; // < 2^42: exact
      const carry = Math.floor(loScaled / TWO_32);
      lo = loScaled - carry * TWO_32;
      hi = hi * scale + carry;
    }
    words[2 * i] = lo | 0;
    words[2 * i + 1] = hi | 0;
  }
  return nulls;
}
