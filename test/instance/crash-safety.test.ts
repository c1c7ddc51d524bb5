/**
 * kill -9 at chosen moments of a `localplane start --data-dir` process (the compiled CLI), then a
 * restart on the same directory: SQLite is intact, no half-written object is ever listed, every
 * export finishes, and its files hold each run of its window exactly once.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { startCli, type Launched } from '../support/cli.ts';
import {
  Api,
  credentialsOf,
  fullKey,
  workspaceByTier,
  type FixturesView,
  type WorkspaceApi,
} from '../support/instance.ts';
import { duckdb } from '../support/objstore.ts';
import { inWindow, seededRuns } from '../support/source.ts';
import { isTerminalStatus } from '../../src/bulk-exports/statuses.ts';

const dataDirs: string[] = [];
afterAll(() => {
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
});

function freshDataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'localplane-crash-'));
  dataDirs.push(dir);
  return dir;
}

interface Running {
  cli: Launched;
  admin: Api;
  fixtures: FixturesView;
  /** The plus workspace, whose project has 50,000 runs. */
  client: WorkspaceApi;
  bucket: string;
}

async function open(dataDir: string, flags: string[] = []): Promise<Running> {
  const cli = await startCli(['--data-dir', dataDir, ...flags]);
  const admin = new Api(`${cli.apiUrl}/_localplane`);
  const fixtures = (await admin.request<FixturesView>('GET', '/fixtures')).body;
  const client = new Api(cli.apiUrl).as(workspaceByTier(fixtures, 'plus'));
  return { cli, admin, fixtures, client, bucket: fixtures.objstore.buckets[0]! };
}

const bigSession = (running: Running) =>
  workspaceByTier(running.fixtures, 'plus').sessions.find((session) => session.run_count >= 50_000)!;

function integrityOf(dataDir: string): string {
  const db = new Database(join(dataDir, 'localplane.sqlite'));
  try {
    return db.pragma('integrity_check', { simple: true }) as string;
  } finally {
    db.close();
  }
}

/** Every object file s3rver would list under the folder, recursively. */
function storedObjects(folder: string): string[] {
  if (!existsSync(folder)) return [];
  return readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('._S3rver_object'))
    .map((entry) => join(entry.parentPath, entry.name));
}

/** SIGKILL, then what must hold on disk before any restart. */
async function crash(running: Running, dataDir: string): Promise<void> {
  expect((await running.cli.kill('SIGKILL')).signal).toBe('SIGKILL');
  expect(integrityOf(dataDir)).toBe('ok');
  const parquet = storedObjects(join(dataDir, 'objstore', running.bucket)).filter((file) =>
    file.endsWith('.parquet._S3rver_object'),
  );
  if (parquet.length > 0) {
    // read_parquet fails on a truncated file: every object that would be listed is whole.
    const list = parquet.map((file) => `'${file}'`).join(', ');
    const [{ files }] = await duckdb<{ files: number }>(
      `SELECT count(DISTINCT filename)::INTEGER AS files FROM read_parquet([${list}], filename = true)`,
    );
    expect(files).toBe(parquet.length);
  }
}

/** Without an endpoint_url, so it names the embedded objstore whatever port that gets after a restart. */
async function createDestination(running: Running, prefix: string): Promise<string> {
  const response = await running.client.post('/api/v1/bulk-exports/destinations', {
    display_name: prefix,
    config: { bucket_name: running.bucket, prefix },
    credentials: credentialsOf(fullKey(running.fixtures)),
  });
  expect(response.status, response.text).toBe(200);
  return response.body.id;
}

async function createExport(
  running: Running,
  destinationId: string,
  window: { start_time: string; end_time: string },
  compression = 'zstandard',
) {
  const response = await running.client.post('/api/v1/bulk-exports', {
    bulk_export_destination_id: destinationId,
    session_id: bigSession(running).id,
    ...window,
    format_version: 'v2_beta',
    compression,
  });
  expect(response.status, response.text).toBe(200);
  return response.body.id as string;
}

/** Polls on real time: with a running clock the export moves on its own. */
async function untilFinished(running: Running, exportId: string, step?: () => Promise<unknown>) {
  const deadline = Date.now() + 45_000;
  for (;;) {
    const exported = (await running.client.get(`/api/v1/bulk-exports/${exportId}`)).body;
    if (isTerminalStatus(exported.status)) return exported;
    if (Date.now() > deadline) throw new Error(`export ${exportId} is still ${exported.status}`);
    await (step ? step() : new Promise((resolve) => setTimeout(resolve, 25)));
  }
}

interface RunView {
  status: string;
  metadata: { result: { rows_written: number; exported_files: string[] } | null };
}

