import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { tableFromIPC, TimeUnit, type Timestamp } from 'apache-arrow';
import { wasmMemory } from 'parquet-wasm/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeArrowIpcStream, encodeRunsParquet, type ParquetEncodeOptions } from '../../src/bulk-exports/parquet.ts';
import type { Compression, FormatVersion } from '../../src/bulk-exports/schemas.ts';
import { createRandom, pick, randomInt, type Random } from '../../src/shared/prng.ts';
import { uuidFrom } from '../../src/shared/ids.ts';
import { RUN_COLUMNS, type RunColumn, type RunRow } from '../../src/tracing/schema.ts';

const STRING_COLUMNS = [
  'id',
  'tenant_id',
  'session_id',
  'trace_id',
  'parent_run_id',
  'parent_run_ids',
  'reference_example_id',
  'name',
  'run_type',
  'status',
  'dotted_order',
  'trace_tier',
  'inputs',
  'outputs',
  'error',
  'extra',
  'events',
  'tags',
  'feedback_stats',
] as const satisfies readonly RunColumn[];
const TIME_COLUMNS = ['start_time', 'end_time', 'first_token_time'] as const satisfies readonly RunColumn[];
const TOKEN_COLUMNS = ['total_tokens', 'prompt_tokens', 'completion_tokens'] as const satisfies readonly RunColumn[];
const COST_COLUMNS = ['total_cost', 'prompt_cost', 'completion_cost'] as const satisfies readonly RunColumn[];

const UNICODE_SAMPLES = [
  'héllo wörld',
  '日本語のテキスト',
  'emoji 🚀🔥👩‍💻 and more',
  'Ελληνικά',
  'عربى',
  'a\u0301 combining',
  'quote " backslash \\ newline \n tab \t',
  '𝔘𝔫𝔦𝔠𝔬𝔡𝔢 astral',
  '',
];
const NAMES = ['ChatOpenAI', 'RunnableSequence', 'retriever', 'Prompt💬', 'parse_output', 'embed'];
const RUN_TYPES: RunRow['run_type'][] = ['chain', 'llm', 'tool', 'retriever', 'prompt', 'parser', 'embedding'];

function dottedSegment(micros: number, id: string): string {
  const iso = new Date(Math.floor(micros / 1000)).toISOString(); // 2024-05-29T16:33:20.123Z
  const frac = String(micros % 1_000_000).padStart(6, '0');
  return `${iso.slice(0, 19).replace(/[-:]/g, '')}${frac}Z${id}`;
}

function maybe<T>(random: Random, value: T, nullProbability = 0.2): T | null {
  return random() < nullProbability ? null : value;
}

