/**
 * The process that runs the instance's DuckDB, started by DuckDBProcess (duckdb-process.ts):
 * it answers queries and previews sent over its IPC channel, and ends when the instance's
 * process goes away.
 */
import { setPriority } from 'node:os';
import { duckdbError, QueryStopped } from './errors.ts';
import { DuckDBSandbox, type BoundedResult, type ParquetPreview, type SandboxSettings } from './sandbox.ts';

export interface DuckDBChildSettings extends SandboxSettings {
  folder: string;
}

export type DuckDBWork =
  | { kind: 'query'; sql: string; setup?: string; rowLimit: number; timeLimitMs: number }
  | { kind: 'preview'; file: string; rows: number; timeLimitMs: number };

export interface DuckDBRequest {
  id: number;
  work: DuckDBWork;
}

/** The answer to request `id`, or word that DuckDB has opened (or failed to, which each request is then told). */
export type DuckDBReply =
  | { id: number; result: BoundedResult | ParquetPreview }
  | { id: number; error: string; stopped?: QueryStopped['reason']; detail?: string }
  | { ready: true };

/** JSON characters an answer holds at most: a bigger one would cost the instance's process its memory to read. */
const RESULT_JSON_LIMIT = 16_000_000;
const MB = 1_000_000;
/** A nice value: the scheduler gives the instance's process (0) the CPU first. */
const QUERY_PRIORITY = 10;

const settings = JSON.parse(process.argv[2]!) as DuckDBChildSettings;
// Below the instance's process, before DuckDB starts its threads (which take this priority): a
// query that keeps every core busy still leaves the API the CPU it needs.
setPriority(QUERY_PRIORITY);
const opening = DuckDBSandbox.open(settings.folder, settings);
void opening.then(
  () => process.send!({ ready: true } satisfies DuckDBReply),
  // A failure to open is answered to each request.
  () => process.send!({ ready: true } satisfies DuckDBReply),
);

async function answer({ id, work }: DuckDBRequest): Promise<DuckDBReply> {
  try {
    const sandbox = await opening;
    const result =
      work.kind === 'query'
        ? await sandbox.query(work.sql, work)
        : await sandbox.previewParquet(work.file, work.rows, work.timeLimitMs);
    const length = JSON.stringify(result).length;
    if (length > RESULT_JSON_LIMIT) {
      return {
        id,
        error:
          `The result is ${Math.round(length / MB)} MB of JSON, more than the ${RESULT_JSON_LIMIT / MB} MB ` +
          `an answer holds: select fewer rows or columns`,
      };
    }
    return { id, result };
  } catch (error) {
    const refused = duckdbError(error);
    const stopped = error instanceof QueryStopped ? error : refused instanceof QueryStopped ? refused : null;
    return stopped
      ? { id, error: stopped.message, stopped: stopped.reason, detail: stopped.detail }
      : { id, error: refused.message };
  }
}

process.on('message', (request: DuckDBRequest) => void answer(request).then((reply) => process.send!(reply)));
// The instance's process ended or let go of this one: nothing is left to answer.
process.on('disconnect', () => process.kill(process.pid, 'SIGKILL'));
