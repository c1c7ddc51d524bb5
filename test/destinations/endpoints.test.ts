import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';
import { DEFAULT_ENDPOINT_ALIASES, start } from '../../src/index.ts';
import { credentialsOf, fullKey, useLocalplane, workspaceByTier, type TestContext } from '../support/instance.ts';
import { listKeys, s3For } from '../support/objstore.ts';

interface JournalRecord {
  operation: string;
  key: string | null;
  accessKeyId: string | null;
  status: number;
}

const DETAIL_PREFIX = 'Failed to validate objstore destination: ';

function helpers(ctx: TestContext) {
  const plus = () => ctx.api.as(workspaceByTier(ctx.fixtures, 'plus'));
  const bucket = () => ctx.fixtures.objstore.buckets[0]!;
  const createDestination = (prefix: string, endpointUrl: string | undefined, key = fullKey(ctx.fixtures)) =>
    plus().post('/api/v1/bulk-exports/destinations', {
      display_name: `endpoint ${prefix.replace(/\//g, ' ')}`,
      config: { bucket_name: bucket(), prefix, ...(endpointUrl === undefined ? {} : { endpoint_url: endpointUrl }) },
      credentials: credentialsOf(key),
    });
  /** What the embedded objstore received under a prefix. */
  const journalUnder = async (prefix: string) =>
    ((await ctx.admin.request('GET', '/objstore/journal')).body as JournalRecord[]).filter((record) =>
      record.key?.startsWith(`${prefix}/`),
    );
  /** E1 succeeded, echoed the endpoint as given, and its probe was written and deleted in the embedded objstore. */
  async function expectServedByEmbeddedObjstore(prefix: string, endpointUrl: string | undefined) {
    const response = await createDestination(prefix, endpointUrl);
    expect(response.status, response.text).toBe(200);
    expect(response.body.config.endpoint_url ?? null).toBe(endpointUrl ?? null);
    const probe = await journalUnder(prefix);
    expect(probe.map((record) => [record.operation, record.status])).toEqual([
      ['PutObject', 200],
      ['DeleteObject', 204],
    ]);
    expect(probe[0]!.key).toMatch(new RegExp(`^${prefix}/tmp/[0-9a-f-]+\\.txt$`));
    return response.body;
  }
  return { plus, bucket, createDestination, journalUnder, expectServedByEmbeddedObjstore };
}

