import { z } from 'zod';
import { FLAG, TIMESTAMP, type Db, type TableSet } from '../shared/db.ts';
import { MAX_SPAN_SECONDS, MICROS_PER_SECOND, type Micros } from '../shared/time.ts';
import { compileFilter } from '../tracing/filter.ts';
import { RUN_COLUMNS } from '../tracing/schema.ts';
import {
  COMPRESSIONS,
  DESTINATION_TYPES,
  destinationConfig,
  destinationResponseSchema,
  FORMAT_VERSIONS,
  FORMATS,
  MAX_INTERVAL_HOURS,
  runProgressSchema,
  runResponseSchema,
  type Compression,
  type DestinationConfig,
  type FormatVersion,
} from './schemas.ts';
import { EXPORT_STATUSES, RUN_STATUSES, type ExportStatus, type RunStatus } from './statuses.ts';

/** An export's filter as it was let in: one that compiles, or none (an empty text is none). */
function compiles(filter: string): boolean {
  try {
    if (filter !== '') compileFilter(filter);
    return true;
  } catch {
    return false;
  }
}

export const bulkExportTables: TableSet = {
  ddl: `
CREATE TABLE IF NOT EXISTS bulk_export_destinations (
  id TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL,
  destination_type TEXT NOT NULL,
  display_name TEXT NOT NULL,
  config TEXT NOT NULL,
  credentials_keys TEXT NOT NULL,
  access_key_id TEXT,
  secret_access_key TEXT,
  session_token TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS bulk_exports (
  id TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL,
  bulk_export_destination_id TEXT NOT NULL,
  session_id TEXT,
  all_experiments INTEGER NOT NULL DEFAULT 0,
  start_time INTEGER NOT NULL,
  end_time INTEGER,
  interval_hours INTEGER,
  filter TEXT,
  format TEXT NOT NULL,
  format_version TEXT NOT NULL,
  compression TEXT NOT NULL,
  export_fields TEXT,
  status TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  finished_at INTEGER,
  started_at INTEGER,
  source_bulk_export_id TEXT,
  next_child_index INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS bulk_exports_by_tenant ON bulk_exports (tenant_id, created_at);
CREATE INDEX IF NOT EXISTS bulk_exports_by_source ON bulk_exports (source_bulk_export_id);
CREATE INDEX IF NOT EXISTS bulk_exports_by_status ON bulk_exports (tenant_id, status, created_at);
CREATE TABLE IF NOT EXISTS bulk_export_runs (
  id TEXT PRIMARY KEY,
  bulk_export_id TEXT NOT NULL,
  status TEXT NOT NULL,
  retry_number INTEGER NOT NULL DEFAULT 0,
  errors TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  finished_at INTEGER,
  start_time INTEGER NOT NULL,
  end_time INTEGER NOT NULL,
  started_at INTEGER,
  rows_written INTEGER NOT NULL DEFAULT 0,
  exported_files TEXT NOT NULL DEFAULT '[]',
  latest_cursor TEXT,
  access_key_id TEXT,
  secret_access_key TEXT,
  session_token TEXT,
  failing_attempts INTEGER NOT NULL DEFAULT 0,
  step_delay INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS bulk_export_runs_by_export ON bulk_export_runs (bulk_export_id, start_time);
CREATE INDEX IF NOT EXISTS bulk_export_runs_by_status ON bulk_export_runs (bulk_export_id, status, start_time);`,
  // Seeded from bulk-exports.json, which the shipped fixtures leave out: empty in their template.
  seeded: ['bulk_export_destinations', 'bulk_exports', 'bulk_export_runs'],
  runtime: [],
  workspaceRows: {
    bulk_export_destinations: 'tenant_id = ?',
    bulk_exports: 'tenant_id = ?',
    bulk_export_runs: 'bulk_export_id IN (SELECT id FROM {schema}.bulk_exports WHERE tenant_id = ?)',
  },
  columns: {
    bulk_export_destinations: {
      destination_type: { oneOf: DESTINATION_TYPES },
      // Stored as the request's config came out of its schema: the defaults filled in.
      config: { json: destinationConfig.required({ prefix: true, include_bucket_in_prefix: true }) },
      credentials_keys: { json: destinationResponseSchema.shape.credentials_keys },
      created_at: TIMESTAMP,
      updated_at: TIMESTAMP,
    },
    bulk_exports: {
      all_experiments: FLAG,
      start_time: TIMESTAMP,
      end_time: TIMESTAMP,
      interval_hours: { range: [1, MAX_INTERVAL_HOURS] },
      filter: { text: compiles, says: 'a filter that parses' },
      format: { oneOf: FORMATS },
      format_version: { oneOf: FORMAT_VERSIONS },
      compression: { oneOf: COMPRESSIONS },
      export_fields: { json: z.array(z.enum(RUN_COLUMNS)) },
      status: { oneOf: EXPORT_STATUSES },
      created_at: TIMESTAMP,
      updated_at: TIMESTAMP,
      finished_at: TIMESTAMP,
      started_at: TIMESTAMP,
      // A child's due time is the parent's start and this many intervals: kept a time.
      next_child_index: { range: [0, MAX_SPAN_SECONDS / 3600], says: 'a number of intervals within 100 years' },
    },
    bulk_export_runs: {
      status: { oneOf: RUN_STATUSES },
      errors: { json: runResponseSchema.shape.errors },
      created_at: TIMESTAMP,
      updated_at: TIMESTAMP,
      finished_at: TIMESTAMP,
      start_time: TIMESTAMP,
      end_time: TIMESTAMP,
      started_at: TIMESTAMP,
      exported_files: { json: runProgressSchema.shape.exported_files },
      step_delay: {
        range: [0, MAX_SPAN_SECONDS * MICROS_PER_SECOND],
        says: 'a delay in microseconds of at most 100 years',
      },
    },
  },
  // What the runner reads again after a restart: a recurring export's interval, when running work started.
  rows: {
    bulk_exports: [
      {
        sql: "status <> 'IntervalScheduled' OR interval_hours IS NOT NULL",
        says: 'an IntervalScheduled export without interval_hours',
      },
      { sql: "status <> 'Running' OR started_at IS NOT NULL", says: 'a Running export without started_at' },
    ],
    bulk_export_runs: [
      { sql: "status <> 'Running' OR started_at IS NOT NULL", says: 'a Running run without started_at' },
    ],
  },
};

