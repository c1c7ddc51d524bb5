/**
 * Export of a generated project (default 1,000,000 runs over four days) to Parquet in the
 * embedded objstore, through the public API of a spawned localplane: runs/s, the server's peak
 * RSS and the API's latency during the export, against DuckDB's COPY of as many rows. Two paths
 * runs take into the database: seeded by the fixtures (with each objstore storage), and added at
 * run time through the admin API's add-runs knob (files storage).
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { DuckDBInstance } from '@duckdb/node-api';
import { DEFAULT_FIXTURES_DIR, prepareFixtures } from '../../src/localplane.ts';
import { callApi, createExport, EXPORT_BUCKET, FULL_ACCESS_KEY, waitForExport } from './client.ts';
import { peakRssBytes, spawnLocalplane } from './processes.ts';
import {
  goal,
  median,
  medianAndRange,
  megabytes,
  milliseconds,
  percentile,
  perSecond,
  type Row,
  times,
} from './report.ts';

const WORKSPACE = { id: '0b6f6c2e-6a53-4d47-9d1c-5e0e3c2f7a10', api_key: 'lp_bench_key' };
/** The project the fixtures seed with the runs. */
const SESSION_ID = '2d9e0c4b-8f7a-4e2b-b9a1-1c3d5e7f9a20';
/** A project seeded empty, its runs added at run time. */
const ADDED_SESSION_ID = '7c1f3a5e-2b4d-4e6f-8a9c-0d2e4f6a8b10';
/** Runs a call of the add-runs knob takes at most. */
const RUNS_PER_ADD = 100_000;
const START = '2026-10-01T00:00:00Z';
const DAYS = 4;
/** How often the export's status is asked while it runs: those answers' latency is the API's during the export. */
const POLL_MS = 20;
const GOALS = { ofDuckdb: 0.6, peakRssBytes: 250 * 1024 * 1024, apiP99Ms: 20 };
/**
 * DuckDB's threads: as many as an export may use, the server's event loop and its Parquet encoder thread
 * (encoder-thread.ts).
 */
const DUCKDB_THREADS = 2;
/** Timed COPYs at least, whatever the number of runs: the reference is their median. */
const MIN_COPIES = 5;
/** A reference whose COPYs range further than this either side of their median claims no ratio. */
const STEADY_SPREAD = 0.25;

interface Settings {
  runs: number;
  exportRuns: number;
  compression: string;
  log: (line: string) => void;
}

/**
 * Fixtures of one workspace with the generated project, in one fixed directory: the template
 * cache keeps one template per fixture directory, so a new run count replaces the last one's.
 */
function writeBenchFixtures(runCount: number): string {
  const dir = join(tmpdir(), 'localplane-bench-export-fixtures');
  mkdirSync(dir, { recursive: true });
  copyFileSync(join(DEFAULT_FIXTURES_DIR, 'objstore.json'), join(dir, 'objstore.json'));
  writeFileSync(join(dir, 'deployments.json'), JSON.stringify({ workspaces: [] }));
  writeFileSync(
    join(dir, 'workspaces.json'),
    JSON.stringify({
      workspaces: [
        {
          ...WORKSPACE,
          name: 'Bench',
          tier: 'enterprise',
          sessions: [
            { id: SESSION_ID, name: 'bench-project', runs: { count: runCount, start: START, days: DAYS } },
            { id: ADDED_SESSION_ID, name: 'bench-added', runs: { count: 0, start: START, days: DAYS } },
          ],
        },
      ],
      unknown_api_key: 'lp_bench_unknown',
    }),
  );
  return dir;
}

/** What the bench reads of an export's run (GET /api/v1/bulk-exports/{id}/runs). */
interface ExportRun {
  metadata: { result: { rows_written: number; exported_files: string[] } };
}

interface ExportSample {
  rows: number;
  rowsPerSecond: number;
  peakRssBytes: number;
  /** What the export's objects take in the objstore (held in the process with the memory storage). */
  objectBytes: number;
  apiLatencies: number[];
  /** Polls whose kept-alive connection the server closed as they went out (sent again). */
  connectionResets: number;
  /** On the `added` path: how fast the add-runs knob added the runs, before the export. */
  addedPerSecond?: number;
}

/** The objstore storages an export is measured with. */
type Storage = 'files' | 'memory';

