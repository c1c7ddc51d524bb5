import { describe, expect, it } from 'vitest';
import {
  credentialsOf,
  eventually,
  fullKey,
  useLocalplane,
  workspaceByTier,
  type WorkspaceApi,
} from '../support/instance.ts';
import { download, duckdb, listKeys, s3For } from '../support/objstore.ts';
import { expectSchema } from '../support/openapi.ts';
import { inWindow, seededRuns } from '../support/source.ts';
import { isTerminalStatus } from '../../src/bulk-exports/statuses.ts';

const ctx = useLocalplane();
const plusWorkspace = () => workspaceByTier(ctx.fixtures, 'plus');
const plus = () => ctx.api.as(plusWorkspace());
const enterprise = () => ctx.api.as(workspaceByTier(ctx.fixtures, 'enterprise'));
const bigSession = () => plusWorkspace().sessions.find((session) => session.run_count >= 50_000)!;
const smallSession = () => plusWorkspace().sessions.find((session) => session.run_count < 50_000)!;
const bucket = () => ctx.fixtures.objstore.buckets[0]!;

async function createDestination(client: WorkspaceApi, prefix: string): Promise<string> {
  const response = await client.post('/api/v1/bulk-exports/destinations', {
    destination_type: 'objstore',
    display_name: `dest ${prefix.replace(/\//g, ' ')}`,
    config: { bucket_name: bucket(), prefix, endpoint_url: ctx.fixtures.objstore.endpoint_url },
    credentials: credentialsOf(fullKey(ctx.fixtures)),
  });
  expect(response.status).toBe(200);
  return response.body.id;
}

async function waitForExport(client: WorkspaceApi, id: string) {
  return eventually(async () => {
    const response = await client.get(`/api/v1/bulk-exports/${id}`);
    return isTerminalStatus(response.body.status) ? response.body : undefined;
  }, `export ${id}`);
}

async function readBack(prefix: string, select: string, from = `${prefix}/export_id=*/**/*.parquet`) {
  const s3 = s3For(ctx.instance.objstoreUrl, fullKey(ctx.fixtures));
  const root = await download(s3, bucket(), await listKeys(s3, bucket(), `${prefix}/`));
  return {
    root,
    rows: await duckdb(select.replaceAll('$FILES', `read_parquet('${root}/${from}', hive_partitioning = true)`)),
  };
}

