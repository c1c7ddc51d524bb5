/**
 * Hostile snapshot files for the robustness fuzz suite: one sound snapshot changed in one place
 * (its magic line, a header field, a database row, a value of any column, an objstore entry, a
 * size or its checksum). Names meant to leave the data dir aim at `victim` folders beside it,
 * which must stay as they are.
 */
import fc from 'fast-check';
import type Database from 'better-sqlite3';
import { snapshotBytes, withDatabase, type SnapshotParts } from '../../support/snapshot-files.ts';

export interface SnapshotMutation {
  /** What was changed, for a failure's message. */
  what: string;
  bytes: Buffer;
}

/** Names that would leave a folder, or that no file system or bucket takes, around one that would (`victim`). */
function hostileNames(victim: string): string[] {
  return [
    `../${victim}`,
    `../../${victim}`,
    `../../../${victim}`,
    `../../../../${victim}`,
    `/tmp/${victim}`,
    '..',
    '.',
    '',
    'a/b',
    'a\\b',
    `..\\..\\${victim}`,
    'a\u0000b',
    'line\nbreak',
    '\u001b]0;title\u0007',
    'n'.repeat(256),
    'UPPER-case',
    'xn--reserved',
    '192.168.0.1',
    'a..b',
    '.incoming-fuzz',
    '._S3rver_uploads',
    'exports',
    'localplane-deployment-sources',
    'fuzz-created-bucket',
  ];
}

const MAGIC_LINES = [
  '',
  'localplane-snapshot',
  'localplane-snapshot 0',
  'localplane-snapshot 2',
  'localplane-snapshot 01',
  'localplane-snapshot 1 ',
  'localplane-snapshot -1',
  'localplane-snapshot 99999999999999999999',
  'LOCALPLANE-SNAPSHOT 1',
  `localplane-snapshot ${'1'.repeat(100)}`,
  'localplane-snapshot\u00001',
];

const HOSTILE_JSON: readonly unknown[] = [
  null,
  -1,
  0,
  1.5,
  2 ** 53,
  1e308,
  '',
  'x',
  '../../victim',
  true,
  [],
  {},
  { now: -1e20, frozen: true },
  { now: 1, frozen: 'yes' },
  { export_rows_per_file: -1 },
  { unknown_limit: 1 },
  { revision_step_seconds: { BUILDING: 1e308 } },
];

/**
 * A row that breaks its table's NOT NULL constraint, under the table's own definition: made without it, then the
 * definition put back.
 */
function nullWhereNotNull(db: Database.Database): void {
  const definition = db
    .prepare<[], string>("SELECT sql FROM sqlite_schema WHERE name = 'objstore_created_buckets'")
    .pluck()
    .get()!;
  db.exec(`DROP TABLE objstore_created_buckets; ${definition.replace('created_at TEXT NOT NULL', 'created_at TEXT')}`);
  db.prepare("INSERT INTO objstore_created_buckets VALUES ('fuzz-null-time', NULL, NULL, NULL)").run();
  db.unsafeMode(true);
  db.pragma('writable_schema = ON');
  db.prepare("UPDATE sqlite_schema SET sql = ? WHERE name = 'objstore_created_buckets'").run(definition);
}

/** Changes to the header's own fields (sizes, entries and checksum are recomputed unless kept). */
function headerMutations(base: SnapshotParts): fc.Arbitrary<SnapshotMutation> {
  const fields = [
    'template',
    'seed',
    'clock',
    'ids_drawn',
    'limits',
    'database_bytes',
    'objstore',
    'payload_sha256',
    'unknown_field',
  ] as const;
  return fc
    .tuple(fc.constantFrom(...fields), fc.option(fc.constantFrom(...HOSTILE_JSON), { nil: undefined }))
    .map(([field, value]) => {
      const header = { ...base.header };
      if (value === undefined) delete header[field];
      else header[field] = value;
      const kept = (['database_bytes', 'objstore', 'payload_sha256'] as const).filter((name) => name === field);
      return {
        what: `header ${field} ${value === undefined ? 'left out' : JSON.stringify(value)}`,
        bytes: snapshotBytes({ ...base, header }, kept),
      };
    });
}

