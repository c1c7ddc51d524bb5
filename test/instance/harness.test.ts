import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { createLocalplane, type CreateOptions, type InProcessLocalplane } from '../../src/index.ts';
import { loadFixtures } from '../../src/fixtures/files.ts';
import { DEFAULT_FIXTURES_DIR } from '../../src/localplane.ts';
import { codehostDeploymentBody } from '../support/deployments.ts';
import { fixturesOf, inProcessApi } from '../support/in-process.ts';
import {
  credentialsOf,
  eventually,
  fullKey,
  workspaceByTier,
  type FixturesView,
  type FixtureWorkspace,
} from '../support/instance.ts';
import { duckdb } from '../support/objstore.ts';
import { parquetUpload, startObjstoreProxy } from '../support/objstore-proxy.ts';

/** After the staging project's last run, so an export of its three days is all in the past. */
const FIXED_TIME = '2026-11-01T00:00:00Z';
const STAGING_WINDOW = { start_time: '2026-10-01T00:00:00Z', end_time: '2026-10-04T00:00:00Z' };
/** Several files per daily run. */
const LIMITS = { export_rows_per_file: 200 };
const scratch = mkdtempSync(join(tmpdir(), 'localplane-harness-test-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const instances: InProcessLocalplane[] = [];
afterEach(async () => {
  await Promise.all(instances.splice(0).map((lp) => lp.stop()));
});

async function create(options: CreateOptions = {}): Promise<InProcessLocalplane> {
  const lp = await createLocalplane({ log: () => {}, ...options });
  instances.push(lp);
  return lp;
}

/** A frozen instance at a fixed time: everything it does depends on the seed alone. */
async function frozenInstance(options: CreateOptions = {}) {
  const lp = await create({ freezeClock: true, limits: LIMITS, ...options });
  await lp.clock.set(FIXED_TIME);
  return lp;
}

const staging = (workspace: FixtureWorkspace) =>
  workspace.sessions.find((session) => session.name === 'support-bot-staging')!.id;

/** Files under a folder, relative, with the SHA-256 of each. */
function fileHashes(root: string): Record<string, string> {
  const hashes: Record<string, string> = {};
  for (const entry of readdirSync(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    hashes[relative(root, path)] = createHash('sha256').update(readFileSync(path)).digest('hex');
  }
  return hashes;
}

/** Bulk-export calls as the plus workspace of an in-process instance. */
function exporter(lp: InProcessLocalplane, fixtures: FixturesView) {
  const workspace = workspaceByTier(fixtures, 'plus');
  const api = inProcessApi(lp, workspace);
  return {
    api,
    workspace,
    async destination(prefix: string, endpointUrl?: string) {
      const response = await api.post('/api/v1/bulk-exports/destinations', {
        display_name: prefix,
        config: {
          bucket_name: fixtures.objstore.buckets[0],
          prefix,
          ...(endpointUrl ? { endpoint_url: endpointUrl } : {}),
        },
        credentials: credentialsOf(fullKey(fixtures)),
      });
      expect(response.status, response.text).toBe(200);
      return response.body as { id: string };
    },
    async export(destinationId: string, window = STAGING_WINDOW) {
      const response = await api.post('/api/v1/bulk-exports', {
        bulk_export_destination_id: destinationId,
        session_id: staging(workspace),
        format_version: 'v2_beta',
        compression: 'snappy',
        ...window,
      });
      expect(response.status, response.text).toBe(200);
      return response.body as { id: string; status: string };
    },
    runs: async (exportId: string) =>
      (await api.get(`/api/v1/bulk-exports/${exportId}/runs`)).body as {
        status: string;
        retry_number: number;
        metadata: { result: { rows_written: number; exported_files: string[] } | null };
      }[],
  };
}

describe('an in-process instance', () => {
  it('listens on no port until something needs the objstore, and serves the API through request()', async () => {
    const lp = await create();
    expect(lp).not.toHaveProperty('apiUrl');
    const admin = inProcessApi(lp);
    expect((await admin.get('/_localplane/health')).body.objstore_url).toBeNull();

    const seeded = loadFixtures(DEFAULT_FIXTURES_DIR).workspaces.workspaces[0]!;
    const state = (await admin.get(`/_localplane/state?workspace_id=${seeded.id}`)).body;
    const [workspaceState] = state.workspaces;
    const workspace = { ...seeded, integrations: workspaceState.codehost_integrations } as unknown as FixtureWorkspace;
    const api = inProcessApi(lp, workspace);
    const created = await api.post('/v2/deployments', codehostDeploymentBody(workspace, 'in-process'));
    expect(created.status, created.text).toBe(201);
    expect((await api.get(`/v2/deployments/${created.body.id}`)).body.name).toBe('in-process');
    // A URL, a Request and fetch() answer the same.
    const byRequest = await lp.fetch(
      new Request(`http://localplane.test/v2/deployments/${created.body.id}`, {
        headers: { 'X-API-Key': seeded.api_key },
      }),
    );
    expect(((await byRequest.json()) as { id: string }).id).toBe(created.body.id);
    expect((await admin.get('/_localplane/health')).body.objstore_url).toBeNull();

    // Handing out the endpoint binds it, on loopback.
    const endpoint = await lp.objstoreEndpoint();
    expect(endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect((await admin.get('/_localplane/health')).body.objstore_url).toBe(endpoint);
  });

  it('lives beside another one: stopping one leaves the other exporting, its S3 requests in flight untouched', async () => {
    const [first, second] = await Promise.all([frozenInstance(), frozenInstance()]);
    const [firstFixtures, secondFixtures] = await Promise.all([fixturesOf(first), fixturesOf(second)]);
    expect(firstFixtures.objstore.endpoint_url).not.toBe(secondFixtures.objstore.endpoint_url);
    // The second instance uploads through a proxy that holds its first Parquet upload, so that
    // one of its S3 requests is surely in flight while the first instance stops.
    const proxy = await startObjstoreProxy(secondFixtures.objstore.endpoint_url);
    onTestFinished(() => proxy.close());
    const one = exporter(first, firstFixtures);
    const two = exporter(second, secondFixtures);
    await one.export((await one.destination('first')).id);
    const exported = await two.export((await two.destination('second', proxy.url)).id);

    proxy.arm({ kind: 'hold' }, parquetUpload, 1);
    const firstExporting = first.clock.advance(0);
    const secondExporting = second.clock.advance(0);
    await eventually(async () => proxy.held().length === 1, 'the second instance upload in flight');
    await first.stop();
    await firstExporting;
    proxy.release();
    await secondExporting;

    expect((await two.api.get(`/api/v1/bulk-exports/${exported.id}`)).body.status).toBe('Completed');
    const runs = await two.runs(exported.id);
    expect(runs.map((run) => [run.status, run.retry_number])).toEqual(runs.map(() => ['Completed', 0]));
    expect(runs.reduce((sum, run) => sum + run.metadata.result!.rows_written, 0)).toBe(1500);
    const [{ count }] = await duckdb<{ count: number }>(
      `SELECT count(*)::INTEGER AS count FROM ` +
        `read_parquet('${second.filesDir}/${secondFixtures.objstore.buckets[0]}/second/**/*.parquet')`,
    );
    expect(count).toBe(1500);
  });
});

/** The same scenario on an instance: destinations, a three-day export, deployments; every response body in order. */
async function scenario(lp: InProcessLocalplane) {
  const fixtures = await fixturesOf(lp);
  const { api, workspace, destination, export: startExport } = exporter(lp, fixtures);
  const bodies: unknown[] = [];
  const record = async <T>(reply: Promise<{ status: number; body: T }>) => {
    const { status, body } = await reply;
    bodies.push({ status, body });
    return body;
  };
  const target = await destination('determinism');
  bodies.push(target);
  const created = await startExport(target.id);
  bodies.push(created);
  await lp.clock.advance(0);
  await record(api.get(`/api/v1/bulk-exports/${created.id}`));
  await record(api.get(`/api/v1/bulk-exports/${created.id}/runs`));
  const deployment = await record(
    api.post<{ id: string }>(
      '/v2/deployments',
      codehostDeploymentBody(workspace, 'deterministic', { secrets: [{ name: 'TOKEN', value: 'x' }] }),
    ),
  );
  await lp.clock.advance(60);
  await record(api.patch(`/v2/deployments/${deployment.id}`, { source_revision_config: { repo_ref: 'release' } }));
  await lp.clock.advance(60);
  await record(api.get(`/v2/deployments/${deployment.id}/revisions`));
  await record(api.get('/v2/deployments?limit=100'));
  await record(api.get('/api/v1/bulk-exports/destinations'));
  return { bodies, files: fileHashes(lp.filesDir!) };
}

describe('determinism', () => {
  it('gives the same ids, the same response bodies and byte-identical Parquet files for the same seed', async () => {
    const first = await scenario(await frozenInstance({ seed: 7 }));
    const second = await scenario(await frozenInstance({ seed: 7 }));
    expect(second.bodies).toEqual(first.bodies);
    const parquet = Object.keys(first.files).filter((path) => path.endsWith('.parquet'));
    expect(parquet.length).toBeGreaterThan(3);
    expect(second.files).toEqual(first.files);
    expect(JSON.stringify(first.bodies)).toContain('"status":"Completed"');
  });
});

describe('snapshots', () => {
  let lp: InProcessLocalplane;
  let fixtures: FixturesView;
  beforeAll(async () => {
    lp = await createLocalplane({ freezeClock: true, limits: LIMITS, log: () => {}, snapshotsDir: scratch });
    await lp.clock.set(FIXED_TIME);
    fixtures = await fixturesOf(lp);
  });
  afterAll(() => lp.stop());

  it('restore puts back rows, objects, files, the clock and limits, and ids go on as after the snapshot', async () => {
    await lp.reset();
    await lp.clock.set(FIXED_TIME);
    const client = exporter(lp, fixtures);
    const kept = await client.destination('kept');
    const done = await client.export(kept.id);
    await lp.clock.advance(0);
    const admin = inProcessApi(lp);
    await admin.patch('/_localplane/config', { export_run_max_retries: 3 });
    const file = join(scratch, 'round-trip.snapshot');
    const saved = await admin.post('/_localplane/snapshot', { name: 'round-trip.snapshot' });
    expect(saved.status, saved.text).toBe(200);
    expect(saved.body.bytes).toBe(readFileSync(file).byteLength);
    // Pending work is derived again from the restored state, as after a restart: not compared.
    const stateOf = async () => {
      const { pending_tasks: _derived, ...state } = (await admin.get('/_localplane/state')).body;
      return state;
    };
    const before = { state: await stateOf(), files: fileHashes(lp.filesDir!) };
    expect(Object.keys(before.files).some((path) => path.startsWith(`${fixtures.objstore.buckets[0]}/kept/`))).toBe(
      true,
    );
    const nextId = (await client.destination('after the snapshot')).id;

    await lp.reset();
    expect((await client.api.get('/api/v1/bulk-exports/destinations')).body).toEqual([]);
    const restored = await admin.post('/_localplane/restore', { name: 'round-trip.snapshot' });
    expect(restored.status, restored.text).toBe(200);
    const after = await stateOf();
    expect(after).toEqual(before.state);
    expect(after.limits.export_run_max_retries).toBe(3);
    expect(fileHashes(lp.filesDir!)).toEqual(before.files);
    expect((await client.api.get(`/api/v1/bulk-exports/${done.id}`)).body.status).toBe('Completed');
    // The id drawn after the snapshot is drawn again: the sequence goes on from the snapshot's place.
    expect((await client.destination('again after the snapshot')).id).toBe(nextId);
  });

  it('restored while an export runs, the export is cancelled and goes on from the snapshot as after a restart', async () => {
    await lp.reset();
    await lp.clock.set(FIXED_TIME);
    const client = exporter(lp, fixtures);
    const admin = inProcessApi(lp);
    await admin.post('/_localplane/faults/export-runs', { mode: 'slow', count: 3, delay_seconds: 60 });
    const running = await client.export((await client.destination('slow')).id);
    await lp.clock.advance(0);
    expect((await client.api.get(`/api/v1/bulk-exports/${running.id}`)).body.status).toBe('Running');
    const file = join(scratch, 'mid-export.snapshot');
    await lp.snapshot(file);
    await lp.clock.advance(60);
    const pending = lp.clock.advance(30);
    await lp.restore(file);
    await pending;
    expect((await client.api.get(`/api/v1/bulk-exports/${running.id}`)).body.status).toBe('Running');
    await lp.clock.advance(3600);
    expect((await client.api.get(`/api/v1/bulk-exports/${running.id}`)).body.status).toBe('Completed');
    const runs = await client.runs(running.id);
    expect(runs.reduce((sum, run) => sum + run.metadata.result!.rows_written, 0)).toBe(1500);
    const files = runs.flatMap((run) => run.metadata.result!.exported_files);
    const onDisk = Object.keys(fileHashes(lp.filesDir!));
    for (const exportedFile of files) expect(onDisk).toContain(exportedFile);
  });

  it('restores a file written again at the same path with its new content, not the one read before', async () => {
    await lp.reset();
    const client = exporter(lp, fixtures);
    const file = join(scratch, 'rewritten.snapshot');
    const first = await client.destination('first');
    await lp.snapshot(file);
    await lp.restore(file);
    const second = await client.destination('second');
    await lp.snapshot(file);
    await lp.reset();
    await lp.restore(file);
    const ids = ((await client.api.get('/api/v1/bulk-exports/destinations')).body as { id: string }[]).map(
      (destination) => destination.id,
    );
    expect(ids.sort()).toEqual([first.id, second.id].sort());
  });

  it('refuses a missing, damaged, other-version or other-seed file with a clear 4xx, and changes nothing', async () => {
    await lp.reset();
    const client = exporter(lp, fixtures);
    const admin = inProcessApi(lp);
    const good = join(scratch, 'good.snapshot');
    await lp.snapshot(good);
    const kept = await client.destination('kept through bad restores');
    const bytes = readFileSync(good);
    const damaged = Buffer.from(bytes);
    damaged[damaged.length - 10] ^= 0xff;
    writeFileSync(join(scratch, 'damaged.snapshot'), damaged);
    writeFileSync(
      join(scratch, 'version.snapshot'),
      Buffer.concat([Buffer.from('localplane-snapshot 99'), bytes.subarray(bytes.indexOf(0x0a))]),
    );
    writeFileSync(join(scratch, 'garbage.snapshot'), 'not a snapshot at all');
    writeFileSync(join(scratch, 'truncated.snapshot'), bytes.subarray(0, bytes.length - 100));
    const other = await create({ seed: 2 });
    await other.snapshot(join(scratch, 'seed2.snapshot'));

    const expectations: [string, number, RegExp][] = [
      ['missing.snapshot', 404, /there is no saved snapshot named "missing\.snapshot"/],
      ['damaged.snapshot', 400, /does not match its checksum/],
      ['version.snapshot', 400, /format version 99/],
      ['garbage.snapshot', 400, /does not start as a snapshot file does/],
      ['truncated.snapshot', 400, /header announces/],
      ['seed2.snapshot', 400, /seed 2, this instance has seed 1/],
    ];
    for (const [name, status, detail] of expectations) {
      const reply = await admin.post('/_localplane/restore', { name });
      expect(reply.status, name).toBe(status);
      expect(reply.body.detail, name).toMatch(detail);
    }
    expect((await admin.post('/_localplane/restore', {})).status).toBe(422);
    mkdirSync(join(scratch, 'a-folder.snapshot'));
    const written = await admin.post('/_localplane/snapshot', { name: 'a-folder.snapshot' });
    expect(written.status).toBe(400);
    expect(written.body.detail).toMatch(/cannot write the snapshot file/);
    expect(
      (await client.api.get('/api/v1/bulk-exports/destinations')).body.map(
        (destination: { id: string }) => destination.id,
      ),
    ).toEqual([kept.id]);
  });
});

describe('a reset of one workspace', () => {
  it('puts its resources back to the seed and cancels its work, leaving every other workspace alone', async () => {
    const lp = await frozenInstance();
    const fixtures = await fixturesOf(lp);
    const plus = exporter(lp, fixtures);
    const enterpriseWorkspace = workspaceByTier(fixtures, 'enterprise');
    const enterprise = inProcessApi(lp, enterpriseWorkspace);
    const admin = inProcessApi(lp);

    const plusExport = await plus.export((await plus.destination('plus')).id);
    const plusDeployment = (
      await plus.api.post('/v2/deployments', codehostDeploymentBody(plus.workspace, 'plus-added'))
    ).body;
    const enterpriseDestination = await enterprise.post('/api/v1/bulk-exports/destinations', {
      display_name: 'enterprise',
      config: { bucket_name: fixtures.objstore.buckets[0], prefix: 'enterprise' },
      credentials: credentialsOf(fullKey(fixtures)),
    });
    const enterpriseExport = await enterprise.post('/api/v1/bulk-exports', {
      bulk_export_destination_id: enterpriseDestination.body.id,
      session_id: enterpriseWorkspace.sessions[0]!.id,
      start_time: enterpriseWorkspace.sessions[0]!.first_run_start_time,
      end_time: new Date(Date.parse(enterpriseWorkspace.sessions[0]!.first_run_start_time) + 3_600_000).toISOString(),
    });
    expect(enterpriseExport.status, enterpriseExport.text).toBe(200);
    const enterpriseDeployment = (
      await enterprise.post('/v2/deployments', codehostDeploymentBody(enterpriseWorkspace, 'enterprise-added'))
    ).body;
    await admin.post('/_localplane/faults/destination-validations', {
      error: 'access_denied',
      workspace_id: plus.workspace.id,
    });
    await admin.post('/_localplane/faults/destination-validations', {
      error: 'access_denied',
      workspace_id: enterpriseWorkspace.id,
    });
    const tasksBefore = (await admin.get('/_localplane/tasks')).body as { label: string }[];
    expect(tasksBefore.some((task) => task.label.includes(plus.workspace.id))).toBe(true);

    const reply = await admin.post('/_localplane/reset', { workspace_id: plus.workspace.id });
    expect(reply.body).toEqual({ status: 'reset', workspace_id: plus.workspace.id });

    expect((await plus.api.get('/api/v1/bulk-exports/destinations')).body).toEqual([]);
    expect((await plus.api.get(`/api/v1/bulk-exports/${plusExport.id}`)).status).toBe(404);
    expect((await plus.api.get(`/v2/deployments/${plusDeployment.id}`)).status).toBe(404);
    const seededPlus = fixtures.workspaces
      .find((workspace) => workspace.id === plus.workspace.id)!
      .deployments.map((deployment) => deployment.id);
    expect(
      ((await plus.api.get('/v2/deployments?limit=100')).body.resources as { id: string }[])
        .map((deployment) => deployment.id)
        .sort(),
    ).toEqual([...seededPlus].sort());
    const tasks = (await admin.get('/_localplane/tasks')).body as { label: string }[];
    expect(tasks.some((task) => task.label.includes(plus.workspace.id) || task.label.includes(plusExport.id))).toBe(
      false,
    );
    const faults = (await admin.get('/_localplane/faults')).body;
    expect(faults.destination_validations.map((rule: { workspace_id: string }) => rule.workspace_id)).toEqual([
      enterpriseWorkspace.id,
    ]);

    expect((await enterprise.get(`/v2/deployments/${enterpriseDeployment.id}`)).status).toBe(200);
    await lp.clock.advance(0);
    expect((await enterprise.get(`/api/v1/bulk-exports/${enterpriseExport.body.id}`)).body.status).toBe('Completed');

    expect(
      (await admin.post('/_localplane/reset', { workspace_id: '00000000-0000-4000-8000-000000000000' })).status,
    ).toBe(404);
    expect((await admin.post('/_localplane/reset', { workspace_id: 'nope' })).status).toBe(422);
  });
});

describe('GET /_localplane/state', () => {
  it('dumps every resource with its secrets masked, for everything or one workspace', async () => {
    const lp = await frozenInstance();
    const fixtures = await fixturesOf(lp);
    const client = exporter(lp, fixtures);
    const admin = inProcessApi(lp);
    const secretKey = 'state-dump-secret-0123456789';
    await admin.post('/_localplane/objstore/keys', {
      access_key_id: 'LPSTATEKEY',
      secret_access_key: secretKey,
      permissions: ['create', 'delete', 'get', 'multipart'],
    });
    const destination = await client.api.post('/api/v1/bulk-exports/destinations', {
      display_name: 'state',
      config: { bucket_name: fixtures.objstore.buckets[0], prefix: 'state' },
      credentials: { access_key_id: 'LPSTATEKEY', secret_access_key: secretKey },
    });
    expect(destination.status, destination.text).toBe(200);
    const exported = await client.export(destination.body.id);
    await lp.clock.advance(0);
    const deploymentSecret = 'deployment-secret-in-the-state-dump';
    const deployment = (
      await client.api.post(
        '/v2/deployments',
        codehostDeploymentBody(client.workspace, 'stateful', { secrets: [{ name: 'TOKEN', value: deploymentSecret }] }),
      )
    ).body;

    const reply = await admin.get('/_localplane/state');
    expect(reply.status).toBe(200);
    for (const secret of [
      secretKey,
      deploymentSecret,
      ...fixtures.workspaces.map((workspace) => workspace.api_key),
      ...fixtures.objstore.keys.map((key) => key.secret_access_key),
    ]) {
      expect(reply.text).not.toContain(secret);
    }
    const state = reply.body;
    expect(state.workspaces.map((workspace: { id: string }) => workspace.id)).toEqual(
      fixtures.workspaces.map((workspace) => workspace.id),
    );
    const plus = state.workspaces.find((workspace: { id: string }) => workspace.id === client.workspace.id);
    expect(plus.api_key).toBe('********');
    expect(plus.destinations.map((row: { id: string }) => row.id)).toEqual([destination.body.id]);
    expect(plus.bulk_exports[0]).toMatchObject({ id: exported.id, status: 'Completed' });
    expect(plus.bulk_exports[0].runs).toHaveLength(3);
    const dumped = plus.deployments.find((row: { id: string }) => row.id === deployment.id);
    expect(dumped.secrets).toEqual([{ name: 'TOKEN', value: '********' }]);
    expect(dumped.revisions).toHaveLength(1);
    expect(plus.sessions.length).toBeGreaterThan(0);
    expect(state.clock).toEqual({ now: expect.stringMatching(/^2026-11-01T00:00:00/), frozen: true });
    expect(state.limits.export_rows_per_file).toBe(200);
    const bucket = state.objstore.buckets.find((row: { name: string }) => row.name === fixtures.objstore.buckets[0]);
    expect(bucket.objects.filter((object: { key: string }) => object.key.startsWith('state/')).length).toBeGreaterThan(
      3,
    );
    expect(bucket.objects.every((object: { size: number }) => object.size > 0)).toBe(true);
    expect(state.objstore.keys).toContainEqual({
      access_key_id: 'LPSTATEKEY',
      permissions: ['create', 'delete', 'get', 'multipart'],
      workspace_id: null,
    });
    expect(state.pending_tasks.some((task: { label: string }) => task.label.startsWith('revision'))).toBe(true);

    const one = (await admin.get(`/_localplane/state?workspace_id=${client.workspace.id}`)).body;
    expect(one.workspaces.map((workspace: { id: string }) => workspace.id)).toEqual([client.workspace.id]);
    expect((await admin.get('/_localplane/state?workspace_id=00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await admin.get('/_localplane/state?workspace_id=nope')).status).toBe(422);
  });
});
