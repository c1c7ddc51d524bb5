import { EXPORT_NOT_FOUND } from '../bulk-exports/routes.ts';
import { EXAMPLE_ID, httpError } from '../openapi/errors.ts';
import { OpenApiHono } from '../openapi/routes.ts';
import { INSTANCE_STOPPING, memoryLimitPassed, NO_PLAIN_FILES, timeLimitPassed } from './answers.ts';
import { QUERY_RUNNING, type ExportSql } from './export-sql.ts';
import { noSuchObject, type ObjectPreviews } from './previews.ts';
import { previewQuery, previewResponseSchema, sqlRequest, sqlResponseSchema } from './schemas.ts';

export interface WarehouseRouteDeps {
  sql: Pick<ExportSql, 'run'>;
  previews: Pick<ObjectPreviews, 'preview'>;
}

const stopped = httpError(503, 'The instance is stopping', { stopping: INSTANCE_STOPPING });
const limitsHit = {
  time_limit: timeLimitPassed(10),
  memory_limit: memoryLimitPassed(
    1000,
    'Out of Memory Error: Failed to allocate block of 2000000000 bytes (bad allocation)',
  ),
};

/**
 * /_localplane/sql (SQL over an export's Parquet) and /_localplane/objstore/preview (an object's first rows or text).
 */
export function warehouseRoutes(deps: WarehouseRouteDeps) {
  const app = new OpenApiHono('admin');

  app.openapi(
    {
      method: 'post',
      path: '/sql',
      summary: "Run a read-only SQL query (DuckDB) over an export's Parquet files, with the `runs` view",
      description:
        'One SELECT statement, bounded: at most `sql_row_limit` rows are answered (`truncated` says there were ' +
        'more) and it is stopped after ' +
        ('`sql_time_limit_seconds` (both in GET /_localplane/config). One query runs at a time per instance. ' +
          'DuckDB reads only the ') +
        "objstore's plain files: no other file, no extension, no network, and no statement that writes.",
      body: sqlRequest,
      response: { status: 200, description: 'The result', schema: sqlResponseSchema },
      errors: [
        httpError(400, 'The SQL is not one SELECT, DuckDB refused it, or it ran past the time or memory limit', {
          sql_error: 'Binder Error: Referenced column "nope" not found in FROM clause!',
          not_read_only: 'Only a SELECT statement runs here (read-only), not COPY',
          outside_the_objstore:
            'Permission Error: Cannot access file "/etc/passwd" - file system operations are disabled by configuration',
          result_too_big:
            'The result is 20 MB of JSON, more than the 16 MB an answer holds: select fewer rows or columns',
          ...limitsHit,
        }),
        EXPORT_NOT_FOUND,
        httpError(
          409,
          'The export has no Parquet files in the objstore, or the objstore keeps its objects in memory (no plain ' +
            'files)',
          {
            no_files:
              `Bulk export ${EXAMPLE_ID} has no Parquet files in the objstore ` +
              `(s3://exports/traces/export_id=${EXAMPLE_ID}/): it has written none yet (it is Created), ` +
              `or its destination is another endpoint`,
            memory_storage: NO_PLAIN_FILES,
          },
        ),
        httpError(429, 'Another query is running', { running: QUERY_RUNNING }),
        stopped,
      ],
    },
    async (c, { body }) => c.json(await deps.sql.run(body.export_id, body.sql)),
  );

  app.openapi(
    {
      method: 'get',
      path: '/objstore/preview',
      summary: "Preview an object: a Parquet file's schema and first rows, the first 64 KiB of JSON or text",
      description:
        "`kind` is `parquet` for a file that starts and ends with Parquet's magic and DuckDB reads; `json` for " +
        'UTF-8 text whose content type or key ' +
        ('says JSON; `text` for other UTF-8 text without NUL bytes; `binary` for anything else (nothing more is ' +
          'answered).'),
      query: previewQuery,
      response: { status: 200, description: 'The preview', schema: previewResponseSchema },
      errors: [
        httpError(
          400,
          'Reading the Parquet file took longer than the time limit or more memory than the memory limit',
          limitsHit,
        ),
        httpError(404, 'No such bucket or object, or none the plain-file view holds', {
          not_found: noSuchObject('exports', 'traces/missing.parquet'),
          not_a_file:
            `${noSuchObject('exports', '../../etc/passwd')} as a plain file: an empty, '.' or '..' ` +
            `segment names no file`,
        }),
        httpError(409, 'The objstore keeps its objects in memory (no plain files)', { memory_storage: NO_PLAIN_FILES }),
        stopped,
      ],
    },
    async (c, { query }) => c.json(await deps.previews.preview(query.bucket, query.key, query.rows)),
  );

  return app;
}
