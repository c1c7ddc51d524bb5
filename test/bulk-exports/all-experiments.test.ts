import { describe, expect, it, onTestFinished } from 'vitest';
import { DEFAULT_LIMITS } from '../../src/config.ts';
import {
  credentialsOf,
  eventually,
  fullKey,
  useLocalplane,
  workspaceByTier,
  type FixtureWorkspace,
  type WorkspaceApi,
} from '../support/instance.ts';
import { download, duckdb, listKeys, s3For } from '../support/objstore.ts';
import { expectSchema } from '../support/openapi.ts';
import { inWindow, seededRuns } from '../support/source.ts';
import { isTerminalStatus } from '../../src/bulk-exports/statuses.ts';

/**
 * Bulk exports of all experiments (`all_experiments: true` instead of `session_id`), run
 * metadata's execution_backend, the request defaults, and the runs of a recurring export's
 * children, through a running instance; the Parquet is read back with DuckDB.
 */
const ctx = useLocalplane({ freezeClock: true });
const globexWorkspace = () => workspaceByTier(ctx.fixtures, 'enterprise');
const globex = () => ctx.api.as(globexWorkspace());
const acme = () => ctx.api.as(workspaceByTier(ctx.fixtures, 'plus'));
const bucket = () => ctx.fixtures.objstore.buckets[0]!;
const BULK = '/api/v1/bulk-exports';
const WINDOW = { start_time: '2026-10-02T00:00:00Z', end_time: '2026-10-04T00:00:00Z' };
/** The fixture projects with seeded runs (the seeded deployments' projects have none). */
const tracedProjects = (workspace: FixtureWorkspace) =>
  workspace.sessions.filter((session) => session.run_count > 0).map((session) => session.id);

async function createDestination(client: WorkspaceApi, prefix: string): Promise<string> {
  const response = await client.post(`${BULK}/destinations`, {
    display_name: prefix.replaceAll('/', ' '),
    config: { bucket_name: bucket(), prefix, endpoint_url: ctx.fixtures.objstore.endpoint_url },
    credentials: credentialsOf(fullKey(ctx.fixtures)),
  });
  expect(response.status, response.text).toBe(200);
  return response.body.id;
}

/** Runs what is due on the frozen clock (advance(0)) until the export has ended. */
async function finished(client: WorkspaceApi, id: string) {
  return eventually(async () => {
    await ctx.instance.clock.advance(0);
    const response = await client.get(`${BULK}/${id}`);
    return isTerminalStatus(response.body.status) ? response.body : undefined;
  }, `export ${id}`);
}

