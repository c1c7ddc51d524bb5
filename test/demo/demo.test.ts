import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runDemo, runQuery, type DemoResult } from '../../src/demo/index.ts';
import { DEMO_PROJECT } from '../../src/demo/demo.ts';
import { DEMO_QUERIES } from '../../src/demo/warehouse-sql.ts';
import { start } from '../../src/localplane.ts';
import { expectUsageError, REPO_ROOT, runCli } from '../support/cli.ts';
import { useLocalplane } from '../support/instance.ts';

const scratch = mkdtempSync(join(tmpdir(), 'localplane-demo-test-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The demo project's run count as the shipped fixtures declare it, independent of the demo's own reading. */
const SEEDED_RUNS: number = (
  JSON.parse(readFileSync(join(REPO_ROOT, 'fixtures/workspaces.json'), 'utf8')) as {
    workspaces: { sessions: { name: string; runs: { count: number; days: number } }[] }[];
  }
).workspaces
  .flatMap((workspace) => workspace.sessions)
  .find((session) => session.name === DEMO_PROJECT)!.runs.count;

const SECRETS = /lp-test-secret|lp-fixture-secret/;

/** A table of the printed output, by its section title: header cells and rows of cells (split on 2+ spaces). */
function printedTable(output: string, title: string): { columns: string[]; rows: string[][] } {
  const start = output.indexOf(`== ${title}\n`);
  expect(start, `the output has a "${title}" section`).toBeGreaterThanOrEqual(0);
  const lines = output.slice(start).split('\n').slice(1);
  const end = lines.findIndex((line) => line.trim() === '');
  const [header, , ...rows] = lines.slice(0, end);
  const cells = (line: string) => line.trim().split(/ {2,}/);
  return { columns: cells(header!), rows: rows.map(cells) };
}

const asNumber = (value: unknown) => Number(value);

describe('localplane demo, on an instance of its own', () => {
  let output = '';
  let result: DemoResult;
  const dir = join(scratch, 'in-process');

  beforeAll(async () => {
    result = await runDemo({
      start: () => start({ port: 0, objstorePort: 0, log: () => {} }),
      dir,
      print: (text) => (output += text),
    });
  });

  it('counts every run of the seeded project, per day and run_type summing to it', () => {
    expect(result.projectRunCount).toBe(SEEDED_RUNS);
    const perDay = result.tables.runsPerDay!;
    expect(perDay.rows).toHaveLength(3);
    const total = perDay.columns.indexOf('total');
    expect(perDay.rows.reduce((sum, row) => sum + asNumber(row[total]), 0)).toBe(SEEDED_RUNS);
    for (const row of perDay.rows) {
      const byType = row
        .filter((_, column) => !['day', 'total'].includes(perDay.columns[column]!))
        .reduce((sum: number, cell) => sum + asNumber(cell), 0);
      expect(byType, `run types of ${String(row[0])}`).toBe(asNumber(row[total]));
    }
    expect(output).toContain(`${SEEDED_RUNS.toLocaleString('en-US')} rows written`);
  });

  it('prints every table, aligned, with the numbers DuckDB answered', () => {
    for (const [name, query] of Object.entries(DEMO_QUERIES)) {
      const printed = printedTable(output, query.title);
      const table = result.tables[name]!;
      expect(printed.columns, query.title).toEqual(table.columns);
      expect(printed.rows.length, query.title).toBe(table.rows.length);
      expect(table.rows.length, `${query.title} has rows`).toBeGreaterThan(0);
    }
    const errorRate = printedTable(output, DEMO_QUERIES.errorRate.title);
    expect(errorRate.rows.at(-1)!.slice(0, 2)).toEqual(['all', String(SEEDED_RUNS)]);
    const cost = result.tables.costPerDay!;
    expect(cost.rows.map((row) => row[0])).toEqual(result.tables.runsPerDay!.rows.map((row) => row[0]));
    const latency = result.tables.latencyByName!;
    for (const row of latency.rows) {
      const [p50, p95, p99] = ['p50', 'p95', 'p99'].map((column) => asNumber(row[latency.columns.indexOf(column)]));
      expect(p50! <= p95! && p95! <= p99!, `percentiles of ${String(row[0])} in order`).toBe(true);
    }
  });

  it('rebuilds one trace as a tree: one root, children indented under their parents in dotted order', () => {
    const tree = printedTable(output, DEMO_QUERIES.traceTree.title);
    const rows = output
      .slice(output.indexOf(`== ${DEMO_QUERIES.traceTree.title}`))
      .split('\n')
      .slice(3, 3 + tree.rows.length);
    const depths = rows.map((line) => line.match(/^ */)![0].length / 2);
    expect(depths[0]).toBe(0);
    expect(depths.filter((depth) => depth === 0)).toHaveLength(1);
    expect(depths.slice(1).every((depth, index) => depth >= 1 && depth <= depths[index]! + 1)).toBe(true);
    expect(tree.rows.length).toBeGreaterThan(1);
  });

  it('globs <prefix>/export_id=*: the Parquet files, not the validation probe under tmp/', () => {
    const probes = result.files.all.filter((file) => file.startsWith('tmp/'));
    expect(probes.length).toBeGreaterThan(0);
    expect(result.files.matched.some((file) => file.startsWith('tmp/'))).toBe(false);
    expect(result.files.matched).toEqual(
      result.files.all.filter((file) => file.startsWith(`export_id=${result.exportId}/`) && file.endsWith('.parquet')),
    );
    expect(result.files.matched).toHaveLength(3);
    expect(printedTable(output, 'Files under warehouse-demo/: the export_id=* glob skips tmp/').rows).toContainEqual([
      'tmp/',
      String(probes.length),
      '0',
    ]);
  });

  it('prints the BigQuery external table and the ClickHouse s3() query, and never a secret', () => {
    const projectFolder = result.files.matched[0]!.split('/').slice(0, 3).join('/');
    expect(projectFolder).toMatch(/^export_id=[^/]+\/tenant_id=[^/]+\/session_id=[^/]+$/);
    expect(output).toMatch(
      /CREATE EXTERNAL TABLE [^]*WITH PARTITION COLUMNS \(resource STRING, year INT64, month INT64, day INT64\)/,
    );
    expect(output).toContain(`hive_partition_uri_prefix = 'gs://exports/warehouse-demo/${projectFolder}'`);
    expect(output).toMatch(
      /FROM s3\('http:\/\/127\.0\.0\.1:\d+\/exports\/warehouse-demo\/export_id=\*\/\*\*\/\*\.parquet'/,
    );
    expect(output).not.toMatch(SECRETS);
  });

  it('answers ad-hoc SQL over the copy it keeps (localplane query)', async () => {
    const table = await runQuery({
      sql: 'SELECT count(*)::INTEGER AS runs, count(DISTINCT export_id)::INTEGER AS exports FROM runs',
      dir,
    });
    expect(table).toEqual({ columns: ['runs', 'exports'], rows: [[SEEDED_RUNS, 1]] });
    const oneExport = await runQuery({ sql: 'SELECT count(*)::INTEGER FROM runs', dir, exportId: result.exportId });
    expect(oneExport.rows).toEqual([[SEEDED_RUNS]]);
  });
});

describe('localplane demo --url, against a running instance', () => {
  const context = useLocalplane({ requestLog: false, freezeClock: true });

  it(
    'runs the export on the frozen clock, downloads it through the S3 API and reads it the same way; localplane ' +
      'query --url reads its newest export',
    async () => {
      let output = '';
      const dir = join(scratch, 'url');
      const result = await runDemo({
        url: context.instance.apiUrl,
        dir,
        sql: 'SELECT count(*)::INTEGER AS runs FROM runs',
        print: (text) => (output += text),
      });
      expect(output).toContain('clock is frozen: POST /_localplane/clock/advance {"seconds": 0} runs the export');
      expect(output).toMatch(/downloaded \d+ objects of s3:\/\/exports\/warehouse-demo\/ through the S3 API/);
      expect(result.tables).toEqual({ sql: { columns: ['runs'], rows: [[SEEDED_RUNS]] } });
      expect(result.files.all.some((file) => file.startsWith('tmp/'))).toBe(true);
      expect(result.files.matched.every((file) => file.startsWith(`export_id=${result.exportId}/`))).toBe(true);
      const newest = await runQuery({ url: context.instance.apiUrl, sql: 'SELECT DISTINCT export_id FROM runs' });
      expect(newest.rows).toEqual([[result.exportId]]);
      expect(output + context.logs.join('\n')).not.toMatch(SECRETS);
    },
  );
});

describe('the CLI', () => {
  const dir = join(scratch, 'cli');

  it('localplane demo prints the tables, counts equal to the seeded project', async () => {
    const demo = await runCli(['demo', '--dir', dir]);
    expect(demo.stderr).toBe('');
    expect(demo.code).toBe(0);
    const perDay = printedTable(demo.stdout, DEMO_QUERIES.runsPerDay.title);
    const total = perDay.columns.indexOf('total');
    expect(perDay.rows.reduce((sum, row) => sum + Number(row[total]), 0)).toBe(SEEDED_RUNS);
    for (const query of Object.values(DEMO_QUERIES)) expect(demo.stdout).toContain(`== ${query.title}\n`);
  });

  it('localplane query prints a result table', async () => {
    const query = await runCli([
      'query',
      'select run_type, count(*) as runs from runs group by all order by run_type',
      '--dir',
      dir,
    ]);
    expect(query.code).toBe(0);
    const lines = query.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^run_type\s+runs$/);
    expect(lines[1]).toMatch(/^-+ +-+$/);
    expect(lines.slice(2).reduce((sum, line) => sum + Number(line.split(/ +/)[1]), 0)).toBe(SEEDED_RUNS);
  });

  it.each([
    [
      ['query', 'selec count(*) from runs', '--dir', dir],
      /^localplane: Parser Error: syntax error at or near "selec"\n$/,
    ],
    [
      ['query', 'select * from nowhere', '--dir', dir],
      /^localplane: Catalog Error: Table with name nowhere does not exist/,
    ],
    [['query', '--dir', dir], /^localplane: query needs the SQL/],
    [
      ['query', 'select 1', '--export-id', 'latest'],
      /^localplane: --export-id must be an export id \(a UUID\), got "latest"/,
    ],
    [['demo', '--port', '0'], /^localplane: --port is not an option of localplane demo/],
    [['start', '--sql', 'select 1'], /^localplane: --sql is not an option of localplane start/],
  ])('%j: one line on stderr, exit code 2', async (args, words) => {
    await expectUsageError(args, words);
  });

  it('localplane query on a folder without exports says so, exit code 2', async () => {
    const empty = join(scratch, 'empty');
    mkdirSync(empty);
    const result = await runCli(['query', 'select 1', '--dir', empty]);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      `localplane: no export files in ${empty}: run localplane demo first, or name them with --dir or --url\n`,
    );
  });

  it('localplane demo refuses a --dir that holds other files, and leaves them', async () => {
    const other = join(scratch, 'other');
    mkdirSync(other);
    writeFileSync(join(other, 'keep.txt'), 'mine');
    const result = await runCli(['demo', '--dir', other]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^localplane: --dir .* is not empty and holds no earlier demo's files/);
    expect(readFileSync(join(other, 'keep.txt'), 'utf8')).toBe('mine');
  });
});
