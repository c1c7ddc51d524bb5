import type { BulkExportStore } from '../bulk-exports/store.ts';
import type { InstanceCore } from '../core.ts';
import type { EmbeddedObjstore } from '../objstore/types.ts';
import { DuckDBProcess } from './duckdb-process.ts';
import { ExportSql } from './export-sql.ts';
import { ObjectPreviews } from './previews.ts';
import { warehouseRoutes } from './routes.ts';

export interface WarehouseModuleDeps {
  exports: BulkExportStore;
  objstore: EmbeddedObjstore;
  /** The objstore's plain-file view, the one folder DuckDB may read. */
  filesDir: string;
}

/** SQL over exports and object previews, in a DuckDB process started by the first of them and ended on stop. */
export function warehouseModule(core: InstanceCore, deps: WarehouseModuleDeps) {
  const duckdb = new DuckDBProcess(deps.filesDir);
  core.teardown.add('resources', () => duckdb.close());
  const sql = new ExportSql({ exports: deps.exports, filesDir: deps.filesDir, duckdb, limits: core.limits });
  const previews = new ObjectPreviews({ objstore: deps.objstore, filesDir: deps.filesDir, duckdb, limits: core.limits });
  return { adminRoutes: warehouseRoutes({ sql, previews }) };
}
