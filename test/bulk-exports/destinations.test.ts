import { PutObjectCommand } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import {
  createOnlyKey,
  credentialsOf,
  fullKey,
  noCreateKey,
  useLocalplane,
  workspaceByTier,
  type FixtureKey,
} from '../support/instance.ts';
import { listKeys, s3For } from '../support/objstore.ts';
import { expectSchema } from '../support/openapi.ts';

const ctx = useLocalplane();
const plus = () => ctx.api.as(workspaceByTier(ctx.fixtures, 'plus'));
const enterprise = () => ctx.api.as(workspaceByTier(ctx.fixtures, 'enterprise'));
const bucket = () => ctx.fixtures.objstore.buckets[0]!;

function destination(
  key: FixtureKey,
  overrides: { prefix?: string; bucket_name?: string; endpoint_url?: string } = {},
) {
  return {
    destination_type: 'objstore',
    display_name: "Nightly export - team's bucket",
    config: {
      bucket_name: overrides.bucket_name ?? bucket(),
      prefix: overrides.prefix ?? 'traces/nightly',
      endpoint_url: overrides.endpoint_url ?? ctx.fixtures.objstore.endpoint_url,
    },
    credentials: credentialsOf(key),
  };
}

const DETAIL_PREFIX = 'Failed to validate objstore destination: ';

