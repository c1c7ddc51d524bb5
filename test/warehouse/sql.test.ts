import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalplane } from '../../src/index.ts';
import { QueryStopped } from '../../src/warehouse/errors.ts';
import { DuckDBSandbox } from '../../src/warehouse/sandbox.ts';
import { exportClient, harness } from '../support/exports.ts';
import { fixturesOf, inProcessApi } from '../support/in-process.ts';
import { credentialsOf, fullKey, useLocalplane, workspaceByTier } from '../support/instance.ts';
import { duckdb, getBytes, s3For } from '../support/objstore.ts';

const ctx = useLocalplane({ freezeClock: true, limits: { export_rows_per_file: 200 } });
const plus = exportClient(ctx, () => workspaceByTier(ctx.fixtures, 'plus'));
const { admin, advance } = harness(ctx);
/** After the staging project's last run: an export of its three days is all in the past. */
const NOW = '2026-11-01T00:00:00Z';
const THREE_DAYS = { start_time: '2026-10-01T00:00:00Z', end_time: '2026-10-04T00:00:00Z' };
const PREFIX = 'sql-staging';
/** A query that cannot end: a cross join of two ten-million-row ranges. */
const ENDLESS = 'SELECT sum(a.range * b.range) FROM range(10000000) a, range(10000000) b';

const sql = (exportId: string, text: string) =>
  ctx.admin.request('POST', '/sql', { body: { export_id: exportId, sql: text } });
const bucket = () => ctx.fixtures.objstore.buckets[0]!;
const filesDir = () => ctx.fixtures.objstore.files_dir;

let exportId: string;
let exportFiles: string[];

beforeAll(async () => {
  await admin('POST', '/clock/set', { time: NOW });
  exportId = await plus.startExport(await plus.createDestination(PREFIX), 'support-bot-staging', THREE_DAYS);
  await advance(0);
  const runs = await plus.getRuns(exportId);
  expect(runs.map((run) => run.status)).toEqual(['Completed', 'Completed', 'Completed']);
  exportFiles = runs.flatMap((run) => run.metadata.result.exported_files);
});

