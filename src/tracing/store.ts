import { FLAG, statementCache, TIMESTAMP, type Db, type TableSet } from '../shared/db.ts';
import type { AppendRegion } from '../shared/template-cache.ts';
import type { Micros } from '../shared/time.ts';
import { ADDED_RUN_CHUNKS_DDL, AddedRunChunks, AddedRunChunkWriter } from './added-run-chunks.ts';
import { insertRuns } from './generator.ts';
import type { RunColumnsPage } from './pages.ts';
import { RUN_CHUNKS_DDL, readChunkPage, TemplateRunChunks, writeChunks, type ChunkSequence } from './run-chunks.ts';
import { readColumnsPage, type ColumnsPageQuery } from './run-pages.ts';
import { RUN_COLUMNS, RUNS_DDL, type RunRow } from './schema.ts';

export type { ColumnsPageQuery } from './run-pages.ts';

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
  derived: ['added_run_chunks'],
  derivedDdl: ADDED_RUN_CHUNKS_DDL,
  workspaceRows: {
    sessions: 'tenant_id = ?',
    runs: 'session_id IN (SELECT id FROM {schema}.sessions WHERE tenant_id = ?)',
    added_run_chunks: 'session_id IN (SELECT id FROM {schema}.sessions WHERE tenant_id = ?)',
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
  /** The template's chunks of seeded runs, looked for at the first export page; null when it has none. */
  private templateChunks: TemplateRunChunks | null | undefined;
  private readonly addedChunks;
  /** What writes the chunks of runs added at run time; none on a read-only connection (the export worker's). */
  readonly addedChunkWriter: AddedRunChunkWriter | null;

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
    this.addedChunks = new AddedRunChunks(db);
    this.addedChunkWriter = db.readonly ? null : new AddedRunChunkWriter(db);
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

  /** Stores runs traced after the seed (the runtime table) and their chunks; returns how many. */
  addRuns(rows: Iterable<RunRow>): number {
    const writer = this.addedChunkWriter;
    if (!writer) throw new Error('runs are added through the instance connection, not a read-only one');
    try {
      return insertRuns(this.db, rows, { eachRun: (run) => writer.add(run), afterBatch: () => writer.flush() });
    } finally {
      writer.done();
    }
  }

  sessionsOf(tenantId: string): TracingSession[] {
    return this.sessionsOfTenantStatement.all(tenantId);
  }

  stats(sessionId: string): SessionRunStats {
    const seeded = this.seedRunStats(sessionId);
    const added = this.runtimeStatsStatement.get(sessionId)!;
    if (added.run_count === 0) return seeded;
    if (seeded.run_count === 0) return added;
    return {
      run_count: seeded.run_count + added.run_count,
      first_run_start_time: Math.min(seeded.first_run_start_time!, added.first_run_start_time!),
      last_run_start_time: Math.max(seeded.last_run_start_time!, added.last_run_start_time!),
    };
  }

  private seedRunStats(sessionId: string): SessionRunStats {
    let seeded = this.seedStats.get(sessionId);
    if (seeded === undefined) {
      seeded = this.seedStatsStatement.get(sessionId)!;
      this.seedStats.set(sessionId, seeded);
    }
    return seeded;
  }

  /**
   * The next page of a session's runs in [from, to) after the cursor, in (start_time, id)
   * order, with an optional compiled filter (SQL over the run columns with `?` parameters),
   * column by column: the cells of `columns`, and the cursor of its last run. Without a filter
   * the page merges the session's chunks (run-chunks.ts): those of the runs added at run time,
   * and the template's of its seeded runs. SQLite reads the rows instead (run-pages.ts) with a
   * filter, or when the template holds seeded runs of the session but no chunks.
   */
  runColumnsPage(query: ColumnsPageQuery): RunColumnsPage {
    for (const column of query.columns) {
      if (!RUN_COLUMNS.includes(column)) throw new Error(`unknown column: ${column}`);
    }
    // Runs from `from` on: a cursor before it reads from there.
    const after =
      query.after !== null && query.after.startTime >= query.from ? query.after : { startTime: query.from, id: '' };
    const sequences = query.filter === null ? this.chunkSequences(query.sessionId) : null;
    if (sequences !== null)
      return readChunkPage(sequences, { after, to: query.to, limit: query.limit, columns: query.columns });
    return readColumnsPage(this.prepared, ['main', 'seed'], { ...query, after });
  }

  /**
   * The session's chunk sequences, the added runs' first (on one cursor, SQLite's merge puts main's run first); null
   * when the template holds seeded runs of the session without chunks.
   */
  private chunkSequences(sessionId: string): ChunkSequence[] | null {
    this.templateChunks ??= TemplateRunChunks.of(this.db);
    const added = this.addedChunks.sequences(sessionId);
    if (this.templateChunks) return [...added, this.templateChunks.sequence(sessionId)];
    return this.seedRunStats(sessionId).run_count === 0 ? added : null;
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
    const record = db.prepare(
      'INSERT INTO run_chunks (session_id, last_start_time, last_id, rows, region_offset, bytes) VALUES (?, ?, ?, ?, ' +
        '?, ?)',
    );
    writeChunks(
      (after, limit) =>
        readColumnsPage(prepared, ['main'], {
          ...everything,
          after: after ?? { startTime: everything.from, id: '' },
          limit,
        }),
      region,
      ({ rows, last, at, bytes }) => record.run(sessionId, last.startTime, last.id, rows, at, bytes),
    );
  }
}