describe('POST /api/v1/bulk-exports with all_experiments', () => {
  it('takes exactly one of session_id and all_experiments: both, neither or all_experiments false alone are a 422', async () => {
    const destinationId = await createDestination(globex(), 'all-experiments/refused');
    const session = globexWorkspace().sessions[0]!.id;
    for (const choice of [
      { session_id: session, all_experiments: true },
      {},
      { all_experiments: false },
      { session_id: null, all_experiments: false },
    ]) {
      const refused = await globex().post(BULK, { bulk_export_destination_id: destinationId, ...WINDOW, ...choice });
      expect(refused.status, JSON.stringify(choice)).toBe(422);
      expect(refused.body.detail).toEqual([
        expect.objectContaining({
          type: 'value_error',
          loc: ['body'],
          msg: 'Value error, Exactly one of session_id or all_experiments must be set',
        }),
      ]);
    }
    const wrongType = await globex().post(BULK, {
      bulk_export_destination_id: destinationId,
      ...WINDOW,
      all_experiments: 'yes please',
    });
    expect(wrongType.status).toBe(422);
    expect(wrongType.body.detail[0]).toMatchObject({ loc: ['body', 'all_experiments'] });
  });

  it(
    'exports the runs of every tracing project of the workspace in the window, a project made at run time ' +
      'included, each in its own folder',
    async () => {
      // A deployment brings a tracing project of its name; runs are added to it through the harness.
      const listenerId = globexWorkspace().listeners[0]!;
      const deployment = await globex().post('/v2/deployments', {
        name: 'all-experiments-agent',
        source: 'external_container',
        source_config: { listener_id: listenerId, listener_config: { k8s_namespace: 'graphs' } },
        source_revision_config: { image_uri: 'registry.example/agent:1' },
        secrets: [],
      });
      expect(deployment.status, deployment.text).toBe(201);
      const fixtures = (await ctx.admin.request('GET', '/fixtures')).body;
      const projects = fixtures.workspaces.find((workspace: { id: string }) => workspace.id === globexWorkspace().id)
        .sessions as { id: string; name: string }[];
      const madeAtRunTime = projects.find((project) => project.name === 'all-experiments-agent')!;
      const added = await ctx.admin.request('POST', `/sessions/${madeAtRunTime.id}/runs`, {
        body: { count: 40, start_time: '2026-10-02T06:00:00Z', days: 1 },
      });
      expect(added.status, added.text).toBe(201);
      expect(added.body.session).toMatchObject({ run_count: 40 });
      expect(Date.parse(added.body.session.last_run_start_time)).toBeLessThan(Date.parse(WINDOW.end_time));

      // Small files: a project's day takes several, so a run moves on from project to project mid-way.
      expect((await ctx.admin.request('PATCH', '/config', { body: { export_rows_per_file: 500 } })).status).toBe(200);
      onTestFinished(async () => {
        await ctx.admin.request('PATCH', '/config', {
          body: { export_rows_per_file: DEFAULT_LIMITS.export_rows_per_file },
        });
      });
      const prefix = 'all-experiments/every-project';
      const created = await globex().post(BULK, {
        bulk_export_destination_id: await createDestination(globex(), prefix),
        all_experiments: true,
        ...WINDOW,
      });
      expect(created.status, created.text).toBe(200);
      // The reference's BulkExport predates all_experiments: its session_id is never null there.
      expectSchema(created.body, 'BulkExport', 'localplane only');
      expect(created.body).toMatchObject({
        session_id: null,
        all_experiments: true,
        format_version: 'v1',
        compression: 'gzip',
      });
      const exportId = created.body.id;
      expect((await finished(globex(), exportId)).status).toBe('Completed');

      const runs = (await globex().get(`${BULK}/${exportId}/runs`)).body;
      expectSchema(runs, 'BulkExportRun[]');
      expect(runs).toHaveLength(2);
      const exportFolder = `${bucket()}/${prefix}/export_id=${exportId}/tenant_id=${globexWorkspace().id}`;
      for (const run of runs) {
        expect(run.status).toBe('Completed');
        expect(run.metadata).toMatchObject({ execution_backend: 'clickhouse', prefix });
        expect(run.metadata.result.export_path).toBe(exportFolder);
        expect(run.metadata.result.exported_files.length).toBeGreaterThan(2);
        for (const file of run.metadata.result.exported_files) {
          expect(file).toMatch(
            new RegExp(
              `^${exportFolder}/session_id=[0-9a-f-]{36}/resource=runs/year=2026/month=10/day=[23]/[^/]+\\.parquet$`,
            ),
          );
        }
      }

      const seeded = tracedProjects(globexWorkspace()).flatMap((id) =>
        inWindow(seededRuns(id), WINDOW.start_time, WINDOW.end_time),
      );
      const expectedCount = seeded.length + 40;
      expect(
        runs.reduce(
          (sum: number, run: { metadata: { result: { rows_written: number } } }) =>
            sum + run.metadata.result.rows_written,
          0,
        ),
      ).toBe(expectedCount);

      const s3 = s3For(ctx.instance.objstoreUrl, fullKey(ctx.fixtures));
      const root = await download(s3, bucket(), await listKeys(s3, bucket(), `${prefix}/`));
      const files = `read_parquet('${root}/${prefix}/export_id=*/**/*.parquet', hive_partitioning = true)`;
      const perProject = await duckdb<{ session_id: string; folder: string; rows: number }>(
        `SELECT session_id, CAST(regexp_extract(filename, 'session_id=([0-9a-f-]+)', 1) AS VARCHAR) AS folder,
              count(*)::INTEGER AS rows
       FROM read_parquet('${root}/${prefix}/export_id=*/**/*.parquet', filename = true)
       GROUP BY ALL ORDER BY session_id`,
      );
      // Every row lies in the folder of its own project.
      for (const group of perProject) expect(group.folder).toBe(group.session_id);
      const expectedPerProject = [...tracedProjects(globexWorkspace()), madeAtRunTime.id]
        .map((id) => ({
          id,
          rows: id === madeAtRunTime.id ? 40 : seeded.filter((run) => run.session_id === id).length,
        }))
        .filter((project) => project.rows > 0)
        .sort((a, b) => a.id.localeCompare(b.id));
      expect(perProject.map((group) => ({ id: group.session_id, rows: group.rows }))).toEqual(expectedPerProject);
      const ids = await duckdb<{ id: string }>(
        `SELECT id FROM ${files} WHERE session_id <> '${madeAtRunTime.id}' ORDER BY id`,
      );
      expect(ids.map((row) => row.id)).toEqual(seeded.map((run) => run.id).sort());
    },
  );

  it("never exports another workspace's projects", async () => {
    const prefix = 'all-experiments/own-only';
    const created = await acme().post(BULK, {
      bulk_export_destination_id: await createDestination(acme(), prefix),
      all_experiments: true,
      ...WINDOW,
    });
    expect(created.status).toBe(200);
    expect((await finished(acme(), created.body.id)).status).toBe('Completed');
    const s3 = s3For(ctx.instance.objstoreUrl, fullKey(ctx.fixtures));
    const keys = await listKeys(s3, bucket(), `${prefix}/`);
    const acmeProjects = tracedProjects(workspaceByTier(ctx.fixtures, 'plus'));
    const folders = new Set(keys.map((key) => /session_id=([0-9a-f-]+)/.exec(key)?.[1]));
    expect([...folders].sort()).toEqual(acmeProjects.sort());
  });
});

