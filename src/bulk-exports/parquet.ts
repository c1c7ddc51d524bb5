/**
 * Parquet encoding of exported runs.
 *
 * Pipeline: rows -> one Arrow IPC stream (built directly in a single byte buffer) ->
 * parquet-wasm `Table.fromIPCStream` -> `writeParquet` (arrow-rs' Parquet writer compiled to
 * WebAssembly) -> complete Parquet file bytes.
 *
 * Column types follow what the real service writes: UTF-8 strings for ids, text and JSON
 * text; `is_root` boolean; token counts int64; costs float64; timestamps
 *  - `v2_beta`: Arrow Timestamp(MICROSECOND, "UTC") -> Parquet TIMESTAMP(MICROS, isAdjustedToUTC=true)
 *  - `v1`:      Arrow Timestamp(NANOSECOND)         -> Parquet TIMESTAMP(NANOS, isAdjustedToUTC=false)
 * All columns are nullable.
 *
 * Why the IPC stream is framed by hand: going through apache-arrow's `makeData` +
 * `RecordBatchStreamWriter` allocates a fresh buffer per column, then copies every buffer
 * again when the stream is joined, which made the JS side ~4x slower than the encoding
 * itself. Here every column buffer (validity bitmap, offsets, UTF-8 bytes, fixed-width
 * values) is written exactly once, in place, into the stream buffer; apache-arrow is only
 * used to encode the flatbuffer message headers (Schema and RecordBatch messages).
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
import {
  BufferRegion,
  FieldNode,
  RecordBatch as RecordBatchHeader,
} from 'apache-arrow/ipc/metadata/message';
import {
  Compression as WasmCompression,
  Table as WasmTable,
  WriterPropertiesBuilder,
  writeParquet,
} from 'parquet-wasm/node';
import { RUN_COLUMNS, type RunColumn, type RunRow } from '../tracing/schema.ts';

export type FormatVersion = 'v1' | 'v2_beta';
export type Compression = 'none' | 'gzip' | 'snappy' | 'zstandard';

export interface ParquetEncodeOptions {
  formatVersion: FormatVersion;
  compression: Compression;
  /** Subset of RUN_COLUMNS; always written in the order of RUN_COLUMNS. */
  columns: readonly RunColumn[];
  /** Maximum rows per row group. */
  rowGroupSize: number;
}

/** Written to the file footer's `created_by`. */
export const PARQUET_CREATED_BY = 'localplane';

/**
 * Upper bound for the Arrow data of one file. The WebAssembly writer holds the IPC copy and
 * the decoded table at the same time (plus the output), in a 32-bit (4 GiB) memory that
 * never shrinks; running out of it aborts the wasm instance for the rest of the process, so
 * larger inputs are refused up front. Split such exports into more files.
 */
export const MAX_ARROW_BYTES_PER_FILE = 1536 * 1024 * 1024;

type ColumnKind = 'string' | 'timestamp' | 'bool' | 'int64' | 'float64';

const COLUMN_KINDS: Record<RunColumn, ColumnKind> = {
  id: 'string',
  tenant_id: 'string',
  session_id: 'string',
  trace_id: 'string',
  parent_run_id: 'string',
  parent_run_ids: 'string',
  reference_example_id: 'string',
  name: 'string',
  run_type: 'string',
  start_time: 'timestamp',
  end_time: 'timestamp',
  status: 'string',
  is_root: 'bool',
  dotted_order: 'string',
  trace_tier: 'string',
  inputs: 'string',
  outputs: 'string',
  error: 'string',
  extra: 'string',
  events: 'string',
  tags: 'string',
  feedback_stats: 'string',
  total_tokens: 'int64',
  prompt_tokens: 'int64',
  completion_tokens: 'int64',
  total_cost: 'float64',
  prompt_cost: 'float64',
  completion_cost: 'float64',
  first_token_time: 'timestamp',
};

/**
 * Columns whose values are (nearly) unique per run or large free text: dictionary encoding
 * never pays off for them, so it is switched off to save the hashing work. Every other
 * column keeps the writer's default (dictionary, falling back to plain when it grows).
 */