async function runsOf(running: Running, exportId: string) {
  const runs = (await running.client.get(`/api/v1/bulk-exports/${exportId}/runs`)).body as RunView[];
  return runs.map((run) => ({
    status: run.status,
    rows_written: run.metadata.result?.rows_written ?? 0,
    exported_files: run.metadata.result?.exported_files ?? [],
  }));
}

/** The export completed, and its files (as plain files) hold every run of its window exactly once. */
async function expectExactlyOnce(
  running: Running,
  dataDir: string,
  exportId: string,
  prefix: string,
  window: { start_time: string; end_time: string },
) {
  const finished = await untilFinished(running, exportId);
  expect(finished.status).toBe('Completed');
  const expected = inWindow(seededRuns(bigSession(running).id), window.start_time, window.end_time).length;
  const runs = await runsOf(running, exportId);
  expect(runs.every((run) => run.status === 'Completed')).toBe(true);
  expect(runs.reduce((sum, run) => sum + run.rows_written, 0)).toBe(expected);

  const filesDir = join(dataDir, 'files');
  const listed = runs
    .flatMap((run) => run.exported_files)
    .map((file) => join(filesDir, file))
    .sort();
  const onDisk = readdirSync(join(filesDir, running.bucket, prefix, `export_id=${exportId}`), {
    recursive: true,
    withFileTypes: true,
  })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
  expect(onDisk, 'exactly the files exported_files names').toEqual(listed);
  const [{ rows, ids, files }] = await duckdb<{ rows: number; ids: number; files: number }>(
    `SELECT count(*)::INTEGER AS rows, count(DISTINCT id)::INTEGER AS ids, count(DISTINCT filename)::INTEGER AS files
       FROM read_parquet('${filesDir}/${running.bucket}/${prefix}/export_id=${exportId}/**/*.parquet',
                         hive_partitioning = true, filename = true)`,
  );
  expect({ rows, ids, files }).toEqual({ rows: expected, ids: expected, files: listed.length });
}

async function stop(running: Running, dataDir: string) {
  expect((await running.cli.kill('SIGTERM')).code).toBe(0);
  expect(integrityOf(dataDir)).toBe('ok');
  expect(
    readdirSync(join(dataDir, 'objstore')).filter((name) => name.startsWith('.incoming-')),
    'no temp files left',
  ).toEqual([]);
}

const ONE_DAY = { start_time: '2026-10-02T00:00:00Z', end_time: '2026-10-03T00:00:00Z' };

