/**
 * Parquet encoding of exported runs.
 *
 * Rows become an Arrow IPC stream, written by hand into byte buffers, which parquet-wasm
 * (arrow-rs' Parquet writer compiled to WebAssembly) turns into a Parquet file.
 *
 * Column types follow what the real service writes: UTF-8 strings for ids, text and JSON
 * text; `is_root` boolean; token counts int64; costs float64; timestamps
 *  - `v2_beta`: Arrow Timestamp(MICROSECOND, "UTC") -> Parquet TIMESTAMP(MICROS, isAdjustedToUTC=true)
 *  - `v1`:      Arrow Timestamp(NANOSECOND)         -> Parquet TIMESTAMP(NANOS, isAdjustedToUTC=false)
 * All columns are nullable.
 *
 * Two ways to run the WebAssembly writer, same output:
 *  - worker (files of more than one record batch, i.e. > 16,384 rows or > 32 Mi chars of
 *    text): a long-lived worker thread runs parquet-wasm's streaming writer
 *    (`transformParquetStream`). The calling thread builds record batches and hands them
 *    over while the worker encodes the previous ones, then blocks (Atomics.wait +
 *    receiveMessageOnPort) until the file is complete, so the API stays synchronous.
 *    Building and encoding overlap on two cores, and memory stays bounded by a few batches
 *    plus one row group whatever the file size.
 *  - in-thread (one batch, or LOCALPLANE_PARQUET_WORKER=0): the IPC stream is handed to
 *    `Table.fromIPCStream` + `writeParquet` in the calling thread; WebAssembly memory then
 *    holds the IPC copy and the decoded table at once (and never shrinks).
 *  LOCALPLANE_PARQUET_WORKER=1 uses the worker for every non-empty file.
 *
 * Why the IPC stream is framed by hand: with apache-arrow's `makeData` +
 * `RecordBatchStreamWriter`, every column is a fresh allocation that is copied again when
 * the stream is joined, which made the JS side several times slower than the Parquet encoding
 * itself. Here each column buffer (validity bitmap, offsets, UTF-8 bytes, fixed-width values)
 * is written exactly once, in place, into a reused stream buffer; apache-arrow only encodes
 * the flatbuffer message headers.
 */
import { createRequire } from 'node:module';
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
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
  EnabledStatistics,
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
 * In-thread mode only: upper bound for the Arrow data of one file. The writer then holds the
 * IPC copy and the decoded table at once in a 32-bit (4 GiB) WebAssembly memory; running out
 * of it would abort the instance for the rest of the process, so larger inputs are refused.
 */
export const MAX_IN_THREAD_ARROW_BYTES = 1536 * 1024 * 1024;

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
 * Columns whose values are unique per run or per trace, or large free text: dictionary
 * encoding does not pay off for them (a file holds far more distinct values than a 1 MiB
 * dictionary page), so it is switched off to save the hashing work. Every other
 * column keeps the writer's default (dictionary, falling back to plain when it grows).
 */
const NO_DICTIONARY: ReadonlySet<RunColumn> = new Set<RunColumn>([
  'id', 'trace_id', 'parent_run_id', 'parent_run_ids', 'dotted_order', 'inputs', 'outputs', 'error', 'extra', 'events', 'feedback_stats',
  'start_time', 'end_time', 'first_token_time',
]);

/**
 * Large JSON / free-text columns: min/max statistics on them help no reader (nobody prunes
 * on the lexical order of JSON) but cost comparisons per value, so they are not written.
 * The other columns keep page + chunk statistics (e.g. pruning on start_time or ids).
 */
const NO_STATISTICS: ReadonlySet<RunColumn> = new Set<RunColumn>([
  'inputs', 'outputs', 'error', 'extra', 'events', 'feedback_stats',
]);

const WASM_COMPRESSION: Record<Compression, WasmCompression> = {
  none: WasmCompression.UNCOMPRESSED,
  gzip: WasmCompression.GZIP,
  snappy: WasmCompression.SNAPPY,
  zstandard: WasmCompression.ZSTD,
};