const NO_DICTIONARY: ReadonlySet<RunColumn> = new Set<RunColumn>([
  'id', 'dotted_order', 'inputs', 'outputs', 'error', 'extra', 'events', 'feedback_stats',
  'start_time', 'end_time', 'first_token_time',
]);

const WASM_COMPRESSION: Record<Compression, WasmCompression> = {
  none: WasmCompression.UNCOMPRESSED,
  gzip: WasmCompression.GZIP,
  snappy: WasmCompression.SNAPPY,
  zstandard: WasmCompression.ZSTD,
};

/** Rows per Arrow record batch (the Parquet writer regroups batches into row groups). */
const MAX_BATCH_ROWS = 65_536;
/**
 * UTF-16 code units of string data per record batch. A code unit takes at most 3 UTF-8
 * bytes, so one batch's string column stays far below the 2^31 limit of Int32 offsets.
 */
const MAX_BATCH_CHARS = 256 * 1024 * 1024;

/** Encodes the rows as one complete Parquet file. */
export function encodeRunsParquet(rows: readonly RunRow[], options: ParquetEncodeOptions): Uint8Array {
  const { formatVersion, compression, rowGroupSize } = options;
  if (formatVersion !== 'v1' && formatVersion !== 'v2_beta') {
    throw new Error(`unknown format version: ${String(formatVersion)}`);
  }
  const codec = WASM_COMPRESSION[compression];
  if (codec === undefined) throw new Error(`unknown compression: ${String(compression)}`);
  if (!Number.isInteger(rowGroupSize) || rowGroupSize < 1) {
    throw new Error(`rowGroupSize must be a positive integer, got ${rowGroupSize}`);
  }
  const wanted = new Set<string>(options.columns);
  for (const c of wanted) {
    if (!Object.hasOwn(COLUMN_KINDS, c)) throw new Error(`unknown column: ${c}`);
  }
  const columns = RUN_COLUMNS.filter((c) => wanted.has(c));
  if (columns.length === 0) throw new Error('at least one column must be exported');

  const ipc = encodeArrowIpcStream(rows, columns, formatVersion);
  if (ipc.byteLength > MAX_ARROW_BYTES_PER_FILE) {
    throw new RangeError(
      `${rows.length} runs take ${ipc.byteLength} bytes as Arrow data, more than the ` +
        `${MAX_ARROW_BYTES_PER_FILE} bytes one Parquet file may hold; write fewer runs per file`,
    );
  }
  return ipcToParquet(ipc, columns, codec, rowGroupSize);
}

// ---------------------------------------------------------------------------------------
// Arrow IPC stream

export function arrowSchemaFor(columns: readonly RunColumn[], formatVersion: FormatVersion): Schema {
  return new Schema(columns.map((c) => new Field(c, arrowType(COLUMN_KINDS[c], formatVersion), true)));
}

