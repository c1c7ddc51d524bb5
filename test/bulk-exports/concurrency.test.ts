import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { exportClient, harness, statuses, type ExportRun } from '../support/exports.ts';
import { eventually, useLocalplane, workspaceByTier } from '../support/instance.ts';
import { parquetUpload, startObjstoreProxy, type ObjstoreProxy } from '../support/objstore-proxy.ts';

const ctx = useLocalplane({ freezeClock: true });
const acme = exportClient(ctx, () => workspaceByTier(ctx.fixtures, 'plus'));
const globex = exportClient(ctx, () => workspaceByTier(ctx.fixtures, 'enterprise'));
const { admin, advance, tasks } = harness(ctx);
const NOW = '2026-10-10T00:00:00.000000+00:00';
const ONE_DAY = { start_time: '2026-10-01T00:00:00Z', end_time: '2026-10-02T00:00:00Z' };

beforeEach(async () => {
  await admin('POST', '/reset');
  await admin('POST', '/clock/set', { time: NOW });
});

describe('runs of one export', () => {
  it('starts min(runs, concurrent_runs_per_export) runs at once and the next as one ends', async () => {
    await admin('PATCH', '/config', { concurrent_runs_per_export: 2 });
    // Every run waits 60 s before each file: one file a day, so a run ends 120 s after it starts.
    await admin('POST', '/faults/export-runs', { mode: 'slow', count: 10, delay_seconds: 60 });
    const exportId = await acme.startExport(await acme.createDestination('three-days'), 'support-bot-staging', {
      start_time: '2026-10-01T00:00:00Z',
      end_time: '2026-10-04T00:00:00Z',
    });
    await advance(0);
    expect(statuses(await acme.getRuns(exportId))).toEqual(['Running', 'Running', 'Created']);
    expect((await tasks()).filter((task) => task.label.startsWith('export run step'))).toHaveLength(2);
    await advance(120);
    const runs = await acme.getRuns(exportId);
    expect(statuses(runs)).toEqual(['Completed', 'Completed', 'Running']);
    await advance(120);
    expect((await acme.getExport(exportId)).status).toBe('Completed');
  });

  it('starts every run at once under the default limit of 45', async () => {
    await admin('POST', '/faults/export-runs', { mode: 'slow', count: 10, delay_seconds: 60 });
    const exportId = await acme.startExport(await acme.createDestination('four-days'), 'support-bot-production', {
      start_time: '2026-10-01T00:00:00Z',
      end_time: '2026-10-05T00:00:00Z',
    });
    await advance(0);
    expect(statuses(await acme.getRuns(exportId))).toEqual(['Running', 'Running', 'Running', 'Running']);
  });
});

describe('exports of one workspace', () => {
  it(
    'runs at most concurrent_exports_per_workspace exports at once, oldest first; other workspaces are not held ' +
      'back',
    async () => {
      await admin('PATCH', '/config', { concurrent_exports_per_workspace: 2 });
      await admin('POST', '/faults/export-runs', { mode: 'slow', count: 10, delay_seconds: 60 });
      const destinationId = await acme.createDestination('workspace-limit');
      const acmeExports: string[] = [];
      for (let index = 0; index < 3; index++)
        acmeExports.push(await acme.startExport(destinationId, 'support-bot-staging', ONE_DAY));
      const globexExport = await globex.startExport(
        await globex.createDestination('other-workspace'),
        'research-agent',
        ONE_DAY,
      );
      await advance(0);
      const acmeStatuses = async () => Promise.all(acmeExports.map(async (id) => (await acme.getExport(id)).status));
      expect(await acmeStatuses()).toEqual(['Running', 'Running', 'Created']);
      expect((await globex.getExport(globexExport)).status).toBe('Running');
      await advance(120);
      expect(await acmeStatuses()).toEqual(['Completed', 'Completed', 'Running']);
      // The third started when a slot freed, at the time that was due.
      expect((await acme.getExport(acmeExports[2]!)).updated_at).toBe('2026-10-10T00:02:00.000000+00:00');
      await advance(120);
      expect(await acmeStatuses()).toEqual(['Completed', 'Completed', 'Completed']);
    },
  );
});

describe('a recurring export that starts far back', () => {
  it(
    'spawns the children due since one turn of the event loop at a time: the API answers meanwhile, a workspace ' +
      'has one dispatch queued, cancelling stops the rest',
    async () => {
      const destinationId = await acme.createDestination('far-back');
      // Hourly from a year back: a child is due for each of 8,760 windows at once.
      const parentId = await acme.startExport(destinationId, 'support-bot-staging', {
        start_time: '2025-10-10T00:00:00Z',
        interval_hours: 1,
      });
      let advanced = false;
      const advancing = advance(0).then((response) => {
        advanced = true;
        return response;
      });
      const childRuns = async () =>
        (await acme.client().get(`/api/v1/bulk-exports/runs?source_bulk_export_id=${parentId}`)).body as ExportRun[];
      await eventually(async () => (await childRuns()).length > 1, 'children of the recurring export');
      const dispatches = (await tasks()).filter((task) => task.label.startsWith('dispatch exports of workspace'));
      expect(dispatches.length).toBeLessThanOrEqual(1);
      expect((await acme.client().patch(`/api/v1/bulk-exports/${parentId}`, { status: 'Cancelled' })).status).toBe(200);
      expect(advanced).toBe(false);

      expect((await advancing).status).toBe(200);
      const runs = await childRuns();
      expect(runs.length).toBeGreaterThan(1);
      expect(runs.length).toBeLessThan(8760);
      expect(new Set(statuses(runs))).toEqual(new Set(['Completed']));
      expect((await tasks()).filter((task) => task.label.includes(parentId))).toEqual([]);
    },
  );
});

