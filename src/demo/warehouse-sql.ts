/**
 * The SQL of the warehouse demo: the demo's questions over the `runs` view
 * (warehouse/runs-view.ts), and the same files as BigQuery and ClickHouse would read them.
 */
import { sqlString } from '../warehouse/runs-view.ts';

export function globSql(pattern: string): string {
  return `SELECT file FROM glob(${sqlString(pattern)}) ORDER BY file`;
}

export interface DemoQuery {
  title: string;
  sql: string;
}

/** The day of a run from its Hive partition keys (year=/month=/day=), not from its timestamps. */
const PARTITION_DAY = `strftime(make_date(year::INTEGER, month::INTEGER, day::INTEGER), '%Y-%m-%d')`;
const LATENCY_MS = `date_diff('millisecond', start_time, end_time)`;

/** The largest trace of at most 12 runs, the earliest of those: small enough to read whole. */
const CHOSEN_TRACE =
  'SELECT trace_id FROM runs GROUP BY trace_id HAVING count(*) <= 12 ' +
  'ORDER BY count(*) DESC, min(start_time), trace_id LIMIT 1';

export const DEMO_QUERIES = {
  runsPerDay: {
    title: 'Runs per day and run_type',
    sql:
      `PIVOT (SELECT ${PARTITION_DAY} AS day, run_type, count(*) OVER (PARTITION BY year, month, day) AS total ` +
      `FROM runs)
          ON run_type USING count(*) GROUP BY day, total ORDER BY day`,
  },
  topNamesByTokens: {
    title: 'Top names by total tokens',
    sql:
      `SELECT name, count(*) AS runs, sum(total_tokens) AS total_tokens, ` +
      `sum(total_cost)::DECIMAL(12, 4) AS total_cost
          FROM runs WHERE total_tokens IS NOT NULL GROUP BY name ORDER BY total_tokens DESC, name LIMIT 10`,
  },
  costPerDay: {
    title: 'Cost per day (USD)',
    sql:
      `SELECT ${PARTITION_DAY} AS day, sum(prompt_cost)::DECIMAL(12, 4) AS prompt_cost, ` +
      `sum(completion_cost)::DECIMAL(12, 4) AS completion_cost,
                 sum(total_cost)::DECIMAL(12, 4) AS total_cost
          FROM runs GROUP BY ALL ORDER BY day`,
  },
  errorRate: {
    title: 'Error rate by run_type',
    sql: `SELECT coalesce(run_type, 'all') AS run_type, count(*) AS runs, count(*) FILTER (status = 'error') AS errors,
                 (100 * count(*) FILTER (status = 'error') / count(*))::DECIMAL(5, 2) AS error_pct
          FROM runs GROUP BY ROLLUP (run_type) ORDER BY run_type IS NULL, run_type`,
  },
  latencyByName: {
    title: 'Latency by run name (ms)',
    sql:
      `SELECT name, count(*) AS runs, round(quantile_cont(${LATENCY_MS}, 0.5)) AS p50, ` +
      `round(quantile_cont(${LATENCY_MS}, 0.95)) AS p95,
                 round(quantile_cont(${LATENCY_MS}, 0.99)) AS p99
          FROM runs WHERE end_time IS NOT NULL GROUP BY name ORDER BY p99 DESC, name LIMIT 15`,
  },
  traceTree: {
    title: 'One trace, rebuilt from parent_run_id (depth) and dotted_order (order)',
    sql: `WITH RECURSIVE
            chosen AS (${CHOSEN_TRACE}),
            trace AS (SELECT * FROM runs WHERE trace_id = (SELECT trace_id FROM chosen)),
            tree AS (
              SELECT id, 0 AS depth FROM trace WHERE parent_run_id IS NULL
              UNION ALL
              SELECT trace.id, tree.depth + 1 FROM trace JOIN tree ON trace.parent_run_id = tree.id
            )
          SELECT repeat('  ', depth) || name AS run, run_type, status, strftime(start_time, '%H:%M:%S.%g') AS start_utc,
                 ${LATENCY_MS} AS latency_ms, total_tokens
          FROM tree JOIN trace USING (id) ORDER BY dotted_order`,
  },
} satisfies Record<string, DemoQuery>;

export interface WarehouseLocation {
  bucket: string;
  prefix: string;
  /** The objstore's S3 endpoint, path-style. */
  endpoint: string;
  accessKeyId: string;
  /** `export_id=…/tenant_id=…/session_id=…`: one project's folder of one export, below the prefix. */
  projectFolder: string;
}

const BIGQUERY_PREFIX_NOTE =
  "-- the prefix is one project's folder: BigQuery refuses partition keys that are also file columns " +
  '(tenant_id, session_id)';

/**
 * BigQuery external table over the files, once they are in a bucket BigQuery reads. BigQuery
 * refuses partition keys that are also columns of the files, and tenant_id and session_id are
 * both: its prefix goes down to one project's folder, leaving resource and the day as keys.
 */
export function bigQueryDdl(location: WarehouseLocation): string {
  const prefixUri = `gs://${location.bucket}/${location.prefix}/${location.projectFolder}`;
  const copied = `s3://${location.bucket}/${location.prefix}/`;
  return `-- after copying ${copied} to Cloud Storage (or through a BigQuery Omni connection to S3);
${BIGQUERY_PREFIX_NOTE}
CREATE EXTERNAL TABLE \`my_project.my_dataset.runs\`
WITH PARTITION COLUMNS (resource STRING, year INT64, month INT64, day INT64)
OPTIONS (
  format = 'PARQUET',
  uris = ['${prefixUri}/*'],
  hive_partition_uri_prefix = '${prefixUri}'
);`;
}

/** ClickHouse's s3() table function, reading the files from the objstore itself. */
export function clickHouseQuery(location: WarehouseLocation): string {
  const url = `${location.endpoint.replace(/\/+$/, '')}/${location.bucket}/${location.prefix}/export_id=*/**/*.parquet`;
  return `-- without use_hive_partitioning: tenant_id and session_id are columns of the files as well as folders
SELECT toDate(start_time) AS day, run_type, count() AS runs
FROM s3('${url}',
        '${location.accessKeyId}', '<the secret access key of ${location.accessKeyId}>', 'Parquet')
GROUP BY day, run_type ORDER BY day, run_type;`;
}
