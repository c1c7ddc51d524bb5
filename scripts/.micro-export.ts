import Database from 'better-sqlite3';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RUNS_DDL } from '../src/tracing/schema.ts';
import { TracingStore } from '../src/tracing/store.ts';
import { openInstanceReader } from '../src/shared/db.ts';
import { encodeRunsParquet } from '../src/bulk-exports/parquet.ts';
import { RUN_COLUMNS } from '../src/tracing/schema.ts';

const template = process.argv[2]!;
const dir = mkdtempSync(join(tmpdir(), 'micro-'));
const main = new Database(join(dir, 'main.sqlite'));
main.pragma('journal_mode = WAL');
main.exec(`CREATE TABLE sessions (id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, name TEXT NOT NULL, created_at INTEGER NOT NULL); ${RUNS_DDL}`);
const reader = openInstanceReader(join(dir, 'main.sqlite'), template);
const tracing = new TracingStore(reader);
const SESSION = '2d9e0c4b-8f7a-4e2b-b9a1-1c3d5e7f9a20';
const from = Date.parse('2026-10-01T00:00:00Z') * 1000;
const to = from + 86_400_000_000;
const PAGES = Number(process.argv[3] ?? 40);
const opts = { formatVersion: 'v2_beta' as const, compression: 'snappy' as const, columns: RUN_COLUMNS, rowGroupSize: 2500 };
for (let round = 0; round < 2; round++) {
  let after = null as any;
  let tRead = 0, tEnc = 0, n = 0;
  for (let p = 0; p < PAGES; p++) {
    const c0 = process.cpuUsage();
    const rows = tracing.runsPage({ sessionId: SESSION, from, to, after, limit: 5000, filter: null });
    const c1 = process.cpuUsage();
    encodeRunsParquet(rows, opts);
    const c2 = process.cpuUsage();
    tRead += (c1.user + c1.system - c0.user - c0.system) / 1000; tEnc += (c2.user + c2.system - c1.user - c1.system) / 1000; n += rows.length;
    after = { startTime: rows.at(-1)!.start_time, id: rows.at(-1)!.id };
  }
  console.log(`round ${round}: ${n} rows read ${(tRead * 1000 / n).toFixed(2)} us/row, encode ${(tEnc * 1000 / n).toFixed(2)} us/row`);
}
