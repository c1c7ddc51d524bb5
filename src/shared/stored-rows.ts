import { tablesOf, valueInWords, type Db, type TableSet } from './db.ts';
import { SECRET_FIELDS } from './errors.ts';

/**
 * What is wrong with the first unusable row of `schema` (`snapshot`: a snapshot's database being
 * restored; `main`: a kept data dir's), over every set, in words (`<table> holds ...`); undefined
 * when there is none. A set's own invalidRow speaks first, then its columns' and rows' rules.
 */
export function invalidRow(db: Db, tables: readonly TableSet[], schema: string): string | undefined {
  for (const set of tables) {
    const problem = set.invalidRow?.(db, schema) ?? invalidValue(db, set, schema);
    if (problem !== undefined) return problem;
  }
  return undefined;
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
      new Map(
        db
          .prepare<[], { name: string; sql: string }>(
            `SELECT name, sql FROM ${schema}.sqlite_schema WHERE type = 'table'`,
          )
          .all()
          .map((row) => [row.name, row.sql]),
      );
    const [expected, found] = [definitions('main'), definitions('snapshot')];
    const table = tablesOf(tables).find((name) => found.get(name) !== expected.get(name));
    if (table !== undefined) throw new Error(`its table ${table} is missing or defined otherwise`);
    if (db.prepare<[], string>('PRAGMA snapshot.integrity_check(1)').pluck().get() !== 'ok')
      throw new Error('its database is damaged');
    problem = invalidRow(db, tables, 'snapshot');
  } catch (error) {
    const message = (error as Error).message;
    throw new Error(/not a database|malformed/i.test(message) ? 'its database is damaged' : message, { cause: error });
  }
  if (problem !== undefined) throw new Error(`its table ${problem}`);
}

/** A check of one row: SQL that is 1 when it passes (never NULL), and what a row that fails it holds, in words. */
interface Check {
  sql: string;
  problem: (row: Record<string, unknown>) => string;
}

/** A column whose values the SQL checks cannot judge whole: parsed and judged here, after them. */
interface ValueCheck {
  column: string;
  judge: (value: string) => string | undefined;
}

/** The SQLite storage classes each declared type takes (a REAL column stores whole numbers as they come). */
const STORAGE: Readonly<Record<string, { classes: string; words: string }>> = {
  TEXT: { classes: "'text'", words: 'text' },
  INTEGER: { classes: "'integer'", words: 'a whole number' },
  REAL: { classes: "'integer', 'real'", words: 'a number' },
};

const sqlLiteral = (value: string | number) =>
  typeof value === 'number' ? String(value) : `'${value.replaceAll("'", "''")}'`;
const quoted = (name: string) => `"${name}"`;

/** What `value` is, for a sentence: a secret's value is never shown, only its kind. */
function valueOf(column: string, value: unknown): string {
  if (!SECRET_FIELDS.has(column) || value === null) return valueInWords(value);
  return typeof value === 'string'
    ? 'a text (a secret, not shown)'
    : value instanceof Uint8Array
      ? 'a blob'
      : `a ${typeof value}`;
}

/** Where in a JSON value a schema's issue is: `[0].value`. */
const jsonPath = (path: readonly PropertyKey[]) =>
  path
    .map((key) => (typeof key === 'number' ? `[${key}]` : `.${String(key)}`))
    .join('')
    .replace(/^\./, '');

/** A table's checks, as SQL over `{schema}` (the schema checked) and the value checks run after it. */
interface TableChecks {
  checks: Check[];
  /** The first row failing a check, with each check's result as `lp_check_<index>`. */
  firstInvalid: string;
  valueChecks: ValueCheck[];
  /** The values the value checks judge, each set once, but those the seed holds too (written by this code). */
  values: string;
}

/** Each set's tables' checks, made once: every instance's tables are defined alike. */
const compiled = new WeakMap<TableSet, Map<string, TableChecks>>();

/**
 * The checks of one table's columns (their declared type, NOT NULL and rule, read from main's
 * definition) and rows: SQL run in one pass over the table, and the JSON and text checks run
 * over its values after it.
 */