/** How the exported runs reached the database, and the objstore storage the export writes to. */
interface ExportPath {
  runs: 'seeded' | 'added';
  storage: Storage;
}
const EXPORT_PATHS: readonly ExportPath[] = [
  { runs: 'seeded', storage: 'files' },
  { runs: 'seeded', storage: 'memory' },
  { runs: 'added', storage: 'files' },
];

/** Adds the export's runs to the empty project, RUNS_PER_ADD a call, as a test or a demo makes a big project. */
async function addRuns(apiUrl: string, count: number): Promise<void> {
  for (let added = 0; added < count; added += RUNS_PER_ADD) {
    await callApi(apiUrl, WORKSPACE.api_key, 'POST', `/_localplane/sessions/${ADDED_SESSION_ID}/runs`, {
      count: Math.min(RUNS_PER_ADD, count - added),
      start_time: START,
      days: DAYS,
    });
  }
}

/**
 * One export on a fresh server (its runs added first on the `added` path, and written back: the export is timed
 * alone); `keep` receives the Parquet files (downloaded before the server stops).
 */
async function exportOnce(
  fixturesDir: string,
  path: ExportPath,
  settings: Settings,
  keep?: (files: string[], s3: S3Client) => Promise<void>,
): Promise<ExportSample> {
  const server = await spawnLocalplane({ flags: ['--fixtures', fixturesDir, '--objstore-storage', path.storage] });
  try {
    let addedPerSecond: number | undefined;
    if (path.runs === 'added') {
      const adding = performance.now();
      await addRuns(server.apiUrl, settings.exportRuns);
      addedPerSecond = settings.exportRuns / ((performance.now() - adding) / 1000);
      writeBack();
    }
    const began = performance.now();
    const exportId = await createExport({
      apiUrl: server.apiUrl,
      apiKey: WORKSPACE.api_key,
      endpointUrl: server.objstoreUrl,
      sessionId: path.runs === 'added' ? ADDED_SESSION_ID : SESSION_ID,
      start: START,
      end: new Date(Date.parse(START) + DAYS * 86_400_000).toISOString(),
      compression: settings.compression,
    });
    const { status, finishedAt, latencies, connectionResets } = await waitForExport(
      server.apiUrl,
      WORKSPACE.api_key,
      exportId,
      POLL_MS,
    );
    if (status !== 'Completed') throw new Error(`the export ended ${status}`);
    const peak = peakRssBytes(server.pid);
    const { buckets } = await callApi<{ buckets: { name: string; bytes: number }[] }>(
      server.apiUrl,
      WORKSPACE.api_key,
      'GET',
      '/_localplane/objstore/buckets',
    );
    const objectBytes = buckets.find((bucket) => bucket.name === EXPORT_BUCKET)!.bytes;
    const runs = await callApi<ExportRun[]>(
      server.apiUrl,
      WORKSPACE.api_key,
      'GET',
      `/api/v1/bulk-exports/${exportId}/runs`,
    );
    const rows = runs.reduce((sum, run) => sum + run.metadata.result.rows_written, 0);
    if (rows !== settings.exportRuns) throw new Error(`the export wrote ${rows} rows of ${settings.exportRuns}`);
    if (keep) {
      const s3 = new S3Client({
        endpoint: server.objstoreUrl,
        region: 'us-east-1',
        forcePathStyle: true,
        credentials: FULL_ACCESS_KEY,
        requestChecksumCalculation: 'WHEN_REQUIRED',
        responseChecksumValidation: 'WHEN_REQUIRED',
      });
      try {
        await keep(
          runs.flatMap((run) => run.metadata.result.exported_files),
          s3,
        );
      } finally {
        s3.destroy();
      }
    }
    return {
      rows,
      rowsPerSecond: rows / ((finishedAt - began) / 1000),
      peakRssBytes: peak,
      objectBytes,
      apiLatencies: latencies,
      connectionResets,
      addedPerSecond,
    };
  } finally {
    await server.stop();
  }
}

/** Downloads the export's files into `dir`, each at its key. */
async function download(files: string[], s3: S3Client, dir: string): Promise<void> {
  for (const file of files) {
    const key = file.slice(EXPORT_BUCKET.length + 1);
    const path = join(dir, key);
    mkdirSync(dirname(path), { recursive: true });
    const object = await s3.send(new GetObjectCommand({ Bucket: EXPORT_BUCKET, Key: key }));
    writeFileSync(path, await object.Body!.transformToByteArray());
  }
}

