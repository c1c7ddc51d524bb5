import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';

import type BetterSqlite3 from 'better-sqlite3';
import type { Statement } from 'better-sqlite3';
import type { ZodType } from 'zod';

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
   * Tables their module computes from the others (an index of them), made by `derivedDdl`:
   * emptied on reset, and on restore instead of being copied from the snapshot; their module
   * writes them again (on resume). A workspace reset deletes their rows as `workspaceRows` says.
   */
  derived?: readonly string[];
  /**
   * The derived tables' DDL, run on every open: outside the schema's stamp (a data dir written
   * before them still starts, and gets them) and the fixture template.
   */
  derivedDdl?: string;
  /**
   * How to find one workspace's rows, per table: a condition with one `?` for the workspace id
   * and `{schema}` for the schema whose tables it reads (`main` or `seed`). Tables left out
   * belong to no workspace (e.g. the objstore's keys) and a workspace reset leaves them alone.
   */
  workspaceRows?: Readonly<Record<string, string>>;
  /**
   * What the code reading these tables assumes of their values beyond the tables' definitions,
   * per table and column. Every column of every table is checked against its declared type (TEXT,
   * INTEGER, REAL) and NOT NULL; a rule here adds what the definition cannot say.
   */
  columns?: Readonly<Record<string, Readonly<Record<string, ColumnRule>>>>;
  /** Per table, conditions between the columns of one row that the code reading it assumes. */
  rows?: Readonly<Record<string, readonly RowRule[]>>;
  /**
   * The first row of these tables in `schema` (`snapshot`: a snapshot's database being restored;
   * `main`: a kept data dir's) that would make the code reach outside its own files or fail,
   * beyond what `columns` and `rows` say, in words (`<table> holds ...`); undefined when every row
   * is usable. What a row becomes (a bucket name becomes a folder) is checked with the rules that
   * let it in on creation.
   */
  invalidRow?(db: Db, schema: string): string | undefined;
}

/**
 * What a column's values must be besides its declared type and NOT NULL: what the code that
 * reads them assumes, as the code that writes them makes them.
 */
export type ColumnRule =
  /** One of these values. */
  | { oneOf: readonly (string | number)[] }
  /** A whole number from `range[0]` to `range[1]`; `says` what it is, in words. */
  | { range: readonly [number, number]; says?: string }
  /** Text holding JSON that the schema accepts, as its writer stores it. */
  | { json: ZodType }
  /** Text the predicate accepts; `says` what it is, in words. */
  | { text: (value: string) => boolean; says: string };

/**
 * A condition in SQL over one row's columns, and what a row failing it is, in words (`a Running run without
 * started_at`).
 */
export interface RowRule {
  sql: string;
  says: string;
}

/** SQLite has no boolean: 0 or 1. */
export const FLAG: ColumnRule = { oneOf: [0, 1] };

/**
 * Microseconds since the epoch, as the clock hands them out: whole numbers JavaScript holds exactly (1684 to 2255, as
 * parseTimestamp reads them).
 */
export const TIMESTAMP: ColumnRule = {
  range: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
  says: 'a time in microseconds from 1684 to 2255',
};

/**
 * Opens an instance database: `main` holds the instance's state, the fixture template is
 * attached as `seed` and never written (it may be a hard link to the cached template, which
 * other instances share). Seeded traced runs stay in the template and are read through the
 * `all_runs` view, so a reset never copies them. `durable`: whether the database is kept
 * after the instance stops (a --data-dir), and so synced to disk.
 */
export function openInstanceDb(
  path: string,
  templatePath: string,
  tables: readonly TableSet[],
  { durable }: { durable: boolean },
): Db {
  // SQLite creates its journal files with the database file's mode.
  ensurePrivateFile(path, { create: true });
  for (const suffix of JOURNAL_SUFFIXES) ensurePrivateFile(`${path}${suffix}`, { create: false });
  const db = new Database(path);
  const stamp = schemaStamp(tables);
  const holdsTables = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' LIMIT 1").get() !== undefined;
  if (holdsTables && db.pragma('user_version', { simple: true }) !== stamp) {
    db.close();
    throw new Error(
      `${path} was written by another version of localplane (its tables differ): remove that data dir or choose ` +
        `another --data-dir`,
    );
  }
  // WAL first: in the default rollback mode each of the writes below would sync to disk (tens of
  // milliseconds of a start); in one transaction they are one commit.
  db.pragma('journal_mode = WAL');
  // A database the instance removes on stop need not outlive a crash: no fsync, not even at the
  // checkpoint of close (which otherwise takes most of an in-process instance's stop).
  db.pragma(durable ? 'synchronous = NORMAL' : 'synchronous = OFF');
  db.transaction(() => {
    db.pragma(`user_version = ${stamp}`);
    for (const set of tables) db.exec(set.ddl + (set.derivedDdl ?? ''));
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
  return (
    createHash('sha256')
      .update(tables.map((set) => set.ddl).join('\n'))
      .digest()
      .readUInt32BE(0) >>> 1
  );
}

/** Restores the seeded state: a handful of small tables, so it takes a few milliseconds. */
export function resetInstanceDb(db: Db, tables: readonly TableSet[]): void {
  db.transaction(() => {
    for (const set of tables) {
      for (const table of [...set.runtime, ...(set.derived ?? [])]) db.exec(`DELETE FROM main.${table}`);
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
    Object.entries(set.workspaceRows ?? {}).map(([table, condition]) => ({
      table,
      condition,
      seeded: set.seeded.includes(table),
    })),
  );
  const where = (condition: string, schema: string) => condition.replaceAll('{schema}', schema);
  db.transaction(() => {
    for (const { table, condition } of [...scoped].reverse())
      db.prepare(`DELETE FROM main.${table} WHERE ${where(condition, 'main')}`).run(workspaceId);
    for (const { table, condition, seeded } of scoped) {
      if (seeded)
        db.prepare(`INSERT INTO main.${table} SELECT * FROM seed.${table} WHERE ${where(condition, 'seed')}`).run(
          workspaceId,
        );
    }
  })();
}

/** A value read from a row, for a sentence about it: a string quoted (and cut short), anything else by its type. */
export function valueInWords(value: unknown): string {
  if (typeof value !== 'string')
    return value === null ? 'NULL' : value instanceof Uint8Array ? 'a blob' : `the ${typeof value} ${String(value)}`;
  return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
}

/** Every table of these sets, in their order. */
export const tablesOf = (tables: readonly TableSet[]): string[] =>
  tables.flatMap((set) => [...set.seeded, ...set.runtime]);

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

/** Replaces every table of main with the attached snapshot's rows, in one transaction; derived tables are emptied. */
export function replaceStateFromSnapshot(db: Db, tables: readonly TableSet[]): void {
  db.transaction(() => {
    for (const table of tablesOf(tables)) {
      db.exec(`DELETE FROM main.${table}`);
      db.exec(`INSERT INTO main.${table} SELECT * FROM snapshot.${table}`);
    }
    for (const table of tables.flatMap((set) => set.derived ?? [])) db.exec(`DELETE FROM main.${table}`);
  })();
}