/** Writer settings, as plain data so they can be posted to the worker. */
interface WriterConfig {
  compression: WasmCompression;
  rowGroupSize: number;
  createdBy: string;
  noDictionary: string[];
  noStatistics: string[];
}

interface Plan {
  columns: RunColumn[];
  kinds: ColumnKind[];
  stringColumns: RunColumn[];
  nanos: boolean;
  schemaMessage: Uint8Array;
  /** Fixed-width bytes per row, all columns (offsets, values, bitmaps). */
  fixedPerRow: number;
  buffersPerBatch: number;
  config: WriterConfig;
}

/** Encodes the rows as one complete Parquet file. */
export function encodeRunsParquet(rows: readonly RunRow[], options: ParquetEncodeOptions): Uint8Array {
  const plan = makePlan(options);
  const batches = planBatches(rows, plan.stringColumns, BATCH_ROWS, BATCH_CHARS);
  // A single batch gains nothing from the worker (nothing to overlap), only a thread hop.
  const mode = process.env.LOCALPLANE_PARQUET_WORKER;
  if (batches.length > 0 && mode !== '0' && (batches.length > 1 || mode === '1')) {
    const encoder = getWorkerEncoder();
    if (encoder !== null) return encoder.encode(rows, plan, batches);
  }
  return encodeInThread(rows, plan, batches);
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
  const wanted = new Set<string>(options.columns);
  for (const c of wanted) {
    if (!Object.hasOwn(COLUMN_KINDS, c)) throw new Error(`unknown column: ${c}`);
  }
  const columns = RUN_COLUMNS.filter((c) => wanted.has(c));
  if (columns.length === 0) throw new Error('at least one column must be exported');

  const kinds = columns.map((c) => COLUMN_KINDS[c]);
  let fixedPerRow = 0;
  let buffersPerBatch = 0;
  for (const k of kinds) {
    fixedPerRow += FIXED_BYTES_PER_ROW[k] + 0.125;
    buffersPerBatch += BUFFERS_PER_KIND[k];
  }
  return {
    columns,
    kinds,
    stringColumns: columns.filter((c) => COLUMN_KINDS[c] === 'string'),
    nanos: formatVersion === 'v1',
    schemaMessage: Message.encode(Message.from(arrowSchemaFor(columns, formatVersion))),
    fixedPerRow,
    buffersPerBatch,
    config: {
      compression: codec,
      rowGroupSize,
      createdBy: PARQUET_CREATED_BY,
      noDictionary: columns.filter((c) => NO_DICTIONARY.has(c)),
      noStatistics: columns.filter((c) => NO_STATISTICS.has(c)),
    },
  };
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

/** Rows / text per record batch. */
const BATCH_ROWS = 16_384;
const BATCH_CHARS = 32 * 1024 * 1024;

/**
 * Cuts the rows into record batches of at most `maxRows` rows and about `maxChars` UTF-16
 * code units of text. A code unit takes at most 3 UTF-8 bytes, so with maxChars well below
 * 2^31 / 3 a string column of one batch always fits Int32 offsets.
 */
function planBatches(
  rows: readonly RunRow[],
  stringColumns: readonly RunColumn[],
  maxRows: number,
  maxChars: number,
): Batch[] {
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
    if (i > start && (i - start >= maxRows || chars + rowChars > maxChars)) {
      batches.push({ start, end: i, chars });
      start = i;
      chars = 0;
    }
    chars += rowChars;
  }
  if (cells.length > start) batches.push({ start, end: cells.length, chars });
  return batches;
}

function estimateBatchBytes(plan: Plan, batch: Batch): number {
  return Math.ceil((batch.end - batch.start) * plan.fixedPerRow) + batch.chars + 512 + 40 * plan.buffersPerBatch;
}

/**
 * Serializes the rows as one Arrow IPC stream (schema message, record batches, end-of-stream
 * marker), as handed to parquet-wasm. Exported for tests and benchmarks.
 */
