import { z } from 'zod';
import { queryInteger } from '../shared/validation.ts';

/** Rows a Parquet preview shows at most, and by default. */
export const PREVIEW_MAX_ROWS = 100;
export const PREVIEW_DEFAULT_ROWS = 20;
/** Bytes of a JSON or text object a preview shows. */
export const PREVIEW_TEXT_BYTES = 64 * 1024;

export const sqlRequest = z.object({
  sql: z.string().min(1).max(100_000),
  /** The export whose Parquet files the `runs` view reads. */
  export_id: z.guid(),
});
export type SqlRequest = z.input<typeof sqlRequest>;

const column = z.object({ name: z.string(), type: z.string().meta({ description: "DuckDB's type name" }) });
/**
 * One row: JSON values as DuckDB's node API gives them (BIGINT, HUGEINT and DECIMAL as exact strings, timestamps as
 * text, lists as arrays, structs as objects).
 */
const row = z.array(z.unknown());

export const sqlResponseSchema = z.object({
  export_id: z.guid(),
  columns: z.array(column),
  rows: z.array(row),
  row_count: z.int(),
  /** The query had more rows than `row_limit`: `rows` holds the first `row_limit`. */
  truncated: z.boolean(),
  row_limit: z.int(),
  /** Wall-clock milliseconds the query took (the view over the files made, the statement run, its rows read). */
  elapsed_ms: z.number(),
});
export type SqlResponse = z.output<typeof sqlResponseSchema>;

export const previewQuery = z.object({
  bucket: z.string().min(1),
  key: z.string().min(1),
  /** Rows of a Parquet file to show. */
  rows: queryInteger({ min: 0, max: PREVIEW_MAX_ROWS }).default(PREVIEW_DEFAULT_ROWS),
});

const previewBase = {
  bucket: z.string(),
  key: z.string(),
  content_type: z.string().nullable(),
  size: z.int(),
};

export const previewResponseSchema = z.discriminatedUnion('kind', [
  z.object({
    ...previewBase,
    kind: z.literal('parquet'),
    schema: z.array(column),
    /** The first rows (at most `?rows=`), as SQL answers them. */
    rows: z.array(row),
    total_rows: z.int(),
  }),
  z.object({ ...previewBase, kind: z.enum(['json', 'text']), text: z.string(), truncated: z.boolean() }),
  z.object({ ...previewBase, kind: z.literal('binary') }),
]);
export type PreviewResponse = z.output<typeof previewResponseSchema>;