describe('a one-time export over decades', () => {
  it('runs its 20,454 days a few at a time while the API answers; cancelling it ends the rest', async () => {
    const exportId = await acme.startExport(await acme.createDestination('decades'), 'support-bot-staging', {
      start_time: '1970-01-01T00:00:00Z',
      end_time: '2026-01-01T00:00:00Z',
    });
    let advanced = false;
    const advancing = advance(0).then((response) => {
      advanced = true;
      return response;
    });
    await eventually(async () => (await acme.getExport(exportId)).status === 'Running', 'the export to start');
    expect((await acme.client().patch(`/api/v1/bulk-exports/${exportId}`, { status: 'Cancelled' })).status).toBe(200);
    expect(advanced).toBe(false);

    expect((await advancing).status).toBe(200);
    const runs = await acme.getRuns(exportId);
    expect(runs).toHaveLength(20_454);
    expect(new Set(statuses(runs))).toEqual(new Set(['Completed', 'Cancelled']));
    expect(runs.filter((run) => run.status === 'Completed').length).toBeLessThan(20_454);
  });
});

describe('side by side', () => {
  let proxy: ObjstoreProxy;
  beforeEach(async () => {
    proxy = await startObjstoreProxy(ctx.instance.objstoreUrl);
  });
  afterEach(async () => {
    proxy.release();
    await proxy.close();
  });

  it("completes another workspace's export while one export's upload is stalled, and advance waits for both", async () => {
    await admin('PATCH', '/config', { export_rows_per_file: 200 });
    const slowDestination = await acme.createDestination('stalled', { endpointUrl: proxy.url });
    proxy.arm({ kind: 'hold' }, parquetUpload);
    const stalled = await acme.startExport(slowDestination, 'support-bot-staging', ONE_DAY);
    const other = await globex.startExport(await globex.createDestination('unhindered'), 'research-agent', ONE_DAY);

    let advanced = false;
    const advancing = advance(0).then((response) => {
      advanced = true;
      return response;
    });
    await eventually(async () => proxy.held().length === 1, 'the stalled upload');
    const completed = await eventually(
      async () => {
        const current = await globex.getExport(other);
        return current.status === 'Completed' ? current : undefined;
      },
      'the other workspace to complete',
      20_000,
    );
    const [otherRun] = await globex.getRuns(other);
    expect(otherRun!.metadata.result.exported_files.length).toBeGreaterThan(1);
    expect(completed.finished_at).toBe(NOW);
    expect((await acme.getExport(stalled)).status).toBe('Running');
    expect((await acme.getRuns(stalled))[0]!.metadata.result.rows_written).toBe(0);
    expect(advanced).toBe(false);

    proxy.release();
    expect((await advancing).status).toBe(200);
    const [run] = await acme.getRuns(stalled);
    expect(run!.status).toBe('Completed');
    expect(run!.metadata.result.exported_files.length).toBeGreaterThan(1);
    expect((await acme.getExport(stalled)).finished_at).toBe(NOW);
  });
});

describe('the tasks listing', () => {
  it('drops the time limits of runs and exports that have ended', async () => {
    await admin('POST', '/faults/export-runs', { mode: 'slow', count: 1, delay_seconds: 60 });
    const destinationId = await acme.createDestination('tasks');
    const exportId = await acme.startExport(destinationId, 'support-bot-staging', {
      start_time: '2026-10-01T00:00:00Z',
      end_time: '2026-10-03T00:00:00Z',
    });
    await advance(0);
    const [slowRun, fastRun] = await acme.getRuns(exportId);
    expect(statuses([slowRun!, fastRun!])).toEqual(['Running', 'Completed']);
    // Seeded revisions in progress have tasks too: only the export's are looked at.
    const labels = async () =>
      (await tasks()).map((task) => task.label).filter((label) => !label.startsWith('revision '));
    expect((await labels()).sort()).toEqual(
      [`export run step ${slowRun!.id}`, `time limit of export ${exportId}`, `time limit of run ${slowRun!.id}`].sort(),
    );
    await advance(120);
    expect((await acme.getExport(exportId)).status).toBe('Completed');
    expect(await labels()).toEqual([]);

    await admin('POST', '/faults/export-runs', { mode: 'slow', count: 1, delay_seconds: 60 });
    const cancelledId = await acme.startExport(destinationId, 'support-bot-staging', ONE_DAY);
    await advance(0);
    expect((await labels()).some((label) => label.includes(cancelledId))).toBe(true);
    expect((await acme.client().patch(`/api/v1/bulk-exports/${cancelledId}`, { status: 'Cancelled' })).status).toBe(
      200,
    );
    await advance(0);
    expect(await labels()).toEqual([]);
  });
});
