import type { Db } from '../shared/db.ts';
import { uuidFrom } from '../shared/ids.ts';
import { createRandom, seedFrom } from '../shared/prng.ts';
import { dayPartitions, MICROS_PER_HOUR, parseTimestamp } from '../shared/time.ts';
import type { BulkExportsFile, BulkExportWorkspaceFixture, ExportFixture } from './fixture-file.ts';
import { BulkExportStore, plannedRun, type DestinationRow, type ExportRow, type ExportRunRow } from './store.ts';

/** One workspace's seeded destinations and exports, as rows; the runs of the exports that are to run. */
export interface SeededBulkExports {
  destinations: DestinationRow[];
  exports: ExportRow[];
  runs: ExportRunRow[];
}

const micros = (timestamp: string) => parseTimestamp(timestamp)!;
const nullableMicros = (timestamp: string | null) => (timestamp === null ? null : micros(timestamp));

/**
 * Expands one workspace of bulk-exports.json into rows. A destination signs with the objstore.json
 * key pair it names. An export that has ended keeps its status without runs; one Created or Running
 * starts again as Created, its runs (a day each) planned, so it runs once the instance starts; a
 * recurring one goes on spawning after the children the file holds.
 */
export function seededBulkExports(
  fixture: BulkExportWorkspaceFixture,
  secretOfKey: (accessKeyId: string) => string,
  seed: number,
): SeededBulkExports {
  const tenantId = fixture.workspace_id;
  const destinations = fixture.destinations.map((destination): DestinationRow => {
    const key = destination.objstore_key;
    return {
      id: destination.id,
      tenant_id: tenantId,
      destination_type: destination.destination_type,
      display_name: destination.display_name,
      config: JSON.stringify(destination.config),
      credentials_keys: JSON.stringify(key === undefined ? [] : ['access_key_id', 'secret_access_key']),
      access_key_id: key ?? null,
      secret_access_key: key === undefined ? null : secretOfKey(key),
      session_token: null,
      created_at: micros(destination.created_at),
      updated_at: micros(destination.updated_at),
    };
  });
  const exports = fixture.exports.map((exportFixture) => exportRow(tenantId, exportFixture, fixture.exports));
  const runs = exports
    .filter((row) => row.status === 'Created' && row.end_time !== null)
    .flatMap((row) => plannedRuns(row, seed));
  return { destinations, exports, runs };
}

function exportRow(tenantId: string, exportFixture: ExportFixture, all: readonly ExportFixture[]): ExportRow {
  const restarts = exportFixture.status === 'Running' || exportFixture.status === 'Created';
  return {
    id: exportFixture.id,
    tenant_id: tenantId,
    bulk_export_destination_id: exportFixture.bulk_export_destination_id,
    session_id: exportFixture.session_id,
    all_experiments: exportFixture.all_experiments ? 1 : 0,
    start_time: micros(exportFixture.start_time),
    end_time: nullableMicros(exportFixture.end_time),
    interval_hours: exportFixture.interval_hours,
    filter: exportFixture.filter,
    format: exportFixture.format,
    format_version: exportFixture.format_version,
    compression: exportFixture.compression,
    export_fields: exportFixture.export_fields === null ? null : JSON.stringify(exportFixture.export_fields),
    status: restarts ? 'Created' : exportFixture.status,
    created_at: micros(exportFixture.created_at),
    updated_at: micros(exportFixture.updated_at),
    finished_at: restarts ? null : nullableMicros(exportFixture.finished_at),
    started_at: null,
    source_bulk_export_id: exportFixture.source_bulk_export_id,
    next_child_index: nextChildIndex(exportFixture, all),
  };
}

/** The window after the last child the file holds of a recurring export: where its spawning goes on. */
function nextChildIndex(parent: ExportFixture, all: readonly ExportFixture[]): number {
  if (parent.interval_hours === null) return 0;
  const interval = parent.interval_hours * MICROS_PER_HOUR;
  const start = micros(parent.start_time);
  const childWindows = all
    .filter((child) => child.source_bulk_export_id === parent.id)
    .map((child) => Math.floor((micros(child.start_time) - start) / interval) + 1);
  return Math.max(0, ...childWindows);
}

/** The runs the runner plans for a new export, one per UTC day of its window, with seeded ids. */
function plannedRuns(row: ExportRow, seed: number): ExportRunRow[] {
  const random = createRandom(seedFrom(seed, row.id, 'runs'));
  return dayPartitions(row.start_time, row.end_time!).map((day) =>
    plannedRun(uuidFrom(random), row.id, day, row.created_at),
  );
}

/** Seeds a template with bulk-exports.json: a destination signs with the key pair `secretOfKey` finds for it. */
export function seedBulkExports(
  db: Db,
  file: BulkExportsFile,
  secretOfKey: (accessKeyId: string) => string,
  seed: number,
): void {
  const store = new BulkExportStore(db);
  for (const workspace of file.workspaces) {
    const seeded = seededBulkExports(workspace, secretOfKey, seed);
    for (const destination of seeded.destinations) store.insertDestination(destination);
    for (const exportRow of seeded.exports) store.insertExport(exportRow);
    for (const run of seeded.runs) store.insertRun(run);
  }
}
