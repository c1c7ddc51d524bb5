/**
 * DuckDB for the admin API's SQL and Parquet previews: one in-memory database that reads only
 * the files below one folder (the objstore's plain-file view); each query runs on a connection
 * of its own, a single SELECT bounded in rows, time and memory. It runs in a process of its own
 * (duckdb-child.ts), which holds the bounds DuckDB itself cannot.
 */
import {
  DuckDBInstance,
  StatementType,
  type DuckDBConnection,
  type DuckDBResultReader,
  type Json,
} from '@duckdb/node-api';
import { duckdbError, QueryError, QueryStopped, type StopReason } from './errors.ts';
import { sqlString } from './runs-view.ts';

/**
 * DuckDB's memory for every query together (MB, as `sql_memory_limit_mb`) and its threads. Nothing spills to disk (no
 * temp directory).
 */
export interface SandboxSettings {
  memoryLimitMb: number;
  threads: number;
}
/**
 * How often a query past its time limit is interrupted again, in case the first interrupt fell between two of its
 * steps.
 */
const INTERRUPT_REPEAT_MS = 50;

export interface ResultColumn {
  name: string;
  /** DuckDB's type name: `BIGINT`, `VARCHAR`, `TIMESTAMP WITH TIME ZONE`, `DECIMAL(12,4)`, ... */
  type: string;
}

/** Rows as JSON values, as the node API gives them (BIGINTs and DECIMALs as exact strings, timestamps as text). */
export interface BoundedResult {
  columns: ResultColumn[];
  rows: Json[][];
  /** More rows were there than the row limit. */
  truncated: boolean;
}

export interface ParquetPreview {
  schema: ResultColumn[];
  rows: Json[][];
  totalRows: number;
}

interface Running {
  stopped: StopReason | null;
  stop(reason: StopReason): void;
  /** Resolves once the query has ended, however it ended, and its connection is closed. */
  ended: Promise<void>;
}

/** A statement type as the SQL names it: INSTALL and LOAD are both DuckDB's LOAD statement. */
const statementName = (type: StatementType) =>
  type === StatementType.LOAD ? 'INSTALL or LOAD' : StatementType[type].replaceAll('_', ' ');

const notReadOnly = (kind: string) => new QueryError(`Only a SELECT statement runs here (read-only), not ${kind}`);

/** What `json_serialize_sql` answers for SQL that parses but is not a SELECT. */
const NOT_SELECT = 'Only SELECT statements can be serialized to json!';

/** A statement's first words that are not its kind as StatementType names it (statementName above). */
const KIND_OF_WORD: Record<string, string> = {
  INSTALL: 'INSTALL or LOAD',
  LOAD: 'INSTALL or LOAD',
  RESET: 'SET',
  USE: 'SET',
  BEGIN: 'TRANSACTION',
  START: 'TRANSACTION',
  COMMIT: 'TRANSACTION',
  END: 'TRANSACTION',
  ROLLBACK: 'TRANSACTION',
  ABORT: 'TRANSACTION',
  MERGE: 'MERGE INTO',
};

/** A line comment, string, quoted name or word at `lastIndex`. */
const QUOTED = /--[^\n]*|'(?:[^']|'')*'?|"(?:[^"]|"")*"?|(\$[A-Za-z_]*\$)[\s\S]*?(?:\1|$)/y;
const WORD = /[A-Za-z_][A-Za-z0-9_$]*/y;
const COMMENT_MARK = /\/\*|\*\//g;

/** Where a block comment that starts at `at` ends (block comments nest). */
function pastBlockComment(sql: string, at: number): number {
  let open = 0;
  COMMENT_MARK.lastIndex = at;
  for (let mark = COMMENT_MARK.exec(sql); mark; mark = COMMENT_MARK.exec(sql)) {
    open += mark[0] === '/*' ? 1 : -1;
    if (open === 0) return COMMENT_MARK.lastIndex;
  }
  return sql.length;
}

