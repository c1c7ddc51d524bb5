import type { Micros } from '../shared/time.ts';

/** `<prefix>/<path>`, tolerating slashes around the prefix and an empty prefix. */
export function underPrefix(prefix: string, path: string): string {
  const clean = prefix.replace(/^\/+|\/+$/g, '');
  return clean ? `${clean}/${path}` : path;
}

/** The validation probe: a temporary `.txt` under `<prefix>/tmp/`. */
export function probeKey(prefix: string, id: string): string {
  return underPrefix(prefix, `tmp/${id}.txt`);
}

interface ExportIds {
  id: string;
  tenant_id: string;
}

/** `<prefix>/export_id=…/tenant_id=…`: an export's folder, with one folder per tracing project below. */
export function exportFolder(prefix: string, exportRow: ExportIds): string {
  return underPrefix(prefix, `export_id=${exportRow.id}/tenant_id=${exportRow.tenant_id}`);
}

/** `<prefix>/export_id=…/…/day=<d>`: the Hive-partitioned folder of one export run's files of one tracing project. */
export function runFolder(prefix: string, exportRow: ExportIds, sessionId: string, runStart: Micros): string {
  const date = new Date(runStart / 1000);
  return [
    exportFolder(prefix, exportRow),
    `session_id=${sessionId}`,
    'resource=runs',
    `year=${date.getUTCFullYear()}`,
    `month=${date.getUTCMonth() + 1}`,
    `day=${date.getUTCDate()}`,
  ].join('/');
}

/**
 * A run's `export_path`: its project's folder, or for an export of all experiments the export's folder above every
 * project's.
 */
export function runExportFolder(
  prefix: string,
  exportRow: ExportIds & { session_id: string | null },
  runStart: Micros,
): string {
  return exportRow.session_id === null
    ? exportFolder(prefix, exportRow)
    : runFolder(prefix, exportRow, exportRow.session_id, runStart);
}
