/**
 * DuckDB's `runs` view over an export's Parquet files, as `localplane query`, the demo and POST /_localplane/sql read
 * them.
 */
import { readdirSync, type Dirent } from 'node:fs';
import { join } from 'node:path';

/**
 * `<folder>/export_id=*`: every export below a destination's prefix (or the one named), and nothing of its `tmp/`
 * probes.
 */
export function exportGlob(prefixFolder: string, exportId = '*'): string {
  return `${prefixFolder.replace(/\/+$/, '')}/export_id=${exportId}/**/*.parquet`;
}

/** A SQL string literal. */
export const sqlString = (text: string) => `'${text.replaceAll("'", "''")}'`;

/** The `runs` view: every column of the files plus the Hive partition keys of their paths. */
export function runsViewSql(prefixFolder: string, exportId?: string): string {
  return (
    `CREATE OR REPLACE VIEW runs AS SELECT * FROM ` +
    `read_parquet(${sqlString(exportGlob(prefixFolder, exportId))}, hive_partitioning = true)`
  );
}

/** A folder's entries (all below it with `recursive`); none when it cannot be read (it is missing). */
function entriesOf(folder: string, recursive = false): Dirent[] {
  try {
    return readdirSync(folder, { withFileTypes: true, recursive }) as Dirent[];
  } catch {
    return [];
  }
}

/**
 * Whether `exportGlob` matches a file: a Parquet file below an `export_id=` folder (of the export named, or of any).
 */
export function hasExportFiles(prefixFolder: string, exportId?: string): boolean {
  return entriesOf(prefixFolder)
    .filter(
      (entry) =>
        entry.isDirectory() &&
        (exportId === undefined ? entry.name.startsWith('export_id=') : entry.name === `export_id=${exportId}`),
    )
    .some((entry) =>
      entriesOf(join(prefixFolder, entry.name), true).some((file) => file.isFile() && file.name.endsWith('.parquet')),
    );
}
