/**
 * npm run bench:export [-- --runs 1000000 --compression snappy]
 *
 * Exports a generated project of N runs (default 1,000,000, over 4 days) to Parquet in the
 * embedded objstore, and prints runs/s, peak RSS and the API's latency during the export,
 * then DuckDB's own Parquet write speed over the same rows as the yardstick.
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
// The compiled server (npm run bench:export builds it first), as users run it: its workers run without tsx.
import { DEFAULT_FIXTURES_DIR, prepareFixtures, start } from '../dist/localplane.js';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '1000000' },
    compression: { type: 'string', default: 'snappy' },
    'prepare-fixtures': { type: 'string' },
  },
});
const runCount = Number(values.runs);
const compression = values.compression!;

const WORKSPACE = { id: '0b6f6c2e-6a53-4d47-9d1c-5e0e3c2f7a10', api_key: 'lp_bench_key' };
const SESSION_ID = '2d9e0c4b-8f7a-4e2b-b9a1-1c3d5e7f9a20';
const START = '2026-10-01T00:00:00Z';
const DAYS = 4;

const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);

function benchFixtures(): string {
  const dir = mkdtempSync(join(tmpdir(), 'localplane-bench-fixtures-'));
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
          sessions: [{ id: SESSION_ID, name: 'bench-project', runs: { count: runCount, start: START, days: DAYS } }],
        },
      ],
      unknown_api_key: 'lp_bench_unknown',
    }),
  );
  return dir;
}

async function api(baseUrl: string, method: string, path: string, body?: unknown) {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { 'content-type': 'application/json', 'x-api-key': WORKSPACE.api_key, 'x-tenant-id': WORKSPACE.id },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await response.json()) as any;
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json)}`);
  return json;
}

async function duckdbBaseline(files: string[], s3: S3Client, bucket: string) {
  const dir = mkdtempSync(join(tmpdir(), 'localplane-bench-duckdb-'));
  try {
    for (const file of files) {
      const key = file.slice(bucket.length + 1);
      const path = join(dir, key);
      mkdirSync(dirname(path), { recursive: true });
      const object = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      writeFileSync(path, await object.Body!.transformToByteArray());
    }
    // Loaded only now: DuckDB's native library is no part of the server whose RSS is measured.
    const { DuckDBInstance } = await import('@duckdb/node-api');
    const instance = await DuckDBInstance.create(':memory:', { threads: '2' });
    const connection = await instance.connect();
    await connection.run(`CREATE TABLE runs AS SELECT * FROM read_parquet('${dir}/**/*.parquet', hive_partitioning = false)`);
    const began = performance.now();
    await connection.run(`COPY runs TO '${join(dir, 'duckdb.parquet')}' (FORMAT parquet, COMPRESSION ${compression === 'zstandard' ? 'zstd' : compression === 'none' ? 'uncompressed' : compression})`);
    const seconds = (performance.now() - began) / 1000;
    connection.closeSync();
    instance.closeSync();
    return seconds;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main() {
  const fixturesDir = benchFixtures();
  const templateStarted = performance.now();
  // In a child process: generating a million runs grows a heap that would count in the server's RSS.
  const child = spawnSync(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), '--prepare-fixtures', fixturesDir], { stdio: 'inherit' });
  if (child.status !== 0) throw new Error(`preparing the fixture template failed (exit code ${child.status})`);
  console.log(`fixture template for ${runCount.toLocaleString('en')} runs ready in ${((performance.now() - templateStarted) / 1000).toFixed(1)} s (cached after the first build)`);

  const instance = await start({ port: 0, objstorePort: 0, fixturesDir, log: (line) => console.error(line) });
  try {
    const bucket = 'exports';
    const key = { accessKeyId: 'LPTESTFULLACCESS0001', secretAccessKey: 'lp-test-secret-full-access-0001' };
    const destination = await api(instance.apiUrl, 'POST', '/api/v1/bulk-exports/destinations', {
      display_name: 'bench',
      config: { bucket_name: bucket, prefix: 'bench', endpoint_url: instance.objstoreUrl },
      credentials: { access_key_id: key.accessKeyId, secret_access_key: key.secretAccessKey },
    });
    const rssBefore = process.memoryUsage().rss;
    let peak = process.memoryUsage();
    const sampler = setInterval(() => {
      const usage = process.memoryUsage();
      if (usage.rss > peak.rss) peak = usage;
    }, 50);
    const began = performance.now();
    const cpuBefore = process.cpuUsage();
    const created = await api(instance.apiUrl, 'POST', '/api/v1/bulk-exports', {
      bulk_export_destination_id: destination.id,
      session_id: SESSION_ID,
      start_time: START,
      end_time: new Date(Date.parse(START) + DAYS * 86_400_000).toISOString(),
      format_version: 'v2_beta',
      compression,
    });
    let status = created.status;
    const pollLatencies: number[] = [];
    while (!['Completed', 'Failed', 'Cancelled', 'TimedOut'].includes(status)) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      const asked = performance.now();
      status = (await api(instance.apiUrl, 'GET', `/api/v1/bulk-exports/${created.id}`)).status;
      pollLatencies.push(performance.now() - asked);
    }
    const seconds = (performance.now() - began) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    clearInterval(sampler);
    if (status !== 'Completed') throw new Error(`export ended ${status}`);
    const runs = await api(instance.apiUrl, 'GET', `/api/v1/bulk-exports/${created.id}/runs`);
    const rows = runs.reduce((sum: number, run: any) => sum + run.metadata.result.rows_written, 0);
    const files: string[] = runs.flatMap((run: any) => run.metadata.result.exported_files);
    console.log(`localplane: ${rows.toLocaleString('en')} runs in ${files.length} ${compression} files, ${seconds.toFixed(1)} s = ${Math.round(rows / seconds).toLocaleString('en')} runs/s`);
    console.log(
      `localplane: RSS ${mb(rssBefore)} MB before the export, peak ${mb(peak.rss)} MB during it ` +
        `(then the API thread's heap ${mb(peak.heapTotal)} MB, its external memory ${mb(peak.external)} MB; the rest is native memory and the export worker's)`,
    );
    // CPU time of all the process's threads: the work per run, which other load on the machine changes less than runs/s.
    console.log(`localplane: CPU ${((cpu.user + cpu.system) / rows).toFixed(1)} µs per run (user ${(cpu.user / rows).toFixed(1)}, system ${(cpu.system / rows).toFixed(1)}) over ${seconds.toFixed(1)} s = ${((cpu.user + cpu.system) / 1e6 / seconds).toFixed(2)} cores busy`);
    pollLatencies.sort((a, b) => a - b);
    const percentile = (p: number) => pollLatencies[Math.min(pollLatencies.length - 1, Math.floor(p * pollLatencies.length))]!.toFixed(1);
    console.log(`localplane: GET /api/v1/bulk-exports/{id} during the export: median ${percentile(0.5)} ms, p99 ${percentile(0.99)} ms (${pollLatencies.length} polls)`);

    const s3 = new S3Client({
      endpoint: instance.objstoreUrl,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: key,
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
    const duckSeconds = await duckdbBaseline(files, s3, bucket);
    const duckRate = rows / duckSeconds;
    console.log(`duckdb:     the same rows written to one ${compression} Parquet file in ${duckSeconds.toFixed(1)} s = ${Math.round(duckRate).toLocaleString('en')} runs/s`);
    console.log(`localplane export speed = ${((rows / seconds / duckRate) * 100).toFixed(0)}% of DuckDB's Parquet write speed (goal: 50%)`);
    s3.destroy();
  } finally {
    await instance.stop();
    rmSync(fixturesDir, { recursive: true, force: true });
  }
}

const run = values['prepare-fixtures'] === undefined ? main() : Promise.resolve(prepareFixtures({ fixturesDir: values['prepare-fixtures'] }));
run.catch((error) => {
  console.error(error);
  process.exit(1);
});