/** SQL run on the database image (the checksum recomputed): rows whose values become paths, and damage. */
function rowMutations(base: SnapshotParts, victim: string): fc.Arbitrary<SnapshotMutation> {
  const name = fc.constantFrom(...hostileNames(victim));
  type Edit = [string, (db: Database.Database) => unknown];
  const withName = (what: string, sql: string) =>
    name.map((value): Edit => [`${what} ${JSON.stringify(value)}`, (db) => db.prepare(sql).run(value)]);
  const edits: fc.Arbitrary<Edit> = fc.oneof(
    withName(
      'created bucket',
      "INSERT OR REPLACE INTO objstore_created_buckets VALUES (?, NULL, NULL, '2026-11-01T00:00:00.000Z')",
    ),
    withName('created bucket renamed', 'UPDATE OR REPLACE objstore_created_buckets SET name = ?'),
    withName('configured bucket', 'INSERT OR REPLACE INTO objstore_buckets VALUES (?)'),
    withName('configured bucket renamed', "UPDATE OR REPLACE objstore_buckets SET name = ? WHERE name = 'exports'"),
    withName('created bucket region', 'UPDATE objstore_created_buckets SET region = ?'),
    fc.constantFrom<Edit>(
      [
        'created bucket name as a blob',
        (db) => db.prepare("INSERT INTO objstore_created_buckets VALUES (x'2e2e2f2e2e2f78', NULL, NULL, 'x')").run(),
      ],
      [
        'created bucket name as a number',
        (db) => db.prepare("INSERT INTO objstore_created_buckets VALUES (42, NULL, NULL, 'x')").run(),
      ],
      [
        'created bucket creation time',
        (db) => db.prepare("UPDATE objstore_created_buckets SET created_at = 'not a time'").run(),
      ],
      ['key permissions not JSON', (db) => db.prepare("UPDATE objstore_keys SET permissions = 'not json'").run()],
      ['key permissions unknown', (db) => db.prepare('UPDATE objstore_keys SET permissions = \'["root"]\'').run()],
      ['key secret as a number', (db) => db.prepare('UPDATE objstore_keys SET secret_access_key = 7').run()],
      ['a table dropped', (db) => db.exec('DROP TABLE objstore_created_buckets')],
      [
        'a table defined otherwise',
        (db) => db.exec('DROP TABLE objstore_keys; CREATE TABLE objstore_keys (access_key_id TEXT)'),
      ],
      [
        'an extra table and trigger',
        (db) =>
          db.exec(
            'CREATE TABLE fuzz (x); CREATE TRIGGER fuzz_trigger AFTER INSERT ON objstore_keys BEGIN DELETE FROM ' +
              'objstore_keys; END',
          ),
      ],
      ['a NULL where NOT NULL', nullWhereNotNull],
    ),
  );
  const damage = fc.oneof(
    fc.integer({ min: 0, max: base.database.byteLength - 1 }).map((at): SnapshotMutation => {
      const database = Buffer.from(base.database);
      database[at] = database[at]! ^ 0xff;
      return { what: `database byte ${at} flipped`, bytes: snapshotBytes({ ...base, database }) };
    }),
    fc.integer({ min: 0, max: base.database.byteLength - 1 }).map((length): SnapshotMutation => ({
      what: `database cut to ${length} bytes`,
      bytes: snapshotBytes({ ...base, database: base.database.subarray(0, length) }),
    })),
  );
  return fc.oneof(
    edits.map(([what, edit]) => {
      try {
        return { what, bytes: snapshotBytes(withDatabase(base, edit)) };
      } catch {
        // SQLite refused the edit itself (a constraint): the sound file, which must restore.
        return { what: `${what} (refused by SQLite: the sound file)`, bytes: snapshotBytes(base) };
      }
    }),
    damage,
  );
}

/**
 * Values, as SQL, that the code reading a column may not expect: another type, JSON of another
 * shape, numbers beyond a time or a flag, another column's words (a status that needs a start time).
 */