/**
 * The peer: DuckDB with DUCKDB_THREADS threads holding the exported rows in an in-memory table, COPYing them to one
 * Parquet file; one COPY untimed, so that the timed ones find DuckDB's memory allocated.
 */
async function loadDuckdb(dir: string, compression: string) {
  const instance = await DuckDBInstance.create(':memory:', { threads: String(DUCKDB_THREADS) });
  const connection = await instance.connect();
  await connection.run(
    `CREATE TABLE runs AS SELECT * FROM read_parquet('${dir}/**/*.parquet', hive_partitioning = false)`,
  );
  const codec = compression === 'zstandard' ? 'zstd' : compression === 'none' ? 'uncompressed' : compression;
  const target = join(dir, 'duckdb.parquet');
  const copy = () => connection.run(`COPY runs TO '${target}' (FORMAT parquet, COMPRESSION ${codec})`);
  await copy();
  return {
    /** One COPY after the last one's file is gone and the page cache written back; its rows/s. */
    async copy(rows: number): Promise<number> {
      rmSync(target, { force: true });
      writeBack();
      const began = performance.now();
      await copy();
      return rows / ((performance.now() - began) / 1000);
    },
    close() {
      connection.closeSync();
      instance.closeSync();
    },
  };
}

/**
 * Writes what the last figure left in the page cache to disk before the next one starts: an
 * export writes 170 MB in five seconds and the COPY as much, and the kernel writing one's back
 * during the other made DuckDB's COPY range from 181,000 to 438,000 rows/s in one run.
 */
function writeBack(): void {
  execFileSync('sync');
}

/** The memory storage holds the export's objects in the server: its peak RSS without them. */
function rssBesideObjects(what: string, samples: ExportSample[]): Row {
  const beside = samples.map((sample) => sample.peakRssBytes - sample.objectBytes);
  return {
    what:
      `${what}: the server's peak RSS less the export's objects it holds ` +
      `(${megabytes(median(samples.map((sample) => sample.objectBytes)))})`,
    localplane: medianAndRange(beside, megabytes),
    peer: 'none in the same run: the goal',
    peerFigure: megabytes(GOALS.peakRssBytes),
    ratio: times(median(beside) / GOALS.peakRssBytes),
    goal: '',
  };
}

/** Whether a reference's figures stay within STEADY_SPREAD either side of their median. */
function isSteady(figures: number[]): boolean {
  const middle = median(figures);
  return Math.min(...figures) >= (1 - STEADY_SPREAD) * middle && Math.max(...figures) <= (1 + STEADY_SPREAD) * middle;
}