/** The words of `sql` outside parentheses, upper-cased, in order; none from a comment, string or quoted name. */
function* topLevelWords(sql: string): Generator<string> {
  let depth = 0;
  for (let at = 0; at < sql.length;) {
    if (sql.startsWith('/*', at)) {
      at = pastBlockComment(sql, at);
      continue;
    }
    QUOTED.lastIndex = WORD.lastIndex = at;
    const quoted = QUOTED.exec(sql)?.[0];
    const word = quoted ? undefined : WORD.exec(sql)?.[0];
    if (word && depth === 0) yield word.toUpperCase();
    if (sql[at] === '(') depth++;
    else if (sql[at] === ')') depth = Math.max(0, depth - 1);
    at += (quoted ?? word)?.length || 1;
  }
}

/**
 * The kind of statement `sql` (one statement that parses, not a SELECT) is, from its words alone, as StatementType
 * names it: its first word (INSERT, COPY, CREATE, ...), the statement a WITH clause leads to, or the word after FORCE
 * (PRAGMA import_database is IMPORT).
 */
function statementKind(sql: string): string | undefined {
  const words = topLevelWords(sql);
  const first = words.next().value;
  let word = first;
  if (first === 'WITH') {
    word = undefined;
    for (const next of words) {
      if (['INSERT', 'UPDATE', 'DELETE', 'MERGE'].includes(next)) {
        word = next;
        break;
      }
    }
  } else if (first === 'FORCE' || first === 'UPDATE' || first === 'PRAGMA') {
    const second = words.next().value;
    if (first === 'FORCE') word = second;
    else if (first === 'UPDATE' && second === 'EXTENSIONS') return 'UPDATE EXTENSIONS';
    // What IMPORT DATABASE is.
    else if (first === 'PRAGMA' && second === 'IMPORT_DATABASE') return 'IMPORT';
  }
  return word === undefined ? undefined : (KIND_OF_WORD[word] ?? word);
}

const columnsOf = (reader: DuckDBResultReader): ResultColumn[] =>
  reader.columnNames().map((name, index) => ({ name, type: reader.columnType(index).toString() }));

export class DuckDBSandbox {
  private readonly running = new Set<Running>();
  private closing: Promise<void> | null = null;

  private constructor(private readonly instance: DuckDBInstance) {}

  /**
   * DuckDB with external access off but for `folder` (no other file, no extension installed or
   * loaded, no network), the configuration locked so that no SQL turns it back on.
   */
  static async open(folder: string, settings: SandboxSettings): Promise<DuckDBSandbox> {
    const instance = await DuckDBInstance.create(':memory:', {
      autoinstall_known_extensions: 'false',
      autoload_known_extensions: 'false',
      // Its default, `.tmp` in the working directory, would be readable and writable too.
      temp_directory: '',
      memory_limit: `${settings.memoryLimitMb}MB`,
      threads: String(settings.threads),
    });
    const connection = await instance.connect();
    try {
      // The folder is allowed before external access goes off; the lock comes last and holds both.
      await connection.run(`SET allowed_directories = [${sqlString(`${folder.replace(/\/+$/, '')}/`)}]`);
      await connection.run('SET enable_external_access = false');
      await connection.run('SET lock_configuration = true');
    } catch (error) {
      instance.closeSync();
      throw error;
    } finally {
      connection.closeSync();
    }
    return new DuckDBSandbox(instance);
  }

  /**
   * One SELECT statement (the only kind that reads without writing) after `setup` (a view it
   * reads), its first `rowLimit` rows; stopped after `timeLimitMs`.
   */
  query(sql: string, options: { setup?: string; rowLimit: number; timeLimitMs: number }): Promise<BoundedResult> {
    return this.withConnection(options.timeLimitMs, async (connection, checkStopped) => {
      if (options.setup) await connection.run(options.setup);
      checkStopped();
      const statement = await this.onlySelect(connection, sql, checkStopped);
      checkStopped();
      // Its kind once bound too: a PRAGMA that DuckDB makes a SELECT of runs, any other statement does not.
      if (statement.statementType !== StatementType.SELECT) throw notReadOnly(statementName(statement.statementType));
      const reader = await statement.streamAndReadUntil(options.rowLimit + 1);
      return {
        columns: columnsOf(reader),
        rows: reader.getRowsJson().slice(0, options.rowLimit),
        truncated: reader.currentRowCount > options.rowLimit,
      };
    });
  }

