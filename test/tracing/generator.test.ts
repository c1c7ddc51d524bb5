import { createHash } from 'node:crypto';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  formatDottedTimestamp,
  generateRuns,
  insertRuns,
  type GenerateRunsOptions,
} from '../../src/tracing/generator.ts';
import { RUN_COLUMNS, RUNS_DDL, type RunRow } from '../../src/tracing/schema.ts';
import { createRandom } from '../../src/shared/prng.ts';
import { uuidFrom, UUID_PATTERN } from '../../src/shared/ids.ts';
import { formatTimestamp, MICROS_PER_DAY } from '../../src/shared/time.ts';

const START = Date.UTC(2026, 9, 1) * 1000; // 2026-10-01T00:00:00Z
const DAYS = 3;
const END = START + DAYS * MICROS_PER_DAY;
const OPTIONS: GenerateRunsOptions = {
  tenantId: 'tenant-a',
  sessionId: 'session-a',
  count: 5000,
  startMicros: START,
  days: DAYS,
  seed: 1234,
};

function openDb(): Database.Database {
  const db = new Database(':memory:');
  db.exec(RUNS_DDL);
  return db;
}

function hashRows(db: Database.Database): string {
  const hash = createHash('sha256');
  for (const row of db.prepare(`SELECT ${RUN_COLUMNS.join(', ')} FROM runs ORDER BY rowid`).iterate()) {
    hash.update(JSON.stringify(row));
    hash.update('\n');
  }
  return hash.digest('hex');
}

function count(db: Database.Database, sql: string, ...params: unknown[]): number {
  return (
    (db
      .prepare(sql)
      .pluck()
      .get(...params) as number) ?? 0
  );
}

/** `%Y%m%dT%H%M%S%fZ` derived independently from the shared ISO formatter. */
function dottedStamp(micros: number): string {
  return formatTimestamp(micros).replace('+00:00', 'Z').replace(/[-:.]/g, '');
}