describe('kill -9 and a restart on the same --data-dir', () => {
  it('during destination validation: no destination, and the next one is created and exports', async () => {
    const dataDir = freshDataDir();
    // A store that accepts the validation's request and never answers: the kill lands mid-validation.
    const held: Socket[] = [];
    let reached!: () => void;
    const requestArrived = new Promise<void>((resolve) => (reached = resolve));
    const silentStore = createServer((socket) => {
      held.push(socket);
      socket.once('data', () => reached());
    });
    await new Promise<void>((resolve) => silentStore.listen(0, '127.0.0.1', resolve));
    const silentPort = (silentStore.address() as { port: number }).port;
    try {
      const first = await open(dataDir);
      const validating = first.client
        .post('/api/v1/bulk-exports/destinations', {
          display_name: 'never',
          config: { bucket_name: first.bucket, prefix: 'never', endpoint_url: `http://127.0.0.1:${silentPort}` },
          credentials: credentialsOf(fullKey(first.fixtures)),
        })
        .catch((error: unknown) => error);
      await requestArrived;
      await crash(first, dataDir);
      expect(await validating).toBeInstanceOf(Error);
    } finally {
      for (const socket of held) socket.destroy();
      silentStore.close();
    }

    const second = await open(dataDir);
    expect((await second.client.get('/api/v1/bulk-exports/destinations')).body).toEqual([]);
    const exportId = await createExport(second, await createDestination(second, 'after-validation'), ONE_DAY);
    await expectExactlyOnce(second, dataDir, exportId, 'after-validation', ONE_DAY);
    await stop(second, dataDir);
  });

  it('right after an export is created: it runs after the restart', async () => {
    const dataDir = freshDataDir();
    const window = { start_time: '2026-10-01T12:00:00Z', end_time: '2026-10-03T00:00:00Z' };
    const first = await open(dataDir);
    const exportId = await createExport(first, await createDestination(first, 'created'), window);
    await crash(first, dataDir);

    const second = await open(dataDir);
    await expectExactlyOnce(second, dataDir, exportId, 'created', window);
    await stop(second, dataDir);
  });

  it('between files of a run (slow knob, frozen clock): the run goes on from its last recorded file', async () => {
    const dataDir = freshDataDir();
    const first = await open(dataDir, ['--freeze-clock']);
    const advance = (running: Running) => running.admin.request('POST', '/clock/advance', { body: { seconds: 60 } });
    expect((await first.admin.request('PATCH', '/config', { body: { export_rows_per_file: 2000 } })).status).toBe(200);
    expect(
      (
        await first.admin.request('POST', '/faults/export-runs', {
          body: { mode: 'slow', count: 1, delay_seconds: 60 },
        })
      ).status,
    ).toBe(200);
    const exportId = await createExport(first, await createDestination(first, 'between'), ONE_DAY);
    for (let steps = 0; (await runsOf(first, exportId))[0]!.rows_written < 4000; steps++) {
      expect(steps, 'files are written one per advance').toBeLessThan(10);
      await advance(first);
    }
    await crash(first, dataDir);

    // The slow knob is part of the run: after the restart each file still waits a minute of emulator time.
    const second = await open(dataDir, ['--freeze-clock']);
    await untilFinished(second, exportId, () => advance(second));
    await expectExactlyOnce(second, dataDir, exportId, 'between', ONE_DAY);
    await stop(second, dataDir);
  });

  it('mid-upload of a multipart file: the upload is never listed, and the file is written again', async () => {
    const dataDir = freshDataDir();
    const first = await open(dataDir);
    const limits = { export_rows_per_file: 20_000, multipart_part_size_bytes: 5 * 1024 * 1024 };
    expect((await first.admin.request('PATCH', '/config', { body: limits })).status).toBe(200);
    const exportId = await createExport(first, await createDestination(first, 'mid-upload'), ONE_DAY, 'none');
    const uploads = join(dataDir, 'objstore', first.bucket, '._S3rver_uploads');
    const firstPartStored = () =>
      existsSync(uploads) && readdirSync(uploads).some((upload) => existsSync(join(uploads, upload, '1')));
    const deadline = Date.now() + 30_000;
    while (!firstPartStored()) {
      if (Date.now() > deadline) throw new Error('no multipart upload started');
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    await crash(first, dataDir);
    expect(
      storedObjects(join(dataDir, 'objstore', first.bucket, 'mid-upload', `export_id=${exportId}`)),
      'the upload in progress is no object',
    ).toEqual([]);

    const second = await open(dataDir);
    await expectExactlyOnce(second, dataDir, exportId, 'mid-upload', ONE_DAY);
    await stop(second, dataDir);
  });

  it('while deployments are being created: each is whole or absent, and ids stay unique after the restart', async () => {
    const dataDir = freshDataDir();
    const first = await open(dataDir);
    const workspace = workspaceByTier(first.fixtures, 'plus');
    const integration = workspace.integrations[0]!;
    const body = (name: string) => ({
      name,
      source: 'codehost',
      source_config: { integration_id: integration.id, repo_url: integration.repos[0]!.url, deployment_type: 'dev' },
      source_revision_config: { repo_ref: 'main', graph_config_path: 'graph.json' },
      secrets: [],
    });
    const names = Array.from({ length: 40 }, (_, index) => `crash-deployment-${index}`);
    let firstCreated!: () => void;
    const oneCreated = new Promise<void>((resolve) => (firstCreated = resolve));
    const answered = names.map((name) =>
      first.client.post('/v2/deployments', body(name)).then(
        (response) => {
          if (response.status === 201) firstCreated();
          return response;
        },
        () => null,
      ),
    );
    await oneCreated;
    await crash(first, dataDir);
    const created = (await Promise.all(answered))
      .filter((response) => response?.status === 201)
      .map((response) => response!.body);
    expect(created.length).toBeGreaterThan(0);

    const second = await open(dataDir);
    const listed = (await second.client.get('/v2/deployments?name_contains=crash-deployment-&limit=100')).body
      .resources as { id: string; name: string; latest_revision_id: string }[];
    expect(listed.map((deployment) => deployment.id)).toEqual(
      expect.arrayContaining(created.map((deployment) => deployment.id)),
    );
    for (const deployment of listed) {
      const revision = await second.client.get(
        `/v2/deployments/${deployment.id}/revisions/${deployment.latest_revision_id}`,
      );
      expect(revision.status, `${deployment.name} has its revision`).toBe(200);
      const again = await second.client.post('/v2/deployments', body(deployment.name));
      expect(again.status, `${deployment.name} has its tracing project`).toBe(409);
    }
    const before = new Set(listed.flatMap((deployment) => [deployment.id, deployment.latest_revision_id]));
    const after = await second.client.post('/v2/deployments', body('crash-deployment-after'));
    expect(after.status, after.text).toBe(201);
    expect(before.has(after.body.id) || before.has(after.body.latest_revision_id)).toBe(false);
    expect(before.has(await createDestination(second, 'after-deployments'))).toBe(false);
    await stop(second, dataDir);
  });
});