describe('a one-time export over three days of the big project', () => {
  const window = { start_time: '2026-10-01T06:00:00Z', end_time: '2026-10-04T00:00:00Z' };
  const prefix = 'warehouse/one-time';
  let exportId: string;

  it('is created, runs in the background and completes', async () => {
    const destinationId = await createDestination(plus(), prefix);
    const created = await plus().post('/api/v1/bulk-exports', {
      bulk_export_destination_id: destinationId,
      session_id: bigSession().id,
      ...window,
      format: 'Parquet',
      format_version: 'v2_beta',
      compression: 'snappy',
    });
    expect(created.status).toBe(200);
    expectSchema(created.body, 'BulkExport');
    expect(created.body).toMatchObject({
      status: 'Created',
      finished_at: null,
      source_bulk_export_id: null,
      interval_hours: null,
    });
    exportId = created.body.id;
    const finished = await waitForExport(plus(), exportId);
    expect(finished.status).toBe('Completed');
    expectSchema(finished, 'BulkExport');
    expect(finished.finished_at).not.toBeNull();
  });

  it('has one completed run per UTC day, tiling the window, with the exact row counts', async () => {
    const runs = await plus().get(`/api/v1/bulk-exports/${exportId}/runs`);
    expect(runs.status).toBe(200);
    expectSchema(runs.body, 'BulkExportRun[]');
    expect(runs.body.map((run: { start_time: string; end_time: string }) => [run.start_time, run.end_time])).toEqual([
      ['2026-10-01T06:00:00.000000+00:00', '2026-10-02T00:00:00.000000+00:00'],
      ['2026-10-02T00:00:00.000000+00:00', '2026-10-03T00:00:00.000000+00:00'],
      ['2026-10-03T00:00:00.000000+00:00', '2026-10-04T00:00:00.000000+00:00'],
    ]);
    const expected = inWindow(seededRuns(bigSession().id), window.start_time, window.end_time);
    let total = 0;
    for (const run of runs.body) {
      expect(run.status).toBe('Completed');
      expect(run.metadata.result.exported_files.length, 'several files per day').toBeGreaterThan(1);
      for (const file of run.metadata.result.exported_files) {
        expect(file).toMatch(
          new RegExp(
            `^${bucket()}/${prefix}/export_id=${exportId}/tenant_id=${plusWorkspace().id}` +
              `/session_id=${bigSession().id}/resource=runs/year=2026/month=10/day=[123]/[^/]+\\.parquet$`,
          ),
        );
      }
      total += run.metadata.result.rows_written;
      const one = await plus().get(`/api/v1/bulk-exports/${exportId}/runs/${run.id}`);
      expect(one.body).toEqual(run);
    }
    expect(total).toBe(expected.length);
  });

  it('wrote Parquet that a real reader finds: the window exactly, hive partitions, UTC timestamps, snappy', async () => {
    const expected = inWindow(seededRuns(bigSession().id), window.start_time, window.end_time);
    const { root, rows } = await readBack(prefix, 'SELECT id FROM $FILES ORDER BY id');
    expect(rows.length).toBe(expected.length);
    expect(rows.map((row) => row.id)).toEqual(expected.map((run) => run.id).sort());
    const files = `read_parquet('${root}/${prefix}/export_id=*/**/*.parquet', hive_partitioning = true)`;
    const columns = await duckdb<{ column_name: string; column_type: string }>(`DESCRIBE SELECT * FROM ${files}`);
    const types = Object.fromEntries(columns.map((column) => [column.column_name, column.column_type]));
    for (const partition of ['export_id', 'tenant_id', 'session_id', 'resource', 'year', 'month', 'day'])
      expect(types).toHaveProperty(partition);
    expect(types.start_time).toBe('TIMESTAMP WITH TIME ZONE');
    expect(types.first_token_time).toBe('TIMESTAMP WITH TIME ZONE');
    expect(types.is_root).toBe('BOOLEAN');
    const partitions = await duckdb(
      `SELECT DISTINCT export_id, resource, year::INTEGER AS year, month::INTEGER AS month, day::INTEGER AS day ` +
        `FROM ${files} ORDER BY day`,
    );
    expect(partitions).toEqual(
      [1, 2, 3].map((day) => ({ export_id: exportId, resource: 'runs', year: 2026, month: 10, day })),
    );
    const sample = expected.find((run) => run.first_token_time !== null)!;
    const [stored] = await duckdb<{ micros: string }>(
      `SELECT epoch_us(first_token_time)::VARCHAR AS micros FROM ${files} WHERE id = '${sample.id}'`,
    );
    expect(Number(stored!.micros)).toBe(sample.first_token_time);
    const codecs = await duckdb<{ compression: string }>(
      `SELECT DISTINCT compression FROM parquet_metadata('${root}/${prefix}/export_id=*/**/*.parquet')`,
    );
    expect(codecs.map((codec) => codec.compression)).toEqual(['SNAPPY']);
  });

  it('lists the export for its workspace only', async () => {
    const list = await plus().get('/api/v1/bulk-exports');
    expect(list.status).toBe(200);
    expectSchema(list.body, 'BulkExport[]');
    expect(list.body.map((item: { id: string }) => item.id)).toContain(exportId);
    expect((await enterprise().get(`/api/v1/bulk-exports/${exportId}`)).status).toBe(404);
    expect((await enterprise().get(`/api/v1/bulk-exports/${exportId}/runs`)).status).toBe(404);
    expect(
      (await plus().get(`/api/v1/bulk-exports/${exportId}/runs/00000000-0000-4000-8000-000000000000`)).status,
    ).toBe(404);
    const malformed = await plus().get(`/api/v1/bulk-exports/${exportId}/runs/nope`);
    expect(malformed.status).toBe(422);
    expect(malformed.body.detail[0]).toMatchObject({ type: 'uuid_parsing', loc: ['path', 'run_id'] });
  });
});