function exportRows(path: ExportPath, samples: ExportSample[], duckdbRates: number[], settings: Settings): Row[] {
  const duckdbRate = median(duckdbRates);
  const steady = isSteady(duckdbRates);
  const rate = median(samples.map((sample) => sample.rowsPerSecond));
  const peakRss = median(samples.map((sample) => sample.peakRssBytes));
  const p99 = median(samples.map((sample) => percentile(sample.apiLatencies, 99)));
  const runs =
    path.runs === 'seeded'
      ? 'runs seeded by the fixtures'
      : `runs added at run time (POST /_localplane/sessions/{id}/runs, ${RUNS_PER_ADD.toLocaleString('en')} a call)`;
  const what =
    `export of ${settings.exportRuns.toLocaleString('en')} ${runs} to ${settings.compression} ` +
    `Parquet in the objstore (${path.storage} storage)`;
  const resets = samples.reduce((sum, sample) => sum + sample.connectionResets, 0);
  const resent = resets > 0 ? `; ${resets} sent again after the server reset their connection` : '';
  const noPeer = 'none in the same run: the goal';
  const adding: Row[] =
    path.runs === 'added'
      ? [
          {
            what: `adding the ${settings.exportRuns.toLocaleString('en')} ${runs} before that export: runs/s`,
            localplane: medianAndRange(
              samples.map((sample) => sample.addedPerSecond!),
              perSecond,
            ),
            peer: 'none',
            peerFigure: '',
            ratio: '',
            goal: '',
          },
        ]
      : [];
  return [
    ...adding,
    {
      what: `${what}: runs/s`,
      localplane: medianAndRange(
        samples.map((sample) => sample.rowsPerSecond),
        perSecond,
      ),
      peer:
        `DuckDB COPY of the seeded export's rows (FORMAT parquet, COMPRESSION ${settings.compression}; ` +
        `${DUCKDB_THREADS} threads, the table in memory, the page cache written back, the median of ` +
        `${duckdbRates.length} after one untimed)`,
      peerFigure: medianAndRange(duckdbRates, perSecond),
      ratio: steady ? times(rate / duckdbRate) : 'unsteady reference',
      goal: steady
        ? goal(`≥ ${GOALS.ofDuckdb}×`, rate >= GOALS.ofDuckdb * duckdbRate)
        : `≥ ${GOALS.ofDuckdb}× (not judged: DuckDB's COPYs range beyond ±${STEADY_SPREAD * 100}% of their median)`,
    },
    {
      what: `${what}: the server's peak RSS (VmHWM)`,
      localplane: medianAndRange(
        samples.map((sample) => sample.peakRssBytes),
        megabytes,
      ),
      peer: noPeer,
      peerFigure: megabytes(GOALS.peakRssBytes),
      ratio: times(peakRss / GOALS.peakRssBytes),
      goal: goal(`≤ ${megabytes(GOALS.peakRssBytes)}`, peakRss <= GOALS.peakRssBytes),
    },
    ...(path.storage === 'memory' ? [rssBesideObjects(what, samples)] : []),
    {
      what: `${what}: p99 of GET /api/v1/bulk-exports/{id} meanwhile (one every ${POLL_MS} ms${resent})`,
      localplane: medianAndRange(
        samples.map((sample) => percentile(sample.apiLatencies, 99)),
        milliseconds,
      ),
      peer: noPeer,
      peerFigure: milliseconds(GOALS.apiP99Ms),
      ratio: times(p99 / GOALS.apiP99Ms),
      goal: goal(`≤ ${GOALS.apiP99Ms} ms`, p99 <= GOALS.apiP99Ms),
    },
  ];
}

export async function measureExport(settings: Settings): Promise<Row[]> {
  const fixturesDir = writeBenchFixtures(settings.exportRuns);
  const templateStarted = performance.now();
  prepareFixtures({ fixturesDir });
  settings.log(
    `export: template of ${settings.exportRuns.toLocaleString('en')} runs ready ` +
      `in ${((performance.now() - templateStarted) / 1000).toFixed(1)} s (built once, then cached)`,
  );

  const scratch = mkdtempSync(join(tmpdir(), 'localplane-bench-export-'));
  let duckdb: Awaited<ReturnType<typeof loadDuckdb>> | undefined;
  try {
    // Each run exports on every path, then COPYs, so that the figures of a run see the machine in the same state.
    const samples = new Map<ExportPath, ExportSample[]>(EXPORT_PATHS.map((path) => [path, []]));
    const duckdbRates: number[] = [];
    const timeCopy = async (label: string) => {
      duckdbRates.push(await duckdb!.copy(settings.exportRuns));
      settings.log(`export ${label}: duckdb COPY ${perSecond(duckdbRates.at(-1)!)}`);
    };
    for (let run = 1; run <= settings.runs; run++) {
      for (const path of EXPORT_PATHS) {
        writeBack();
        const sample = await exportOnce(
          fixturesDir,
          path,
          settings,
          duckdb ? undefined : (files, s3) => download(files, s3, scratch),
        );
        samples.get(path)!.push(sample);
        duckdb ??= await loadDuckdb(scratch, settings.compression);
        settings.log(
          `export ${run}/${settings.runs} (${path.runs}, ${path.storage}): localplane ` +
            `${perSecond(sample.rowsPerSecond)}, peak RSS ${megabytes(sample.peakRssBytes)}, ` +
            (sample.addedPerSecond === undefined ? '' : `runs added at ${perSecond(sample.addedPerSecond)}, `) +
            (`API p99 ${milliseconds(percentile(sample.apiLatencies, 99))} (${sample.apiLatencies.length} ` +
              `polls, ${sample.connectionResets} sent again after a connection reset)`),
        );
      }
      await timeCopy(`${run}/${settings.runs}`);
    }
    while (duckdbRates.length < MIN_COPIES) await timeCopy(`reference ${duckdbRates.length + 1}/${MIN_COPIES}`);
    return EXPORT_PATHS.flatMap((path) => exportRows(path, samples.get(path)!, duckdbRates, settings));
  } finally {
    duckdb?.close();
    rmSync(scratch, { recursive: true, force: true });
  }
}
