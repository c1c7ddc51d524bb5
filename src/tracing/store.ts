import type { Db, TableSet } from '../shared/db.ts';
import type { Micros } from '../shared/time.ts';
import { RUNS_DDL, type RunRow } from './schema.ts';

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
};

/** Traced runs ordered for export: (start_time, id) is the export cursor. */
export interface RunCursor {
  startTime: Micros;
  id: string;
}

export class TracingStore {
  private readonly sessionStatement;
  private readonly sessionsOfTenantStatement;
  private readonly statsStatement;

  constructor(private readonly db: Db) {
    this.sessionStatement = db.prepare<[string, string], TracingSession>('SELECT * FROM sessions WHERE id = ? AND tenant_id = ?');
    this.sessionsOfTenantStatement = db.prepare<[string], TracingSession>('SELECT * FROM sessions WHERE tenant_id = ? ORDER BY rowid');
    this.statsStatement = db.prepare<[string], SessionRunStats>(
      'SELECT count(*) AS run_count, min(start_time) AS first_run_start_time, max(start_time) AS last_run_start_time FROM all_runs WHERE session_id = ?',
    );
  }

  static insertSession(db: Db, session: TracingSession): void {
    db.prepare('INSERT INTO sessions (id, tenant_id, name, created_at) VALUES (@id, @tenant_id, @name, @created_at)').run(session);
  }

  findSession(tenantId: string, id: string): TracingSession | undefined {
    return this.sessionStatement.get(id, tenantId);
  }

  sessionsOf(tenantId: string): TracingSession[] {
    return this.sessionsOfTenantStatement.all(tenantId);
  }

  stats(sessionId: string): SessionRunStats {
    return this.statsStatement.get(sessionId)!;
  }

  /**
   * The next page of a session's runs in [from, to) after the cursor, with an optional
   * compiled filter (SQL over the run columns with `?` parameters).
   */
  runsPage(query: {
    sessionId: string;
    from: Micros;
    to: Micros;
    after: RunCursor | null;
    limit: number;
    filter: { sql: string; params: (string | number)[] } | null;
  }): RunRow[] {
    const clauses = ['session_id = ?', 'start_time >= ?', 'start_time < ?'];
    const params: (string | number)[] = [query.sessionId, query.from, query.to];
    if (query.after) {
      clauses.push('(start_time > ? OR (start_time = ? AND id > ?))');
      params.push(query.after.startTime, query.after.startTime, query.after.id);
    }
    if (query.filter) {
      clauses.push(`(${query.filter.sql})`);
      params.push(...query.filter.params);
    }
    const where = clauses.join(' AND ');
    // Each source is read in index order and merged, so SQLite never sorts the window.
    const sql = `SELECT * FROM (SELECT * FROM seed.runs WHERE ${where} ORDER BY start_time, id LIMIT ?)
      UNION ALL SELECT * FROM (SELECT * FROM main.runs WHERE ${where} ORDER BY start_time, id LIMIT ?)
      ORDER BY start_time, id LIMIT ?`;
    return this.db.prepare(sql).all(...params, query.limit, ...params, query.limit, query.limit) as RunRow[];
  }
}
