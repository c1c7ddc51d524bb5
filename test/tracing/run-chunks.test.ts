import { appendFileSync, mkdtempSync, rmSync, statSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Database, openInstanceDb, resetInstanceDb } from '../../src/shared/db.ts';
import { createRandom } from '../../src/shared/prng.ts';
import { generateRuns, insertRuns } from '../../src/tracing/generator.ts';
import { RUN_COLUMNS, type RunColumn, type RunRow } from '../../src/tracing/schema.ts';
import type { RunColumnsPage } from '../../src/tracing/pages.ts';
import { tracingTables, TracingStore, type ColumnsPageQuery } from '../../src/tracing/store.ts';

const SESSION = '5a0c1d2e-3f40-4a5b-8c6d-7e8f90a1b2c3';
const START = Date.parse('2026-10-01T00:00:00Z') * 1000;
const DAY = 86_400_000_000;

/** Generated runs, some sharing a start time (ties the cursor's id decides), with NULL and empty text. */
function seededRows(): RunRow[] {
  const runs = [
    ...generateRuns({ tenantId: 'tenant', sessionId: SESSION, count: 3_000, startMicros: START, days: 2, seed: 7 }),
  ];
  const twins = runs.slice(100, 140).flatMap((run, k) => [
    { ...run, id: `${run.id.slice(0, -2)}zz`, tags: null, inputs: '' },
    { ...run, id: `${run.id.slice(0, -2)}aa`, name: `é ${k}`, error: null },
  ]);
  return [...runs, ...twins];
}

