import type { Limits } from '../config.ts';
import { badRequest, HttpError } from '../shared/errors.ts';
import { QueryStopped, type QueryError } from './errors.ts';

export const timeLimitPassed = (seconds: number) =>
  `The query ran past the time limit of ${seconds} s (sql_time_limit_seconds, PATCH /_localplane/config) and was ` +
  `stopped`;
export const memoryLimitPassed = (megabytes: number, detail: string) =>
  `The query needed more memory than the limit of ${megabytes} MB (sql_memory_limit_mb, PATCH ` +
  `/_localplane/config) and was stopped: ${detail}`;
export const INSTANCE_STOPPING = 'The instance is stopping: the query was stopped';
export const NO_PLAIN_FILES =
  "This instance's objstore keeps its objects in memory (--objstore-storage memory, objstoreStorage: 'memory'), " +
  'with no plain files for DuckDB to read: SQL and previews need files storage';

/** The API's answer to a query DuckDB refused or stopped: 400 naming the limit it hit, 503 while the instance stops. */
export function queryAnswer(
  error: QueryError,
  limits: Pick<Limits, 'sql_time_limit_seconds' | 'sql_memory_limit_mb'>,
): HttpError {
  if (!(error instanceof QueryStopped)) return badRequest(error.message);
  switch (error.reason) {
    case 'time limit':
      return badRequest(timeLimitPassed(limits.sql_time_limit_seconds));
    case 'memory limit':
      return badRequest(memoryLimitPassed(limits.sql_memory_limit_mb, error.detail ?? 'DuckDB ran out of memory'));
    case 'closing':
      return new HttpError(503, INSTANCE_STOPPING);
  }
}
