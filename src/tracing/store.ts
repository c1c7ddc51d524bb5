import { FLAG, statementCache, TIMESTAMP, type Db, type TableSet } from '../shared/db.ts';
import type { AppendRegion } from '../shared/template-cache.ts';
import type { Micros } from '../shared/time.ts';
import { insertRuns } from './generator.ts';
import type { ColumnCells, RunColumnsPage, RunCursor } from './pages.ts';
import { RUN_CHUNKS_DDL, RunChunkReader, writeRunChunks } from './run-chunks.ts';
import { NUMBER_RUN_COLUMNS, RUN_COLUMNS, RUNS_DDL, type RunColumn, type RunRow } from './schema.ts';

export interface TracingSession {
  id: string;
  tenant_id: string;
  name: string;
  created_at: Micros;
}

export interface SessionRunStats {
  run_count: number;
  first_run_start_time: Micros | null;
  last_run_start_time: Micros | null;
}

export const tracingTables: TableSet = {
  ddl: `
CREATE TABLE IF NOT EXISTS sessions (
  id TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL,
  name TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
${RUNS_DDL}`,
  seeded: ['sessions'],
  runtime: ['runs'],
  workspaceRows: {
    sessions: 'tenant_id = ?',
    runs: 'session_id IN (SELECT id FROM {schema}.sessions WHERE tenant_id = ?)',
  },
  // The exporter writes the runs' JSON columns as the text they are, and filters read them in SQL that takes any text.
  columns: {
    sessions: { created_at: TIMESTAMP },
    runs: { start_time: TIMESTAMP, end_time: TIMESTAMP, is_root: FLAG, first_token_time: TIMESTAMP },
  },
};

export class TracingStore {
  private readonly sessionStatement;
  private readonly sessionByIdStatement;
  private readonly sessionsOfTenantStatement;
  private readonly seedStatsStatement;
  private readonly runtimeStatsStatement;
  /** The seeded runs' stats by session: the seed never changes, and counting 50,000 runs takes milliseconds. */
  private readonly seedStats = new Map<string, SessionRunStats>();
  private readonly prepared;
  private readonly runtimeRunAfterStatement;
  /** The template's chunks of seeded runs, looked for at the first export page; null when it has none. */
  private chunks: RunChunkReader | null | undefined;

  constructor(private readonly db: Db) {
    this.prepared = statementCache(db);
    this.sessionStatement = db.prepare<[string, string], TracingSession>(
      'SELECT * FROM sessions WHERE id = ? AND tenant_id = ?',
    );
    this.sessionByIdStatement = db.prepare<[string], TracingSession>('SELECT * FROM sessions WHERE id = ?');
    this.sessionsOfTenantStatement = db.prepare<[string], TracingSession>(
      'SELECT * FROM sessions WHERE tenant_id = ? ORDER BY rowid',
    );
    // Each table's aggregate read from its (session_id, start_time) index: over the all_runs
    // view, SQLite would read every column of every row of the session.
    const statsOf = (table: string) =>
      db.prepare<[string], SessionRunStats>(
        `SELECT count(*) AS run_count, min(start_time) AS first_run_start_time, max(start_time) AS ` +
          `last_run_start_time FROM ${table} WHERE session_id = ?`,
      );
    this.seedStatsStatement = statsOf('seed.runs');
    this.runtimeStatsStatement = statsOf('main.runs');
    this.runtimeRunAfterStatement = db.prepare<[string, Micros, Micros, string]>(
      'SELECT 1 FROM main.runs WHERE session_id = ? AND start_time < ? AND (start_time, id) > (?, ?) LIMIT 1',
    );
  }

  static insertSession(db: Db, session: TracingSession): void {
    db.prepare(
      'INSERT INTO sessions (id, tenant_id, name, created_at) VALUES (@id, @tenant_id, @name, @created_at)',
    ).run(session);
  }

  findSession(tenantId: string, id: string): TracingSession | undefined {
    return this.sessionStatement.get(id, tenantId);
  }

  /** A session of any workspace, for the admin knobs. */
  sessionById(id: string): TracingSession | undefined {
    return this.sessionByIdStatement.get(id);
  }

  /** Stores runs traced after the seed (the runtime table); returns how many. */
  addRuns(rows: Iterable<RunRow>): number {
    return insertRuns(this.db, rows);
  }

  sessionsOf(tenantId: string): TracingSession[] {
    return this.sessionsOfTenantStatement.all(tenantId);
  }

  stats(sessionId: string): SessionRunStats {
    let seeded = this.seedStats.get(sessionId);
    if (seeded === undefined) {
      seeded = this.seedStatsStatement.get(sessionId)!;
      this.seedStats.set(sessionId, seeded);
    }
    const added = this.runtimeStatsStatement.get(sessionId)!;
    if (added.run_count === 0) return seeded;
    if (seeded.run_count === 0) return added;
    return {
      run_count: seeded.run_count + added.run_count,
      first_run_start_time: Math.min(seeded.first_run_start_time!, added.first_run_start_time!),
      last_run_start_time: Math.max(seeded.last_run_start_time!, added.last_run_start_time!),
    };
  }

  /**
   * The next page of a session's runs in [from, to) after the cursor, in (start_time, id)
   * order, with an optional compiled filter (SQL over the run columns with `?` parameters),
   * column by column: the cells of `columns`, and the cursor of its last run. Seeded runs are
   * read from the template's chunks when no filter applies and no runtime run of the session
   * falls in the page's range; otherwise SQLite reads the rows (readColumnsPage).
   */
  runColumnsPage(query: ColumnsPageQuery): RunColumnsPage {
    for (const column of query.columns) {
      if (!RUN_COLUMNS.includes(column)) throw new Error(`unknown column: ${column}`);
    }
    // Runs from `from` on: a cursor before it reads from there.
    const after =
      query.after !== null && query.after.startTime >= query.from ? query.after : { startTime: query.from, id: '' };
    if (query.filter === null) {
      this.chunks ??= RunChunkReader.of(this.db);
      if (
        this.chunks &&
        this.runtimeRunAfterStatement.get(query.sessionId, query.to, after.startTime, after.id) === undefined
      ) {
        return this.chunks.page({
          sessionId: query.sessionId,
          after,
          to: query.to,
          limit: query.limit,
          columns: query.columns,
        });
      }
    }
    return readColumnsPage(this.prepared, ['main', 'seed'], { ...query, after });
  }

  /**
   * Writes the chunks of a session's runs (see run-chunks.ts) for a template being built, whose
   * own `runs` table holds the seeded runs: their bytes into the region, where they are into the
   * database.
   */
  static writeRunChunks(db: Db, sessionId: string, region: AppendRegion): void {
    db.exec(RUN_CHUNKS_DDL);
    const prepared = statementCache(db);
    const everything = {
      sessionId,
      from: Number.MIN_SAFE_INTEGER,
      to: Number.MAX_SAFE_INTEGER,
      filter: null,
      columns: RUN_COLUMNS,
    };
    writeRunChunks(
      db,
      sessionId,
      (after, limit) =>
        readColumnsPage(prepared, ['main'], {
          ...everything,
          after: after ?? { startTime: everything.from, id: '' },
          limit,
        }),
      region,
    );
  }
}

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
function readColumnsPage(
  prepared: ReturnType<typeof statementCache>,
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