const dir = mkdtempSync(join(tmpdir(), 'localplane-test-run-chunks-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * A template of the rows with its chunks (written as the template builder does); `late` rows go into its runs table
 * after the chunks were written.
 */
function template(name: string, late: RunRow[] = []): string {
  const path = join(dir, `${name}.sqlite`);
  const db = new Database(path);
  db.exec(tracingTables.ddl);
  insertRuns(db, seededRows());
  const chunks: Buffer[] = [];
  let size = 0;
  TracingStore.writeRunChunks(db, SESSION, {
    append: (bytes) => {
      chunks.push(Buffer.from(bytes));
      size += bytes.byteLength;
      return size - bytes.byteLength;
    },
  });
  insertRuns(db, late);
  db.close();
  // After the database's pages, as the template builder puts them.
  appendFileSync(path, Buffer.concat(chunks));
  return path;
}

function instance(name: string, templatePath: string): TracingStore {
  return new TracingStore(instanceDb(name, templatePath));
}

const instanceDb = (name: string, templatePath: string) =>
  openInstanceDb(join(dir, `${name}-instance.sqlite`), templatePath, [tracingTables], { durable: false });

/** The whole of the seeded runs' two days, every column. */
const everything: ColumnsPageQuery = {
  sessionId: SESSION,
  from: START,
  to: START + 2 * DAY,
  after: null,
  limit: 100_000,
  filter: null,
  columns: RUN_COLUMNS,
};

/** A template built before chunks (a kept data dir may hold one). */
function templateWithoutChunks(name: string): string {
  const path = template(name);
  const db = new Database(path);
  db.exec('DROP TABLE run_chunks');
  db.close();
  return path;
}

/** A filter every run passes: the same page, read by SQLite from the rows. */
const fromRows = (query: ColumnsPageQuery): ColumnsPageQuery => ({ ...query, filter: { sql: '1 = ?', params: [1] } });

function comparable(page: RunColumnsPage) {
  return {
    rows: page.rows,
    last: page.last,
    columns: page.columns.map((cells) => ({
      values: Buffer.from(cells.values.buffer, cells.values.byteOffset, cells.values.byteLength).toString('hex'),
      text: cells.text && Buffer.concat(cells.text).toString('hex'),
    })),
  };
}

/** A query of random bounds, cursor, limit and columns over the seeded runs' two days. */
function randomQuery(random: () => number, rows: readonly RunRow[], trial: number): ColumnsPageQuery {
  const pick = rows[Math.floor(random() * rows.length)]!;
  const columns: readonly RunColumn[] = trial % 3 === 0 ? RUN_COLUMNS : RUN_COLUMNS.filter(() => random() < 0.4);
  return {
    sessionId: SESSION,
    from: START + Math.floor(random() * DAY),
    // Up to a run's start time (that run left out) or between runs.
    to:
      trial % 5 === 0 ? rows[Math.floor(random() * rows.length)]!.start_time : START + DAY + Math.floor(random() * DAY),
    // Right after a run, or on a tie's start time with an id between the twins'.
    after:
      trial % 4 === 0
        ? null
        : trial % 4 === 1
          ? { startTime: pick.start_time, id: `${pick.id.slice(0, -2)}m` }
          : { startTime: pick.start_time, id: pick.id },
    limit: 1 + Math.floor(random() * (trial % 2 === 0 ? 40 : 2_000)),
    filter: null,
    columns: columns.length === 0 ? ['id'] : columns,
  };
}

const inCursorOrder = (rows: RunRow[]) =>
  rows.sort((a, b) => a.start_time - b.start_time || Buffer.compare(Buffer.from(a.id), Buffer.from(b.id)));

describe("the template's chunks of seeded runs", () => {
  const late = generateRuns({
    tenantId: 'tenant',
    sessionId: SESSION,
    count: 1,
    startMicros: START + DAY / 2,
    days: 1,
    seed: 99,
  }).next().value as RunRow;
  const tracing = instance('main', template('main'));

  it('give the pages SQLite reads from the rows, byte for byte, wherever a page starts and ends', () => {
    const random = createRandom(11);
    const rows = inCursorOrder(seededRows());
    for (let trial = 0; trial < 200; trial++) {
      const query = randomQuery(random, rows, trial);
      const fromChunks = tracing.runColumnsPage(query);
      const expected = tracing.runColumnsPage(fromRows(query));
      expect(comparable(fromChunks), JSON.stringify({ ...query, filter: null })).toEqual(comparable(expected));
    }
  });

  it(
    'serve a page of seeded runs (a run added to the template after its chunks is not in it), and the rows serve ' +
      'the rest',
    () => {
      const query: ColumnsPageQuery = {
        sessionId: SESSION,
        from: START,
        to: START + DAY,
        after: null,
        limit: 5_000,
        filter: null,
        columns: ['id'],
      };
      const store = instance('late', template('late', [late]));
      const fromChunks = store.runColumnsPage(query);
      const fromTheRows = store.runColumnsPage(fromRows(query));
      expect(fromTheRows.rows).toBe(fromChunks.rows + 1);
      expect(store.runColumnsPage({ ...query, sessionId: 'another session' }).rows).toBe(0);
    },
  );

  it('are not needed: a template built before them (a kept data dir) is read from its rows', () => {
    const store = instance('old', templateWithoutChunks('old'));
    const query: ColumnsPageQuery = { ...everything, limit: 500 };
    expect(comparable(store.runColumnsPage(query))).toEqual(comparable(store.runColumnsPage(fromRows(query))));
  });

  it('fail a page with a clear error when the template ends inside them', () => {
    const path = template('cut');
    truncateSync(path, statSync(path).size - 1000);
    const store = instance('cut', path);
    const query: ColumnsPageQuery = { ...everything, limit: 5_000, columns: ['id'] };
    expect(() => store.runColumnsPage(query)).toThrow(/ends inside a run chunk: it is damaged/);
  });
});

describe('the chunks of runs added at run time', () => {
  const seeded = seededRows();
  /** Runs added in five calls over the seeded runs' days, and twins of seeded runs: the same start time, other ids. */
  const additions: RunRow[][] = [
    ...[1, 2, 3, 4, 5].map((call) => [
      ...generateRuns({ tenantId: 'tenant', sessionId: SESSION, count: 300, startMicros: START, days: 2, seed: call }),
    ]),
    seeded.slice(200, 230).flatMap((run, k) => [
      { ...run, id: `${run.id.slice(0, -2)}ab`, outputs: null },
      { ...run, id: `${run.id.slice(0, -2)}0${k % 10}`, name: `ü ${k}` },
    ]),
  ];
  const addedTo = (store: TracingStore) => additions.forEach((rows) => store.addRuns(rows));
  const expectPagesOfTheRows = (store: TracingStore, query = everything) =>
    expect(comparable(store.runColumnsPage(query))).toEqual(comparable(store.runColumnsPage(fromRows(query))));
  const chunksFile = (name: string) => join(dir, `${name}-instance.sqlite.added-run-chunks`);

  it('merge with the seeded runs into the pages SQLite reads from the rows, byte for byte, wherever a page starts and ends', () => {
    const store = instance('added', template('added'));
    addedTo(store);
    const random = createRandom(12);
    const rows = inCursorOrder([...seeded, ...additions.flat()]);
    expect(store.runColumnsPage(everything).rows).toBe(rows.length);
    for (let trial = 0; trial < 200; trial++) {
      const query = randomQuery(random, rows, trial);
      const fromChunks = store.runColumnsPage(query);
      expect(comparable(fromChunks), JSON.stringify({ ...query, filter: null })).toEqual(
        comparable(store.runColumnsPage(fromRows(query))),
      );
    }
  });

  it('serve a project with no seeded runs, a template without chunks, and one with neither', () => {
    for (const store of [instance('no-seed', template('no-seed')), instance('plain', templateWithoutChunks('plain'))]) {
      const other = '0f0e0d0c-0b0a-4909-8807-060504030201';
      store.addRuns(
        generateRuns({ tenantId: 'tenant', sessionId: other, count: 700, startMicros: START, days: 2, seed: 42 }),
      );
      expectPagesOfTheRows(store, { ...everything, sessionId: other });
      expect(store.runColumnsPage({ ...everything, sessionId: other }).rows).toBe(700);
      addedTo(store);
      expectPagesOfTheRows(store);
    }
  });

  it('are written again for runs that came without them, and all of them when their file was cut short', () => {
    const db = instanceDb('uncovered', template('uncovered'));
    const store = new TracingStore(db);
    addedTo(store);
    // Runs put in the table another way (a restore does so), then the file cut inside the chunks.
    insertRuns(
      db,
      generateRuns({ tenantId: 'tenant', sessionId: SESSION, count: 50, startMicros: START, days: 1, seed: 9 }),
    );
    expect(store.runColumnsPage(fromRows(everything)).rows).toBe(store.runColumnsPage(everything).rows + 50);
    store.addedChunkWriter!.cover();
    expectPagesOfTheRows(store);
    store.addedChunkWriter!.close();
    truncateSync(chunksFile('uncovered'), 1000);
    store.addedChunkWriter!.cover();
    expectPagesOfTheRows(store);
  });

  it('go with the runs at a reset: the table emptied with them, then the file', () => {
    const db = instanceDb('reset', template('reset'));
    const store = new TracingStore(db);
    addedTo(store);
    resetInstanceDb(db, [tracingTables]);
    store.addedChunkWriter!.clear();
    expect(statSync(chunksFile('reset')).size).toBe(0);
    expect(store.runColumnsPage(everything).rows).toBe(seeded.length);
    store.addRuns(additions[1]!);
    expectPagesOfTheRows(store);
  });
});