describe('POST /api/v1/bulk-exports/destinations', () => {
  it('validates with a test write, deletes the probe, and returns the destination without secrets', async () => {
    const key = fullKey(ctx.fixtures);
    const response = await plus().post('/api/v1/bulk-exports/destinations', destination(key, { prefix: 'full/probe' }));
    expect(response.status).toBe(200);
    expectSchema(response.body, 'BulkExportDestination');
    expect(response.body).toMatchObject({
      destination_type: 'objstore',
      tenant_id: workspaceByTier(ctx.fixtures, 'plus').id,
      credentials_keys: ['access_key_id', 'secret_access_key'],
      config: {
        bucket_name: bucket(),
        prefix: 'full/probe',
        endpoint_url: ctx.fixtures.objstore.endpoint_url,
        include_bucket_in_prefix: true,
      },
    });
    expect(response.body.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/);
    expect(response.text).not.toContain(key.secret_access_key);
    const journal = (await ctx.admin.request('GET', '/objstore/journal')).body as {
      operation: string;
      key: string;
      status: number;
    }[];
    const probe = journal.filter((record) => record.key?.startsWith('full/probe/tmp/'));
    expect(probe.map((record) => [record.operation, record.status])).toEqual([
      ['PutObject', 200],
      ['DeleteObject', 204],
    ]);
    expect(probe[0]!.key).toMatch(/^full\/probe\/tmp\/[0-9a-f-]+\.txt$/);
    expect(await listKeys(s3For(ctx.instance.objstoreUrl, key), bucket(), 'full/probe/')).toEqual([]);
  });

  it('leaves the probe in tmp/ when the key may create but not delete', async () => {
    const response = await plus().post(
      '/api/v1/bulk-exports/destinations',
      destination(createOnlyKey(ctx.fixtures), { prefix: 'create-only' }),
    );
    expect(response.status).toBe(200);
    const left = await listKeys(s3For(ctx.instance.objstoreUrl, fullKey(ctx.fixtures)), bucket(), 'create-only/');
    expect(left).toHaveLength(1);
    expect(left[0]).toMatch(/^create-only\/tmp\/[0-9a-f-]+\.txt$/);
  });

  it('is 400 Access denied when the key may not create objects (a real store refusal)', async () => {
    const response = await plus().post('/api/v1/bulk-exports/destinations', destination(noCreateKey(ctx.fixtures)));
    expect(response.status).toBe(400);
    expect(response.body.detail).toBe(
      `${DETAIL_PREFIX}An error occurred (AccessDenied) when calling the PutObject operation: Access denied.`,
    );
  });

  it('is 400 when the access key id does not exist (a real store refusal)', async () => {
    const unknown = { access_key_id: 'LPTESTNOSUCHKEY99999', secret_access_key: 'whatever-secret', permissions: [] };
    const response = await plus().post('/api/v1/bulk-exports/destinations', destination(unknown));
    expect(response.status).toBe(400);
    expect(response.body.detail).toMatch(
      /^Failed to validate objstore destination: .*Key ID you provided does not exist/,
    );
    expect(response.body.detail).toContain('InvalidAccessKeyId');
    expect(response.text).not.toContain('whatever-secret');
  });

  it('is 400 SignatureDoesNotMatch for a known access key id with a wrong secret (a real store refusal)', async () => {
    const wrongSecret = { ...fullKey(ctx.fixtures), secret_access_key: 'lp-test-secret-not-the-right-one' };
    const response = await plus().post('/api/v1/bulk-exports/destinations', destination(wrongSecret));
    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      detail:
        `${DETAIL_PREFIX}An error occurred (SignatureDoesNotMatch) when calling the PutObject operation: ` +
        ('The request signature we calculated does not match the signature you provided. Check your key and ' +
          'signing method.'),
    });
    expect(response.text).not.toContain(wrongSecret.secret_access_key);
  });

  it('validates with the store checking signatures on wall time, whatever the emulator clock says', async () => {
    await ctx.admin.request('POST', '/clock/freeze');
    await ctx.admin.request('POST', '/clock/set', { body: { time: '2031-01-01T00:00:00Z' } });
    try {
      const response = await plus().post(
        '/api/v1/bulk-exports/destinations',
        destination(fullKey(ctx.fixtures), { prefix: 'far-future' }),
      );
      expect(response.status).toBe(200);
    } finally {
      await ctx.admin.request('POST', '/clock/set', { body: { time: new Date().toISOString() } });
      await ctx.admin.request('POST', '/clock/unfreeze');
    }
  });

  it.each([
    ['malformed', 'not a url'],
    ['without a scheme', 'storage.example.com'],
    ['unreachable', 'http://127.0.0.1:9'],
  ])('is 400 Invalid endpoint for a %s endpoint_url', async (_, endpoint) => {
    const response = await plus().post(
      '/api/v1/bulk-exports/destinations',
      destination(fullKey(ctx.fixtures), { endpoint_url: endpoint }),
    );
    expect(response.status).toBe(400);
    expect(response.body.detail).toMatch(/^Failed to validate objstore destination: Invalid endpoint/);
  });

  it('is 400 Bucket is not valid for a bucket that does not exist', async () => {
    const response = await plus().post(
      '/api/v1/bulk-exports/destinations',
      destination(fullKey(ctx.fixtures), { bucket_name: 'no-such-bucket' }),
    );
    expect(response.status).toBe(400);
    expect(response.body.detail).toMatch(
      /^Failed to validate objstore destination: Bucket is not valid: .*NoSuchBucket/,
    );
  });

  it.each([
    ['access_denied', /Access denied/],
    ['unknown_key_id', /Key ID you provided does not exist/],
    ['invalid_endpoint', /Invalid endpoint/],
    ['invalid_bucket', /Bucket is not valid/],
  ])('fails with %s when the knob says so, only for the chosen workspace and count', async (error, message) => {
    const workspace = workspaceByTier(ctx.fixtures, 'plus');
    const armed = await ctx.admin.request('POST', '/faults/destination-validations', {
      body: { error, count: 2, workspace_id: workspace.id },
    });
    expect(armed.status).toBe(200);
    const body = destination(fullKey(ctx.fixtures), { prefix: `knob/${error}` });
    expect((await enterprise().post('/api/v1/bulk-exports/destinations', body)).status).toBe(200);
    for (let attempt = 0; attempt < 2; attempt++) {
      const failed = await plus().post('/api/v1/bulk-exports/destinations', body);
      expect(failed.status).toBe(400);
      expect(failed.body.detail).toMatch(new RegExp(`^${DETAIL_PREFIX}`));
      expect(failed.body.detail).toMatch(message);
    }
    expect((await plus().post('/api/v1/bulk-exports/destinations', body)).status).toBe(200);
  });

  it('scopes the knob to one endpoint when asked', async () => {
    await ctx.admin.request('POST', '/faults/destination-validations', {
      body: { error: 'access_denied', endpoint_url: 'http://elsewhere.invalid' },
    });
    expect((await plus().post('/api/v1/bulk-exports/destinations', destination(fullKey(ctx.fixtures)))).status).toBe(
      200,
    );
    await ctx.admin.request('DELETE', '/faults');
  });

  it.each([
    ['a missing display_name', { config: { bucket_name: 'exports' } }, ['body', 'display_name'], 'missing'],
    [
      'a display_name with a slash',
      { display_name: 'a/b', config: { bucket_name: 'exports' } },
      ['body', 'display_name'],
      'string_pattern_mismatch',
    ],
    ['a missing config', { display_name: 'x' }, ['body', 'config'], 'missing'],
    [
      'a two-letter bucket',
      { display_name: 'x', config: { bucket_name: 'ab' } },
      ['body', 'config', 'bucket_name'],
      'string_too_short',
    ],
    [
      'an unknown destination_type',
      { destination_type: 'ftp', display_name: 'x', config: {} },
      ['body', 'destination_type'],
      'enum',
    ],
    [
      'an empty access key id',
      { display_name: 'x', config: {}, credentials: { access_key_id: '', secret_access_key: 's' } },
      ['body', 'credentials', 'access_key_id'],
      'string_too_short',
    ],
  ])('is 422 for %s', async (_, body, loc, type) => {
    const response = await plus().post('/api/v1/bulk-exports/destinations', body);
    expect(response.status).toBe(422);
    expect(response.body.detail).toEqual(
      expect.arrayContaining([expect.objectContaining({ loc, type, msg: expect.any(String) })]),
    );
    expectSchema(response.body, 'HTTPValidationError');
  });

  it('is 422 json_invalid for a body that is not JSON', async () => {
    const response = await plus().request('POST', '/api/v1/bulk-exports/destinations', {
      rawBody: '{"display_name":',
      headers: { 'content-type': 'application/json' },
    });
    expect(response.status).toBe(422);
    expect(response.body.detail[0]).toMatchObject({
      type: 'json_invalid',
      loc: ['body', 16],
      ctx: { error: 'Expecting value' },
    });
  });
});

