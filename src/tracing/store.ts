import { FLAG, statementCache, TIMESTAMP, type Db, type TableSet } from '../shared/db.ts';
import type { Micros } from '../shared/time.ts';
import { insertRuns } from './generator.ts';
import { RUN_COLUMNS, RUNS_DDL, type RunColumn, type RunRow } from './schema.ts';

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
  workspaceRows: { sessions: 'tenant_id = ?', runs: 'session_id IN (SELECT id FROM {schema}.sessions WHERE tenant_id = ?)' },
  // The exporter writes the runs' JSON columns as the text they are, and filters read them in SQL that takes any text.
  columns: {
    sessions: { created_at: TIMESTAMP },
    runs: { start_time: TIMESTAMP, end_time: TIMESTAMP, is_root: FLAG, first_token_time: TIMESTAMP },
  },
};

/** Traced runs ordered for export: (start_time, id) is the export cursor. */
export interface RunCursor {
  startTime: Micros;
  id: string;
}

export class TracingStore {
  private readonly sessionStatement;
  private readonly sessionByIdStatement;
  private readonly sessionsOfTenantStatement;
  private readonly seedStatsStatement;
  private readonly runtimeStatsStatement;
  /** The seeded runs' stats by session: the seed never changes, and counting 50,000 runs takes milliseconds. */
  private readonly seedStats = new Map<string, SessionRunStats>();
  private readonly prepared;

  constructor(private readonly db: Db) {
    this.prepared = statementCache(db);
    this.sessionStatement = db.prepare<[string, string], TracingSession>('SELECT * FROM sessions WHERE id = ? AND tenant_id = ?');
    this.sessionByIdStatement = db.prepare<[string], TracingSession>('SELECT * FROM sessions WHERE id = ?');
    this.sessionsOfTenantStatement = db.prepare<[string], TracingSession>('SELECT * FROM sessions WHERE tenant_id = ? ORDER BY rowid');
    // Each table's aggregate read from its (session_id, start_time) index: over the all_runs
    // view, SQLite would read every column of every row of the session.
    const statsOf = (table: string) =>
      db.prepare<[string], SessionRunStats>(
        `SELECT count(*) AS run_count, min(start_time) AS first_run_start_time, max(start_time) AS last_run_start_time FROM ${table} WHERE session_id = ?`,
      );
    this.seedStatsStatement = statsOf('seed.runs');
    this.runtimeStatsStatement = statsOf('main.runs');
  }

  static insertSession(db: Db, session: TracingSession): void {
    db.prepare('INSERT INTO sessions (id, tenant_id, name, created_at) VALUES (@id, @tenant_id, @name, @created_at)').run(session);
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
   * order, with an optional compiled filter (SQL over the run columns with `?` parameters).
   * Each run is an array (no object per row: the exporter reads millions): the values of
   * `columns`, then its start_time and id, its cursor. Seeded and runtime runs are each read
   * in index order and merged here: a SQL ORDER BY over their UNION would copy every full
   * row through a temporary B-tree.
   */
  runValuesPage(query: {
    sessionId: string;
    from: Micros;
    to: Micros;
    after: RunCursor | null;
    limit: number;
    filter: { sql: string; params: (string | number)[] } | null;
    columns: readonly RunColumn[];
  }): unknown[][] {
    for (const column of query.columns) {
      if (!RUN_COLUMNS.includes(column)) throw new Error(`unknown column: ${column}`);
    }
    const after = query.after ?? { startTime: query.from, id: '' };
    const params = [query.sessionId, query.from, query.to, after.startTime, after.id, ...(query.filter?.params ?? []), query.limit];
    const filterSql = query.filter?.sql;
    const where = `session_id = ? AND start_time >= ? AND start_time < ? AND (start_time, id) > (?, ?)${filterSql ? ` AND (${filterSql})` : ''}`;
    const select = [...query.columns, 'start_time', 'id'].join(', ');
    const [seeded, runtime] = ['seed', 'main'].map((schema) =>
      this.prepared<unknown[], unknown[]>(`SELECT ${select} FROM ${schema}.runs WHERE ${where} ORDER BY start_time, id LIMIT ?`).raw().all(...params),
    );
    return runtime!.length === 0 ? seeded! : mergeByCursor(seeded!, runtime!, query.limit, query.columns.length);
  }
}

/** Merges two pages in cursor order; `at` is where each row's start_time is, its id right after. */
function mergeByCursor(left: unknown[][], right: unknown[][], limit: number, at: number): unknown[][] {
  const merged: unknown[][] = [];
  let i = 0;
  let j = 0;
  while (merged.length < limit && (i < left.length || j < right.length)) {
    const a = left[i];
    const b = right[j];
    const takeLeft =
      b === undefined ||
      (a !== undefined && ((a[at] as number) < (b[at] as number) || (a[at] === b[at] && (a[at + 1] as string) < (b[at + 1] as string))));
    merged.push(takeLeft ? left[i++]! : right[j++]!);
  }
  return merged;
}