describe('formats, compressions, fields and filters', () => {
  it('writes v1 nanosecond timestamps, gzip, only the requested fields, only filtered runs', async () => {
    const prefix = 'formats/v1';
    const destinationId = await createDestination(plus(), prefix);
    const window = { start_time: '2026-10-01T00:00:00Z', end_time: '2026-10-03T00:00:00Z' };
    const created = await plus().post('/api/v1/bulk-exports', {
      bulk_export_destination_id: destinationId,
      session_id: smallSession().id,
      ...window,
      format_version: 'v1',
      compression: 'gzip',
      export_fields: ['start_time', 'id', 'run_type', 'name'],
      filter: 'and(eq(run_type, "llm"), gt(total_tokens, 0))',
    });
    expect(created.status).toBe(200);
    expect(created.body.export_fields).toEqual(['id', 'name', 'run_type', 'start_time']);
    expect((await waitForExport(plus(), created.body.id)).status).toBe('Completed');
    const expected = inWindow(seededRuns(smallSession().id), window.start_time, window.end_time).filter(
      (run) => run.run_type === 'llm' && (run.total_tokens ?? 0) > 0,
    );
    expect(expected.length).toBeGreaterThan(0);
    const { root, rows } = await readBack(prefix, 'SELECT id, run_type FROM $FILES');
    expect(rows.length).toBe(expected.length);
    expect(new Set(rows.map((row) => row.run_type))).toEqual(new Set(['llm']));
    const columns = await duckdb<{ column_name: string; column_type: string }>(
      `DESCRIBE SELECT * FROM read_parquet('${root}/${prefix}/export_id=*/**/*.parquet', hive_partitioning = false)`,
    );
    expect(columns.map((column) => column.column_name)).toEqual(['id', 'name', 'run_type', 'start_time']);
    expect(columns.find((column) => column.column_name === 'start_time')!.column_type).toBe('TIMESTAMP_NS');
    const codecs = await duckdb<{ compression: string }>(
      `SELECT DISTINCT compression FROM parquet_metadata('${root}/${prefix}/export_id=*/**/*.parquet')`,
    );
    expect(codecs.map((codec) => codec.compression)).toEqual(['GZIP']);
  });

  it.each([
    ['none', 'UNCOMPRESSED'],
    ['zstandard', 'ZSTD'],
  ])('honours compression %s', async (compression, codec) => {
    const prefix = `compression/${compression}`;
    const destinationId = await createDestination(plus(), prefix);
    const created = await plus().post('/api/v1/bulk-exports', {
      bulk_export_destination_id: destinationId,
      session_id: smallSession().id,
      start_time: '2026-10-02T00:00:00Z',
      end_time: '2026-10-02T06:00:00Z',
      format_version: 'v2_beta',
      compression,
    });
    expect((await waitForExport(plus(), created.body.id)).status).toBe('Completed');
    const { root } = await readBack(prefix, 'SELECT 1');
    const codecs = await duckdb<{ compression: string }>(
      `SELECT DISTINCT compression FROM parquet_metadata('${root}/${prefix}/export_id=*/**/*.parquet')`,
    );
    expect(codecs.map((entry) => entry.compression)).toEqual([codec]);
  });
});