/** Varied runs: traces of 1-6 runs, nulls in every nullable column, unicode, pending runs. */
function makeRows(count: number, seed: number): RunRow[] {
  const random = createRandom(seed);
  const tenant = uuidFrom(random);
  const sessions = [uuidFrom(random), uuidFrom(random)];
  const rows: RunRow[] = [];
  let time = Date.UTC(2024, 4, 29, 16, 33, 20) * 1000 + 123_456;
  while (rows.length < count) {
    const traceSize = randomInt(random, 1, 6);
    const traceId = uuidFrom(random);
    const session = pick(random, sessions);
    const rootStart = time;
    const ancestors: string[] = [];
    const segments: string[] = [];
    for (let k = 0; k < traceSize && rows.length < count; k++) {
      const id = k === 0 ? traceId : uuidFrom(random);
      const start = rootStart + k * randomInt(random, 1, 5_000_000) + randomInt(random, 0, 999);
      const pending = random() < 0.1;
      const status: RunRow['status'] = pending ? 'pending' : random() < 0.15 ? 'error' : 'success';
      const text = `${pick(random, UNICODE_SAMPLES)} #${rows.length}`;
      const prompt = maybe(random, randomInt(random, 0, 5_000));
      const completion = maybe(random, randomInt(random, 0, 2_000));
      const parent = ancestors.length > 0 ? ancestors[ancestors.length - 1]! : null;
      segments.push(dottedSegment(start, id));
      rows.push({
        id,
        tenant_id: tenant,
        session_id: session,
        trace_id: traceId,
        parent_run_id: parent,
        parent_run_ids: JSON.stringify(ancestors),
        reference_example_id: maybe(random, uuidFrom(random), 0.8),
        name: pick(random, NAMES),
        run_type: pick(random, RUN_TYPES),
        start_time: start,
        end_time: pending ? null : start + randomInt(random, 0, 30_000_000),
        status,
        is_root: k === 0 ? 1 : 0,
        dotted_order: segments.join('.'),
        trace_tier: maybe(random, pick(random, ['longlived', 'shortlived']), 0.3),
        inputs: maybe(random, JSON.stringify({ messages: [{ role: 'user', content: text }] }), 0.05),
        outputs: pending ? null : maybe(random, JSON.stringify({ output: text.split('').reverse().join('') })),
        error: status === 'error' ? `ValueError: ${text}` : null,
        extra: maybe(random, JSON.stringify({ metadata: { ls_provider: 'openai', n: rows.length } })),
        events: maybe(random, JSON.stringify([{ name: 'start', time: new Date(start / 1000).toISOString() }])),
        tags: maybe(random, JSON.stringify(random() < 0.5 ? [] : ['prod', text])),
        feedback_stats: maybe(random, JSON.stringify({ correctness: { n: 1, avg: random() } }), 0.7),
        total_tokens: prompt !== null && completion !== null ? prompt + completion : null,
        prompt_tokens: prompt,
        completion_tokens: completion,
        total_cost: prompt !== null ? (prompt * 3 + (completion ?? 0) * 15) / 1e6 : null,
        prompt_cost: prompt !== null ? (prompt * 3) / 1e6 : null,
        completion_cost: completion !== null ? (completion * 15) / 1e6 : null,
        first_token_time: pending || random() < 0.5 ? null : start + randomInt(random, 1, 999_999),
      });
      ancestors.push(id);
    }
    time += randomInt(random, 1, 60_000_000);
  }
  // Edge cases: big text (buffer growth), multi-byte text, extreme but valid times.
  rows[7]!.inputs = JSON.stringify({ blob: 'x'.repeat(300_000) });
  rows[8]!.outputs = JSON.stringify({ blob: '漢字🚀'.repeat(40_000) });
  rows[9]!.start_time = -86_400_000_000 * 365 + 1; // 1969, negative micros
  rows[9]!.end_time = null;
  rows[10]!.start_time = Date.UTC(2250, 0, 1) * 1000 + 999_999; // close to the TIMESTAMP_NS limit
  rows[11]!.start_time = 0;
  return rows;
}

const COMPRESSIONS: { compression: Compression; codec: string }[] = [
  { compression: 'none', codec: 'UNCOMPRESSED' },
  { compression: 'gzip', codec: 'GZIP' },
  { compression: 'snappy', codec: 'SNAPPY' },
  { compression: 'zstandard', codec: 'ZSTD' },
];
const FORMATS: { formatVersion: FormatVersion; timestampType: string; epoch: string; perMicro: bigint }[] = [
  { formatVersion: 'v2_beta', timestampType: 'TIMESTAMP WITH TIME ZONE', epoch: 'epoch_us', perMicro: 1n },
  { formatVersion: 'v1', timestampType: 'TIMESTAMP_NS', epoch: 'epoch_ns', perMicro: 1000n },
];
const EXPECTED_TYPES: Record<RunColumn, string | null> = Object.fromEntries(
  RUN_COLUMNS.map((c) => [c, null]),
) as Record<RunColumn, string | null>;
for (const c of STRING_COLUMNS) EXPECTED_TYPES[c] = 'VARCHAR';
for (const c of TOKEN_COLUMNS) EXPECTED_TYPES[c] = 'BIGINT';
for (const c of COST_COLUMNS) EXPECTED_TYPES[c] = 'DOUBLE';
EXPECTED_TYPES.is_root = 'BOOLEAN';

const ROW_GROUP_SIZE = 300;

let dir: string;
let db: DuckDBInstance;
let conn: DuckDBConnection;
let rows: RunRow[];
let fileCounter = 0;
let manyRows: RunRow[] | undefined;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'parquet-encode-'));
  db = await DuckDBInstance.create(':memory:');
  conn = await db.connect();
  rows = makeRows(2_000, 20240529);
});