function arrowType(kind: ColumnKind, formatVersion: FormatVersion): DataType {
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

const BUFFERS_PER_KIND: Record<ColumnKind, number> = {
  string: 3, // validity, offsets, data
  timestamp: 2, // validity, data
  bool: 2,
  int64: 2,
  float64: 2,
};
const FIXED_BYTES_PER_ROW: Record<ColumnKind, number> = {
  string: 4, // offsets (data counted separately)
  timestamp: 8,
  bool: 1,
  int64: 8,
  float64: 8,
};

interface Batch {
  start: number;
  end: number;
  /** UTF-16 code units of string data in the batch (= UTF-8 bytes when ASCII). */
  chars: number;
}

/**
 * Serializes the rows as an Arrow IPC stream (schema message, record batches, end-of-stream
 * marker) in one buffer. Exported for tests and benchmarks.
 */
export function encodeArrowIpcStream(
  rows: readonly RunRow[],
  columns: readonly RunColumn[],
  formatVersion: FormatVersion,
): Uint8Array {
  const kinds = columns.map((c) => COLUMN_KINDS[c]);
  const stringColumns = columns.filter((c) => COLUMN_KINDS[c] === 'string');
  const batches = planBatches(rows, stringColumns);

  const schemaMessage = Message.encode(Message.from(arrowSchemaFor(columns, formatVersion)));
  let fixedPerRow = 0;
  let buffersPerBatch = 0;
  for (const k of kinds) {
    fixedPerRow += FIXED_BYTES_PER_ROW[k] + 0.125;
    buffersPerBatch += BUFFERS_PER_KIND[k];
  }
  let estimate = schemaMessage.byteLength + 64;
  for (const b of batches) {
    estimate += Math.ceil((b.end - b.start) * fixedPerRow) + b.chars + 512 + 40 * buffersPerBatch;
  }

  const out = new StreamBuffer(estimate);
  out.writeMessage(schemaMessage);
  const nanos = formatVersion === 'v1';
  for (const b of batches) writeRecordBatch(out, rows, b, columns, kinds, nanos);
  out.ensure(8);
  out.int32(-1); // end of stream: continuation marker + zero metadata length
  out.int32(0);
  return out.bytes();
}

function planBatches(rows: readonly RunRow[], stringColumns: readonly RunColumn[]): Batch[] {
  const batches: Batch[] = [];
  const cells = rows as readonly unknown[] as readonly Cells[];
  let start = 0;
  let chars = 0;
  for (let i = 0; i < cells.length; i++) {
    const row = cells[i];
    let rowChars = 0;
    for (let c = 0; c < stringColumns.length; c++) {
      const v = row[stringColumns[c]] as string | null | undefined;
      if (v != null) rowChars += v.length;
    }
    if (i > start && (i - start >= MAX_BATCH_ROWS || chars + rowChars > MAX_BATCH_CHARS)) {
      batches.push({ start, end: i, chars });
      start = i;
      chars = 0;
    }
    chars += rowChars;
  }
  if (cells.length > start) batches.push({ start, end: cells.length, chars });
  return batches;
}

type Cells = Record<string, unknown>;

const align8 = (n: number): number => (n + 7) & ~7;

/** A growable byte buffer holding the IPC stream. */
class StreamBuffer {
  buf: Buffer;
  pos = 0;

  constructor(capacity: number) {
    this.buf = Buffer.allocUnsafeSlow(Math.max(64, capacity));
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

  int32(v: number): void {
    this.buf.writeInt32LE(v, this.pos);
    this.pos += 4;
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

function encodeBatchHeader(length: number, nodes: FieldNode[], regions: BufferRegion[], bodyLength: number): Uint8Array {
  return Message.encode(Message.from(new RecordBatchHeader(length, nodes, regions, null), bodyLength));
}

// Scratch space for one batch's validity bitmap / value bits / offsets (reused).
let scratchOffsets = new Int32Array(MAX_BATCH_ROWS + 1);
let scratchValidity = new Uint8Array(MAX_BATCH_ROWS >> 3);
let scratchBits = new Uint8Array(MAX_BATCH_ROWS >> 3);

function writeRecordBatch(
  out: StreamBuffer,
  rows: readonly RunRow[],
  batch: Batch,
  columns: readonly RunColumn[],
  kinds: readonly ColumnKind[],
  nanos: boolean,
): void {
  const n = batch.end - batch.start;
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

  const cells = rows as readonly unknown[] as readonly Cells[];
  for (let c = 0; c < columns.length; c++) {
    const column = columns[c];
    const kind = kinds[c];
    const validity = scratchValidity.subarray(0, bitmapBytes);
    validity.fill(0);
    // validity bitmap region, padded; filled in once the column has been scanned
    out.ensure(align8(bitmapBytes) + 8 * n + 16);
    const validityAt = out.pos;
    out.pos += align8(bitmapBytes);
    let nulls: number;
    if (kind === 'string') {
      const offsetsAt = out.pos;
      const offsetsBytes = 4 * (n + 1);
      out.pos += align8(offsetsBytes);
      const dataAt = out.pos;
      nulls = writeUtf8Values(out, cells, batch.start, n, column, validity, scratchOffsets);
      const dataBytes = out.pos - dataAt;
      out.ensure(8);
      out.pad8();
      out.buf.set(new Uint8Array(scratchOffsets.buffer, 0, offsetsBytes), offsetsAt);
      out.buf.fill(0, offsetsAt + offsetsBytes, dataAt);
      regions.push(new BufferRegion(validityAt - bodyStart, bitmapBytes));
      regions.push(new BufferRegion(offsetsAt - bodyStart, offsetsBytes));
      regions.push(new BufferRegion(dataAt - bodyStart, dataBytes));
    } else if (kind === 'bool') {
      const bits = scratchBits.subarray(0, bitmapBytes);
      bits.fill(0);
      nulls = fillBits(cells, batch.start, n, column, validity, bits);
      const dataAt = out.pos;
      out.buf.set(bits, dataAt);
      out.pos += bitmapBytes;
      out.pad8();
      regions.push(new BufferRegion(validityAt - bodyStart, bitmapBytes));
      regions.push(new BufferRegion(dataAt - bodyStart, bitmapBytes));
    } else {
      const dataAt = out.pos;
      const base = out.buf.byteOffset + dataAt;
      nulls =
        kind === 'float64'
          ? fillFloat64(cells, batch.start, n, column, validity, new Float64Array(out.buf.buffer, base, n))
          : fillInt64(cells, batch.start, n, column, validity, new Int32Array(out.buf.buffer, base, 2 * n),
              kind === 'timestamp' && nanos ? 1000 : 1);
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

function writeUtf8Values(
  out: StreamBuffer,
  cells: readonly Cells[],
  start: number,
  n: number,
  column: string,
  validity: Uint8Array,
  offsets: Int32Array,
): number {
  const dataAt = out.pos;
  let buf = out.buf;
  let pos = dataAt;
  let nulls = 0;
  offsets[0] = 0;
  for (let i = 0; i < n; i++) {
    const v = cells[start + i][column] as string | null | undefined;
    if (v == null) {
      nulls++;
    } else {
      validity[i >> 3] |= 1 << (i & 7);
      const len = v.length;
      if (len > 0) {
        if (buf.length - pos < len * 3) {
          const need = Buffer.byteLength(v, 'utf8');
          if (buf.length - pos < need) {
            out.pos = pos;
            out.grow(pos + need + (n - i) * 64);
            buf = out.buf;
          }
        }
        pos += buf.utf8Write(v, pos);
      }
    }
    offsets[i + 1] = pos - dataAt;
  }
  if (pos - dataAt > 0x7fffffff) throw new RangeError(`column ${column}: more than 2 GiB of text in one batch`);
  out.pos = pos;
  return nulls;
}

function fillBits(
  cells: readonly Cells[],
  start: number,
  n: number,
  column: string,
  validity: Uint8Array,
  bits: Uint8Array,
): number {
  let nulls = 0;
  for (let i = 0; i < n; i++) {
    const v = cells[start + i][column];
    if (v == null) {
      nulls++;
    } else {
      validity[i >> 3] |= 1 << (i & 7);
      if (v === 1 || v === true) bits[i >> 3] |= 1 << (i & 7);
    }
  }
  return nulls;
}

function fillFloat64(
  cells: readonly Cells[],
  start: number,
  n: number,
  column: string,
  validity: Uint8Array,
  values: Float64Array,
): number {
  let nulls = 0;
  for (let i = 0; i < n; i++) {
    const v = cells[start + i][column] as number | null | undefined;
    if (v == null) {
      nulls++;
      values[i] = 0;
    } else {
      validity[i >> 3] |= 1 << (i & 7);
      values[i] = v;
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
function fillInt64(
  cells: readonly Cells[],
  start: number,
  n: number,
  column: string,
  validity: Uint8Array,
  words: Int32Array,
  scale: number,
): number {
  let nulls = 0;
  for (let i = 0; i < n; i++) {
    const raw = cells[start + i][column] as number | null | undefined;
    if (raw == null) {
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

// ---------------------------------------------------------------------------------------
// Parquet (WebAssembly)

function ipcToParquet(
  ipc: Uint8Array,
  columns: readonly RunColumn[],
  codec: WasmCompression,
  rowGroupSize: number,
): Uint8Array {
  // Every builder method, build() and writeParquet() take ownership of (and free) their
  // receiver / arguments on the wasm side; the explicit free() calls below only run when a
  // step fails before ownership was handed over.
  let builder = new WriterPropertiesBuilder()
    .setCompression(codec)
    .setMaxRowGroupSize(rowGroupSize)
    .setCreatedBy(PARQUET_CREATED_BY);
  for (const c of columns) {
    if (NO_DICTIONARY.has(c)) builder = builder.setColumnDictionaryEnabled(c, false);
  }
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