describe('POST /_localplane/sql', () => {
  it(
    "answers a query over the export's runs view: columns with DuckDB's types, rows as JSON, the count and the " +
      'time taken',
    async () => {
      const answer = await sql(
        exportId,
        'SELECT run_type, count(*) AS runs, sum(total_tokens) AS tokens, min(start_time) AS first FROM runs GROUP ' +
          'BY ALL ORDER BY run_type',
      );
      expect(answer.status, answer.text).toBe(200);
      const direct = await duckdb<{ run_type: string; runs: string }>(
        `SELECT run_type, count(*)::VARCHAR AS runs FROM ` +
          (`read_parquet('${filesDir()}/${bucket()}/${PREFIX}/export_id=${exportId}/**/*.parquet') GROUP BY ALL ` +
            `ORDER BY run_type`),
      );
      expect(answer.body).toMatchObject({
        export_id: exportId,
        columns: [
          { name: 'run_type', type: 'VARCHAR' },
          { name: 'runs', type: 'BIGINT' },
          { name: 'tokens', type: 'HUGEINT' },
          { name: 'first', type: 'TIMESTAMP WITH TIME ZONE' },
        ],
        row_count: direct.length,
        truncated: false,
        row_limit: 1000,
      });
      // BIGINTs as exact strings, as DuckDB's node API gives them.
      expect(answer.body.rows.map((row: unknown[]) => row.slice(0, 2))).toEqual(
        direct.map((row) => [row.run_type, row.runs]),
      );
      expect(answer.body.rows.reduce((sum: number, row: string[]) => sum + Number(row[1]), 0)).toBe(1500);
      expect(answer.body.elapsed_ms).toBeGreaterThanOrEqual(0);
    },
  );

  it("has the files' Hive partition keys, and reads that export's files alone", async () => {
    const oneDay = await plus.startExport(await plus.createDestination(PREFIX), 'support-bot-staging', {
      start_time: THREE_DAYS.start_time,
      end_time: '2026-10-02T00:00:00Z',
    });
    await advance(0);
    const byExport = async (id: string) =>
      (
        await sql(
          id,
          'SELECT export_id, resource, count(DISTINCT day) AS days, count(*) AS runs FROM runs GROUP BY ALL',
        )
      ).body.rows;
    expect(await byExport(exportId)).toEqual([[exportId, 'runs', '3', '1500']]);
    const [[id, , days, runs]] = await byExport(oneDay);
    expect([id, days]).toEqual([oneDay, '1']);
    expect(Number(runs)).toBeLessThan(1500);
  });

  it('answers at most sql_row_limit rows and says when it cut the result', async () => {
    const cut = await sql(exportId, 'SELECT id FROM runs ORDER BY id');
    expect(cut.body).toMatchObject({ row_count: 1000, truncated: true, row_limit: 1000 });
    expect(cut.body.rows).toHaveLength(1000);
    await admin('PATCH', '/config', { sql_row_limit: 1500 });
    try {
      const whole = await sql(exportId, 'SELECT id FROM runs ORDER BY id');
      expect(whole.body).toMatchObject({ row_count: 1500, truncated: false, row_limit: 1500 });
      expect(whole.body.rows.slice(0, 1000)).toEqual(cut.body.rows);
    } finally {
      await admin('PATCH', '/config', { sql_row_limit: 1000 });
    }
  });

  it('refuses a result of more than 16 MB of JSON with a clear 400, whatever its row count', async () => {
    const answer = await sql(exportId, "SELECT repeat('x', 1000000) AS wide FROM range(20)");
    expect(answer.status, answer.text).toBe(400);
    expect(answer.body.detail).toBe(
      'The result is 20 MB of JSON, more than the 16 MB an answer holds: select fewer rows or columns',
    );
    expect((await sql(exportId, "SELECT length(repeat('x', 1000000)) AS wide FROM range(20)")).body.row_count).toBe(20);
  });

  it('stops a query past sql_time_limit_seconds with a clear 400, and runs the next one', async () => {
    await admin('PATCH', '/config', { sql_time_limit_seconds: 0.2 });
    try {
      const stopped = await sql(exportId, ENDLESS);
      expect(stopped.status, stopped.text).toBe(400);
      expect(stopped.body.detail).toBe(
        'The query ran past the time limit of 0.2 s (sql_time_limit_seconds, PATCH /_localplane/config) and was ' +
          'stopped',
      );
    } finally {
      await admin('PATCH', '/config', { sql_time_limit_seconds: 10 });
    }
    expect((await sql(exportId, 'SELECT count(*) FROM runs')).body.rows).toEqual([['1500']]);
  });

  it('runs one query at a time: a second one meanwhile is refused with 429', async () => {
    await admin('PATCH', '/config', { sql_time_limit_seconds: 0.5 });
    try {
      const post = (text: string) =>
        ctx.instance.request('/_localplane/sql', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ export_id: exportId, sql: text }),
        });
      // In process and in the same turn: the first has started when the second arrives.
      const [first, second] = await Promise.all([post(ENDLESS), post('SELECT 1')]);
      expect([first.status, second.status]).toEqual([400, 429]);
      expect(await second.json()).toEqual({
        detail: 'Another SQL query is running on this instance (one at a time): try again when it has ended',
      });
    } finally {
      await admin('PATCH', '/config', { sql_time_limit_seconds: 10 });
    }
    expect((await sql(exportId, 'SELECT 1 AS one')).status).toBe(200);
  });

  it("reads only the objstore's plain files and writes nothing: anything else is a clear 400", async () => {
    const dataDir = join(filesDir(), '..');
    const written = join(filesDir(), bucket(), 'copied.csv');
    const refused: [string, string | RegExp][] = [
      [
        "SELECT * FROM read_csv('/etc/passwd')",
        'Permission Error: Cannot access file "/etc/passwd" - file system operations are disabled by configuration',
      ],
      [
        `SELECT * FROM read_text('${filesDir()}/../localplane.sqlite')`,
        /^Permission Error: Cannot access file ".*localplane\.sqlite"/,
      ],
      [`SELECT * FROM read_blob('${dataDir}/localplane.sqlite')`, /^Permission Error: Cannot access file/],
      ["SELECT * FROM glob('/etc/*')", /^Permission Error: Cannot access file "\/etc\/\*"/],
      [
        "SELECT * FROM read_parquet('http://127.0.0.1:1/x.parquet')",
        /^(Permission|Catalog|Missing Extension|IO) Error/,
      ],
      [`COPY (SELECT 1) TO '${written}'`, 'Only a SELECT statement runs here (read-only), not COPY'],
      // Refused before it is bound: binding would answer its own error first (a file external access does not
      // allow, an INSERT into the view), not the statement's kind.
      ["COPY (SELECT 1) TO '/tmp/localplane-sql-test.csv'", 'Only a SELECT statement runs here (read-only), not COPY'],
      [`COPY runs TO '${written}'`, 'Only a SELECT statement runs here (read-only), not COPY'],
      ["copy runs to '/tmp/x.csv'", 'Only a SELECT statement runs here (read-only), not COPY'],
      [
        "/* a /* nested */ comment */ -- and a line\n copy runs to 'x.csv'",
        'Only a SELECT statement runs here (read-only), not COPY',
      ],
      ['INSERT INTO runs VALUES (1)', 'Only a SELECT statement runs here (read-only), not INSERT'],
      [
        'WITH x AS (SELECT 1) INSERT INTO runs SELECT * FROM x',
        'Only a SELECT statement runs here (read-only), not INSERT',
      ],
      ['DELETE FROM runs', 'Only a SELECT statement runs here (read-only), not DELETE'],
      ["UPDATE runs SET name = 'x'", 'Only a SELECT statement runs here (read-only), not UPDATE'],
      [
        'MERGE INTO runs USING (SELECT 1 AS id) s ON s.id = runs.id WHEN MATCHED THEN DELETE',
        'Only a SELECT statement runs here (read-only), not MERGE INTO',
      ],
      ['CREATE VIEW v AS SELECT 1', 'Only a SELECT statement runs here (read-only), not CREATE'],
      ['DROP VIEW runs', 'Only a SELECT statement runs here (read-only), not DROP'],
      [
        `EXPORT DATABASE '${filesDir()}/${bucket()}/exported'`,
        'Only a SELECT statement runs here (read-only), not EXPORT',
      ],
      ["IMPORT DATABASE '/tmp'", 'Only a SELECT statement runs here (read-only), not IMPORT'],
      ["ATTACH '/tmp/localplane-sql-test.db'", 'Only a SELECT statement runs here (read-only), not ATTACH'],
      ['EXECUTE nothing', 'Only a SELECT statement runs here (read-only), not EXECUTE'],
      ['PRAGMA enable_profiling', 'Only a SELECT statement runs here (read-only), not PRAGMA'],
      [`EXPLAIN ANALYZE COPY (SELECT 1) TO '${written}'`, 'Only a SELECT statement runs here (read-only), not EXPLAIN'],
      [`ATTACH '${filesDir()}/${bucket()}/attached.db'`, 'Only a SELECT statement runs here (read-only), not ATTACH'],
      ['CREATE TABLE kept AS SELECT 1', 'Only a SELECT statement runs here (read-only), not CREATE'],
      ['INSTALL httpfs', 'Only a SELECT statement runs here (read-only), not INSTALL or LOAD'],
      ['LOAD httpfs', 'Only a SELECT statement runs here (read-only), not INSTALL or LOAD'],
      ['SET enable_external_access = true', 'Only a SELECT statement runs here (read-only), not SET'],
      ["SET allowed_directories = ['/']", 'Only a SELECT statement runs here (read-only), not SET'],
      ['SET VARIABLE home = 1', 'Only a SELECT statement runs here (read-only), not SET'],
      [`SELECT 1; COPY (SELECT 1) TO '${written}'`, 'One statement at a time: the SQL holds 2'],
    ];
    for (const [text, detail] of refused) {
      const answer = await sql(exportId, text);
      expect(answer.status, `${text}: ${answer.text}`).toBe(400);
      if (typeof detail === 'string') expect(answer.body.detail, text).toBe(detail);
      else expect(answer.body.detail, text).toMatch(detail);
    }
    expect(existsSync(written)).toBe(false);
    expect(existsSync(join(filesDir(), bucket(), 'attached.db'))).toBe(false);
    expect(existsSync(join(filesDir(), bucket(), 'exported'))).toBe(false);
  });

  it('runs the statements that are SELECTs too: FROM-first, WITH, VALUES, DESCRIBE, SUMMARIZE, SHOW and PRAGMA functions', async () => {
    const count = (await sql(exportId, 'SELECT count(*) FROM runs')).body.rows as unknown[][];
    const selects: [string, unknown[]][] = [
      ['FROM runs SELECT count(*)', count[0]!],
      ['WITH n AS (SELECT count(*) AS n FROM runs) SELECT n FROM n', count[0]!],
      ["VALUES (1, 'a')", [1, 'a']],
      ['(SELECT 1)', [1]],
      ['DESCRIBE runs', ['id', 'VARCHAR']],
      ['SUMMARIZE SELECT 1 AS one', ['one', 'INTEGER']],
      ['SHOW TABLES', ['runs']],
      ["PRAGMA table_info('runs')", [0, 'id', 'VARCHAR']],
    ];
    for (const [text, first] of selects) {
      const answer = await sql(exportId, text);
      expect(answer.status, `${text}: ${answer.text}`).toBe(200);
      expect((answer.body.rows as unknown[][])[0]!.slice(0, first.length), text).toEqual(first);
    }
  });

  it("answers SQL errors as 400 with DuckDB's first line", async () => {
    const cases: [string, string | RegExp][] = [
      ['SELECT nope FROM runs', /^Binder Error: Referenced column "nope" not found in FROM clause!/],
      ['selec 1', /^Parser Error: syntax error at or near "selec"/],
      ['SELECT * FROM nowhere', /^Catalog Error: Table with name nowhere does not exist!/],
      ['-- a comment alone', 'The SQL holds no statement'],
    ];
    for (const [text, detail] of cases) {
      const answer = await sql(exportId, text);
      expect(answer.status, text).toBe(400);
      expect(answer.body.detail, text).toMatch(detail);
      expect(answer.body.detail).not.toContain('\n');
    }
  });

  it('answers 404 for an unknown export, 422 for a malformed request, 409 for an export without files here', async () => {
    const unknown = '3f2b8c1e-5d4a-4e6f-9a7b-1c2d3e4f5a6b';
    expect((await sql(unknown, 'SELECT 1')).body).toEqual({ detail: `Bulk export ${unknown} not found` });
    expect((await sql('latest', 'SELECT 1')).status).toBe(422);
    expect((await sql(exportId, '')).status).toBe(422);

    // Created on the frozen clock and not yet run: nothing written.
    const waiting = await plus.startExport(
      await plus.createDestination('sql-waiting'),
      'support-bot-staging',
      THREE_DAYS,
    );
    const answer = await sql(waiting, 'SELECT count(*) FROM runs');
    expect(answer.status).toBe(409);
    expect(answer.body.detail).toBe(
      `Bulk export ${waiting} has no Parquet files in the objstore ` +
        `(s3://${bucket()}/sql-waiting/export_id=${waiting}/): ` +
        'it has written none yet (it is Created), or its destination is another endpoint',
    );
    await plus.client().post(`/api/v1/bulk-exports/${waiting}/cancel`);

    const destination = await plus.createDestination('sql-gone');
    const done = await plus.startExport(destination, 'support-bot-staging', {
      start_time: THREE_DAYS.start_time,
      end_time: '2026-10-02T00:00:00Z',
    });
    await advance(0);
    expect((await sql(done, 'SELECT 1')).status).toBe(200);
    expect((await plus.client().delete(`/api/v1/bulk-exports/destinations/${destination}`)).status).toBe(204);
    expect((await sql(done, 'SELECT 1')).body).toEqual({
      detail: `The destination of bulk export ${done} was deleted: where its files are is no longer known`,
    });
  });
});

