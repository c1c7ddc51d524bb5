import { beforeEach, describe, expect, it } from 'vitest';
import { credentialsOf, fullKey, useLocalplane, workspaceByTier, type WorkspaceApi } from '../support/instance.ts';
import { expectSchema } from '../support/openapi.ts';

const ctx = useLocalplane();
const plusWorkspace = () => workspaceByTier(ctx.fixtures, 'plus');
const plus = () => ctx.api.as(plusWorkspace());
const smallSession = () => plusWorkspace().sessions.find((session) => session.run_count < 50_000)!;
const bucket = () => ctx.fixtures.objstore.buckets[0]!;
const rotationKey = () => ctx.fixtures.objstore.keys.find((key) => key.access_key_id.includes('ROTATION'))!;

const admin = (method: string, path: string, body?: unknown) => ctx.admin.request(method, path, { body });
const advance = (seconds: number) => admin('POST', '/clock/advance', { seconds });

async function createDestination(client: WorkspaceApi, prefix: string): Promise<string> {
  const response = await client.post('/api/v1/bulk-exports/destinations', {
    display_name: 'lifecycle',
    config: { bucket_name: bucket(), prefix, endpoint_url: ctx.fixtures.objstore.endpoint_url },
    credentials: credentialsOf(fullKey(ctx.fixtures)),
  });
  expect(response.status).toBe(200);
  return response.body.id;
}

async function createExport(
  destinationId: string,
  window: { start_time: string; end_time?: string; interval_hours?: number },
) {
  const response = await plus().post('/api/v1/bulk-exports', {
    bulk_export_destination_id: destinationId,
    session_id: smallSession().id,
    format_version: 'v2_beta',
    compression: 'snappy',
    ...window,
  });
  expect(response.status).toBe(200);
  return response.body;
}

const getExport = async (id: string) => (await plus().get(`/api/v1/bulk-exports/${id}`)).body;
const getRuns = async (id: string) => (await plus().get(`/api/v1/bulk-exports/${id}/runs`)).body;

beforeEach(async () => {
  await admin('POST', '/reset');
  await admin('POST', '/clock/freeze');
  await admin('POST', '/clock/set', { time: '2026-10-10T00:00:00Z' });
});

describe('cancelling', () => {
  it('cancels a running export and its unfinished runs', async () => {
    await admin('PATCH', '/config', { concurrent_runs_per_export: 1 });
    await admin('POST', '/faults/export-runs', { mode: 'slow', delay_seconds: 300 });
    const destinationId = await createDestination(plus(), 'cancel');
    const created = await createExport(destinationId, {
      start_time: '2026-10-01T00:00:00Z',
      end_time: '2026-10-03T00:00:00Z',
    });
    await advance(0);
    expect((await getExport(created.id)).status).toBe('Running');
    const runs = await getRuns(created.id);
    expect(runs.map((run: { status: string }) => run.status)).toEqual(['Running', 'Created']);
    const inUse = await plus().delete(`/api/v1/bulk-exports/destinations/${destinationId}`);
    expect(inUse.status).toBe(409);
    expect(inUse.body.detail).toContain(created.id);
    const cancelled = await plus().patch(`/api/v1/bulk-exports/${created.id}`, { status: 'Cancelled' });
    expect(cancelled.status).toBe(200);
    expectSchema(cancelled.body, 'BulkExport');
    expect(cancelled.body.status).toBe('Cancelled');
    expect(cancelled.body.finished_at).toBe('2026-10-10T00:00:00.000000+00:00');
    await advance(600);
    expect((await getRuns(created.id)).map((run: { status: string }) => run.status)).toEqual([
      'Cancelled',
      'Cancelled',
    ]);
    expect((await plus().patch(`/api/v1/bulk-exports/${created.id}`, { status: 'Cancelled' })).status).toBe(200);
    const wrongStatus = await plus().patch(`/api/v1/bulk-exports/${created.id}`, { status: 'Running' });
    expect(wrongStatus.status).toBe(422);
    expect(wrongStatus.body.detail[0]).toMatchObject({ loc: ['body', 'status'], type: 'enum' });
    expect((await plus().delete(`/api/v1/bulk-exports/destinations/${destinationId}`)).status).toBe(204);
  });

  it('refuses to cancel a completed export', async () => {
    const created = await createExport(await createDestination(plus(), 'done'), {
      start_time: '2026-10-01T00:00:00Z',
      end_time: '2026-10-01T03:00:00Z',
    });
    await advance(0);
    expect((await getExport(created.id)).status).toBe('Completed');
    const refused = await plus().patch(`/api/v1/bulk-exports/${created.id}`, { status: 'Cancelled' });
    expect(refused.status).toBe(400);
    expect(refused.body.detail).toMatch(/already Completed/);
  });
});

