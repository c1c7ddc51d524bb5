import Database, { type Statement } from 'better-sqlite3';

export type Db = Database.Database;

/**
 * A resource family's tables. `seeded` tables are filled from the fixtures into the
 * template database and copied into the instance on start and reset; `runtime` tables
 * start empty.
 */
export interface TableSet {
  ddl: string;
  seeded: readonly string[];
  runtime: readonly string[];
}

/**
 * Opens an instance database: `main` holds the instance's state, the fixture template is
 * attached as `seed` and never written (it may be a hard link to the cached template, which
 * other instances share). Seeded traced runs stay in the template and are read through the
 * `all_runs` view, so a reset never copies them.
 */
export function openInstanceDb(path: string, templatePath: string, tables: readonly TableSet[]): Db {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  for (const set of tables) db.exec(set.ddl);
  db.prepare('ATTACH DATABASE ? AS seed').run(templatePath);
  db.exec('CREATE TEMP VIEW all_runs AS SELECT * FROM seed.runs UNION ALL SELECT * FROM main.runs');
  return db;
}

/** Restores the seeded state: a handful of small tables, so it takes a few milliseconds. */
export function resetInstanceDb(db: Db, tables: readonly TableSet[]): void {
  db.transaction(() => {
    for (const set of tables) {
      for (const table of set.runtime) db.exec(`DELETE FROM main.${table}`);
      for (const table of set.seeded) {
        db.exec(`DELETE FROM main.${table}`);
        db.exec(`INSERT INTO main.${table} SELECT * FROM seed.${table}`);
      }
    }
  })();
}

/** Whether the instance already holds state (a persisted --data-dir), so start must not reset it. */
export function hasState(db: Db, table: string): boolean {
  return db.prepare(`SELECT 1 FROM main.${table} LIMIT 1`).get() !== undefined;
}

/**
 * Prepared statements by SQL text, for queries assembled per request from a small set of
 * shapes (which filters are present): each shape is prepared once.
 */
export function statementCache(db: Db, capacity = 256) {
  const statements = new Map<string, Statement>();
  return <P extends unknown[], R>(sql: string): Statement<P, R> => {
    let statement = statements.get(sql);
    if (!statement) {
      if (statements.size >= capacity) statements.clear();
      statement = db.prepare(sql);
      statements.set(sql, statement);
    }
    return statement as Statement<P, R>;
  };
}

/**
 * A number that changes whenever anything was written through this connection (SQLite's
 * total_changes()): what a cache of query results compares to know it is still right.
 */
export function writeCounter(db: Db): () => number {
  const statement = db.prepare<[], number>('SELECT total_changes()').pluck();
  return () => statement.get()!;
}