describe('GET /_localplane/objstore/preview', () => {
  const preview = (query: Record<string, string>) =>
    ctx.admin.request('GET', `/objstore/preview?${new URLSearchParams(query)}`);
  const put = (key: string, body: string | Uint8Array, contentType?: string) =>
    s3For(ctx.instance.objstoreUrl, fullKey(ctx.fixtures)).send(
      new PutObjectCommand({ Bucket: bucket(), Key: key, Body: body, ContentType: contentType }),
    );

  it("shows an exported Parquet file's schema, first rows and row count, as DuckDB reads the file", async () => {
    const key = exportFiles[0]!.slice(bucket().length + 1);
    const path = join(filesDir(), bucket(), key);
    const answer = await preview({ bucket: bucket(), key, rows: '5' });
    expect(answer.status, answer.text).toBe(200);
    const columns = await duckdb<{ column_name: string; column_type: string }>(
      `DESCRIBE SELECT * FROM read_parquet('${path}', hive_partitioning = false)`,
    );
    const [{ rows }] = await duckdb<{ rows: number }>(`SELECT count(*)::INTEGER AS rows FROM read_parquet('${path}')`);
    const ids = await duckdb<{ id: string }>(`SELECT id FROM read_parquet('${path}') LIMIT 5`);
    expect(answer.body).toMatchObject({ bucket: bucket(), key, kind: 'parquet', total_rows: rows });
    expect(answer.body.size).toBeGreaterThan(1000);
    expect(answer.body.schema).toEqual(
      columns.map((column) => ({ name: column.column_name, type: column.column_type })),
    );
    expect(answer.body.rows).toHaveLength(5);
    const idColumn = answer.body.schema.findIndex((column: { name: string }) => column.name === 'id');
    expect(answer.body.rows.map((row: unknown[]) => row[idColumn])).toEqual(ids.map((row) => row.id));

    expect((await preview({ bucket: bucket(), key })).body.rows).toHaveLength(20);
    expect((await preview({ bucket: bucket(), key, rows: '101' })).status).toBe(422);
  });

  it('shows JSON and text as text (the first 64 KiB), and nothing of binary', async () => {
    await put('previews/doc.json', '{"a": [1, 2]}', 'application/json');
    await put('previews/table.csv', 'a,b\n1,2\n', 'text/csv');
    await put('previews/untyped.ndjson', '{"a": 1}\n{"a": 2}\n');
    // 65,535 ASCII bytes, then a 3-byte character across the 64 KiB boundary.
    const long = `${'x'.repeat(65_535)}€ and more`;
    await put('previews/long.txt', long, 'text/plain');
    await put('previews/blob.bin', new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3]), 'application/octet-stream');
    await put('previews/fake.parquet', 'PAR1 not really Parquet PAR1');

    expect((await preview({ bucket: bucket(), key: 'previews/doc.json' })).body).toEqual({
      bucket: bucket(),
      key: 'previews/doc.json',
      content_type: 'application/json',
      size: 13,
      kind: 'json',
      text: '{"a": [1, 2]}',
      truncated: false,
    });
    expect((await preview({ bucket: bucket(), key: 'previews/table.csv' })).body).toMatchObject({
      kind: 'text',
      text: 'a,b\n1,2\n',
      truncated: false,
    });
    expect((await preview({ bucket: bucket(), key: 'previews/untyped.ndjson' })).body).toMatchObject({
      kind: 'json',
      truncated: false,
    });
    const cut = (await preview({ bucket: bucket(), key: 'previews/long.txt' })).body;
    expect(cut).toMatchObject({ kind: 'text', truncated: true, size: Buffer.byteLength(long) });
    expect(cut.text).toBe('x'.repeat(65_535));
    expect((await preview({ bucket: bucket(), key: 'previews/blob.bin' })).body).toEqual({
      bucket: bucket(),
      key: 'previews/blob.bin',
      content_type: 'application/octet-stream',
      size: 8,
      kind: 'binary',
    });
    expect((await preview({ bucket: bucket(), key: 'previews/fake.parquet' })).body).toMatchObject({ kind: 'binary' });
  });

  it('answers 404 for a missing bucket or key, and never reads a file outside the object named', async () => {
    await put('previews/inner/secret.txt', 'not this one');
    const missing: [string, string][] = [
      ['no-such-bucket', 'previews/doc.json'],
      [bucket(), 'previews/missing.json'],
      ['..', 'localplane.sqlite'],
      [bucket(), '../../localplane.sqlite'],
      [bucket(), '/etc/passwd'],
      [bucket(), 'previews/inner/../../../localplane.sqlite'],
      [bucket(), '%2e%2e/%2e%2e/localplane.sqlite'],
      [bucket(), 'previews/%2e%2e/previews/inner/secret.txt'],
    ];
    for (const [name, key] of missing) {
      const answer = await preview({ bucket: name, key });
      expect(answer.status, `${name} ${key}: ${answer.text}`).toBe(404);
      expect(answer.body.detail).toMatch(/^No object /);
      expect(answer.text).not.toContain('SQLite format');
    }
    expect((await preview({ bucket: bucket(), key: '../../localplane.sqlite' })).body.detail).toBe(
      `No object ../../localplane.sqlite in bucket ${bucket()} as a plain file: an empty, '.' or '..' segment ` +
        `names no file`,
    );
  });

  it("answers 404 for an object the plain-file view cannot hold, rather than another object's file", async () => {
    // S3 takes `..` in a key; as a path it would name previews/other.txt.
    await put('previews/other.txt', 'the other object');
    await put('previews/dots/../other.txt', 'an object of its own');
    const s3 = s3For(ctx.instance.objstoreUrl, fullKey(ctx.fixtures));
    expect(new TextDecoder().decode(await getBytes(s3, bucket(), 'previews/dots/../other.txt'))).toBe(
      'an object of its own',
    );
    const answer = await preview({ bucket: bucket(), key: 'previews/dots/../other.txt' });
    expect(answer.status, answer.text).toBe(404);
    expect(answer.body.detail).toBe(
      `No object previews/dots/../other.txt in bucket ${bucket()} as a plain file: an empty, '.' or '..' segment ` +
        `names no file`,
    );
    expect((await preview({ bucket: bucket(), key: 'previews/other.txt' })).body.text).toBe('the other object');
  });
});

