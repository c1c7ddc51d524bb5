import { QueryError } from '../warehouse/errors.ts';
import { InstanceError } from './api-client.ts';
import { DemoDirError } from './export-files.ts';

export { runDemo, type DemoOptions, type DemoResult } from './demo.ts';
export { runQuery, type QueryOptions } from './query.ts';
export { formatTable } from './tables.ts';
export { DEFAULT_DEMO_DIR } from './export-files.ts';

/** Failures on what the user gave (SQL, a folder, an instance's answers), told in one line rather than a stack. */
export const isWarehouseUsageError = (error: unknown): boolean =>
  error instanceof QueryError || error instanceof InstanceError || error instanceof DemoDirError;
