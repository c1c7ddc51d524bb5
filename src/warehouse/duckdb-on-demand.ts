import { QueryStopped } from './errors.ts';
import type { DuckDBSandbox } from './sandbox.ts';

/**
 * The instance's DuckDB sandbox over the objstore's plain files, opened by the first query or
 * preview (DuckDB and its native library load only then) and closed when the instance stops.
 */
export class DuckDBOnDemand {
  private opening: Promise<DuckDBSandbox> | null = null;
  private closed = false;

  constructor(private readonly folder: string) {}

  get(): Promise<DuckDBSandbox> {
    if (this.closed) return Promise.reject(new QueryStopped('closing'));
    this.opening ??= import('./sandbox.ts')
      .then(({ DuckDBSandbox }) => DuckDBSandbox.open(this.folder))
      .catch((error: unknown) => {
        // Tried again on the next query.
        this.opening = null;
        throw error;
      });
    return this.opening;
  }

  async close(): Promise<void> {
    this.closed = true;
    const sandbox = await this.opening?.catch(() => null);
    await sandbox?.close();
  }
}