export function encodeArrowIpcStream(
  rows: readonly RunRow[],
  columns: readonly RunColumn[],
  formatVersion: FormatVersion,
): Uint8Array {
  const plan = makePlan({ formatVersion, compression: 'none', columns, rowGroupSize: 1 });
  const batches = planBatches(rows, plan.stringColumns, BATCH_ROWS, BATCH_CHARS);
  return buildWholeStream(rows, plan, batches, new StreamBuffer(Buffer.alloc(0))).bytes();
}

function buildWholeStream(rows: readonly RunRow[], plan: Plan, batches: readonly Batch[], out: StreamBuffer): StreamBuffer {
  let estimate = plan.schemaMessage.byteLength + 64;
  for (const b of batches) estimate += estimateBatchBytes(plan, b);
  out.reset(estimate);
  out.writeMessage(plan.schemaMessage);
  for (const b of batches) writeRecordBatch(out, rows, b, plan);
  out.writeEndOfStream();
  return out;
}

/** A self-contained IPC stream holding one record batch (what the worker takes). */
function buildBatchStream(rows: readonly RunRow[], plan: Plan, batch: Batch, out: StreamBuffer): void {
  out.reset(plan.schemaMessage.byteLength + estimateBatchBytes(plan, batch) + 64);
  out.writeMessage(plan.schemaMessage);
  writeRecordBatch(out, rows, batch, plan);
  out.writeEndOfStream();
}

type Cells = Record<string, unknown>;

const align8 = (n: number): number => (n + 7) & ~7;

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
    if (this.buf.length < capacity) this.buf = Buffer.allocUnsafeSlow(Math.max(64, Math.ceil(capacity * 1.25)));
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

function encodeBatchHeader(length: number, nodes: FieldNode[], regions: BufferRegion[], bodyLength: number): Uint8Array {
  return Message.encode(Message.from(new RecordBatchHeader(length, nodes, regions, null), bodyLength));
}

// Scratch space for one batch's validity bitmap / value bits / offsets (reused, grown on demand).
let scratchOffsets = new Int32Array(0);
let scratchValidity = new Uint8Array(0);
let scratchBits = new Uint8Array(0);

