import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';

import type BetterSqlite3 from 'better-sqlite3';
import type { Statement } from 'better-sqlite3';

import { ensurePrivateFile } from './private-files.ts';

/** Required as CommonJS: an ES import of it would first scan its sources for export names, at every start. */
export const Database = createRequire(import.meta.url)('better-sqlite3') as typeof BetterSqlite3;
export type Db = BetterSqlite3.Database;

/**
 * A resource family's tables. `seeded` tables are filled from the fixtures into the
 * template database and copied into the instance on start and reset; `runtime` tables
 * start empty.
 */
export interface TableSet {
  ddl: string;
  seeded: readonly string[];
  runtime: readonly string[];
  /**
   * How to find one workspace's rows, per table: a condition with one `?` for the workspace id
   * and `{schema}` for the schema whose tables it reads (`main` or `seed`). Tables left out
   * belong to no workspace (e.g. the objstore's keys) and a workspace reset leaves them alone.
   */
  workspaceRows?: Readonly<Record<string, string>>;
  /**
   * The first row of these tables in `schema` (`snapshot`: a snapshot's database being restored;
   * `main`: a kept data dir's) that would make the code reach outside its own files or fail,
   * in words (`<table> holds ...`); undefined when every row is usable. What a row becomes
   * (a bucket name becomes a folder) is checked with the rules that let it in on creation.
   */
  invalidRow?(db: Db, schema: string): string | undefined;
}

/**
 * Opens an instance database: `main` holds the instance's state, the fixture template is
 * attached as `seed` and never written (it may be a hard link to the cached template, which
 * other instances share). Seeded traced runs stay in the template and are read through the
 * `all_runs` view, so a reset never copies them.
 */
export function openInstanceDb(path: string, templatePath: string, tables: readonly TableSet[]): Db {
  // SQLite creates its journal files with the database file's mode.
  ensurePrivateFile(path, { create: true });
  for (const suffix of JOURNAL_SUFFIXES) ensurePrivateFile(`${path}${suffix}`, { create: false });
  const db = new Database(path);
  const stamp = schemaStamp(tables);
  const holdsTables = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' LIMIT 1").get() !== undefined;
  if (holdsTables && db.pragma('user_version', { simple: true }) !== stamp) {
    db.close();
    throw new Error(`${path} was written by another version of localplane (its tables differ): remove that data dir or choose another --data-dir`);
  }
  // WAL first: in the default rollback mode each of the writes below would sync to disk (tens of
  // milliseconds of a start); in one transaction they are one commit.
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.transaction(() => {
    db.pragma(`user_version = ${stamp}`);
    for (const set of tables) db.exec(set.ddl);
  })();
  attachSeed(db, templatePath);
  return db;
}

/** The files SQLite keeps beside a database file `<name>`: `<name><suffix>`. */
export const JOURNAL_SUFFIXES = ['-wal', '-shm', '-journal'] as const;

/**
 * A second, read-only connection to an instance database (for a worker thread): in WAL mode
 * it reads what the instance's connection committed, without blocking its writes.
 */
export function openInstanceReader(path: string, templatePath: string): Db {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  attachSeed(db, templatePath);
  return db;
}

function attachSeed(db: Db, templatePath: string): void {
  db.prepare('ATTACH DATABASE ? AS seed').run(templatePath);
  db.exec('CREATE TEMP VIEW all_runs AS SELECT * FROM seed.runs UNION ALL SELECT * FROM main.runs');
}

/**
 * The tables' DDL as a 31-bit number kept in the database's user_version: a kept --data-dir
 * whose tables another version wrote is refused at start instead of failing at its first write.
 */
