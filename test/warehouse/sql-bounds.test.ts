/**
 * SQL that would outgrow its bounds, sent to `localplane start` (the CLI's own process): DuckDB
 * runs in a process of its own, which holds the memory limit, is killed at the time limit, and
 * takes what it held with it. The queries are the ones that once passed every bound: a 2 GB
 * string (5 GB resident and 12-15 s against a 1 GB, 10 s limit), a cross join of two
 * million-row ranges, and a range of 1e11 rows.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCli, type Launched } from '../support/cli.ts';
import { credentialsOf, fullKey, workspaceByTier, type FixturesView } from '../support/instance.ts';

/** The time limit the queries run with here (the default is 10 s). */
const TIME_LIMIT_SECONDS = 1;
/**
 * How much later than the time limit a stopped query may be answered here: 0.5 s of grace before
 * the kill, and timers late on a busy machine. The acceptance bound, 1 s past a 10 s limit, is
 * measured by hand on a quiet one (the note of issue 35).
 */
const STOP_SLACK_SECONDS = 3;
const TIME_LIMIT_PASSED =
  `The query ran past the time limit of ${TIME_LIMIT_SECONDS} s (sql_time_limit_seconds, ` +
  `PATCH /_localplane/config) and was stopped`;
const memoryLimitPassed = (megabytes: number) =>
  new RegExp(
    `^The query needed more memory than the limit of ${megabytes} MB \\(sql_memory_limit_mb, PATCH ` +
      `/_localplane/config\\) and was stopped: \\S`,
  );

let lp: Launched;
let exportId: string;

const residentMb = (pid: number) =>
  Number(/^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1000;
/** The processes whose parent is `pid`, from /proc. */
const childrenOf = (pid: number) =>
  readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => {
      try {
        return readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]!.split(' ')[1] === String(pid);
      } catch {
        return false;
      }
    })
    .map(Number);

async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${lp.apiUrl}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const sql = async (text: string) => {
  const started = performance.now();
  const answer = await call('POST', '/_localplane/sql', { export_id: exportId, sql: text });
  return { ...answer, seconds: (performance.now() - started) / 1000 };
};

/**
 * The query after a stopped one answers from the process it starts again, given time enough however busy the machine
 * (a second of it can go to starting that process and reading the export's files).
 */
const expectNextQueryAnswers = async () => {
  await call('PATCH', '/_localplane/config', { sql_time_limit_seconds: 120 });
  try {
    expect((await sql('SELECT count(*) FROM runs')).body, 'the next query').toMatchObject({ rows: [['501']] });
  } finally {
    await call('PATCH', '/_localplane/config', { sql_time_limit_seconds: TIME_LIMIT_SECONDS });
  }
};

beforeAll(async () => {
  lp = await startCli(['--quiet', '--freeze-clock']);
  const fixtures = (await call('GET', '/_localplane/fixtures')).body as unknown as FixturesView;
  const workspace = workspaceByTier(fixtures, 'plus');
  const auth = { 'X-API-Key': workspace.api_key, 'X-Tenant-Id': workspace.id };
  await call('POST', '/_localplane/clock/set', { time: '2026-11-01T00:00:00Z' });
  const destination = await call(
    'POST',
    '/api/v1/bulk-exports/destinations',
    {
      display_name: 'bounds',
      config: { bucket_name: fixtures.objstore.buckets[0], prefix: 'bounds' },
      credentials: credentialsOf(fullKey(fixtures)),
    },
    auth,
  );
  const created = await call(
    'POST',
    '/api/v1/bulk-exports',
    {
      bulk_export_destination_id: destination.body.id,
      session_id: workspace.sessions.find((session) => session.name === 'support-bot-staging')!.id,
      format_version: 'v2_beta',
      compression: 'snappy',
      start_time: '2026-10-01T00:00:00Z',
      end_time: '2026-10-02T00:00:00Z',
    },
    auth,
  );
  exportId = created.body.id as string;
  await call('POST', '/_localplane/clock/advance', { seconds: 0 });
});

afterAll(async () => {
  await lp?.kill('SIGTERM');
});

