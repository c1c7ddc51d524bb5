/** SQL that DuckDB refused or could not run, in DuckDB's own first line (no stack). */
export class QueryError extends Error {}

/**
 * Why a query was stopped before it ended: it ran past its time limit, it needed more memory
 * than its limit, or DuckDB is closing (the instance stops).
 */
export type StopReason = 'time limit' | 'memory limit' | 'closing';

export class QueryStopped extends QueryError {
  /** `detail`: what hit the limit, as DuckDB or the process watching it says. */
  constructor(
    readonly reason: StopReason,
    readonly detail?: string,
  ) {
    super(`The query was stopped: ${reason}${detail ? ` (${detail})` : ''}`);
  }
}

/**
 * DuckDB's error as a QueryError: the first line of its message, without the wrapper the node API adds around a parser
 * error.
 */
export function duckdbError(error: unknown): QueryError {
  const message = (error instanceof Error ? error.message : String(error))
    .replace(/^Failed to extract statements: /, '')
    .split('\n')[0]!;
  // DuckDB refuses an allocation past its memory_limit, or one the address-space limit of its process refuses.
  return message.startsWith('Out of Memory Error')
    ? new QueryStopped('memory limit', message)
    : new QueryError(message);
}