describe('reading, rotating and deleting destinations', () => {
  it('lists and gets destinations of the workspace only', async () => {
    const created = (
      await plus().post('/api/v1/bulk-exports/destinations', destination(fullKey(ctx.fixtures), { prefix: 'listed' }))
    ).body;
    const list = await plus().get('/api/v1/bulk-exports/destinations');
    expect(list.status).toBe(200);
    expectSchema(list.body, 'BulkExportDestination[]');
    expect(list.body.map((item: { id: string }) => item.id)).toContain(created.id);
    const one = await plus().get(`/api/v1/bulk-exports/destinations/${created.id}`);
    expect(one.status).toBe(200);
    expect(one.body).toEqual(created);
    const foreign = await enterprise().get(`/api/v1/bulk-exports/destinations/${created.id}`);
    expect(foreign.status).toBe(404);
    expect(
      (await enterprise().get('/api/v1/bulk-exports/destinations')).body.map((item: { id: string }) => item.id),
    ).not.toContain(created.id);
    const malformed = await plus().get('/api/v1/bulk-exports/destinations/not-a-uuid');
    expect(malformed.status).toBe(422);
    expect(malformed.body.detail[0]).toMatchObject({ type: 'uuid_parsing', loc: ['path', 'destination_id'] });
    const unknown = await plus().get('/api/v1/bulk-exports/destinations/00000000-0000-4000-8000-000000000000');
    expect(unknown.status).toBe(404);
  });

  it('rotates credentials after validating the new pair, and refuses a bad pair', async () => {
    const created = (
      await plus().post('/api/v1/bulk-exports/destinations', destination(fullKey(ctx.fixtures), { prefix: 'rotated' }))
    ).body;
    await ctx.admin.request('POST', '/clock/advance', { body: { seconds: 5 } });
    const refused = await plus().patch(`/api/v1/bulk-exports/destinations/${created.id}`, {
      credentials: credentialsOf(noCreateKey(ctx.fixtures)),
    });
    expect(refused.status).toBe(400);
    expect(refused.body.detail).toMatch(/Access denied/);
    const rotation = ctx.fixtures.objstore.keys.find((key) => key.access_key_id.includes('ROTATION'))!;
    const rotated = await plus().patch(`/api/v1/bulk-exports/destinations/${created.id}`, {
      credentials: credentialsOf(rotation),
    });
    expect(rotated.status).toBe(200);
    expectSchema(rotated.body, 'BulkExportDestination');
    expect(rotated.body.updated_at).not.toBe(created.updated_at);
    expect(rotated.text).not.toContain(rotation.secret_access_key);
    const journal = (await ctx.admin.request('GET', '/objstore/journal')).body as {
      key: string;
      accessKeyId: string;
    }[];
    expect(
      journal.some((record) => record.key?.startsWith('rotated/tmp/') && record.accessKeyId === rotation.access_key_id),
    ).toBe(true);
    const missing = await plus().patch(`/api/v1/bulk-exports/destinations/${created.id}`, {});
    expect(missing.status).toBe(422);
    expect(missing.body.detail[0]).toMatchObject({ loc: ['body', 'credentials'], type: 'missing' });
  });

  it('deletes with 204 and an empty body', async () => {
    const created = (
      await plus().post('/api/v1/bulk-exports/destinations', destination(fullKey(ctx.fixtures), { prefix: 'deleted' }))
    ).body;
    const deleted = await plus().delete(`/api/v1/bulk-exports/destinations/${created.id}`);
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expect((await plus().get(`/api/v1/bulk-exports/destinations/${created.id}`)).status).toBe(404);
    expect((await plus().delete(`/api/v1/bulk-exports/destinations/${created.id}`)).status).toBe(404);
  });

  it('never logs a secret', () => {
    const secrets = ctx.fixtures.objstore.keys.map((key) => key.secret_access_key);
    for (const line of ctx.logs) for (const secret of secrets) expect(line).not.toContain(secret);
  });
});

