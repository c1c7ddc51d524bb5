import type { Micros } from '../shared/time.ts';

/** Traced runs ordered for export: (start_time, id) is the export cursor. */
export interface RunCursor {
  startTime: Micros;
  id: string;
}

/**
 * A column's cells: their values, NaN for NULL (SQLite stores no NaN). For a text column, the
 * values are the cells' UTF-8 byte lengths and `text` holds their bytes one after another, in
 * one or more pieces (each holding whole cells: a page read from chunks keeps the pieces of the
 * chunks it was sliced from instead of copying them together).
 */
export interface ColumnCells {
  values: Float64Array;
  text: readonly Uint8Array[] | null;
}

/** A page of a session's runs as an export reads it: column by column, up to a cursor. */
export interface RunColumnsPage {
  rows: number;
  /** The requested columns' cells; none when the page is empty. */
  columns: ColumnCells[];
  /** The cursor of the page's last run (null when the page is empty). */
  last: RunCursor | null;
}