describe('failures, retries and time limits', () => {
  it('retries a failing run on the configured delay, then fails the run and the export', async () => {
    await admin('PATCH', '/config', { export_run_max_retries: 2, export_run_retry_delay_seconds: 30 });
    await admin('POST', '/faults/export-runs', { mode: 'fail', message: 'simulated storage outage' });
    const created = await createExport(await createDestination(plus(), 'failing'), {
      start_time: '2026-10-01T00:00:00Z',
      end_time: '2026-10-02T00:00:00Z',
    });
    await advance(0);
    let [run] = await getRuns(created.id);
    expect(run).toMatchObject({ status: 'Running', retry_number: 1, errors: { retry_0: 'simulated storage outage' } });
    await advance(29);
    expect((await getRuns(created.id))[0].retry_number).toBe(1);
    await advance(1);
    expect((await getRuns(created.id))[0].retry_number).toBe(2);
    await advance(30);
    [run] = await getRuns(created.id);
    expectSchema(run, 'BulkExportRun');
    expect(run.status).toBe('Failed');
    expect(Object.keys(run.errors)).toEqual(['retry_0', 'retry_1', 'retry_2']);
    const failed = await getExport(created.id);
    expect(failed.status).toBe('Failed');
    expect(failed.finished_at).toBe('2026-10-10T00:01:00.000000+00:00');
  });

  it('completes after a retry when only the first attempt fails', async () => {
    await admin('POST', '/faults/export-runs', { mode: 'fail', attempts: 1 });
    const created = await createExport(await createDestination(plus(), 'recovering'), {
      start_time: '2026-10-01T00:00:00Z',
      end_time: '2026-10-02T00:00:00Z',
    });
    await advance(0);
    expect((await getExport(created.id)).status).toBe('Running');
    await advance(30);
    const [run] = await getRuns(created.id);
    expect(run.status).toBe('Completed');
    expect(run.retry_number).toBe(1);
    expect(run.metadata.result.rows_written).toBeGreaterThan(0);
    expect((await getExport(created.id)).status).toBe('Completed');
  });

  it('times a run out past the configured limit', async () => {
    await admin('PATCH', '/config', { export_run_time_limit_seconds: 60 });
    await admin('POST', '/faults/export-runs', { mode: 'slow', delay_seconds: 120 });
    const created = await createExport(await createDestination(plus(), 'slow'), {
      start_time: '2026-10-01T00:00:00Z',
      end_time: '2026-10-02T00:00:00Z',
    });
    await advance(59);
    expect((await getExport(created.id)).status).toBe('Running');
    await advance(1);
    expect((await getRuns(created.id))[0].status).toBe('TimedOut');
    expect((await getExport(created.id)).status).toBe('TimedOut');
  });
});

