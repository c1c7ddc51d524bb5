import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { underPrefix } from '../bulk-exports/paths.ts';
import { WarehouseSession, type ResultTable } from '../warehouse/duckdb.ts';
import { QueryError } from '../warehouse/errors.ts';
import { hasExportFiles } from '../warehouse/runs-view.ts';
import type { FixturesView } from '../admin/schemas.ts';
import { InstanceClient, InstanceError, type StateView } from './api-client.ts';
import { DEFAULT_DEMO_DIR, downloadObjects, objstoreClient } from './export-files.ts';

export interface QueryOptions {
  sql: string;
  /** A folder holding exports as a destination's prefix does (`export_id=*` folders); default the last demo's copy. */
  dir?: string;
  /** A running instance's API base URL: its export is downloaded through the S3 API instead. */
  url?: string;
  /** The export to read: with `url` default the newest completed one; in a folder default every export there. */
  exportId?: string;
}

const DOWNLOAD_KEY = 'LPTESTFULLACCESS0001';

/** `localplane query`: SQL over an export's files, with the `runs` view. */
export async function runQuery(options: QueryOptions): Promise<ResultTable> {
  if (options.url === undefined) return queryFolder(options.dir ?? DEFAULT_DEMO_DIR, options.sql, options.exportId);
  const scratch = mkdtempSync(join(tmpdir(), 'localplane-query-'));
  try {
    const exportId = await downloadExport(options.url, options.exportId, scratch);
    return await queryFolder(scratch, options.sql, exportId);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

async function queryFolder(folder: string, sql: string, exportId?: string): Promise<ResultTable> {
  if (!hasExportFiles(folder, exportId)) {
    throw new QueryError(
      `no export files${exportId === undefined ? '' : ` of export ${exportId}`} in ${folder}: run localplane demo ` +
        `first, or name them with --dir or --url`,
    );
  }
  const session = await WarehouseSession.open(folder, exportId);
  try {
    return await session.query(sql);
  } finally {
    session.close();
  }
}

/** Downloads an export's files (the newest completed export if none is named) below `to`; answers its id. */
async function downloadExport(url: string, exportId: string | undefined, to: string): Promise<string> {
  const admin = new InstanceClient(url);
  const state = await admin.call<StateView>('GET', '/_localplane/state');
  const exports = state.workspaces.flatMap((workspace) => workspace.bulk_exports.map((row) => ({ row, workspace })));
  const chosen =
    exportId === undefined
      ? exports
          .filter(({ row }) => row.status === 'Completed')
          .sort((a, b) => b.row.created_at.localeCompare(a.row.created_at))[0]
      : exports.find(({ row }) => row.id === exportId);
  if (!chosen)
    throw new InstanceError(
      exportId === undefined ? `${url} has no completed export` : `${url} has no export ${exportId}`,
    );
  const destination = chosen.workspace.destinations.find(
    (candidate) => candidate.id === chosen.row.bulk_export_destination_id,
  );
  if (!destination) throw new InstanceError(`the destination of export ${chosen.row.id} is gone`);
  const fixtures = await admin.call<FixturesView>('GET', '/_localplane/fixtures');
  const { bucket_name: bucket, prefix } = destination.config;
  await downloadObjects(
    await objstoreClient(fixtures, DOWNLOAD_KEY),
    bucket,
    underPrefix(prefix, `export_id=${chosen.row.id}/`),
    underPrefix(prefix, ''),
    to,
  );
  return chosen.row.id;
}