/** An export's runs counted: all of them, those ended, and the rows they wrote. */
export interface RunTotals {
  total: number;
  done: number;
  rowsWritten: number;
}

export interface StoredCredentials {
  access_key_id: string | null;
  secret_access_key: string | null;
  session_token: string | null;
}

export interface DestinationRow extends StoredCredentials {
  id: string;
  tenant_id: string;
  destination_type: 'objstore';
  display_name: string;
  /** JSON of DestinationConfig. */
  config: string;
  /** JSON array of credential field names. */
  credentials_keys: string;
  created_at: Micros;
  updated_at: Micros;
}

export interface ExportRow {
  id: string;
  tenant_id: string;
  bulk_export_destination_id: string;
  /** null for an export of all experiments. */
  session_id: string | null;
  /** 1: the runs of every tracing project of the workspace. */
  all_experiments: 0 | 1;
  start_time: Micros;
  end_time: Micros | null;
  interval_hours: number | null;
  filter: string | null;
  format: 'Parquet';
  format_version: FormatVersion;
  compression: Compression;
  /** JSON array of column names, or null for all. */
  export_fields: string | null;
  status: ExportStatus;
  created_at: Micros;
  updated_at: Micros;
  finished_at: Micros | null;
  started_at: Micros | null;
  source_bulk_export_id: string | null;
  next_child_index: number;
}