function writeRecordBatch(out: StreamBuffer, rows: readonly RunRow[], batch: Batch, plan: Plan): void {
  const { columns, kinds } = plan;
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
    // validity bitmap region first; filled in once the column has been scanned
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
      const base = out.buf.byteOffset + dataAt; // 8-aligned: buffers come from allocUnsafeSlow
      nulls =
        kind === 'float64'
          ? fillFloat64(cells, batch.start, n, column, validity, new Float64Array(out.buf.buffer, base, n))
          : fillInt64(cells, batch.start, n, column, validity, new Int32Array(out.buf.buffer, base, 2 * n),
              kind === 'timestamp' && plan.nanos ? 1000 : 1);
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

/** Strings up to this many code units are copied byte by byte in JS when ASCII. */
const SHORT_STRING = 24;

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
  // The previous value and where its bytes are: runs of equal values (tenant, session,
  // trace ids, names...) are copied instead of encoded again.
  let prev: string | null = null;
  let prevAt = 0;
  let prevBytes = 0;
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
        if (v === prev) {
          if (prevBytes <= SHORT_STRING) {
            for (let j = 0; j < prevBytes; j++) buf[pos + j] = buf[prevAt + j];
          } else {
            buf.copyWithin(pos, prevAt, prevAt + prevBytes);
          }
          pos += prevBytes;
        } else {
          const at = pos;
          // Short strings: a JS loop beats the fixed cost of a native Buffer.write call.
          let j = 0;
          if (len <= SHORT_STRING) {
            for (; j < len; j++) {
              const code = v.charCodeAt(j);
              if (code > 0x7f) break;
              buf[at + j] = code;
            }
          }
          pos += j === len ? len : buf.write(v, at);
          prev = v;
          prevAt = at;
          prevBytes = pos - at;
        }
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
// Buffer reuse. Writing into freshly allocated memory costs a page fault per 4 KiB, a large
// share of the encoding time, so stream buffers are kept between calls: buffers up to
// MAX_KEPT_BUFFER_BYTES, until the process has not encoded anything for KEEP_BUFFERS_MS.
// The worker (and with it its WebAssembly memory, which cannot shrink) goes at that point too.

const MAX_KEPT_BUFFER_BYTES = 512 * 1024 * 1024;
const KEEP_BUFFERS_MS = 15_000;
const releaseCallbacks: (() => void)[] = [];
let releaseTimer: ReturnType<typeof setTimeout> | null = null;

function touchBufferKeeper(): void {
  if (releaseTimer !== null) clearTimeout(releaseTimer);
  releaseTimer = setTimeout(() => {
    releaseTimer = null;
    for (const release of releaseCallbacks) release();
  }, KEEP_BUFFERS_MS);
  releaseTimer.unref();
}

// ---------------------------------------------------------------------------------------
// In-thread encoding

let inThreadBuffer: Buffer | null = null;
releaseCallbacks.push(() => {
  inThreadBuffer = null;
});

function encodeInThread(rows: readonly RunRow[], plan: Plan, batches: readonly Batch[]): Uint8Array {
  const out = new StreamBuffer(inThreadBuffer ?? Buffer.alloc(0));
  inThreadBuffer = null;
  try {
    buildWholeStream(rows, plan, batches, out);
    if (out.pos > MAX_IN_THREAD_ARROW_BYTES) {
      throw new RangeError(
        `${rows.length} runs take ${out.pos} bytes as Arrow data, more than the ` +
          `${MAX_IN_THREAD_ARROW_BYTES} bytes allowed when encoding in-thread; write fewer runs per file`,
      );
    }
    return writeTableInThread(out.bytes(), plan.config);
  } finally {
    if (out.buf.length <= MAX_KEPT_BUFFER_BYTES) inThreadBuffer = out.buf;
    touchBufferKeeper();
  }
}

function writerProperties(config: WriterConfig) {
  let builder = new WriterPropertiesBuilder()
    .setCompression(config.compression)
    .setMaxRowGroupSize(config.rowGroupSize)
    .setCreatedBy(config.createdBy);
  for (const c of config.noDictionary) builder = builder.setColumnDictionaryEnabled(c, false);
  for (const c of config.noStatistics) builder = builder.setColumnStatisticsEnabled(c, EnabledStatistics.None);
  return builder.build();
}

function writeTableInThread(ipc: Uint8Array, config: WriterConfig): Uint8Array {
  // Every builder method, build() and writeParquet() take ownership of (and free) their
  // receiver / arguments on the wasm side; the explicit free() below only runs when a step
  // fails before ownership was handed over.
  const properties = writerProperties(config);
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
// Worker encoding

/** Batches posted to the worker and not yet taken in by its writer. */
const MAX_BATCHES_IN_FLIGHT = 2;
/** No sign of life from the worker for this long while waiting on it: give up. */
const WORKER_STALL_MS = 300_000;

type FromWorker =
  | { type: 'recycle'; jobId: number; buffer: ArrayBuffer }
  | { type: 'done'; jobId: number; buffer: ArrayBuffer; length: number; wasmMemory: number }
  | { type: 'error'; jobId: number; message: string };

/**
 * Worker source (CommonJS, evaluated). Messages from the calling thread:
 *   start {jobId, config, rows} / batch {jobId, buffer, length} / end {jobId}
 * Messages back (each followed by a bump + notify of the shared signal word):
 *   recycle {jobId, buffer} once a batch is copied into wasm (the buffer goes back for reuse),
 *   done {jobId, buffer, length, wasmMemory} / error {jobId, message}.
 * Batches are fed to transformParquetStream only when its writer pulls (highWaterMark 0),
 * so wasm memory holds one batch plus the open row group.
 */
const WORKER_SOURCE = String.raw`
'use strict';
const { workerData } = require('node:worker_threads');
const pw = require(workerData.parquetWasmPath);
const port = workerData.port;
const signal = new Int32Array(workerData.signal);

function send(message, transfer) {
  port.postMessage(message, transfer || []);
  Atomics.add(signal, 0, 1);
  Atomics.notify(signal, 0);
}
function describe(err) {
  return String((err && err.stack) || err);
}
function properties(config) {
  let b = new pw.WriterPropertiesBuilder()
    .setCompression(config.compression)
    .setMaxRowGroupSize(config.rowGroupSize)
    .setCreatedBy(config.createdBy);
  for (const c of config.noDictionary) b = b.setColumnDictionaryEnabled(c, false);
  for (const c of config.noStatistics) b = b.setColumnStatisticsEnabled(c, pw.EnabledStatistics.None);
  return b.build();
}
let job = null;

function startJob(msg) {
  const state = { id: msg.jobId, pending: [], ended: false, wake: null, error: null };
  const feed = (controller) => {
    if (state.error) {
      controller.error(state.error);
      return true;
    }
    if (state.pending.length > 0) {
      const batch = state.pending.shift();
      let table;
      try {
        table = pw.Table.fromIPCStream(new Uint8Array(batch.buffer, 0, batch.length));
      } catch (err) {
        state.error = err;
        controller.error(err);
        return true;
      }
      send({ type: 'recycle', jobId: state.id, buffer: batch.buffer }, [batch.buffer]);
      const n = table.numBatches;
      for (let i = 0; i < n; i++) controller.enqueue(table.recordBatch(i));
      table.free();
      return true;
    }
    if (state.ended) {
      controller.close();
      return true;
    }
    return false;
  };
  const input = new ReadableStream(
    {
      pull(controller) {
        if (feed(controller)) return undefined;
        return new Promise((resolve) => {
          state.wake = () => {
            if (feed(controller)) {
              state.wake = null;
              resolve();
            }
          };
        });
      },
    },
    { highWaterMark: 0 },
  );
  const done = (async () => {
    const output = await pw.transformParquetStream(input, properties(msg.config));
    const reader = output.getReader();
    const chunks = [];
    let total = 0;
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      chunks.push(value);
      total += value.byteLength;
    }
    if (state.error) throw state.error;
    const bytes = new Uint8Array(total);
    let at = 0;
    for (const c of chunks) {
      bytes.set(c, at);
      at += c.byteLength;
    }
    return bytes;
  })();
  done.then(
    (bytes) => {
      if (job === state) job = null;
      send(
        { type: 'done', jobId: state.id, buffer: bytes.buffer, length: bytes.byteLength,
          wasmMemory: pw.wasmMemory().buffer.byteLength },
        [bytes.buffer],
      );
    },
    (err) => {
      if (job === state) job = null;
      send({ type: 'error', jobId: state.id, message: describe(err) });
    },
  );
  job = state;
}

port.on('message', (msg) => {
  try {
    if (msg.type === 'start') {
      if (job) {
        job.error = new Error('superseded');
        if (job.wake) job.wake();
      }
      startJob(msg);
    } else if (!job || msg.jobId !== job.id) {
      if (msg.type === 'batch') send({ type: 'recycle', jobId: msg.jobId, buffer: msg.buffer }, [msg.buffer]);
    } else if (msg.type === 'batch') {
      job.pending.push(msg);
      if (job.wake) job.wake();
    } else if (msg.type === 'end') {
      job.ended = true;
      if (job.wake) job.wake();
    }
  } catch (err) {
    send({ type: 'error', jobId: msg && msg.jobId ? msg.jobId : 0, message: describe(err) });
  }
});
process.on('uncaughtException', (err) => send({ type: 'error', jobId: job ? job.id : 0, message: describe(err) }));
process.on('unhandledRejection', (err) => send({ type: 'error', jobId: job ? job.id : 0, message: describe(err) }));
`;

let workerEncoder: WorkerEncoder | null = null;
let workerUnavailable = false;
releaseCallbacks.push(() => workerEncoder?.discard());
let lastWorkerWasmMemory = 0;

/**
 * Size of the encoder worker's WebAssembly memory after its last file (0 before the first);
 * wasm memory never shrinks, so this is its high-water mark. For leak checks.
 */
export function parquetWorkerWasmMemoryBytes(): number {
  return lastWorkerWasmMemory;
}

function getWorkerEncoder(): WorkerEncoder | null {
  if (workerEncoder !== null && !workerEncoder.dead) return workerEncoder;
  workerEncoder = null;
  if (workerUnavailable) return null;
  try {
    workerEncoder = new WorkerEncoder();
  } catch {
    workerUnavailable = true; // e.g. worker threads not permitted: encode in-thread
    return null;
  }
  return workerEncoder;
}

class WorkerEncoder {
  private readonly worker: Worker;
  private readonly port: MessagePort;
  private readonly signal: Int32Array;
  private pool: Buffer[] = [];
  private inFlight = 0;
  private jobId = 0;
  private expectedRows = 0;
  dead = false;

  constructor() {
    const parquetWasmPath = createRequire(import.meta.url).resolve('parquet-wasm/node');
    const sharedSignal = new SharedArrayBuffer(4);
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    this.signal = new Int32Array(sharedSignal);
    this.worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { parquetWasmPath, port: port2, signal: sharedSignal },
      transferList: [port2],
    });
    this.worker.unref();
    this.worker.on('error', () => this.discard());
    this.worker.on('exit', () => this.discard());
  }

  encode(rows: readonly RunRow[], plan: Plan, batches: readonly Batch[]): Uint8Array {
    const jobId = ++this.jobId;
    this.inFlight = 0;
    this.expectedRows = rows.length;
    try {
      this.port.postMessage({ type: 'start', jobId, config: plan.config, rows: rows.length });
      for (const batch of batches) {
        const out = new StreamBuffer(this.takeBuffer(jobId));
        buildBatchStream(rows, plan, batch, out);
        const buffer = out.buf.buffer as ArrayBuffer;
        this.port.postMessage({ type: 'batch', jobId, buffer, length: out.pos }, [buffer]);
        this.inFlight++;
      }
      this.port.postMessage({ type: 'end', jobId });
      for (;;) {
        const msg = this.receive(true)!;
        const result = this.handle(msg, jobId);
        if (result !== undefined) return result;
      }
    } catch (err) {
      // The worker's state is unknown now (or it failed): start afresh next time.
      this.discard();
      throw err;
    } finally {
      touchBufferKeeper();
    }
  }

  /** A buffer for the next batch: a recycled one, once fewer than the limit are in flight. */
  private takeBuffer(jobId: number): Buffer {
    for (let msg = this.receive(false); msg !== undefined; msg = this.receive(false)) this.handle(msg, jobId);
    while (this.inFlight >= MAX_BATCHES_IN_FLIGHT) this.handle(this.receive(true)!, jobId);
    return this.pool.pop() ?? Buffer.alloc(0);
  }

  /** Applies one message; returns the file once the job is done. */
  private handle(msg: FromWorker, jobId: number): Uint8Array | undefined {
    if (msg.type === 'recycle') {
      if (msg.jobId === jobId) this.inFlight--;
      if (msg.buffer.byteLength <= MAX_KEPT_BUFFER_BYTES && this.pool.length < MAX_BATCHES_IN_FLIGHT + 1) {
        this.pool.push(Buffer.from(msg.buffer));
      }
      return undefined;
    }
    if (msg.jobId !== jobId && msg.jobId !== 0) return undefined; // left over from an abandoned job
    if (msg.type === 'error') throw new Error(`parquet encoder worker failed: ${msg.message}`);
    lastWorkerWasmMemory = msg.wasmMemory;
    const file = new Uint8Array(msg.buffer, 0, msg.length);
    // transformParquetStream drops write errors silently: make sure every row is in the file.
    const written = parquetFileRowCount(file);
    if (written !== this.expectedRows) {
      throw new Error(`parquet encoder worker wrote ${written} rows, expected ${this.expectedRows}`);
    }
    return file;
  }

  /** Next message from the worker; blocks the thread (Atomics.wait) if `block`. */
  private receive(block: boolean): FromWorker | undefined {
    let idleSince = performance.now();
    for (;;) {
      const seen = Atomics.load(this.signal, 0);
      const got = receiveMessageOnPort(this.port);
      if (got !== undefined) return got.message as FromWorker;
      if (!block) return undefined;
      if (Atomics.wait(this.signal, 0, seen, 1000) === 'timed-out') {
        if (this.dead || this.worker.threadId === -1) throw new Error('parquet encoder worker exited');
        if (performance.now() - idleSince > WORKER_STALL_MS) throw new Error('parquet encoder worker stalled');
      } else {
        idleSince = performance.now();
      }
    }
  }

  discard(): void {
    if (this.dead) return;
    this.dead = true;
    this.pool = [];
    this.port.close();
    void this.worker.terminate();
    if (workerEncoder === this) workerEncoder = null;
  }
}