describe('generateRuns / insertRuns', () => {
  let db: Database.Database;
  let inserted: number;

  beforeAll(() => {
    db = openDb();
    inserted = insertRuns(db, generateRuns(OPTIONS));
  });
  afterAll(() => db.close());

  it('produces exactly `count` rows', () => {
    expect(inserted).toBe(5000);
    expect(count(db, 'SELECT count(*) FROM runs')).toBe(5000);
    expect(count(db, 'SELECT count(DISTINCT id) FROM runs')).toBe(5000);
    for (const n of [0, 1, 2, 3, 7, 11, 12, 13, 97, 1001]) {
      const rows = [...generateRuns({ ...OPTIONS, count: n, seed: n })];
      expect(rows).toHaveLength(n);
      const seen = new Set<string>();
      for (const row of rows) {
        if (row.parent_run_id !== null) expect(seen.has(row.parent_run_id)).toBe(true);
        seen.add(row.id);
      }
    }
  });

  it('is deterministic for the same options and differs for another seed', () => {
    const again = openDb();
    insertRuns(again, generateRuns(OPTIONS));
    const other = openDb();
    insertRuns(other, generateRuns({ ...OPTIONS, seed: 1235 }));
    try {
      expect(hashRows(again)).toBe(hashRows(db));
      expect(hashRows(other)).not.toBe(hashRows(db));
    } finally {
      again.close();
      other.close();
    }
    // Other sessions with the same seed get other ids (no primary-key collisions).
    const first = generateRuns({ ...OPTIONS, sessionId: 'session-b' }).next().value as RunRow;
    expect(first.id).not.toBe((generateRuns(OPTIONS).next().value as RunRow).id);
  });

  it('is lazy (a generator, not a list)', () => {
    const generator = generateRuns({ ...OPTIONS, count: 1_000_000_000 });
    const firstTen: RunRow[] = [];
    for (const row of generator) {
      firstTen.push(row);
      if (firstTen.length === 10) break;
    }
    expect(firstTen).toHaveLength(10);
  });

  it('builds consistent trace trees', () => {
    // Roots.
    expect(count(db, 'SELECT count(*) FROM runs WHERE (is_root = 1) <> (parent_run_id IS NULL)')).toBe(0);
    expect(
      count(
        db,
        `SELECT count(*) FROM runs WHERE is_root = 1 AND (trace_id <> id OR parent_run_ids <> '[]'
      OR run_type <> 'chain' OR instr(dotted_order, '.') > 0 OR dotted_order <> substr(dotted_order, 1, 22) || id)`,
      ),
    ).toBe(0);
    // Every non-root's parent exists in the same trace, was inserted before it, and agrees with it.
    expect(
      count(
        db,
        `SELECT count(*) FROM runs c LEFT JOIN runs p ON p.id = c.parent_run_id AND p.trace_id = c.trace_id
      WHERE c.parent_run_id IS NOT NULL AND p.id IS NULL`,
      ),
    ).toBe(0);
    const nonRoots = count(db, 'SELECT count(*) FROM runs WHERE is_root = 0');
    expect(nonRoots).toBeGreaterThan(3000);
    expect(
      count(
        db,
        `SELECT count(*) FROM runs c JOIN runs p ON p.id = c.parent_run_id
      WHERE p.rowid < c.rowid
        AND c.parent_run_ids = json_insert(p.parent_run_ids, '$[#]', p.id)
        AND json_extract(c.parent_run_ids, '$[0]') = c.trace_id
        AND substr(c.dotted_order, 1, length(p.dotted_order) + 1) = p.dotted_order || '.'
        AND c.dotted_order = p.dotted_order || '.' || substr(c.dotted_order, length(p.dotted_order) + 2, 22) || c.id
        AND c.start_time >= p.start_time
        AND (p.end_time IS NULL OR (c.end_time IS NOT NULL AND c.end_time <= p.end_time))
        AND c.run_type IN ('chain', 'llm', 'tool', 'retriever')`,
      ),
    ).toBe(nonRoots);
    // Each dotted_order segment's timestamp is the run's own start_time.
    const rows = db.prepare('SELECT id, start_time, dotted_order FROM runs').all() as Pick<
      RunRow,
      'id' | 'start_time' | 'dotted_order'
    >[];
    for (const row of rows) {
      expect(row.dotted_order.endsWith(dottedStamp(row.start_time) + row.id)).toBe(true);
      expect(formatDottedTimestamp(row.start_time)).toBe(dottedStamp(row.start_time));
      expect(row.id).toMatch(UUID_PATTERN);
    }
    // Varied sizes (1..12) and nesting.
    const sizes = db.prepare('SELECT count(*) AS n FROM runs GROUP BY trace_id').pluck().all() as number[];
    expect(Math.min(...sizes)).toBe(1);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(12);
    expect(sizes.filter((n) => n >= 8).length).toBeGreaterThan(10);
    expect(count(db, 'SELECT count(*) FROM runs WHERE json_array_length(parent_run_ids) >= 2')).toBeGreaterThan(100);
    for (const type of ['chain', 'llm', 'tool', 'retriever']) {
      expect(count(db, 'SELECT count(*) FROM runs WHERE run_type = ? AND is_root = 0', type)).toBeGreaterThan(100);
    }
  });

  it('spreads start times over the whole range, roots in increasing order', () => {
    expect(count(db, 'SELECT min(start_time) FROM runs')).toBeGreaterThanOrEqual(START);
    expect(count(db, 'SELECT max(start_time) FROM runs')).toBeLessThan(END);
    expect(count(db, 'SELECT max(end_time) FROM runs')).toBeLessThan(END);
    expect(count(db, `SELECT count(DISTINCT start_time / ${MICROS_PER_DAY}) FROM runs`)).toBe(3);
    // Roughly uniform: every 6-hour slot holds some roots.
    expect(
      count(db, `SELECT count(DISTINCT (start_time - ${START}) / ${MICROS_PER_DAY / 4}) FROM runs WHERE is_root = 1`),
    ).toBe(12);
    const roots = db.prepare('SELECT start_time FROM runs WHERE is_root = 1 ORDER BY rowid').pluck().all() as number[];
    for (let i = 1; i < roots.length; i++) expect(roots[i]!).toBeGreaterThanOrEqual(roots[i - 1]!);
    // Latencies: tens of ms to ~30 s per llm call.
    expect(count(db, "SELECT max(end_time - start_time) FROM runs WHERE run_type = 'llm'")).toBeLessThanOrEqual(
      30_000_000,
    );
    expect(count(db, "SELECT min(end_time - start_time) FROM runs WHERE run_type = 'llm'")).toBeGreaterThanOrEqual(
      300_000,
    );
  });

  it('fills tokens, costs and first_token_time consistently', () => {
    const llm = count(db, "SELECT count(*) FROM runs WHERE run_type = 'llm' AND status <> 'pending'");
    expect(llm).toBeGreaterThan(1000);
    expect(
      count(
        db,
        `SELECT count(*) FROM runs WHERE run_type = 'llm' AND status <> 'pending'
      AND prompt_tokens > 0 AND completion_tokens >= 0 AND total_tokens = prompt_tokens + completion_tokens
      AND prompt_cost > 0 AND abs(total_cost - prompt_cost - completion_cost) < 1e-9`,
      ),
    ).toBe(llm);
    expect(
      count(
        db,
        `SELECT count(*) FROM runs WHERE first_token_time IS NOT NULL
      AND (run_type <> 'llm' OR first_token_time < start_time OR first_token_time > end_time)`,
      ),
    ).toBe(0);
    expect(
      count(db, "SELECT count(*) FROM runs WHERE run_type = 'llm' AND status = 'success' AND first_token_time IS NULL"),
    ).toBe(0);
    // Only llm runs and roots carry tokens and costs.
    expect(
      count(
        db,
        `SELECT count(*) FROM runs WHERE run_type <> 'llm' AND is_root = 0
      AND coalesce(total_tokens, prompt_tokens, completion_tokens, total_cost, prompt_cost, completion_cost)
          IS NOT NULL`,
      ),
    ).toBe(0);
    // Roots carry the sums over their trace's llm runs.
    expect(
      count(
        db,
        `SELECT count(*) FROM runs r LEFT JOIN (
        SELECT trace_id, sum(prompt_tokens) AS p, sum(completion_tokens) AS c, sum(total_cost) AS cost
        FROM runs WHERE run_type = 'llm' GROUP BY trace_id) s ON s.trace_id = r.id
      WHERE r.is_root = 1 AND (r.prompt_tokens <> coalesce(s.p, 0) OR r.completion_tokens <> coalesce(s.c, 0)
        OR r.total_tokens <> coalesce(s.p, 0) + coalesce(s.c, 0) OR abs(r.total_cost - coalesce(s.cost, 0)) > 1e-6)`,
      ),
    ).toBe(0);
    expect(count(db, 'SELECT count(*) FROM runs WHERE is_root = 1 AND total_tokens > 0')).toBeGreaterThan(500);
  });

  it('writes valid, realistic JSON columns', () => {
    const jsonColumns = ['parent_run_ids', 'inputs', 'outputs', 'extra', 'events', 'tags', 'feedback_stats'] as const;
    for (const column of jsonColumns) {
      expect(count(db, `SELECT count(*) FROM runs WHERE ${column} IS NOT NULL AND NOT json_valid(${column})`)).toBe(0);
    }
    let bytes = 0;
    const rows = db.prepare('SELECT * FROM runs').all() as RunRow[];
    for (const row of rows) {
      for (const column of jsonColumns) if (row[column] !== null) JSON.parse(row[column]!);
      for (const value of Object.values(row)) if (value !== null) bytes += Buffer.byteLength(String(value));
      expect(row.tenant_id).toBe('tenant-a');
      expect(row.session_id).toBe('session-a');
      expect(['longlived', 'shortlived']).toContain(row.trace_tier);
      const tags = JSON.parse(row.tags!) as unknown[];
      expect(tags.length).toBeLessThanOrEqual(3);
      for (const tag of tags) expect(typeof tag).toBe('string');
      const events = JSON.parse(row.events!) as { name: string; time: string }[];
      expect(events[0]).toEqual({ name: 'start', time: formatTimestamp(row.start_time) });
      if (row.end_time !== null) expect(events.at(-1)!.time).toBe(formatTimestamp(row.end_time));
      const inputs = JSON.parse(row.inputs!);
      if (row.run_type === 'llm') {
        expect(inputs.messages.at(-1).role).toBe('user');
        const extra = JSON.parse(row.extra!);
        expect(extra.metadata.ls_provider).toBeTypeOf('string');
        expect(extra.metadata.ls_model_name).toBeTypeOf('string');
        expect(extra.runtime.platform).toBe('linux');
        if (row.status === 'success')
          expect(JSON.parse(row.outputs!).generations[0].message.content).toBeTypeOf('string');
      }
      if (row.run_type === 'retriever') {
        expect(inputs.query).toBeTypeOf('string');
        if (row.status === 'success') expect(JSON.parse(row.outputs!).documents[0].page_content).toBeTypeOf('string');
      }
    }
    const average = bytes / rows.length;
    expect(average).toBeGreaterThan(500);
    expect(average).toBeLessThan(2000);
    expect(count(db, "SELECT count(*) FROM runs WHERE run_type = 'llm' AND events LIKE '%new_token%'")).toBeGreaterThan(
      100,
    );
  });

  it('has some errors, pending runs, feedback and reference examples', () => {
    const errors = count(db, "SELECT count(*) FROM runs WHERE status = 'error'");
    const pending = count(db, "SELECT count(*) FROM runs WHERE status = 'pending'");
    expect(errors / 5000).toBeGreaterThan(0.02);
    expect(errors / 5000).toBeLessThan(0.09);
    expect(pending / 5000).toBeGreaterThan(0.002);
    expect(pending / 5000).toBeLessThan(0.03);
    expect(count(db, "SELECT count(*) FROM runs WHERE (status = 'error') <> (error IS NOT NULL)")).toBe(0);
    expect(count(db, "SELECT count(*) FROM runs WHERE (status = 'pending') <> (end_time IS NULL)")).toBe(0);
    expect(count(db, "SELECT count(*) FROM runs WHERE status = 'success' AND outputs IS NULL")).toBe(0);
    expect(
      count(
        db,
        "SELECT count(*) FROM runs WHERE error IS NOT NULL AND error NOT LIKE 'Traceback (most recent call last):%'",
      ),
    ).toBe(0);

    const roots = count(db, 'SELECT count(*) FROM runs WHERE is_root = 1');
    const feedback = count(db, 'SELECT count(*) FROM runs WHERE feedback_stats IS NOT NULL');
    expect(
      count(
        db,
        'SELECT count(*) FROM runs WHERE is_root = 0 AND (feedback_stats IS NOT NULL OR reference_example_id IS NOT ' +
          'NULL)',
      ),
    ).toBe(0);
    expect(feedback / roots).toBeGreaterThan(0.1);
    expect(feedback / roots).toBeLessThan(0.3);
    const stats = JSON.parse(
      db.prepare('SELECT feedback_stats FROM runs WHERE feedback_stats IS NOT NULL').pluck().get() as string,
    );
    for (const value of Object.values(stats) as { n: number; avg: number }[]) {
      expect(value.n).toBeGreaterThanOrEqual(1);
      expect(value.avg).toBeGreaterThanOrEqual(0);
      expect(value.avg).toBeLessThanOrEqual(1);
    }
    const references = count(db, 'SELECT count(*) FROM runs WHERE reference_example_id IS NOT NULL');
    expect(references / roots).toBeGreaterThan(0.04);
    expect(references / roots).toBeLessThan(0.2);
  });

  it('uuidFrom() draws the UUIDs every seed has always drawn: version 4 from four draws, bytes low first', () => {
    const reference = (random: () => number) => {
      const bytes = new Uint8Array(16);
      for (let i = 0; i < 16; i += 4) {
        const word = Math.floor(random() * 4294967296);
        for (let k = 0; k < 4; k++) bytes[i + k] = (word >>> (8 * k)) & 0xff;
      }
      bytes[6] = (bytes[6]! & 0x0f) | 0x40;
      bytes[8] = (bytes[8]! & 0x3f) | 0x80;
      const hex = Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
      return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
    };
    const a = createRandom(99);
    const b = createRandom(99);
    for (let i = 0; i < 2000; i++) expect(uuidFrom(a)).toBe(reference(b));
  });
});
