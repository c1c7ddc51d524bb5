import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import type { Json } from '@duckdb/node-api';
import { duckdbError } from './errors.ts';
import { runsViewSql } from './runs-view.ts';

/** A query's result: column names and rows of JSON values (BIGINTs and DECIMALs as strings, dates as text). */
export interface ResultTable {
  columns: string[];
  rows: Json[][];
}

/**
 * An in-memory DuckDB with the `runs` view over the export files below a destination's prefix folder (`localplane demo`
 * and `query`).
 */
export class WarehouseSession {
  private constructor(
    private readonly instance: DuckDBInstance,
    private readonly connection: DuckDBConnection,
  ) {}

  /** With an export id, the view reads that export's files alone. */
  static async open(prefixFolder: string, exportId?: string): Promise<WarehouseSession> {
    const instance = await DuckDBInstance.create(':memory:');
    const session = new WarehouseSession(instance, await instance.connect());
    try {
      await session.query(runsViewSql(prefixFolder, exportId));
    } catch (error) {
      session.close();
      throw error;
    }
    return session;
  }

  async query(sql: string): Promise<ResultTable> {
    try {
      const reader = await this.connection.runAndReadAll(sql);
      return { columns: reader.columnNames(), rows: reader.getRowsJson() };
    } catch (error) {
      throw duckdbError(error);
    }
  }

  close(): void {
    this.connection.closeSync();
    this.instance.closeSync();
  }
}