describe('objstore keys added at run time', () => {
  it('are real for the store: usable at once, refused once revoked, listed without secrets', async () => {
    const created = await ctx.admin.request('POST', '/objstore/keys', {
      body: {
        access_key_id: 'LPRUNTIMEKEY0000001',
        secret_access_key: 'runtime-secret-1',
        permissions: ['create', 'delete'],
      },
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      access_key_id: 'LPRUNTIMEKEY0000001',
      permissions: ['create', 'delete'],
      workspace_id: null,
    });
    const listed = await ctx.admin.request('GET', '/objstore/keys');
    expect(listed.body).toContainEqual({
      access_key_id: 'LPRUNTIMEKEY0000001',
      permissions: ['create', 'delete'],
      workspace_id: null,
    });
    expect(listed.text).not.toContain('secret');
    const runtimeKey = { access_key_id: 'LPRUNTIMEKEY0000001', secret_access_key: 'runtime-secret-1', permissions: [] };
    expect(
      (await plus().post('/api/v1/bulk-exports/destinations', destination(runtimeKey, { prefix: 'runtime' }))).status,
    ).toBe(200);
    expect(
      (await ctx.admin.request('POST', '/objstore/keys', { body: { ...runtimeKey, permissions: ['get'] } })).status,
    ).toBe(409);
    expect((await ctx.admin.request('DELETE', '/objstore/keys/LPRUNTIMEKEY0000001')).status).toBe(204);
    const revoked = await plus().post(
      '/api/v1/bulk-exports/destinations',
      destination(runtimeKey, { prefix: 'runtime' }),
    );
    expect(revoked.status).toBe(400);
    expect(revoked.body.detail).toMatch(/Key ID you provided does not exist/);
    expect((await ctx.admin.request('DELETE', '/objstore/keys/LPRUNTIMEKEY0000001')).status).toBe(404);
  });
});

describe('public buckets of the objstore', () => {
  it('are listed with the fixtures and readable without signing; other buckets are not', async () => {
    const { objstore } = ctx.fixtures;
    expect(objstore.public_buckets).toEqual(['public-datasets']);
    expect(objstore.buckets).toContain('public-datasets');
    const writer = s3For(ctx.instance.objstoreUrl, fullKey(ctx.fixtures));
    await writer.send(new PutObjectCommand({ Bucket: 'public-datasets', Key: 'open/data.csv', Body: 'a,b\n' }));

    const read = await fetch(`${ctx.instance.objstoreUrl}/public-datasets/open/data.csv`);
    expect([read.status, await read.text()]).toEqual([200, 'a,b\n']);
    const listing = await fetch(`${ctx.instance.objstoreUrl}/public-datasets?list-type=2`);
    expect(await listing.text()).toContain('<Key>open/data.csv</Key>');
    const write = await fetch(`${ctx.instance.objstoreUrl}/public-datasets/open/vandal.csv`, {
      method: 'PUT',
      body: 'x',
    });
    expect(write.status).toBe(403);
    const privateRead = await fetch(`${ctx.instance.objstoreUrl}/${bucket()}?list-type=2`);
    expect([privateRead.status, await privateRead.text()]).toEqual([
      403,
      expect.stringContaining('<Code>AccessDenied</Code>'),
    ]);
  });
});