describe("a query past its bounds, in localplane's own process", () => {
  it('is stopped at the limit it hits and answered 400 naming it, while the API answers; RSS comes back', async () => {
    expect((await sql('SELECT count(*) FROM runs')).body.rows).toEqual([['501']]);
    expect((await call('PATCH', '/_localplane/config', { sql_time_limit_seconds: TIME_LIMIT_SECONDS })).status).toBe(
      200,
    );
    const before = residentMb(lp.child.pid!);
    const cases: [string, string | RegExp][] = [
      ["SELECT length(repeat('x', 2000000000))", memoryLimitPassed(1000)],
      ['SELECT count(*) FROM range(1000000) a, range(1000000) b', TIME_LIMIT_PASSED],
      ['SELECT sum(range) FROM range(100000000000)', TIME_LIMIT_PASSED],
    ];
    for (const [text, detail] of cases) {
      let ended = false;
      const answer = sql(text).finally(() => (ended = true));
      const health = await call('GET', '/_localplane/health');
      expect(health.status).toBe(200);
      // A query that hits its time limit is still under way when the API has answered.
      if (detail === TIME_LIMIT_PASSED) expect(ended, text).toBe(false);
      const { status, body, seconds } = await answer;
      expect(status, text).toBe(400);
      expect(body.detail, text).toMatch(detail);
      expect(seconds, text).toBeLessThan(TIME_LIMIT_SECONDS + STOP_SLACK_SECONDS);
    }
    expect(residentMb(lp.child.pid!) - before).toBeLessThan(50);
    await expectNextQueryAnswers();
  });

  it('kills the process of a step that never looks for an interrupt, and starts another for the next query', async () => {
    const [duckdb] = childrenOf(lp.child.pid!);
    expect(duckdb).toBeDefined();
    // Building a 400 MB string takes DuckDB some 6.5 s, and it checks for an interrupt only after.
    const stopped = await sql("SELECT length(repeat('x', 400000000))");
    expect(stopped.body.detail).toBe(TIME_LIMIT_PASSED);
    // Sooner than DuckDB's own end of the step, which then answers the interrupt too: the process was killed.
    expect(stopped.seconds).toBeLessThan(TIME_LIMIT_SECONDS + STOP_SLACK_SECONDS);
    expect(childrenOf(lp.child.pid!)).not.toContain(duckdb);
    await expectNextQueryAnswers();
    expect(childrenOf(lp.child.pid!)).toHaveLength(1);
  });

  it('takes a new memory limit at the next query, held by DuckDB and by the process around it', async () => {
    // Time enough for the memory limit to be reached first, however busy the machine.
    await call('PATCH', '/_localplane/config', { sql_memory_limit_mb: 200, sql_time_limit_seconds: 120 });
    try {
      const counted = await sql('SELECT list(range) FROM range(100000000000)');
      expect(counted.status).toBe(400);
      expect(counted.body.detail).toMatch(memoryLimitPassed(200));
      expect(counted.body.detail).toMatch(/: Out of Memory Error: /);
      await call('PATCH', '/_localplane/config', { sql_memory_limit_mb: 100, sql_row_limit: 100_000 });
      // 500 MB of rows, which DuckDB's process cannot hold twice (DuckDB's and JavaScript's) under the limit of its
      // address space.
      const rows = await sql("SELECT repeat('x', 5000) FROM range(100000)");
      expect(rows.status).toBe(400);
      expect(rows.body.detail).toMatch(memoryLimitPassed(100));
      expect((await sql('SELECT count(*) FROM runs')).body, 'the next query').toMatchObject({ rows: [['501']] });
      expect(childrenOf(lp.child.pid!)).toHaveLength(1);
    } finally {
      await call('PATCH', '/_localplane/config', {
        sql_memory_limit_mb: 1000,
        sql_row_limit: 1000,
        sql_time_limit_seconds: TIME_LIMIT_SECONDS,
      });
    }
  });

  it('ends with the instance', async () => {
    expect((await sql('SELECT 1')).status).toBe(200);
    const duckdb = childrenOf(lp.child.pid!);
    expect(duckdb).toHaveLength(1);
    await lp.kill('SIGTERM');
    expect(() => process.kill(duckdb[0]!, 0)).toThrow(/ESRCH/);
  });
});
