import { badRequest, HttpError } from '../shared/errors.ts';

/** SQL that DuckDB refused or could not run, in DuckDB's own first line (no stack). */
export class QueryError extends Error {}

/** Why a query was stopped before it ended: it ran past its time limit, or DuckDB is closing (the instance stops). */
export type StopReason = 'time limit' | 'closing';

export class QueryStopped extends QueryError {
  constructor(readonly reason: StopReason) {
    super(`The query was stopped: ${reason}`);
  }
}

/** DuckDB's error as a QueryError: the first line of its message, without the wrapper the node API adds around a parser error. */
export function duckdbError(error: unknown): QueryError {
  const message = error instanceof Error ? error.message : String(error);
  return new QueryError(message.replace(/^Failed to extract statements: /, '').split('\n')[0]);
}

export const timeLimitPassed = (seconds: number) =>
  `The query ran past the time limit of ${seconds} s (sql_time_limit_seconds, PATCH /_localplane/config) and was stopped`;
export const INSTANCE_STOPPING = 'The instance is stopping: the query was stopped';

/** The API's answer to a stopped query: 400 past its time limit (of `seconds`), 503 while the instance stops. */
export const stoppedAnswer = (stopped: QueryStopped, seconds: number): HttpError =>
  stopped.reason === 'time limit' ? badRequest(timeLimitPassed(seconds)) : new HttpError(503, INSTANCE_STOPPING);