describe('GET /api/v1/bulk-exports/runs?source_bulk_export_id=', () => {
  it(
    "lists the runs of a recurring export's children, each carrying all_experiments; 422 without the id, 404 for " +
      'an unknown one',
    async () => {
      const destinationId = await createDestination(globex(), 'all-experiments/recurring');
      const recurring = await globex().post(BULK, {
        bulk_export_destination_id: destinationId,
        all_experiments: true,
        start_time: '2026-10-02T00:00:00Z',
        interval_hours: 24,
      });
      expect(recurring.status).toBe(200);
      expect(recurring.body).toMatchObject({ status: 'IntervalScheduled', all_experiments: true, session_id: null });
      // Nothing is spawned before the first window has ended.
      expect((await globex().get(`${BULK}/runs?source_bulk_export_id=${recurring.body.id}`)).body).toEqual([]);

      // The frozen clock started at the wall time, long after the windows: the first children are overdue.
      await ctx.instance.clock.advance(0);
      const children = await eventually(async () => {
        await ctx.instance.clock.advance(0);
        const listed = (await globex().get(`${BULK}?limit=1000`)).body as {
          id: string;
          source_bulk_export_id: string | null;
          status: string;
          all_experiments: boolean;
        }[];
        const spawned = listed.filter((item) => item.source_bulk_export_id === recurring.body.id);
        return spawned.length >= 2 && spawned.every((child) => isTerminalStatus(child.status)) ? spawned : undefined;
      }, 'children');
      for (const child of children) expect(child.all_experiments).toBe(true);
      await globex().patch(`${BULK}/${recurring.body.id}`, { status: 'Cancelled' });
      await ctx.instance.clock.advance(0);

      const runs = await globex().get(`${BULK}/runs?source_bulk_export_id=${recurring.body.id}`);
      expect(runs.status).toBe(200);
      expectSchema(runs.body, 'BulkExportRun[]');
      const childIds = new Set(
        (await globex().get(`${BULK}?limit=1000`)).body
          .filter((item: { source_bulk_export_id: string | null }) => item.source_bulk_export_id === recurring.body.id)
          .map((item: { id: string }) => item.id),
      );
      expect(runs.body.length).toBe(childIds.size);
      for (const run of runs.body) {
        expect(childIds.has(run.bulk_export_id)).toBe(true);
        expect(run.metadata.execution_backend).toBe('clickhouse');
      }

      const missing = await globex().get(`${BULK}/runs`);
      expect(missing.status).toBe(422);
      expect(missing.body.detail[0]).toMatchObject({ type: 'missing', loc: ['query', 'source_bulk_export_id'] });
      const unknown = '00000000-0000-4000-8000-000000000000';
      expect((await globex().get(`${BULK}/runs?source_bulk_export_id=${unknown}`)).body).toEqual({
        detail: `Bulk export ${unknown} not found`,
      });
    },
  );
});
