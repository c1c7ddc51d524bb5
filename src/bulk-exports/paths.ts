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

/** `<prefix>/export_id=…/…/day=<d>`: the Hive-partitioned folder of one export run. */
export function runFolder(prefix: string, exportRow: { id: string; tenant_id: string; session_id: string }, runStart: Micros): string {
  const date = new Date(runStart / 1000);
  return underPrefix(
    prefix,
    [
      `export_id=${exportRow.id}`,
      `tenant_id=${exportRow.tenant_id}`,
      `session_id=${exportRow.session_id}`,
      'resource=runs',
      `year=${date.getUTCFullYear()}`,
      `month=${date.getUTCMonth() + 1}`,
      `day=${date.getUTCDate()}`,
    ].join('/'),
  );
}