describe("the instance's DuckDB", () => {
  const folder = mkdtempSync(join(tmpdir(), 'localplane-sandbox-test-'));
  afterAll(() => rmSync(folder, { recursive: true, force: true }));
  const bounds = { rowLimit: 10, timeLimitMs: 60_000 };

  it('locks its configuration: not even its own setup SQL turns file access back on', async () => {
    const sandbox = await DuckDBSandbox.open(folder, { memoryLimitMb: 1000, threads: 2 });
    try {
      for (const setup of [
        'SET enable_external_access = true',
        "SET allowed_directories = ['/']",
        'SET lock_configuration = false',
      ]) {
        await expect(sandbox.query('SELECT 1', { ...bounds, setup })).rejects.toThrow(
          /^Invalid Input Error: Cannot change configuration option "\w+" - the configuration has been locked$/,
        );
      }
      await expect(
        sandbox.query('SELECT 1', { ...bounds, setup: "COPY (SELECT 1) TO '/tmp/localplane-sandbox.csv'" }),
      ).rejects.toThrow(/^Permission Error/);
      expect(existsSync('/tmp/localplane-sandbox.csv')).toBe(false);
    } finally {
      await sandbox.close();
    }
  });

  it('stops the queries under way when it closes', async () => {
    const sandbox = await DuckDBSandbox.open(folder, { memoryLimitMb: 1000, threads: 2 });
    const running = sandbox.query(ENDLESS, bounds);
    const outcome = running.then(
      () => 'ended',
      (error: unknown) => error,
    );
    await sandbox.close();
    expect(await outcome).toEqual(new QueryStopped('closing'));
    await expect(sandbox.query('SELECT 1', bounds)).rejects.toThrow(QueryStopped);
  });

  it('closes when the instance stops: a query under way is stopped and answered 503', async () => {
    const lp = await createLocalplane({ freezeClock: true, log: () => {} });
    try {
      const fixtures = await fixturesOf(lp);
      const workspace = workspaceByTier(fixtures, 'plus');
      const api = inProcessApi(lp, workspace);
      const destination = await api.post('/api/v1/bulk-exports/destinations', {
        display_name: 'stop',
        config: { bucket_name: fixtures.objstore.buckets[0], prefix: 'stop' },
        credentials: credentialsOf(fullKey(fixtures)),
      });
      await lp.clock.set(NOW);
      const created = await api.post('/api/v1/bulk-exports', {
        bulk_export_destination_id: destination.body.id,
        session_id: workspace.sessions.find((session) => session.name === 'support-bot-staging')!.id,
        format_version: 'v2_beta',
        compression: 'snappy',
        start_time: THREE_DAYS.start_time,
        end_time: '2026-10-02T00:00:00Z',
      });
      await lp.clock.advance(0);
      const admin = inProcessApi(lp);
      expect(
        (
          await admin.post('/_localplane/sql', {
            export_id: created.body.id,
            sql: 'SELECT count(*) > 0 AS some FROM runs',
          })
        ).body.rows,
      ).toEqual([[true]]);
      const running = admin.post('/_localplane/sql', { export_id: created.body.id, sql: ENDLESS });
      await lp.stop();
      expect(await running).toMatchObject({
        status: 503,
        body: { detail: 'The instance is stopping: the query was stopped' },
      });
    } finally {
      await lp.stop();
    }
  });
});
