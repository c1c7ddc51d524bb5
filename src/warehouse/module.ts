import type { BulkExportStore } from '../bulk-exports/store.ts';
import type { InstanceCore } from '../core.ts';
import type { EmbeddedObjstore } from '../objstore/types.ts';
import { conflict } from '../shared/errors.ts';
import { NO_PLAIN_FILES } from './answers.ts';
import { DuckDBProcess } from './duckdb-process.ts';
import { ExportSql } from './export-sql.ts';
import { ObjectPreviews } from './previews.ts';
import { warehouseRoutes, type WarehouseRouteDeps } from './routes.ts';

export interface WarehouseModuleDeps {
  exports: BulkExportStore;
  objstore: EmbeddedObjstore;
  /** The objstore's plain-file view, the one folder DuckDB may read; null without one (memory storage). */
  filesDir: string | null;
}

/** Without the plain-file view there is nothing DuckDB may read: both routes answer 409. */
const WITHOUT_PLAIN_FILES: WarehouseRouteDeps = {
  sql: {
    run: async () => {
      throw conflict(NO_PLAIN_FILES);
    },
  },
  previews: {
    preview: async () => {
      throw conflict(NO_PLAIN_FILES);
    },
  },
};

/** SQL over exports and object previews, in a DuckDB process started by the first of them and ended on stop. */
export function warehouseModule(core: InstanceCore, deps: WarehouseModuleDeps) {
  const { filesDir } = deps;
  if (filesDir === null) return { adminRoutes: warehouseRoutes(WITHOUT_PLAIN_FILES) };
  const duckdb = new DuckDBProcess(filesDir);
  core.teardown.add('resources', () => duckdb.close());
  const sql = new ExportSql({ exports: deps.exports, filesDir, duckdb, limits: core.limits });
  const previews = new ObjectPreviews({ objstore: deps.objstore, filesDir, duckdb, limits: core.limits });
  return { adminRoutes: warehouseRoutes({ sql, previews }) };
}