export interface ExportRunRow extends StoredCredentials {
  id: string;
  bulk_export_id: string;
  status: RunStatus;
  retry_number: number;
  /** JSON object keyed retry_N, or null. */
  errors: string | null;
  created_at: Micros;
  updated_at: Micros;
  finished_at: Micros | null;
  start_time: Micros;
  end_time: Micros;
  started_at: Micros | null;
  rows_written: number;
  /** JSON array of `<bucket>/<key>` strings. */
  exported_files: string;
  latest_cursor: string | null;
  /** Attempts still to fail on purpose (a fault knob); -1 for every attempt. */
  failing_attempts: number;
  /** Emulator-clock delay before each file (the "slow" knob), microseconds. */
  step_delay: Micros;
}

/** A run of one day of an export as the runner plans it: Created, nothing written, no attempt made. */
export function plannedRun(
  id: string,
  exportId: string,
  [start, end]: readonly [Micros, Micros],
  at: Micros,
): ExportRunRow {
  return {
    id,
    bulk_export_id: exportId,
    status: 'Created',
    retry_number: 0,
    errors: null,
    created_at: at,
    updated_at: at,
    finished_at: null,
    start_time: start,
    end_time: end,
    started_at: null,
    rows_written: 0,
    exported_files: '[]',
    latest_cursor: null,
    access_key_id: null,
    secret_access_key: null,
    session_token: null,
    failing_attempts: 0,
    step_delay: 0,
  };
}

export const parseConfig = (row: DestinationRow) => JSON.parse(row.config) as DestinationConfig;

const ACTIVE_EXPORT_STATUSES = "('Created', 'Running', 'IntervalScheduled')";

export class BulkExportStore {
  private readonly statements;

