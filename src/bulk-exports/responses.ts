import { formatNullableTimestamp, formatTimestamp } from '../shared/time.ts';
import { EXECUTION_BACKEND, type DestinationResponse, type ExportResponse, type RunResponse } from './schemas.ts';
import { parseConfig, type DestinationRow, type ExportRow, type ExportRunRow } from './store.ts';
import { runExportFolder } from './paths.ts';

export function destinationResponse(row: DestinationRow): DestinationResponse {
  return {
    destination_type: row.destination_type,
    display_name: row.display_name,
    config: parseConfig(row),
    id: row.id,
    tenant_id: row.tenant_id,
    created_at: formatTimestamp(row.created_at),
    updated_at: formatTimestamp(row.updated_at),
    credentials_keys: JSON.parse(row.credentials_keys) as string[],
  };
}

export function exportResponse(row: ExportRow): ExportResponse {
  return {
    bulk_export_destination_id: row.bulk_export_destination_id,
    session_id: row.session_id,
    all_experiments: row.all_experiments === 1,
    start_time: formatTimestamp(row.start_time),
    end_time: formatNullableTimestamp(row.end_time),
    filter: row.filter,
    format: row.format,
    format_version: row.format_version,
    compression: row.compression,
    interval_hours: row.interval_hours,
    export_fields: row.export_fields ? (JSON.parse(row.export_fields) as string[]) : null,
    id: row.id,
    tenant_id: row.tenant_id,
    status: row.status,
    created_at: formatTimestamp(row.created_at),
    updated_at: formatTimestamp(row.updated_at),
    finished_at: formatNullableTimestamp(row.finished_at),
    source_bulk_export_id: row.source_bulk_export_id,
  };
}

export function runResponse(
  run: ExportRunRow,
  exportRow: ExportRow,
  destination: DestinationRow | undefined,
): RunResponse {
  const config = destination
    ? parseConfig(destination)
    : { prefix: '', bucket_name: '', include_bucket_in_prefix: true };
  const folder = runExportFolder(config.prefix, exportRow, run.start_time);
  const exportPath = config.include_bucket_in_prefix ? `${config.bucket_name}/${folder}` : folder;
  return {
    bulk_export_id: run.bulk_export_id,
    metadata: {
      prefix: config.prefix,
      start_time: formatTimestamp(run.start_time),
      end_time: formatTimestamp(run.end_time),
      execution_backend: EXECUTION_BACKEND,
      result:
        run.started_at === null
          ? null
          : {
              rows_written: run.rows_written,
              exported_files: JSON.parse(run.exported_files) as string[],
              export_path: exportPath,
              latest_cursor: run.latest_cursor,
              pending_upload: null,
            },
    },
    id: run.id,
    status: run.status,
    retry_number: run.retry_number,
    errors: run.errors ? (JSON.parse(run.errors) as Record<string, string>) : null,
    created_at: formatTimestamp(run.created_at),
    updated_at: formatTimestamp(run.updated_at),
    finished_at: formatNullableTimestamp(run.finished_at),
    start_time: formatTimestamp(run.start_time),
    end_time: formatTimestamp(run.end_time),
  };
}