function schemaStamp(tables: readonly TableSet[]): number {
  return createHash('sha256').update(tables.map((set) => set.ddl).join('\n')).digest().readUInt32BE(0) >>> 1;
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

/**
 * Restores one workspace's rows to the seed and leaves every other row alone: its rows are
 * deleted children first (a condition may read a parent table), then its seeded rows copied back.
 */
export function resetWorkspaceRows(db: Db, tables: readonly TableSet[], workspaceId: string): void {
  const scoped = tables.flatMap((set) =>
    Object.entries(set.workspaceRows ?? {}).map(([table, condition]) => ({ table, condition, seeded: set.seeded.includes(table) })),
  );
  const where = (condition: string, schema: string) => condition.replaceAll('{schema}', schema);
  db.transaction(() => {
    for (const { table, condition } of [...scoped].reverse()) db.prepare(`DELETE FROM main.${table} WHERE ${where(condition, 'main')}`).run(workspaceId);
    for (const { table, condition, seeded } of scoped) {
      if (seeded) db.prepare(`INSERT INTO main.${table} SELECT * FROM seed.${table} WHERE ${where(condition, 'seed')}`).run(workspaceId);
    }
  })();
}

/** A value read from a row, for a sentence about it: a string quoted (and cut short), anything else by its type. */
export function valueInWords(value: unknown): string {
  if (typeof value !== 'string') return value === null ? 'NULL' : value instanceof Uint8Array ? 'a blob' : `the ${typeof value} ${String(value)}`;
  return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
}

/** What invalidRow says of the first unusable row of `schema`, over every set; undefined when there is none. */
export function invalidRow(db: Db, tables: readonly TableSet[], schema: string): string | undefined {
  for (const set of tables) {
    const problem = set.invalidRow?.(db, schema);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

/** Every table of these sets, in their order. */
export const tablesOf = (tables: readonly TableSet[]): string[] => tables.flatMap((set) => [...set.seeded, ...set.runtime]);

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

/** The instance's own state (the `main` schema, not the seed it reads through) as one SQLite file image. */
export function serializeState(db: Db): Buffer {
  return db.serialize({ attached: 'main' });
}

/** Attaches the database file `path` as schema `snapshot`; returns how to detach it. */
export function attachSnapshotImage(db: Db, path: string): () => void {
  db.prepare('ATTACH DATABASE ? AS snapshot').run(path);
  return () => db.exec('DETACH DATABASE snapshot');
}

/**
 * Throws a sentence saying what is wrong unless the attached `snapshot` holds every table of
 * `tables` as main defines it, is whole by SQLite's integrity check (constraints included, so
 * its rows go into main without a failure), and holds no row invalidRow refuses.
 */
export function checkSnapshotImage(db: Db, tables: readonly TableSet[]): void {
  let problem: string | undefined;
  try {
    const definitions = (schema: string) =>
      new Map(db.prepare<[], { name: string; sql: string }>(`SELECT name, sql FROM ${schema}.sqlite_schema WHERE type = 'table'`).all().map((row) => [row.name, row.sql]));
    const [expected, found] = [definitions('main'), definitions('snapshot')];
    const table = tablesOf(tables).find((name) => found.get(name) !== expected.get(name));
    if (table !== undefined) throw new Error(`its table ${table} is missing or defined otherwise`);
    if (db.prepare<[], string>('PRAGMA snapshot.integrity_check(1)').pluck().get() !== 'ok') throw new Error('its database is damaged');
    problem = invalidRow(db, tables, 'snapshot');
  } catch (error) {
    const message = (error as Error).message;
    throw new Error(/not a database|malformed/i.test(message) ? 'its database is damaged' : message);
  }
  if (problem !== undefined) throw new Error(`its table ${problem}`);
}

/** Replaces every table of main with the attached snapshot's rows, in one transaction. */
export function replaceStateFromSnapshot(db: Db, tables: readonly TableSet[]): void {
  db.transaction(() => {
    for (const table of tablesOf(tables)) {
      db.exec(`DELETE FROM main.${table}`);
      db.exec(`INSERT INTO main.${table} SELECT * FROM snapshot.${table}`);
    }
  })();
}