describe('export request errors', () => {
  let destinationId: string;
  const body = (overrides: Record<string, unknown>) => ({
    bulk_export_destination_id: destinationId,
    session_id: smallSession().id,
    start_time: '2026-10-01T00:00:00Z',
    end_time: '2026-10-02T00:00:00Z',
    ...overrides,
  });

  it('prepares a destination', async () => {
    destinationId = await createDestination(plus(), 'errors');
  });

  it.each([
    ['both end_time and interval_hours', { interval_hours: 24 }, ['body'], 'value_error'],
    ['neither end_time nor interval_hours', { end_time: null }, ['body'], 'value_error'],
    ['interval_hours 0', { end_time: null, interval_hours: 0 }, ['body', 'interval_hours'], 'greater_than_equal'],
    ['interval_hours 169', { end_time: null, interval_hours: 169 }, ['body', 'interval_hours'], 'less_than_equal'],
    ['start after end', { start_time: '2026-10-03T00:00:00Z' }, ['body'], 'value_error'],
    ['an unknown format_version', { format_version: 'v3' }, ['body', 'format_version'], 'enum'],
    ['an unknown compression', { compression: 'lz4' }, ['body', 'compression'], 'enum'],
    ['a malformed start_time', { start_time: 'last tuesday' }, ['body', 'start_time'], 'datetime_parsing'],
    ['a malformed session_id', { session_id: 'abc' }, ['body', 'session_id'], 'uuid_parsing'],
    // session_id is optional beside all_experiments: leaving out both breaks the model's rule.
    ['a missing session_id without all_experiments', { session_id: undefined }, ['body'], 'value_error'],
    ['a session_id beside all_experiments', { all_experiments: true }, ['body'], 'value_error'],
  ])('is 422 for %s', async (_, overrides, loc, type) => {
    const response = await plus().post('/api/v1/bulk-exports', body(overrides));
    expect(response.status).toBe(422);
    expectSchema(response.body, 'HTTPValidationError');
    expect(response.body.detail).toEqual(expect.arrayContaining([expect.objectContaining({ loc, type })]));
  });

  it('is 404 for a destination or session that is not in the workspace', async () => {
    const enterpriseSession = workspaceByTier(ctx.fixtures, 'enterprise').sessions[0]!.id;
    const foreignSession = await plus().post('/api/v1/bulk-exports', body({ session_id: enterpriseSession }));
    expect(foreignSession.status).toBe(404);
    expect(foreignSession.body.detail).toMatch(/Session/);
    const unknownDestination = await plus().post(
      '/api/v1/bulk-exports',
      body({ bulk_export_destination_id: '00000000-0000-4000-8000-000000000001' }),
    );
    expect(unknownDestination.status).toBe(404);
    const foreignDestination = await enterprise().post('/api/v1/bulk-exports', body({ session_id: enterpriseSession }));
    expect(foreignDestination.status).toBe(404);
  });

  it('is 400 for an unparsable filter or an unknown export field', async () => {
    const filter = await plus().post('/api/v1/bulk-exports', body({ filter: 'and(eq(run_type, "llm")' }));
    expect(filter.status).toBe(400);
    expect(filter.body.detail).toMatch(/^Invalid filter: /);
    const fields = await plus().post('/api/v1/bulk-exports', body({ export_fields: ['id', 'colour'] }));
    expect(fields.status).toBe(400);
    expect(fields.body.detail).toMatch(/colour/);
  });

  it('is 422 for a malformed export id and 404 for an unknown one', async () => {
    const malformed = await plus().get('/api/v1/bulk-exports/12345');
    expect(malformed.status).toBe(422);
    expect(malformed.body.detail[0]).toMatchObject({ type: 'uuid_parsing', loc: ['path', 'bulk_export_id'] });
    expect((await plus().get('/api/v1/bulk-exports/00000000-0000-4000-8000-000000000002')).status).toBe(404);
    const runs = await plus().request('GET', '/api/v1/bulk-exports/runs');
    expect(runs.status).toBe(422);
    expect(runs.body.detail[0]).toMatchObject({ type: 'missing', loc: ['query', 'source_bulk_export_id'] });
  });
});