describe('recurring exports', () => {
  it('spawns a child per interval at window end + 10 minutes, and stops when the parent is cancelled', async () => {
    await admin('POST', '/clock/set', { time: '2026-10-01T00:00:00Z' });
    const parent = await createExport(await createDestination(plus(), 'recurring'), {
      start_time: '2026-10-01T00:00:00Z',
      interval_hours: 24,
    });
    expectSchema(parent, 'BulkExport');
    expect(parent).toMatchObject({ status: 'IntervalScheduled', interval_hours: 24, end_time: null });
    const children = async () =>
      ((await plus().get('/api/v1/bulk-exports')).body as Record<string, string | null>[])
        .filter((item) => item.source_bulk_export_id === parent.id)
        .sort((a, b) => a.start_time!.localeCompare(b.start_time!));
    await advance(24 * 3600 + 599);
    expect(await children()).toHaveLength(0);
    await advance(1);
    expect(await children()).toHaveLength(1);
    await advance(2 * 24 * 3600);
    const spawned = await children();
    expect(spawned.map((child) => [child.start_time, child.end_time])).toEqual([
      ['2026-10-01T00:00:00.000000+00:00', '2026-10-02T00:00:00.000000+00:00'],
      ['2026-10-02T00:00:00.000000+00:00', '2026-10-03T00:00:00.000000+00:00'],
      ['2026-10-03T00:00:00.000000+00:00', '2026-10-04T00:00:00.000000+00:00'],
    ]);
    expect(spawned.map((child) => child.created_at)).toEqual([
      '2026-10-02T00:10:00.000000+00:00',
      '2026-10-03T00:10:00.000000+00:00',
      '2026-10-04T00:10:00.000000+00:00',
    ]);
    for (const child of spawned) expect(child.status).toBe('Completed');
    const runs = await plus().get(`/api/v1/bulk-exports/runs?source_bulk_export_id=${parent.id}`);
    expect(runs.status).toBe(200);
    expectSchema(runs.body, 'BulkExportRun[]');
    expect(runs.body).toHaveLength(3);
    for (const [index, run] of runs.body.entries()) {
      expect(run.status).toBe('Completed');
      expect(run.metadata.result.exported_files[0]).toContain(`day=${index + 1}/`);
      expect(run.bulk_export_id).toBe(spawned[index]!.id);
    }
    expect((await getExport(parent.id)).status).toBe('IntervalScheduled');
    const cancelled = await plus().patch(`/api/v1/bulk-exports/${parent.id}`, { status: 'Cancelled' });
    expect(cancelled.body.status).toBe('Cancelled');
    await advance(3 * 24 * 3600);
    expect(await children()).toHaveLength(3);
  });
});

describe('credential rotation while an export runs', () => {
  it('lets the in-flight run finish with its pair and starts later runs with the new one', async () => {
    const oldKey = fullKey(ctx.fixtures);
    await admin('PATCH', '/config', { export_rows_per_file: 150, concurrent_runs_per_export: 1 });
    await admin('POST', '/faults/export-runs', { mode: 'slow', delay_seconds: 60 });
    const destinationId = await createDestination(plus(), 'rotation');
    const created = await createExport(destinationId, {
      start_time: '2026-10-01T00:00:00Z',
      end_time: '2026-10-03T00:00:00Z',
    });
    await advance(0);
    expect((await getRuns(created.id)).map((run: { status: string }) => run.status)).toEqual(['Running', 'Created']);
    const rotated = await plus().patch(`/api/v1/bulk-exports/destinations/${destinationId}`, {
      credentials: credentialsOf(rotationKey()),
    });
    expect(rotated.status).toBe(200);
    for (let step = 0; step < 20 && (await getExport(created.id)).status === 'Running'; step++) await advance(60);
    expect((await getExport(created.id)).status).toBe('Completed');
    const runs = await getRuns(created.id);
    expect(runs[0].metadata.result.exported_files.length).toBeGreaterThan(1);
    const journal = (
      (await admin('GET', '/objstore/journal')).body as { operation: string; key: string | null; accessKeyId: string }[]
    ).filter((record) => record.operation === 'PutObject' && record.key?.includes(`export_id=${created.id}`));
    const writers = (day: number) =>
      new Set(journal.filter((record) => record.key!.includes(`/day=${day}/`)).map((record) => record.accessKeyId));
    expect(writers(1)).toEqual(new Set([oldKey.access_key_id]));
    expect(writers(2)).toEqual(new Set([rotationKey().access_key_id]));
  });
});
