import { join } from 'node:path';
import { underPrefix } from '../bulk-exports/paths.ts';
import { exportNotFound } from '../bulk-exports/routes.ts';
import { parseConfig, type BulkExportStore, type ExportRow } from '../bulk-exports/store.ts';
import type { InstanceLimits } from '../config.ts';
import { whyNotAFile } from '../objstore/file-view/file-view.ts';
import { conflict, HttpError, notFound } from '../shared/errors.ts';
import { queryAnswer } from './answers.ts';
import type { DuckDBProcess } from './duckdb-process.ts';
import { QueryError } from './errors.ts';
import { hasExportFiles, runsViewSql } from './runs-view.ts';
import type { SqlResponse } from './schemas.ts';

export interface ExportSqlDeps {
  exports: BulkExportStore;
  /** The objstore's plain-file view: `<filesDir>/<bucket>/<key>`. */
  filesDir: string;
  duckdb: DuckDBProcess;
  limits: InstanceLimits;
}

export const QUERY_RUNNING =
  'Another SQL query is running on this instance (one at a time): try again when it has ended';

/** POST /_localplane/sql: SQL over an export's Parquet files with the `runs` view, one query at a time per instance. */
export class ExportSql {
  private running = false;

  constructor(private readonly deps: ExportSqlDeps) {}

  async run(exportId: string, sql: string): Promise<SqlResponse> {
    const exportRow = this.deps.exports.exportById(exportId);
    if (!exportRow) throw notFound(exportNotFound(exportId));
    const prefixFolder = this.prefixFolder(exportRow);
    // Taken before the first await: of two requests, the second sees the first running.
    if (this.running) throw new HttpError(429, QUERY_RUNNING);
    this.running = true;
    const limits = this.deps.limits.get();
    const rowLimit = limits.sql_row_limit;
    try {
      const started = performance.now();
      const result = await this.deps.duckdb.query(sql, {
        setup: runsViewSql(prefixFolder, exportId),
        rowLimit,
        timeLimitMs: limits.sql_time_limit_seconds * 1000,
        memoryLimitMb: limits.sql_memory_limit_mb,
      });
      return {
        export_id: exportId,
        columns: result.columns,
        rows: result.rows,
        row_count: result.rows.length,
        truncated: result.truncated,
        row_limit: rowLimit,
        elapsed_ms: Math.round((performance.now() - started) * 10) / 10,
      };
    } catch (error) {
      if (error instanceof QueryError) throw queryAnswer(error, limits);
      throw error;
    } finally {
      this.running = false;
    }
  }

  /** The folder of the export's destination prefix in the plain-file view, once it holds the export's Parquet files. */
  private prefixFolder(exportRow: ExportRow): string {
    const destination = this.deps.exports.destinationById(exportRow.bulk_export_destination_id);
    if (!destination)
      throw conflict(
        `The destination of bulk export ${exportRow.id} was deleted: where its files are is no longer known`,
      );
    const { bucket_name: bucket, prefix } = parseConfig(destination);
    const exportKeys = underPrefix(prefix, `export_id=${exportRow.id}`);
    // A bucket or prefix the plain-file view cannot hold (an empty or '..' segment) has no files there.
    const folder =
      bucket && whyNotAFile(`${bucket}/${exportKeys}`) === null
        ? join(this.deps.filesDir, bucket, underPrefix(prefix, ''))
        : null;
    if (folder === null || !hasExportFiles(folder, exportRow.id)) {
      throw conflict(
        `Bulk export ${exportRow.id} has no Parquet files in the objstore (s3://${bucket}/${exportKeys}/): ` +
          `it has written none yet (it is ${exportRow.status}), or its destination is another endpoint`,
      );
    }
    return folder;
  }
}