const HOSTILE_VALUES: readonly string[] = [
  'NULL',
  '0',
  '-1',
  '2',
  '4611686018427387904',
  '-9223372036854775808',
  '1.5',
  '1e300',
  "''",
  "'x'",
  "x'00ff'",
  `'{"a":'`,
  "'null'",
  "'[]'",
  "'{}'",
  "'[1]'",
  "'[null]'",
  "'[{}]'",
  `'"text"'`,
  `'{"name": 1, "prefix": 2, "repo_ref": 3, "k8s_namespaces": "x"}'`,
  "'Running'",
  "'IntervalScheduled'",
  "'DEPLOYING'",
  "'AWAITING_DELETE'",
  "'eq(is_root'",
];

/** One column of one table set to a hostile value, in every row or in one. */
function valueMutations(base: SnapshotParts): fc.Arbitrary<SnapshotMutation> {
  let tables: { table: string; columns: string[]; rows: number }[] = [];
  withDatabase(base, (db) => {
    tables = db
      .prepare<[], string>("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")
      .pluck()
      .all()
      .map((table) => ({
        table,
        columns: db.prepare<[], string>(`SELECT name FROM pragma_table_info('${table}')`).pluck().all(),
        rows: db.prepare<[], number>(`SELECT count(*) FROM "${table}"`).pluck().get()!,
      }))
      .filter((table) => table.rows > 0);
  });
  return fc
    .constantFrom(...tables)
    .chain(({ table, columns, rows }) =>
      fc.tuple(
        fc.constant(table),
        fc.constantFrom(...columns),
        fc.constantFrom(...HOSTILE_VALUES),
        fc.option(fc.nat(rows - 1), { nil: undefined }),
      ),
    )
    .map(([table, column, value, row]) => {
      const where = row === undefined ? '' : ` WHERE rowid = (SELECT rowid FROM "${table}" LIMIT 1 OFFSET ${row})`;
      const what = `${table}.${column} = ${value} in ${row === undefined ? 'every row' : `row ${row}`}`;
      try {
        return {
          what,
          bytes: snapshotBytes(
            withDatabase(base, (db) => db.exec(`UPDATE "${table}" SET "${column}" = ${value}${where}`)),
          ),
        };
      } catch {
        // SQLite refused the change itself (a constraint): the sound file, which must restore.
        return { what: `${what} (refused by SQLite: the sound file)`, bytes: snapshotBytes(base) };
      }
    });
}

/** Objstore entries with hostile paths, out of order, twice, or a file where a folder belongs. */
function treeMutations(base: SnapshotParts, victim: string): fc.Arbitrary<SnapshotMutation> {
  const bucket = base.objstore.find((entry) => entry.data === null)!.path;
  const path = fc.oneof(
    fc.constantFrom(...hostileNames(victim)),
    fc.constantFrom(...hostileNames(victim)).map((name) => `${bucket}/${name}`),
    fc.constantFrom(...hostileNames(victim)).map((name) => `${bucket}/${name}/file._S3rver_object`),
    fc.constantFrom(
      `${bucket}/fuzz.txt._S3rver_object`,
      `${bucket}/._S3rver_uploads`,
      `${bucket}/deep/er/fuzz._S3rver_object`,
      bucket,
    ),
  );
  const data = fc.option(fc.constantFrom(Buffer.from(''), Buffer.from('fuzz data')), { nil: null });
  const entries = base.objstore;
  return fc.oneof(
    fc.tuple(path, data, fc.nat(entries.length)).map(([entryPath, bytes, at]): SnapshotMutation => ({
      what: `entry ${JSON.stringify(entryPath)} (${bytes === null ? 'folder' : 'file'}) added at ${at}`,
      bytes: snapshotBytes({
        ...base,
        objstore: [...entries.slice(0, at), { path: entryPath, data: bytes }, ...entries.slice(at)],
      }),
    })),
    fc.tuple(fc.nat(entries.length - 1), path).map(([at, entryPath]): SnapshotMutation => ({
      what: `entry ${at} renamed ${JSON.stringify(entryPath)}`,
      bytes: snapshotBytes({
        ...base,
        objstore: entries.map((entry, index) => (index === at ? { ...entry, path: entryPath } : entry)),
      }),
    })),
    fc.nat(entries.length - 1).map((at): SnapshotMutation => ({
      what: `entry ${at} turned ${entries[at]!.data === null ? 'into a file' : 'into a folder'}`,
      bytes: snapshotBytes({
        ...base,
        objstore: entries.map((entry, index) =>
          index === at ? { ...entry, data: entry.data === null ? Buffer.from('x') : null } : entry,
        ),
      }),
    })),
    fc.nat(entries.length - 1).map((at): SnapshotMutation => ({
      what: `entry ${at} moved first and written twice`,
      bytes: snapshotBytes({ ...base, objstore: [entries[at]!, ...entries] }),
    })),
  );
}