afterAll(() => {
  conn?.closeSync();
  db?.closeSync();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function writeParquetFile(data: readonly RunRow[], options: ParquetEncodeOptions): string {
  const bytes = encodeRunsParquet(data, options);
  expect(bytes).toBeInstanceOf(Uint8Array);
  // "PAR1" magic at both ends
  expect(Buffer.from(bytes.subarray(0, 4)).toString('latin1')).toBe('PAR1');
  expect(Buffer.from(bytes.subarray(bytes.length - 4)).toString('latin1')).toBe('PAR1');
  const path = join(dir, `f${fileCounter++}.parquet`);
  writeFileSync(path, bytes);
  return path;
}

async function query(sql: string): Promise<Record<string, unknown>[]> {
  const reader = await conn.runAndReadAll(sql);
  return reader.getRowObjects() as Record<string, unknown>[];
}

async function countRows(path: string): Promise<number> {
  const [count] = await query(`SELECT count(*) AS n FROM read_parquet('${path}')`);
  return Number(count!.n);
}

async function describeColumns(path: string): Promise<[string, string][]> {
  const described = await query(`DESCRIBE SELECT * FROM read_parquet('${path}')`);
  return described.map((r) => [String(r.column_name), String(r.column_type)]);
}

function toBigInt(v: unknown): bigint | null {
  return v === null ? null : BigInt(v as bigint | number);
}

/** Reads every column back in file order and compares it with the source rows. */
async function expectRowsRoundTrip(
  path: string,
  want: readonly RunRow[],
  epoch: string,
  perMicro: bigint,
): Promise<void> {
  const timeSelect = TIME_COLUMNS.map((c) => `${epoch}(${c}) AS ${c}`).join(', ');
  const plain = RUN_COLUMNS.filter((c) => !(TIME_COLUMNS as readonly string[]).includes(c)).join(', ');
  const back = await query(
    `SELECT ${plain}, ${timeSelect} FROM read_parquet('${path}', file_row_number = true) ORDER BY file_row_number`,
  );
  expect(back.length).toBe(want.length);
  expect(back.map((r) => r.id)).toEqual(want.map((r) => r.id));
  const mismatches: string[] = [];
  const check = (ok: boolean, column: string, i: number, got: unknown, expected: unknown) => {
    if (!ok && mismatches.length < 20)
      mismatches.push(`row ${i} ${column}: got ${String(got)}, want ${String(expected)}`);
  };
  for (let i = 0; i < want.length; i++) {
    const w = want[i]!;
    const g = back[i]!;
    for (const c of STRING_COLUMNS) check(g[c] === w[c], c, i, g[c], w[c]);
    check(g.is_root === (w.is_root === 1), 'is_root', i, g.is_root, w.is_root);
    for (const c of TOKEN_COLUMNS) {
      const expected = w[c] === null ? null : BigInt(w[c]);
      check(toBigInt(g[c]) === expected, c, i, g[c], expected);
    }
    for (const c of COST_COLUMNS) check(g[c] === w[c], c, i, g[c], w[c]);
    for (const c of TIME_COLUMNS) {
      const expected = w[c] === null ? null : BigInt(w[c]) * perMicro;
      check(toBigInt(g[c]) === expected, c, i, g[c], expected);
    }
  }
  expect(mismatches).toEqual([]);
}

describe('encodeArrowIpcStream', () => {
  it('frames a stream that apache-arrow reads back', () => {
    for (const { formatVersion, perMicro } of FORMATS) {
      const table = tableFromIPC(encodeArrowIpcStream(rows, RUN_COLUMNS, formatVersion));
      expect(table.numRows).toBe(rows.length);
      expect(table.schema.fields.map((f) => f.name)).toEqual([...RUN_COLUMNS]);
      expect(table.schema.fields.every((f) => f.nullable)).toBe(true);
      const start = table.schema.fields.find((f) => f.name === 'start_time')!.type as Timestamp;
      expect(start.unit).toBe(formatVersion === 'v1' ? TimeUnit.NANOSECOND : TimeUnit.MICROSECOND);
      expect(start.timezone ?? null).toBe(formatVersion === 'v1' ? null : 'UTC');
      const ids = table.getChild('id')!;
      const inputs = table.getChild('inputs')!;
      const ends = table.getChild('end_time')!;
      for (let i = 0; i < rows.length; i += 97) {
        expect(ids.get(i)).toBe(rows[i]!.id);
        expect(inputs.get(i)).toBe(rows[i]!.inputs);
        const end = rows[i]!.end_time;
        expect(ends.isValid(i)).toBe(end !== null);
      }
      // raw int64 values (the stream holds one record batch)
      const raw = ends.data[0]!.values as BigInt64Array;
      const firstEnd = rows.findIndex((r) => r.end_time !== null);
      expect(raw[firstEnd]).toBe(BigInt(rows[firstEnd]!.end_time!) * perMicro);
    }
  });
});

describe('encodeRunsParquet', () => {
  for (const { formatVersion, timestampType, epoch, perMicro } of FORMATS) {
    for (const { compression, codec } of COMPRESSIONS) {
      it(`round-trips all columns through DuckDB (${formatVersion}, ${compression})`, async () => {
        const path = writeParquetFile(rows, {
          formatVersion,
          compression,
          columns: RUN_COLUMNS,
          rowGroupSize: ROW_GROUP_SIZE,
        });

        // column names and types
        const described = await describeColumns(path);
        expect(described.map(([name]) => name)).toEqual([...RUN_COLUMNS]);
        for (const [name, type] of described) {
          const expected = EXPECTED_TYPES[name as RunColumn] ?? timestampType;
          expect(type, name).toBe(expected);
        }

        await expectRowsRoundTrip(path, rows, epoch, perMicro);

        // Parquet logical type of timestamps: UTC-adjusted micros (v2_beta) / local nanos (v1)
        const schema = await query(
          `SELECT name, logical_type FROM parquet_schema('${path}') WHERE name IN ('start_time', 'end_time', ` +
            `'first_token_time')`,
        );
        expect(schema.length).toBe(3);
        for (const s of schema) {
          const logical = String(s.logical_type);
          if (formatVersion === 'v2_beta') {
            expect(logical).toMatch(/isAdjustedToUTC=1/);
            expect(logical).toMatch(/MICROS/);
          } else {
            expect(logical).toMatch(/isAdjustedToUTC=0/);
            expect(logical).toMatch(/NANOS/);
          }
        }

        // codec per column chunk, row group sizes
        const meta = await query(
          `SELECT row_group_id, row_group_num_rows, path_in_schema, compression FROM parquet_metadata('${path}')`,
        );
        expect(meta.length).toBeGreaterThan(0);
        expect(new Set(meta.map((m) => m.compression))).toEqual(new Set([codec]));
        expect(new Set(meta.map((m) => m.path_in_schema))).toEqual(new Set(RUN_COLUMNS));
        const groups = new Map<number, number>();
        for (const m of meta) groups.set(Number(m.row_group_id), Number(m.row_group_num_rows));
        expect(groups.size).toBe(Math.ceil(rows.length / ROW_GROUP_SIZE));
        for (const n of groups.values()) expect(n).toBeLessThanOrEqual(ROW_GROUP_SIZE);
        expect([...groups.values()].reduce((a, b) => a + b, 0)).toBe(rows.length);

        const [file] = await query(`SELECT created_by, num_rows FROM parquet_file_metadata('${path}')`);
        expect(String(file!.created_by)).toContain('localplane');
        expect(Number(file!.num_rows)).toBe(rows.length);
      });
    }
  }

  it('keeps values across row-group boundaries (4,000 runs)', async () => {
    manyRows ??= makeRows(4_000, 42);
    const many = manyRows;
    for (const { formatVersion, epoch, perMicro } of FORMATS) {
      const path = writeParquetFile(many, {
        formatVersion,
        compression: 'snappy',
        columns: RUN_COLUMNS,
        rowGroupSize: 1_234,
      });
      await expectRowsRoundTrip(path, many, epoch, perMicro);
      const groups = await query(
        `SELECT DISTINCT row_group_id, row_group_num_rows FROM parquet_metadata('${path}') ORDER BY row_group_id`,
      );
      expect(groups.map((g) => Number(g.row_group_num_rows))).toEqual([1_234, 1_234, 1_234, 298]);
    }
  });

  it('recovers after a failure in the middle of a file', async () => {
    manyRows ??= makeRows(4_000, 42);
    const options: ParquetEncodeOptions = {
      formatVersion: 'v2_beta',
      compression: 'snappy',
      columns: RUN_COLUMNS,
      rowGroupSize: 1_000,
    };
    const broken = manyRows.slice();
    broken[3_000] = { ...broken[3_000]! };
    Object.defineProperty(broken[3_000], 'inputs', {
      get() {
        throw new Error('row source failed');
      },
    });
    expect(() => encodeRunsParquet(broken, options)).toThrow('row source failed');
    expect(await countRows(writeParquetFile(manyRows, options))).toBe(manyRows.length);
    expect(await countRows(writeParquetFile(rows, options))).toBe(rows.length);
  });

  it('writes only the selected columns, in RUN_COLUMNS order', async () => {
    const columns: RunColumn[] = ['inputs', 'start_time', 'id', 'is_root', 'total_cost', 'tags'];
    const path = writeParquetFile(rows, {
      formatVersion: 'v2_beta',
      compression: 'snappy',
      columns,
      rowGroupSize: 1000,
    });
    const described = await describeColumns(path);
    expect(described).toEqual([
      ['id', 'VARCHAR'],
      ['start_time', 'TIMESTAMP WITH TIME ZONE'],
      ['is_root', 'BOOLEAN'],
      ['inputs', 'VARCHAR'],
      ['tags', 'VARCHAR'],
      ['total_cost', 'DOUBLE'],
    ]);
    const back = await query(
      `SELECT id, epoch_us(start_time) AS start_time, is_root, inputs, tags, total_cost
       FROM read_parquet('${path}', file_row_number = true) ORDER BY file_row_number`,
    );
    expect(back.map((r) => r.id)).toEqual(rows.map((r) => r.id));
    expect(back.map((r) => r.inputs)).toEqual(rows.map((r) => r.inputs));
    expect(back.map((r) => r.tags)).toEqual(rows.map((r) => r.tags));
    expect(back.map((r) => r.total_cost)).toEqual(rows.map((r) => r.total_cost));
    expect(back.map((r) => Number(r.start_time))).toEqual(rows.map((r) => r.start_time));
    expect(back.map((r) => r.is_root)).toEqual(rows.map((r) => r.is_root === 1));
    const groups = await query(`SELECT DISTINCT row_group_id, row_group_num_rows FROM parquet_metadata('${path}')`);
    expect(groups.map((g) => Number(g.row_group_num_rows)).sort((a, b) => b - a)).toEqual([1000, 1000]);
  });

  it('writes a valid file with all columns and no rows', async () => {
    const path = writeParquetFile([], {
      formatVersion: 'v1',
      compression: 'zstandard',
      columns: RUN_COLUMNS,
      rowGroupSize: 100,
    });
    expect(await countRows(path)).toBe(0);
    const described = await describeColumns(path);
    expect(described.map(([name]) => name)).toEqual([...RUN_COLUMNS]);
    expect(described.find(([name]) => name === 'start_time')![1]).toBe('TIMESTAMP_NS');
  });

  it('rejects unknown options', async () => {
    const base: ParquetEncodeOptions = {
      formatVersion: 'v2_beta',
      compression: 'snappy',
      columns: RUN_COLUMNS,
      rowGroupSize: 10,
    };
    expect(() => encodeRunsParquet(rows, { ...base, compression: 'lz4' as Compression })).toThrow(/compression/);
    expect(() => encodeRunsParquet(rows, { ...base, formatVersion: 'v3' as FormatVersion })).toThrow(/format/);
    expect(() => encodeRunsParquet(rows, { ...base, columns: ['nope' as RunColumn] })).toThrow(/column/);
    expect(() => encodeRunsParquet(rows, { ...base, columns: [] })).toThrow(/column/);
    expect(() => encodeRunsParquet(rows, { ...base, rowGroupSize: 0 })).toThrow(/rowGroupSize/);
    expect(await countRows(writeParquetFile(rows.slice(0, 10), base))).toBe(10);
  });

  it('does not grow WebAssembly memory over repeated calls', () => {
    const memory = () => wasmMemory().buffer.byteLength;
    const options: ParquetEncodeOptions = {
      formatVersion: 'v2_beta',
      compression: 'snappy',
      columns: RUN_COLUMNS,
      rowGroupSize: 500,
    };
    for (let i = 0; i < 8; i++) {
      encodeRunsParquet(rows, {
        ...options,
        compression: COMPRESSIONS[i % 4]!.compression,
        formatVersion: i % 2 ? 'v1' : 'v2_beta',
      });
    }
    const settled = memory();
    expect(settled).toBeGreaterThan(0);
    for (let i = 0; i < 40; i++) {
      encodeRunsParquet(rows, {
        ...options,
        compression: COMPRESSIONS[i % 4]!.compression,
        formatVersion: i % 2 ? 'v1' : 'v2_beta',
      });
    }
    expect(memory()).toBe(settled);
  });
});