  constructor(private readonly db: Db) {
    const prepare = <P extends unknown[], R = unknown>(sql: string) => db.prepare<P, R>(sql);
    this.statements = {
      destination: prepare<[string, string], DestinationRow>(
        'SELECT * FROM bulk_export_destinations WHERE id = ? AND tenant_id = ?',
      ),
      destinationById: prepare<[string], DestinationRow>('SELECT * FROM bulk_export_destinations WHERE id = ?'),
      destinations: prepare<[string], DestinationRow>(
        'SELECT * FROM bulk_export_destinations WHERE tenant_id = ? ORDER BY created_at, rowid',
      ),
      insertDestination: prepare<[DestinationRow]>(
        `INSERT INTO bulk_export_destinations VALUES (@id, @tenant_id, @destination_type, @display_name, @config,
          @credentials_keys, @access_key_id, @secret_access_key, @session_token, @created_at, @updated_at)`,
      ),
      updateCredentials: prepare<[StoredCredentials & { id: string; credentials_keys: string; updated_at: Micros }]>(
        `UPDATE bulk_export_destinations SET access_key_id = @access_key_id, secret_access_key = @secret_access_key,
          session_token = @session_token, credentials_keys = @credentials_keys, updated_at = @updated_at
          WHERE id = @id`,
      ),
      deleteDestination: prepare<[string]>('DELETE FROM bulk_export_destinations WHERE id = ?'),
      activeExportsOf: prepare<[string], { id: string }>(
        `SELECT id FROM bulk_exports WHERE bulk_export_destination_id = ? AND status IN ${ACTIVE_EXPORT_STATUSES} ` +
          `ORDER BY created_at`,
      ),
      export: prepare<[string, string], ExportRow>('SELECT * FROM bulk_exports WHERE id = ? AND tenant_id = ?'),
      exportById: prepare<[string], ExportRow>('SELECT * FROM bulk_exports WHERE id = ?'),
      exports: prepare<[string, number, number], ExportRow>(
        'SELECT * FROM bulk_exports WHERE tenant_id = ? ORDER BY created_at DESC, rowid DESC LIMIT ? OFFSET ?',
      ),
      activeExports: prepare<[], ExportRow>(
        `SELECT * FROM bulk_exports WHERE status IN ${ACTIVE_EXPORT_STATUSES} ORDER BY created_at, rowid`,
      ),
      dispatchable: prepare<[{ tenant: string; waiting: number }], ExportRow>(
        // Each part searches bulk_exports_by_status (an OR would scan every export of the workspace).
        `SELECT * FROM bulk_exports WHERE rowid IN (
           SELECT rowid FROM bulk_exports WHERE tenant_id = @tenant AND status = 'Running'
           UNION ALL
           SELECT * FROM (SELECT rowid FROM bulk_exports WHERE tenant_id = @tenant AND status = 'Created'
                          ORDER BY created_at, rowid LIMIT @waiting))
         ORDER BY created_at, rowid`,
      ),
      nthNewestCreateBetween: prepare<[string, Micros, Micros, number], Micros>(
        `SELECT created_at FROM bulk_exports
          WHERE tenant_id = ? AND source_bulk_export_id IS NULL AND created_at > ? AND created_at <= ?
          ORDER BY created_at DESC LIMIT 1 OFFSET ?`,
      ).pluck(),
      recurringCount: prepare<[string], number>(
        "SELECT count(*) FROM bulk_exports WHERE tenant_id = ? AND status = 'IntervalScheduled'",
      ).pluck(),
      insertExport: prepare<[ExportRow]>(
        `INSERT INTO bulk_exports VALUES (@id, @tenant_id, @bulk_export_destination_id, @session_id, @all_experiments,
          @start_time, @end_time, @interval_hours, @filter, @format, @format_version, @compression, @export_fields,
          @status, @created_at, @updated_at, @finished_at, @started_at, @source_bulk_export_id, @next_child_index)`,
      ),
      run: prepare<[string, string], ExportRunRow>(
        'SELECT * FROM bulk_export_runs WHERE id = ? AND bulk_export_id = ?',
      ),
      runById: prepare<[string], ExportRunRow>('SELECT * FROM bulk_export_runs WHERE id = ?'),
      runsOf: prepare<[string], ExportRunRow>(
        'SELECT * FROM bulk_export_runs WHERE bulk_export_id = ? ORDER BY start_time, rowid',
      ),
      runningRunCount: prepare<[string], number>(
        "SELECT count(*) FROM bulk_export_runs WHERE bulk_export_id = ? AND status = 'Running'",
      ).pluck(),
      waitingRuns: prepare<[string, number], ExportRunRow>(
        "SELECT * FROM bulk_export_runs WHERE bulk_export_id = ? AND status = 'Created' ORDER BY start_time, " +
          'rowid LIMIT ?',
      ),
      runTotals: prepare<[string], RunTotals>(
        `SELECT count(*) AS total, count(*) FILTER (WHERE status NOT IN ('Created', 'Running')) AS done,
                coalesce(sum(rows_written), 0) AS rowsWritten
           FROM bulk_export_runs WHERE bulk_export_id = ?`,
      ),
      runsOfChildren: prepare<[string], ExportRunRow>(
        `SELECT r.* FROM bulk_export_runs r JOIN bulk_exports e ON e.id = r.bulk_export_id
          WHERE e.source_bulk_export_id = ? ORDER BY e.start_time, r.start_time, r.rowid`,
      ),
      insertRun: prepare<[ExportRunRow]>(
        `INSERT INTO bulk_export_runs VALUES (@id, @bulk_export_id, @status, @retry_number, @errors, @created_at,
          @updated_at, @finished_at, @start_time, @end_time, @started_at, @rows_written, @exported_files,
          @latest_cursor, @access_key_id, @secret_access_key, @session_token, @failing_attempts, @step_delay)`,
      ),
    };
  }