// ---------------------------------------------------------------------------------------
// Parquet footer

/**
 * `num_rows` from a Parquet file's footer (FileMetaData, Thrift compact protocol: field 1
 * version, field 2 schema, field 3 num_rows). Throws if the bytes are not a complete file.
 */
export function parquetFileRowCount(file: Uint8Array): number {
  const n = file.length;
  const magic = (at: number) =>
    file[at] === 0x50 && file[at + 1] === 0x41 && file[at + 2] === 0x52 && file[at + 3] === 0x31; // PAR1
  if (n < 12 || !magic(0) || !magic(n - 4)) throw new Error('not a complete Parquet file');
  const metaLength = (file[n - 8] | (file[n - 7] << 8) | (file[n - 6] << 16) | (file[n - 5] << 24)) >>> 0;
  if (metaLength > n - 12) throw new Error('corrupt Parquet footer length');
  const reader = new CompactReader(file, n - 8 - metaLength, n - 8);
  let fieldId = 0;
  for (;;) {
    const header = reader.byte();
    const type = header & 0x0f;
    if (type === 0) break;
    const delta = header >> 4;
    fieldId = delta !== 0 ? fieldId + delta : reader.zigzag();
    if (fieldId === 3 && type === 6) return reader.zigzag();
    reader.skip(type);
  }
  throw new Error('Parquet footer has no num_rows');
}

