import { describe, expect, it } from 'vitest';
import {
  createOnlyKey,
  credentialsOf,
  eventually,
  fullKey,
  useLocalplane,
  workspaceByTier,
  type FixtureKey,
} from '../support/instance.ts';
import { download, duckdb, listKeys, s3For } from '../support/objstore.ts';
import { inWindow, seededRuns } from '../support/source.ts';

const ctx = useLocalplane({ limits: { export_rows_per_file: 20_000, multipart_part_size_bytes: 5 * 1024 * 1024 } });
const plusWorkspace = () => workspaceByTier(ctx.fixtures, 'plus');
const plus = () => ctx.api.as(plusWorkspace());
const bigSession = () => plusWorkspace().sessions.find((session) => session.run_count >= 50_000)!;
const bucket = () => ctx.fixtures.objstore.buckets[0]!;
const window = { start_time: '2026-10-02T00:00:00Z', end_time: '2026-10-03T00:00:00Z' };

type JournalRecord = { operation: string; key: string | null; status: number };

async function exportWith(key: FixtureKey, prefix: string, compression = 'snappy') {
  const destination = await plus().post('/api/v1/bulk-exports/destinations', {
    display_name: prefix,
    config: { bucket_name: bucket(), prefix, endpoint_url: ctx.fixtures.objstore.endpoint_url },
    credentials: credentialsOf(key),
  });
  expect(destination.status).toBe(200);
  const created = await plus().post('/api/v1/bulk-exports', {
    bulk_export_destination_id: destination.body.id,
    session_id: bigSession().id,
    ...window,
    format_version: 'v2_beta',
    compression,
  });
  const finished = await eventually(async () => {
    const body = (await plus().get(`/api/v1/bulk-exports/${created.body.id}`)).body;
    return ['Completed', 'Failed'].includes(body.status) ? body : undefined;
  }, 'export');
  expect(finished.status).toBe('Completed');
  const journal = ((await ctx.admin.request('GET', '/objstore/journal')).body as JournalRecord[]).filter((record) =>
    record.key?.startsWith(`${prefix}/export_id=`),
  );
  return { exportId: created.body.id as string, journal };
}

describe('uploading large files', () => {
  it('uses multipart uploads above the part size, with a key that may', async () => {
    const { journal } = await exportWith(fullKey(ctx.fixtures), 'multipart', 'none');
    const operations = journal.map((record) => record.operation);
    expect(operations).toContain('CreateMultipartUpload');
    expect(operations.filter((operation) => operation === 'UploadPart').length).toBeGreaterThanOrEqual(2);
    expect(operations).toContain('CompleteMultipartUpload');
    expect(operations).not.toContain('PutObject');
    expect(operations).toContain('HeadObject');
  });

  it(
    'falls back to one PutObject for a key without multipart permission, and leaves tmp/ out of the export_id=* ' +
      'glob',
    async () => {
      const prefix = 'create-only-export';
      const { exportId, journal } = await exportWith(createOnlyKey(ctx.fixtures), prefix, 'none');
      expect(
        journal
          .filter((record) => record.operation === 'CreateMultipartUpload')
          .every((record) => record.status === 403),
      ).toBe(true);
      expect(journal.some((record) => record.operation === 'PutObject' && record.status === 200)).toBe(true);
      const s3 = s3For(ctx.instance.objstoreUrl, fullKey(ctx.fixtures));
      const keys = await listKeys(s3, bucket(), `${prefix}/`);
      const probes = keys.filter((key) => key.startsWith(`${prefix}/tmp/`));
      expect(probes).toHaveLength(1);
      expect(probes[0]).toMatch(/\.txt$/);
      const root = await download(s3, bucket(), keys);
      const [{ count }] = await duckdb<{ count: number }>(
        `SELECT count(*)::INTEGER AS count FROM read_parquet('${root}/${prefix}/export_id=*/**/*.parquet', ` +
          `hive_partitioning = true) WHERE export_id = '${exportId}'`,
      );
      expect(count).toBe(inWindow(seededRuns(bigSession().id), window.start_time, window.end_time).length);
      const [{ files }] = await duckdb<{ files: number }>(
        `SELECT count(*)::INTEGER AS files FROM glob('${root}/${prefix}/*/**')`,
      );
      const [{ exportFiles }] = await duckdb<{ exportFiles: number }>(
        `SELECT count(*)::INTEGER AS exportFiles FROM glob('${root}/${prefix}/export_id=*/**')`,
      );
      expect(files, 'a broad glob over the prefix matches tmp/').toBe(exportFiles + 1);
    },
  );
});
