import type { FixturesView } from '../admin/schemas.ts';
import { join } from 'node:path';
import { isTerminalStatus } from '../bulk-exports/statuses.ts';
import type { ProgressListener } from '../progress.ts';
import { WarehouseSession, type ResultTable } from '../warehouse/duckdb.ts';
import { exportGlob } from '../warehouse/runs-view.ts';
import { fixtureKey, InstanceClient, InstanceError, type ExportRunView, type ExportView } from './api-client.ts';
import { copyFolder, downloadObjects, filesBelow, objstoreClient, prepareDemoDir } from './export-files.ts';
import { formatTable, section } from './tables.ts';
import { bigQueryDdl, clickHouseQuery, DEMO_QUERIES, globSql, type WarehouseLocation } from './warehouse-sql.ts';

/** Globex Research's research-agent: 6,000 runs over 3 days, exported in about a second. */
export const DEMO_PROJECT = 'research-agent';
const BUCKET = 'exports';
const PREFIX = 'warehouse-demo';
const EXPORT_KEY = 'LPTESTFULLACCESS0001';
/** May create but not delete: its destination's validation probe stays in `<prefix>/tmp/`. */
const CREATE_ONLY_KEY = 'LPTESTCREATEONLY0002';
const POLL_MS = 100;

/** An instance the demo starts for itself and stops when done. */
export interface DemoInstance {
  apiUrl: string;
  /**
   * The objstore's plain-file view, a folder per bucket; null without one (the files then come through the S3 API, as
   * with `url`).
   */
  filesDir: string | null;
  stop(): Promise<void>;
}

export type DemoOptions = DemoSettings &
  (
    | { /** A running instance's API base URL. */ url: string }
    | {
        /** Starts the instance the demo runs against (the CLI's: in process, on free ports, in its own temp dir). */
        start: () => Promise<DemoInstance>;
      }
  );

interface DemoSettings {
  /** Where the export's files are copied for `localplane query` (see DEFAULT_DEMO_DIR). */
  dir: string;
  /** Ad-hoc SQL over the `runs` view, printed instead of the demo's tables. */
  sql?: string;
  /** The demo's output, piece by piece. */
  print: (text: string) => void;
  /** The export's progress while it runs (the CLI's status line in a terminal). */
  progress?: ProgressListener;
}

export interface DemoResult {
  exportId: string;
  /** The exported project's run count, as the API counts it. */
  projectRunCount: number;
  /** Each printed table by its DEMO_QUERIES name (or `sql`), as DuckDB answered it. */
  tables: Record<string, ResultTable>;
  /** Files below the prefix, and those the `export_id=*` glob matched, relative to the prefix. */
  files: { all: string[]; matched: string[] };
}

/** Runs the warehouse demo: destination, export, DuckDB over its Parquet, BigQuery and ClickHouse equivalents. */
export async function runDemo(options: DemoOptions): Promise<DemoResult> {
  prepareDemoDir(options.dir);
  const instance = 'url' in options ? null : await options.start();
  try {
    const admin = new InstanceClient('url' in options ? options.url : instance!.apiUrl);
    const fixtures = await admin.call<FixturesView>('GET', '/_localplane/fixtures');
    const { workspace, project } = demoProject(fixtures);
    const api = admin.as(workspace.api_key);
    const { print } = options;
    print(`localplane at ${admin.baseUrl}${instance ? ' (started for the demo, in its own temp dir)' : ''}\n`);

    const destinationId = await createDestination(api, fixtures, EXPORT_KEY);
    // A second destination on the same prefix whose key may not delete: its probe file stays under tmp/.
    await api.call(
      'DELETE',
      `/api/v1/bulk-exports/destinations/${await createDestination(api, fixtures, CREATE_ONLY_KEY)}`,
    );
    print(
      `destination ${destinationId}: bucket ${BUCKET}, prefix ${PREFIX}, key ${EXPORT_KEY} (validated by a probe ` +
        `under ${PREFIX}/tmp/)\n`,
    );

    const window = exportWindow(project);
    const created = await api.call<ExportView>('POST', '/api/v1/bulk-exports', {
      bulk_export_destination_id: destinationId,
      session_id: project.id,
      start_time: window.start,
      end_time: window.end,
      format_version: 'v2_beta',
      compression: 'snappy',
    });
    print(
      `export ${created.id}: ${workspace.name} / ${project.name}, ${project.run_count.toLocaleString('en-US')} ` +
        `runs, ${window.start} to ${window.end}, v2_beta, snappy\n`,
    );
    const { frozen } = await admin.call<{ frozen: boolean }>('GET', '/_localplane/clock');
    if (frozen) {
      // Nothing starts by itself on a frozen clock: run what is due now, without moving the clock.
      print(`the instance's clock is frozen: POST /_localplane/clock/advance {"seconds": 0} runs the export\n`);
      await admin.call('POST', '/_localplane/clock/advance', { seconds: 0 });
    }
    const ended = await awaitExport(api, created.id, options.progress);
    print(
      `export ${created.id} ${ended.status}: ` +
        `runs ${ended.runsDone}/${ended.runsTotal}, ${ended.rowsWritten.toLocaleString('en-US')} rows written\n`,
    );
    if (ended.status !== 'Completed')
      throw new InstanceError(
        `export ${created.id} ended ${ended.status}: GET /api/v1/bulk-exports/${created.id}/runs says why`,
      );

    const filesDir = instance?.filesDir ?? null;
    const prefixFolder = filesDir !== null ? join(filesDir, BUCKET, PREFIX) : options.dir;
    if (filesDir !== null) {
      print(`reading the objstore's plain files in place: ${prefixFolder}\n`);
    } else {
      const s3 = await objstoreClient(fixtures, EXPORT_KEY);
      const downloaded =
        (await downloadObjects(s3, BUCKET, `${PREFIX}/export_id=${created.id}/`, PREFIX, options.dir)) +
        (await downloadObjects(s3, BUCKET, `${PREFIX}/tmp/`, PREFIX, options.dir));
      print(`downloaded ${downloaded} objects of s3://${BUCKET}/${PREFIX}/ through the S3 API into ${options.dir}\n`);
    }

    const result = await queryExport(prefixFolder, options, created.id, project.run_count);
    if (filesDir !== null) copyFolder(prefixFolder, options.dir);
    print(`\nthe export's files are in ${options.dir}: localplane query "select count(*) from runs"\n`);

    const location: WarehouseLocation = {
      bucket: BUCKET,
      prefix: PREFIX,
      endpoint: fixtures.objstore.endpoint_url,
      accessKeyId: EXPORT_KEY,
      projectFolder: `export_id=${created.id}/tenant_id=${created.tenant_id}/session_id=${project.id}`,
    };
    print(section('BigQuery: an external table over the same files', bigQueryDdl(location)));
    print(
      section(
        `ClickHouse: the same files through s3(), from the ` +
          `objstore${instance ? ' (while an instance serves them)' : ''}`,
        clickHouseQuery(location),
      ),
    );
    return result;
  } finally {
    await instance?.stop();
  }
}