  destination(tenantId: string, id: string) {
    return this.statements.destination.get(id, tenantId);
  }
  destinationById(id: string) {
    return this.statements.destinationById.get(id);
  }
  destinations(tenantId: string) {
    return this.statements.destinations.all(tenantId);
  }
  insertDestination(row: DestinationRow) {
    this.statements.insertDestination.run(row);
  }
  updateCredentials(id: string, credentials: StoredCredentials, credentialsKeys: string[], now: Micros) {
    this.statements.updateCredentials.run({
      id,
      ...credentials,
      credentials_keys: JSON.stringify(credentialsKeys),
      updated_at: now,
    });
  }
  deleteDestination(id: string) {
    this.statements.deleteDestination.run(id);
  }
  activeExportsUsing(destinationId: string): string[] {
    return this.statements.activeExportsOf.all(destinationId).map((row) => row.id);
  }

  export(tenantId: string, id: string) {
    return this.statements.export.get(id, tenantId);
  }
  exportById(id: string) {
    return this.statements.exportById.get(id);
  }
  exports(tenantId: string, limit: number, offset: number) {
    return this.statements.exports.all(tenantId, limit, offset);
  }
  activeExports() {
    return this.statements.activeExports.all();
  }
  /**
   * The workspace's one-time exports (children included) that may run now, oldest first: those
   * running, and the `concurrentExports` oldest waiting ones (more could never start beside
   * them). Waiting exports past those are never read, however many a recurring export spawned.
   */
  dispatchableExports(tenantId: string, concurrentExports: number) {
    return this.statements.dispatchable.all({ tenant: tenantId, waiting: concurrentExports });
  }
  /** Exports the workspace created itself (not recurring children) in (from, to]. */
  /**
   * When the workspace made the `rank`-th newest of its creates (not the children a recurring export spawns) in (from,
   * to]; null when it made fewer.
   */
  nthNewestCreateBetween(tenantId: string, from: Micros, to: Micros, rank: number): Micros | null {
    return this.statements.nthNewestCreateBetween.get(tenantId, from, to, rank - 1) ?? null;
  }
  activeRecurringCount(tenantId: string): number {
    return this.statements.recurringCount.get(tenantId)!;
  }
  insertExport(row: ExportRow) {
    this.statements.insertExport.run(row);
  }
  updateExport(id: string, changes: Partial<Omit<ExportRow, 'id'>>) {
    this.update('bulk_exports', id, changes);
  }

  run(exportId: string, runId: string) {
    return this.statements.run.get(runId, exportId);
  }
  runById(id: string) {
    return this.statements.runById.get(id);
  }
  runsOf(exportId: string) {
    return this.statements.runsOf.all(exportId);
  }
  /**
   * How many of the export's runs are running, and its first waiting runs (in day order) that
   * fit beside them in `concurrentRuns`: the waiting runs past those are never read, however
   * many days the export spans.
   */
  startableRuns(exportId: string, concurrentRuns: number): { running: number; waiting: ExportRunRow[] } {
    const running = this.statements.runningRunCount.get(exportId)!;
    return { running, waiting: this.statements.waitingRuns.all(exportId, Math.max(0, concurrentRuns - running)) };
  }
  runTotals(exportId: string): RunTotals {
    return this.statements.runTotals.get(exportId)!;
  }
  runsOfChildren(sourceExportId: string) {
    return this.statements.runsOfChildren.all(sourceExportId);
  }
  insertRun(row: ExportRunRow) {
    this.statements.insertRun.run(row);
  }
  updateRun(id: string, changes: Partial<Omit<ExportRunRow, 'id'>>) {
    this.update('bulk_export_runs', id, changes);
  }

  transaction<T>(work: () => T): T {
    return this.db.transaction(work)();
  }

  private update(table: string, id: string, changes: Record<string, unknown>) {
    const columns = Object.keys(changes);
    if (columns.length === 0) return;
    const assignments = columns.map((column) => `${column} = @${column}`).join(', ');
    this.db.prepare(`UPDATE ${table} SET ${assignments} WHERE id = @id`).run({ ...changes, id });
  }
}