class CompactReader {
  constructor(
    private readonly bytes: Uint8Array,
    private pos: number,
    private readonly end: number,
  ) {}

  byte(): number {
    if (this.pos >= this.end) throw new Error('truncated Parquet footer');
    return this.bytes[this.pos++];
  }

  varint(): number {
    let result = 0;
    let scale = 1;
    for (;;) {
      const b = this.byte();
      result += (b & 0x7f) * scale;
      if (b < 0x80) return result;
      scale *= 128;
    }
  }

  zigzag(): number {
    const v = this.varint();
    return v % 2 === 0 ? v / 2 : -(v + 1) / 2;
  }

  skip(type: number): void {
    switch (type) {
      case 1: // boolean true / false: the value is in the type
      case 2:
        return;
      case 3: // byte
        this.pos += 1;
        return;
      case 4: // i16, i32, i64: varints
      case 5:
      case 6:
        this.varint();
        return;
      case 7: // double
        this.pos += 8;
        return;
      case 8: {
        // binary (read the length first: \`this.pos += this.varint()\` would add to the old pos)
        const length = this.varint();
        this.pos += length;
        return;
      }
      case 9: // list, set
      case 10: {
        const header = this.byte();
        const size = header >> 4 === 15 ? this.varint() : header >> 4;
        const elementType = header & 0x0f;
        for (let i = 0; i < size; i++) {
          if (elementType === 1 || elementType === 2) this.pos += 1; // booleans are a byte in lists
          else this.skip(elementType);
        }
        return;
      }
      case 11: {
        const size = this.varint();
        if (size === 0) return;
        const types = this.byte();
        for (let i = 0; i < size; i++) {
          this.skip(types >> 4);
          this.skip(types & 0x0f);
        }
        return;
      }
      case 12: // struct
        for (;;) {
          const header = this.byte();
          const fieldType = header & 0x0f;
          if (fieldType === 0) return;
          if (header >> 4 === 0) this.zigzag(); // long-form field id
          this.skip(fieldType);
        }
      default:
        throw new Error(`unknown Thrift compact type ${type} in Parquet footer`);
    }
  }
}