  /**
   * A Parquet file's columns, its first `rows` rows and how many it holds (the file alone: no Hive keys from its path).
   */
  previewParquet(file: string, rows: number, timeLimitMs: number): Promise<ParquetPreview> {
    const source = `read_parquet(${sqlString(file)}, hive_partitioning = false)`;
    return this.withConnection(timeLimitMs, async (connection, checkStopped) => {
      const first = await connection.runAndReadAll(`SELECT * FROM ${source} LIMIT ${rows}`);
      checkStopped();
      const total = await connection.runAndReadAll(`SELECT count(*)::DOUBLE FROM ${source}`);
      return { schema: columnsOf(first), rows: first.getRowsJson(), totalRows: total.getRowsJson()[0]![0] as number };
    });
  }

  /** Stops the queries under way, waits for them to end, and closes DuckDB. */
  close(): Promise<void> {
    return (this.closing ??= (async () => {
      const running = [...this.running];
      for (const query of running) query.stop('closing');
      await Promise.all(running.map((query) => query.ended));
      this.instance.closeSync();
    })());
  }

  /**
   * The SQL's one statement, prepared (bound) if it is a SELECT or a PRAGMA. Any other statement is refused before it
   * is bound, named by its kind: binding it would answer the binder's error instead (a COPY to a file external access
   * does not allow, an INSERT into a view).
   */
  private async onlySelect(connection: DuckDBConnection, sql: string, checkStopped: () => void) {
    // DuckDB's parser tells a SELECT from any other statement, the SQL given only parsed (neither bound nor run):
    // json_serialize_sql serializes SELECTs alone. It refuses a PRAGMA too, before DuckDB has made a SELECT of one
    // (table_info, show_tables, ...): a PRAGMA's kind is known once bound.
    const serialized = await connection.runAndReadAll('SELECT json_serialize_sql($1::VARCHAR)', [sql]);
    const parsed = JSON.parse(serialized.getRowsJson()[0]![0] as string) as { error?: boolean; error_message?: string };
    const kind = parsed.error && parsed.error_message === NOT_SELECT ? statementKind(sql) : undefined;
    // Extracting an IMPORT DATABASE reads the database's files (DuckDB makes its statements of them): not that either.
    if (kind === 'IMPORT') throw notReadOnly(kind);
    checkStopped();
    let statements;
    try {
      statements = await connection.extractStatements(sql);
    } catch (error) {
      // The node API answers SQL of comments and semicolons alone with a bare "Error in native callback".
      if (!(error as Error).message.startsWith('Failed to extract statements'))
        throw new QueryError('The SQL holds no statement');
      throw error;
    }
    if (statements.count !== 1) throw new QueryError(`One statement at a time: the SQL holds ${statements.count}`);
    if (kind !== undefined && kind !== 'PRAGMA' && kind !== 'SELECT') throw notReadOnly(kind);
    checkStopped();
    return statements.prepare(0);
  }

  /**
   * Runs `work` on a connection of its own, interrupted past the time limit or when DuckDB closes; DuckDB's errors as
   * QueryErrors.
   */
  private withConnection<T>(
    timeLimitMs: number,
    work: (connection: DuckDBConnection, checkStopped: () => void) => Promise<T>,
  ): Promise<T> {
    if (this.closing) return Promise.reject(new QueryStopped('closing'));
    let connection: DuckDBConnection | null = null;
    let repeat: NodeJS.Timeout | undefined;
    const interrupt = () => connection?.interrupt();
    const query: Running = {
      stopped: null,
      stop(reason) {
        query.stopped ??= reason;
        interrupt();
        repeat ??= setInterval(interrupt, INTERRUPT_REPEAT_MS);
      },
      ended: Promise.resolve(),
    };
    const checkStopped = () => {
      if (query.stopped) throw new QueryStopped(query.stopped);
    };
    const deadline = setTimeout(() => query.stop('time limit'), timeLimitMs);
    const outcome = (async () => {
      try {
        connection = await this.instance.connect();
        checkStopped();
        return await work(connection, checkStopped);
      } catch (error) {
        if (query.stopped) throw new QueryStopped(query.stopped);
        throw error instanceof QueryError ? error : duckdbError(error);
      } finally {
        clearTimeout(deadline);
        clearInterval(repeat);
        this.running.delete(query);
        connection?.closeSync();
      }
    })();
    // Registered before the connection is made: closing stops a query still connecting too.
    this.running.add(query);
    query.ended = outcome.then(
      () => undefined,
      () => undefined,
    );
    return outcome;
  }
}
