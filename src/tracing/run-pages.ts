import type { statementCache } from '../shared/db.ts';
import type { Micros } from '../shared/time.ts';
import type { ColumnCells, RunColumnsPage, RunCursor } from './pages.ts';
import { NUMBER_RUN_COLUMNS, type RunColumn } from './schema.ts';

/** Export pages read by SQLite from the runs tables' rows (for filtered exports, and templates without chunks). */

type Prepared = ReturnType<typeof statementCache>;

export interface ColumnsPageQuery {
  sessionId: string;
  from: Micros;
  to: Micros;
  after: RunCursor | null;
  limit: number;
  filter: { sql: string; params: (string | number)[] } | null;
  columns: readonly RunColumn[];
}

/**
 * A page of the runs of the `schemas`' runs tables. SQLite concatenates each column's cells in
 * one aggregate over the page (a co-routine it reads in the page's order), so no JS value is
 * made per cell: the exporter reads millions, and a value per cell cost more than encoding them.
 * Several schemas' runs are merged in index order (MERGE (UNION ALL), no temporary B-tree); on a
 * tie the first schema's run comes first.
 */
export function readColumnsPage(
  prepared: Prepared,
  schemas: readonly string[],
  query: ColumnsPageQuery & { after: RunCursor },
): RunColumnsPage {
  const { after } = query;
  // The cursor (never before `from`) bounds start_time too: SQLite seeks the index to the lower
  // of the two bounds it is given, and from `from` it would step over every run already read.
  const armParams = [
    query.sessionId,
    after.startTime,
    query.to,
    after.startTime,
    after.id,
    ...(query.filter?.params ?? []),
  ];
  const filterSql = query.filter?.sql;
  const where =
    `session_id = ? AND start_time >= ? AND start_time < ? AND (start_time, id) > (?, ` +
    `?)${filterSql ? ` AND (${filterSql})` : ''}`;
  const read: RunColumn[] = [...query.columns, ...CURSOR_COLUMNS.filter((column) => !query.columns.includes(column))];
  const [startTimeAt, idAt] = CURSOR_COLUMNS.map((column) => read.indexOf(column)) as [number, number];
  const select = read.map((column, k) => `${column} AS c${k}`).join(', ');
  const page = schemas.map((schema) => `SELECT ${select} FROM ${schema}.runs WHERE ${where}`).join(' UNION ALL ');
  const cells = read.map((column, k) =>
    NUMBER_RUN_COLUMNS.has(column)
      ? `group_concat(ifnull(c${k}, ''), ',')`
      : `group_concat(ifnull(octet_length(c${k}), ''), ','), CAST(group_concat(c${k}, '') AS BLOB)`,
  );
  const sql = `SELECT count(*), ${cells.join(', ')} FROM (${page} ORDER BY c${startTimeAt}, c${idAt} LIMIT ?)`;
  const [rows, ...aggregates] = prepared<unknown[], unknown[]>(sql)
    .raw()
    .get(...schemas.flatMap(() => armParams), query.limit)! as [number, ...unknown[]];
  if (rows === 0) return { rows, columns: [], last: null };
  let next = 0;
  const columns = read.map((column): ColumnCells => {
    const values = parseCells(aggregates[next++] as string, rows);
    return {
      values,
      text: NUMBER_RUN_COLUMNS.has(column) ? null : [(aggregates[next++] as Buffer | null) ?? EMPTY_TEXT],
    };
  });
  assertInCursorOrder(columns[startTimeAt]!.values);
  const last = { startTime: columns[startTimeAt]!.values[rows - 1]!, id: lastText(columns[idAt]!, rows) };
  return { rows, columns: columns.slice(0, query.columns.length), last };
}

/** What a page is ordered by, read for its cursor when they are not exported. */
const CURSOR_COLUMNS = ['start_time', 'id'] as const satisfies readonly RunColumn[];

/** The last cell of a text column: the bytes its length counts back from the end of the last piece. */
function lastText(cells: ColumnCells, rows: number): string {
  const last = cells.text!.at(-1)!;
  const text = Buffer.from(last.buffer, last.byteOffset, last.byteLength);
  return text.toString('utf8', text.byteLength - cells.values[rows - 1]!);
}

/**
 * SQLite documents no order for group_concat's cells without an ORDER BY of its own (which
 * costs 3 to 4 times the page); today it concatenates the ordered sub-query's rows as they come.
 * Should a later SQLite not, the export fails rather than writing runs out of order.
 */
function assertInCursorOrder(startTimes: Float64Array): void {
  for (let i = 1; i < startTimes.length; i++) {
    if (startTimes[i]! < startTimes[i - 1]!)
      throw new Error(
        `SQLite concatenated an export page out of order (row ${i}): this SQLite does not keep the order this ` +
          `reader relies on`,
      );
  }
}

const EMPTY_TEXT = new Uint8Array(0);
const DIGIT_0 = 48;
const DIGIT_9 = 57;

/**
 * The `count` comma-separated cells SQLite renders (an empty one for NULL): integers as their
 * digits, REALs with as many digits as give the same double back (infinities as Inf).
 */
function parseCells(list: string, count: number): Float64Array {
  const values = new Float64Array(count);
  let at = 0;
  for (let i = 0; i < count; i++) {
    let end = list.indexOf(',', at);
    if (end === -1) end = list.length;
    values[i] = end === at ? NaN : parseCell(list, at, end);
    at = end + 1;
  }
  return values;
}

/** Up to 15 digits are summed exactly without making a string; anything else goes through Number. */
function parseCell(list: string, at: number, end: number): number {
  if (end - at <= 15) {
    let value = 0;
    let i = at;
    for (; i < end; i++) {
      const code = list.charCodeAt(i);
      if (code < DIGIT_0 || code > DIGIT_9) break;
      value = value * 10 + (code - DIGIT_0);
    }
    if (i === end) return value;
  }
  const text = list.slice(at, end);
  return text === 'Inf' ? Infinity : text === '-Inf' ? -Infinity : Number(text);
}