function checksOf(db: Db, set: TableSet, table: string): TableChecks {
  let tables = compiled.get(set);
  if (!tables) {
    const stray = Object.keys({ ...set.columns, ...set.rows }).find((name) => !tablesOf([set]).includes(name));
    if (stray !== undefined) throw new Error(`rules name the table ${stray}, which is not one of the set's`);
    compiled.set(set, (tables = new Map()));
  }
  const known = tables.get(table);
  if (known) return known;
  const rules = set.columns?.[table] ?? {};
  const columns = db
    .prepare<[], { name: string; type: string; notnull: number; pk: number }>(
      `PRAGMA main.table_info(${quoted(table)})`,
    )
    .all();
  const unknown = Object.keys(rules).find((name) => !columns.some((column) => column.name === name));
  if (unknown !== undefined) throw new Error(`a rule names ${table}.${unknown}, which is no column`);
  const checks: Check[] = [];
  const valueChecks: ValueCheck[] = [];
  for (const { name, type, notnull, pk } of columns) {
    const storage = STORAGE[type.toUpperCase()];
    if (!storage) throw new Error(`${table}.${name} is declared ${type}: no check knows that type`);
    const rule = rules[name];
    const column = quoted(name);
    let condition = `typeof(${column}) IN (${storage.classes})`;
    let takes = storage.words;
    if (rule && 'oneOf' in rule) {
      condition += ` AND ${column} IN (${rule.oneOf.map(sqlLiteral).join(', ')})`;
      takes = `one of ${rule.oneOf.join(', ')}`;
    } else if (rule && 'range' in rule) {
      condition += ` AND ${column} BETWEEN ${rule.range[0]} AND ${rule.range[1]}`;
      takes = rule.says ?? `a whole number from ${rule.range[0]} to ${rule.range[1]}`;
    } else if (rule && 'json' in rule) {
      condition += ` AND json_valid(${column})`;
      takes = 'JSON';
      const schemaOfRule = rule.json;
      valueChecks.push({
        column: name,
        judge: (text) => {
          const result = schemaOfRule.safeParse(JSON.parse(text));
          if (result.success) return undefined;
          const issue = result.error.issues[0]!;
          return (
            `${valueOf(name, text)} in ${name}, JSON of another shape than it keeps ` +
            `(${issue.path.length > 0 ? `${jsonPath(issue.path)}: ` : ''}${issue.message})`
          );
        },
      });
    } else if (rule && 'text' in rule) {
      const { text: accepts, says } = rule;
      valueChecks.push({
        column: name,
        judge: (text) => (accepts(text) ? undefined : `${valueOf(name, text)} in ${name}, which takes ${says}`),
      });
    }
    // SQLite lets NULL into a PRIMARY KEY that is not an INTEGER one: the code takes a key for a value.
    const nullable = notnull === 0 && pk === 0;
    checks.push({
      sql: nullable ? `(${column} IS NULL OR (${condition}))` : `(${condition})`,
      problem: (row) => `${valueOf(name, row[name])} in ${name}, which takes ${takes}${nullable ? ' or NULL' : ''}`,
    });
  }
  const first = columns[0]!.name;
  for (const { sql, says } of set.rows?.[table] ?? []) {
    checks.push({ sql: `coalesce((${sql}), 0)`, problem: (row) => `${says} (${first} ${valueOf(first, row[first])})` });
  }
  const results = checks.map((check, index) => `${check.sql} AS lp_check_${index}`).join(', ');
  const judged = valueChecks.map((check) => quoted(check.column)).join(', ');
  const made: TableChecks = {
    checks,
    firstInvalid:
      `SELECT ${results}, * FROM {schema}.${quoted(table)} WHERE NOT ` +
      `(${checks.map((check) => check.sql).join(' AND ')}) LIMIT 1`,
    valueChecks,
    values: `SELECT ${judged} FROM {schema}.${quoted(table)} EXCEPT SELECT ${judged} FROM seed.${quoted(table)}`,
  };
  tables.set(table, made);
  return made;
}

/** The first value of the set's tables in `schema` that its rules refuse, in words (`<table> holds ...`). */
function invalidValue(db: Db, set: TableSet, schema: string): string | undefined {
  const inSchema = (sql: string) => sql.replaceAll('{schema}', schema);
  for (const table of tablesOf([set])) {
    const { checks, firstInvalid, valueChecks, values } = checksOf(db, set, table);
    const row = db.prepare<[], Record<string, unknown>>(inSchema(firstInvalid)).get();
    if (row !== undefined)
      return `${table} holds ${checks.find((_, index) => row[`lp_check_${index}`] !== 1)!.problem(row)}`;
    if (valueChecks.length === 0) continue;
    for (const judged of db.prepare<[], unknown[]>(inSchema(values)).raw().iterate()) {
      for (const [index, { judge }] of valueChecks.entries()) {
        const value = judged[index];
        const problem = typeof value === 'string' ? judge(value) : undefined;
        if (problem !== undefined) return `${table} holds ${problem}`;
      }
    }
  }
  return undefined;
}