function demoProject(fixtures: FixturesView) {
  for (const workspace of fixtures.workspaces) {
    const project = workspace.sessions.find((session) => session.name === DEMO_PROJECT);
    if (project) return { workspace, project };
  }
  throw new InstanceError(`the instance has no tracing project ${DEMO_PROJECT}: the demo needs the shipped fixtures`);
}

/** Whole UTC days from the project's first run to its last (from the instance, not the wall clock). */
function exportWindow(project: FixturesView['workspaces'][number]['sessions'][number]) {
  const day = 24 * 3600 * 1000;
  const first = Math.floor(Date.parse(project.first_run_start_time!) / day) * day;
  const last = (Math.floor(Date.parse(project.last_run_start_time!) / day) + 1) * day;
  const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');
  return { start: iso(first), end: iso(last) };
}

async function createDestination(api: InstanceClient, fixtures: FixturesView, accessKeyId: string): Promise<string> {
  const key = fixtureKey(fixtures, accessKeyId);
  const destination = await api.call<{ id: string }>('POST', '/api/v1/bulk-exports/destinations', {
    destination_type: 'objstore',
    display_name: `warehouse demo ${accessKeyId}`,
    config: { bucket_name: BUCKET, prefix: PREFIX },
    credentials: { access_key_id: key.access_key_id, secret_access_key: key.secret_access_key },
  });
  return destination.id;
}

/** Polls the export until it ends, telling the progress listener its state on the way. */
async function awaitExport(api: InstanceClient, exportId: string, progress?: ProgressListener) {
  for (;;) {
    const { status } = await api.call<ExportView>('GET', `/api/v1/bulk-exports/${exportId}`);
    const runs = await api.call<ExportRunView[]>('GET', `/api/v1/bulk-exports/${exportId}/runs`);
    const state = {
      runsDone: runs.filter((run) => isTerminalStatus(run.status)).length,
      runsTotal: runs.length,
      rowsWritten: runs.reduce((sum, run) => sum + (run.metadata.result?.rows_written ?? 0), 0),
    };
    progress?.({ kind: 'export', exportId, status, ...state });
    if (isTerminalStatus(status)) return { status, ...state };
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

async function queryExport(
  prefixFolder: string,
  options: DemoOptions,
  exportId: string,
  projectRunCount: number,
): Promise<DemoResult> {
  const { print } = options;
  const session = await WarehouseSession.open(prefixFolder);
  try {
    const all = filesBelow(prefixFolder);
    const globbed = await session.query(globSql(exportGlob(prefixFolder)));
    const matched = globbed.rows.map((row) => String(row[0]).slice(prefixFolder.length + 1));
    print(section(`Files under ${PREFIX}/: the export_id=* glob skips tmp/`, formatTable(filesByFolder(all, matched))));
    print(
      `\nDuckDB: CREATE VIEW runs AS SELECT * FROM read_parquet('${exportGlob('<prefix>')}', hive_partitioning = ` +
        `true)\n`,
    );

    const tables: Record<string, ResultTable> = {};
    const queries =
      options.sql === undefined
        ? Object.entries(DEMO_QUERIES)
        : [['sql', { title: options.sql, sql: options.sql }] as const];
    for (const [name, query] of queries) {
      tables[name] = await session.query(query.sql);
      print(section(query.title, formatTable(tables[name])));
    }
    return { exportId, projectRunCount, tables, files: { all, matched } };
  } finally {
    session.close();
  }
}

/** Files per top folder below the prefix (an export's, tmp/), and how many of them the glob matched. */
function filesByFolder(all: readonly string[], matched: readonly string[]): ResultTable {
  const folders = new Map<string, [number, number]>();
  for (const file of all) {
    const counts = folders.get(`${file.split('/')[0]}/`) ?? [0, 0];
    counts[0]++;
    if (matched.includes(file)) counts[1]++;
    folders.set(`${file.split('/')[0]}/`, counts);
  }
  return {
    columns: ['folder', 'files', 'matched by export_id=*'],
    rows: [...folders].map(([folder, [files, globbed]]) => [folder, files, globbed]),
  };
}