/** Sizes and checksum that do not match the data, and data cut short or run on. */
function sizeMutations(base: SnapshotParts): fc.Arbitrary<SnapshotMutation> {
  const sound = snapshotBytes(base);
  const files = base.objstore.flatMap((entry, at) => (entry.data === null ? [] : [at]));
  return fc.oneof(
    fc
      .integer({ min: -3, max: 3 })
      .filter((delta) => delta !== 0)
      .map((delta): SnapshotMutation => ({
        what: `database_bytes off by ${delta}`,
        bytes: snapshotBytes(
          { ...base, header: { ...base.header, database_bytes: base.database.byteLength + delta } },
          ['database_bytes'],
        ),
      })),
    fc.tuple(fc.constantFrom(...files), fc.integer({ min: -2, max: 2 })).map(([at, delta]): SnapshotMutation => {
      const listed = base.objstore.map((entry, index) => ({
        path: entry.path,
        bytes: entry.data === null ? null : entry.data.byteLength + (index === at ? delta : 0),
      }));
      return {
        what: `entry ${at} size off by ${delta}`,
        bytes: snapshotBytes({ ...base, header: { ...base.header, objstore: listed } }, ['objstore']),
      };
    }),
    fc.constantFrom('0'.repeat(64), 'f'.repeat(64), 'not hex').map((checksum): SnapshotMutation => ({
      what: `checksum ${checksum}`,
      bytes: snapshotBytes({ ...base, header: { ...base.header, payload_sha256: checksum } }, ['payload_sha256']),
    })),
    fc
      .integer({ min: 1, max: sound.byteLength - 1 })
      .map((length): SnapshotMutation => ({ what: `file cut to ${length} bytes`, bytes: sound.subarray(0, length) })),
    fc.constantFrom(Buffer.from('\n'), Buffer.alloc(1000), Buffer.from('trailing')).map((extra): SnapshotMutation => ({
      what: `${extra.byteLength} bytes added`,
      bytes: Buffer.concat([sound, extra]),
    })),
    fc.constantFrom('{', 'null', '[]', '"header"', '{"template": 1}').map((line): SnapshotMutation => {
      const headerStart = sound.indexOf(0x0a) + 1;
      return {
        what: `header line ${line}`,
        bytes: Buffer.concat([
          sound.subarray(0, headerStart),
          Buffer.from(`${line}\n`),
          sound.subarray(sound.indexOf(0x0a, headerStart) + 1),
        ]),
      };
    }),
  );
}

/**
 * One change to the sound snapshot `base`, of any kind; a counterexample shows what was changed, not the file's bytes.
 */
export function snapshotMutations(base: SnapshotParts, victim: string): fc.Arbitrary<SnapshotMutation> {
  return fc
    .oneof(
      fc.constantFrom(...MAGIC_LINES).map((magic): SnapshotMutation => ({
        what: `magic line ${JSON.stringify(magic)}`,
        bytes: snapshotBytes({ ...base, magic }),
      })),
      headerMutations(base),
      rowMutations(base, victim),
      { arbitrary: valueMutations(base), weight: 3 },
      treeMutations(base, victim),
      sizeMutations(base),
    )
    .map((mutation) => Object.assign(mutation, { [fc.toStringMethod]: () => mutation.what }));
}