describe('production endpoints, with the default alias map', () => {
  const ctx = useLocalplane({ freezeClock: true });
  const { plus, bucket, createDestination, journalUnder, expectServedByEmbeddedObjstore } = helpers(ctx);

  it('lists the alias map in the fixtures', () => {
    expect(ctx.fixtures.objstore.endpoint_aliases).toEqual([...DEFAULT_ENDPOINT_ALIASES]);
  });

  it.each([
    ['omitted (the default cloud)', undefined],
    ['the standard storage endpoint of the reference flow', 'https://storage.googleapis.com'],
    ['the same with a trailing slash', 'https://storage.googleapis.com/'],
    ['the global S3 endpoint', 'https://s3.amazonaws.com'],
    ['a regional S3 endpoint', 'https://s3.eu-west-1.amazonaws.com'],
    ['a dual-stack S3 endpoint', 'https://s3.dualstack.us-west-2.amazonaws.com'],
    ['a legacy regional S3 endpoint', 'https://s3-ap-southeast-2.amazonaws.com'],
  ])('validates a destination whose endpoint is %s against the embedded objstore', async (_, endpointUrl) => {
    await expectServedByEmbeddedObjstore(`alias/${(endpointUrl ?? 'omitted').replace(/\W+/g, '-')}`, endpointUrl);
  });

  it(
    'exports to a https://storage.googleapis.com destination into the embedded bucket, and rotates its key pair ' +
      'there',
    async () => {
      const prefix = 'alias/gcs-export';
      const destination = await expectServedByEmbeddedObjstore(prefix, 'https://storage.googleapis.com');
      const workspace = workspaceByTier(ctx.fixtures, 'plus');
      await ctx.admin.request('POST', '/clock/set', { body: { time: '2026-10-10T00:00:00Z' } });
      const created = await plus().post('/api/v1/bulk-exports', {
        bulk_export_destination_id: destination.id,
        session_id: workspace.sessions.find((session) => session.run_count < 50_000)!.id,
        start_time: '2026-10-01T00:00:00Z',
        end_time: '2026-10-02T00:00:00Z',
        format_version: 'v2_beta',
        compression: 'snappy',
      });
      expect(created.status).toBe(200);
      await ctx.admin.request('POST', '/clock/advance', { body: { seconds: 0 } });
      expect((await plus().get(`/api/v1/bulk-exports/${created.body.id}`)).body.status).toBe('Completed');
      const [run] = (await plus().get(`/api/v1/bulk-exports/${created.body.id}/runs`)).body as {
        metadata: { result: { rows_written: number; exported_files: string[] } };
      }[];
      expect(run!.metadata.result.rows_written).toBeGreaterThan(0);
      const stored = await listKeys(
        s3For(ctx.instance.objstoreUrl, fullKey(ctx.fixtures)),
        bucket(),
        `${prefix}/export_id=`,
      );
      expect(stored.map((key) => `${bucket()}/${key}`)).toEqual(run!.metadata.result.exported_files);

      const rotation = ctx.fixtures.objstore.keys.find((key) => key.access_key_id.includes('ROTATION'))!;
      const rotated = await plus().patch(`/api/v1/bulk-exports/destinations/${destination.id}`, {
        credentials: credentialsOf(rotation),
      });
      expect(rotated.status).toBe(200);
      expect(rotated.body.config.endpoint_url).toBe('https://storage.googleapis.com');
      const probes = (await journalUnder(`${prefix}/tmp`)).filter(
        (record) => record.accessKeyId === rotation.access_key_id,
      );
      expect(probes.map((record) => [record.operation, record.status])).toEqual([
        ['PutObject', 200],
        ['DeleteObject', 204],
      ]);
    },
  );

  it.each([
    ['a trailing path', 'https://storage.googleapis.com/my-bucket'],
    ['no scheme', 'storage.googleapis.com'],
    ['no scheme, with a path', 'storage.googleapis.com/my-bucket'],
    ['http instead of https', 'http://storage.googleapis.com'],
    ['a port', 'https://storage.googleapis.com:8443'],
    ['two trailing slashes', 'https://storage.googleapis.com//'],
    ['a query', 'https://storage.googleapis.com?alt=json'],
    ['a trailing dot', 'https://storage.googleapis.com.'],
    ['a regional S3 endpoint with a path', 'https://s3.eu-west-1.amazonaws.com/exports'],
    ['the global S3 endpoint over http', 'http://s3.amazonaws.com'],
  ])(
    'refuses a near miss of a production endpoint (%s) as an invalid endpoint, without a request',
    async (_, endpointUrl) => {
      const prefix = `near-miss/${endpointUrl.replace(/\W+/g, '-')}`;
      const response = await createDestination(prefix, endpointUrl);
      expect(response.status).toBe(400);
      expect(response.body).toEqual({ detail: `${DETAIL_PREFIX}Invalid endpoint: ${endpointUrl}` });
      expect(await journalUnder(prefix)).toEqual([]);
    },
  );

  it('uses any other endpoint as given: unreachable is Could not connect', async () => {
    const response = await createDestination('elsewhere', 'http://127.0.0.1:9');
    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      detail: `${DETAIL_PREFIX}Invalid endpoint: Could not connect to the endpoint URL: "http://127.0.0.1:9"`,
    });
  });
});

describe('an alias map given to start()', () => {
  const aliases = ['https://minio.corp.example:9000', 'https://*.r2.cloudflarestorage.com'];
  const ctx = useLocalplane({ endpointAliases: aliases });
  const { createDestination, expectServedByEmbeddedObjstore } = helpers(ctx);

  it('replaces the defaults, as the fixtures show', () => {
    expect(ctx.fixtures.objstore.endpoint_aliases).toEqual(aliases);
  });

  it.each([
    ['an exact endpoint with a port', 'https://minio.corp.example:9000'],
    ['a pattern', 'https://0123456789abcdef.r2.cloudflarestorage.com'],
  ])('serves %s with the embedded objstore', async (_, endpointUrl) => {
    await expectServedByEmbeddedObjstore(`custom/${endpointUrl.replace(/\W+/g, '-')}`, endpointUrl);
  });

  it.each([
    'https://minio.corp.example',
    'https://minio.corp.example:9000/bucket',
    'http://abc.r2.cloudflarestorage.com',
  ])('refuses the near miss %s', async (endpointUrl) => {
    const response = await createDestination('custom/near-miss', endpointUrl);
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ detail: `${DETAIL_PREFIX}Invalid endpoint: ${endpointUrl}` });
  });

  it('refuses a malformed alias when starting, and leaves no temp dir behind', async () => {
    const scratch = mkdtempSync(join(tmpdir(), 'localplane-aliases-'));
    const tmpdirBefore = process.env.TMPDIR;
    process.env.TMPDIR = scratch;
    try {
      await expect(
        start({ port: 0, objstorePort: 0, endpointAliases: ['https://storage.example.com/path'], log: () => {} }),
      ).rejects.toThrow(/endpoint alias "https:\/\/storage.example.com\/path" must be/);
    } finally {
      if (tmpdirBefore === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = tmpdirBefore;
    }
    expect(readdirSync(scratch)).toEqual([]);
    rmSync(scratch, { recursive: true });
  });
});
