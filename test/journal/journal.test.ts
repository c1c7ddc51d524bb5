import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { Hono } from 'hono';
import { beforeEach, describe, expect, it } from 'vitest';
import { FaultRules, faultRuleRequest } from '../../src/journal/fault-rules.ts';
import { RequestJournal } from '../../src/journal/journal.ts';
import { objstoreJournalSchema, type ObjstoreJournalRecord } from '../../src/journal/objstore-journal.ts';
import { RequestObserver } from '../../src/journal/observe.ts';
import { createClock } from '../../src/shared/clock.ts';
import { Needle } from '../../src/shared/needle.ts';
import {
  journalEntrySchema,
  requestCountResponseSchema,
  requestsResponseSchema,
  type JournalEntry,
} from '../../src/journal/schemas.ts';
import { s3For } from '../support/objstore.ts';
import { credentialsOf, fullKey, useLocalplane, workspaceByTier, type TestContext } from '../support/instance.ts';

const NOW = '2026-10-04T12:00:00Z';
const DESTINATION_SECRET = 'journal-test-destination-secret';

type Listed = { requests: JournalEntry[] };

/** The journal's requests for a query string, e.g. `?status=4xx`, checked against the response schema. */
async function listed(ctx: TestContext, query = ''): Promise<JournalEntry[]> {
  const response = await ctx.admin.request<Listed>('GET', `/requests${query}`);
  expect(response.status, response.text).toBe(200);
  const { requests } = requestsResponseSchema.parse(response.body);
  for (const entry of response.body.requests)
    expect(Object.keys(entry).sort()).toEqual(Object.keys(journalEntrySchema.shape).sort());
  return requests;
}

const ids = (entries: readonly JournalEntry[]) => entries.map((entry) => entry.id);

/** GET /_localplane/objstore/journal, checked against its response schema. */
async function objstoreJournal(ctx: TestContext): Promise<ObjstoreJournalRecord[]> {
  const response = await ctx.admin.request('GET', '/objstore/journal');
  expect(response.status, response.text).toBe(200);
  return objstoreJournalSchema.parse(response.body);
}

describe('the request journal', () => {
  const ctx = useLocalplane({ freezeClock: true });
  const acme = () => ctx.api.as(workspaceByTier(ctx.fixtures, 'plus'));
  const globex = () => ctx.api.as(workspaceByTier(ctx.fixtures, 'enterprise'));
  const bucket = () => ctx.fixtures.objstore.buckets[0]!;
  const s3 = () => s3For(ctx.instance.objstoreUrl, fullKey(ctx.fixtures));

  beforeEach(async () => {
    await ctx.admin.request('POST', '/reset');
    await ctx.admin.request('POST', '/clock/set', { body: { time: NOW } });
  });

  it('journals an API request: times, workspace, query, status, bodies, with the API key and credentials masked', async () => {
    const created = await acme().post('/api/v1/bulk-exports/destinations', {
      display_name: 'journalled',
      config: { bucket_name: bucket(), prefix: 'journalled', endpoint_url: ctx.fixtures.objstore.endpoint_url },
      credentials: { ...credentialsOf(fullKey(ctx.fixtures)), secret_access_key: DESTINATION_SECRET },
    });
    expect(created.status).toBe(400);
    await acme().get('/api/v1/bulk-exports?limit=3');

    const entries = await listed(ctx, '?source=api');
    expect(entries).toHaveLength(2);
    const [post, get] = entries as [JournalEntry, JournalEntry];
    expect(post).toMatchObject({
      id: expect.any(Number),
      time: '2026-10-04T12:00:00.000000+00:00',
      source: 'api',
      method: 'POST',
      path: '/api/v1/bulk-exports/destinations',
      query: {},
      status: 400,
      workspace_id: workspaceByTier(ctx.fixtures, 'plus').id,
      fault_rule_id: null,
      objstore: null,
    });
    expect(Date.parse(post.wall_time)).toBeGreaterThan(Date.parse(NOW));
    expect(post.duration_ms).toBeGreaterThanOrEqual(0);
    expect(post.request.headers['x-api-key']).toBe('********');
    expect(post.request.headers['x-tenant-id']).toBe(workspaceByTier(ctx.fixtures, 'plus').id);
    expect(JSON.parse(post.request.body.text!)).toMatchObject({ display_name: 'journalled', credentials: '********' });
    expect(post.request.body).toMatchObject({ content_type: 'application/json', truncated: false });
    expect(JSON.parse(post.response.body.text!)).toEqual(created.body);
    expect(post.response.body.content_type).toBe('application/json');
    expect(JSON.stringify(entries)).not.toContain(DESTINATION_SECRET);
    expect(JSON.stringify(entries)).not.toContain(workspaceByTier(ctx.fixtures, 'plus').api_key);
    expect(get).toMatchObject({ method: 'GET', path: '/api/v1/bulk-exports', query: { limit: '3' }, status: 200 });
    expect(get.id).toBeGreaterThan(post.id);
    expect(get.request.body).toEqual({ text: null, size: 0, content_type: null, truncated: false });
  });

  it(
    'keeps the head of an answer served from a cache as bytes: the first 8 KiB of a long one each time it is ' +
      'sent, a short one whole',
    async () => {
      const long = await acme().get('/v2/deployments?limit=20');
      const again = await acme().get('/v2/deployments?limit=20');
      const short = await acme().get('/v2/deployments?limit=1');
      expect(again.text).toBe(long.text);
      const longBytes = Buffer.from(long.text);
      expect(longBytes.length).toBeGreaterThan(8 * 1024);

      const [first, second, third] = await listed(ctx, '?source=api');
      for (const entry of [first!, second!]) {
        expect(entry.response.body).toEqual({
          text: longBytes.subarray(0, 8 * 1024).toString(),
          size: longBytes.length,
          content_type: 'application/json',
          truncated: true,
        });
      }
      expect(third!.response.body).toEqual({
        text: short.text,
        size: Buffer.byteLength(short.text),
        content_type: 'application/json',
        truncated: false,
      });
      const name = (short.body as { resources: { name: string }[] }).resources[0]!.name;
      expect(ids(await listed(ctx, `?response_body_contains=${encodeURIComponent(name)}`))).toContain(third!.id);
    },
  );

  it('shows a body sent to an endpoint with secret fields as the endpoint read it, and a refused one masked whole', async () => {
    const body = {
      display_name: 'misspelled',
      config: { bucket_name: bucket(), prefix: 'misspelled', endpoint_url: ctx.fixtures.objstore.endpoint_url },
      credentials: credentialsOf(fullKey(ctx.fixtures)),
      credentails: { secret_access_key: DESTINATION_SECRET },
    };
    await acme().post('/api/v1/bulk-exports/destinations', body);
    await acme().post('/api/v1/bulk-exports/destinations', { ...body, display_name: 7 });
    const [read, refused] = await listed(ctx, '?source=api');
    expect(JSON.parse(read!.request.body.text!)).toEqual({
      display_name: 'misspelled',
      config: body.config,
      credentials: '********',
    });
    expect(refused!.request.body.text).toBe('********');
  });

  it(
    'takes the workspace from X-Tenant-Id when the request is not authenticated, and does not journal ' +
      '/_localplane',
    async () => {
      const tenant = workspaceByTier(ctx.fixtures, 'enterprise').id;
      await ctx.api.request('GET', '/v2/deployments', { headers: { 'X-Tenant-Id': tenant.toUpperCase() } });
      await ctx.admin.request('GET', '/health');
      const entries = await listed(ctx);
      expect(entries).toHaveLength(1);
      expect(entries[0]).toMatchObject({ status: 401, workspace_id: tenant });
    },
  );

  it(
    'journals objstore requests with their operation, key and access key id; uploads are not copied, signatures ' +
      'are masked',
    async () => {
      const client = s3();
      await client.send(
        new PutObjectCommand({
          Bucket: bucket(),
          Key: 'journal/data.bin',
          Body: Buffer.alloc(20_000, 7),
          ContentType: 'application/octet-stream',
        }),
      );
      await expect(client.send(new GetObjectCommand({ Bucket: bucket(), Key: 'journal/missing' }))).rejects.toThrow();
      client.destroy();

      const entries = await listed(ctx, '?source=objstore');
      expect(entries.map((entry) => [entry.method, entry.status, entry.objstore?.operation])).toEqual([
        ['PUT', 200, 'PutObject'],
        ['GET', 404, 'GetObject'],
      ]);
      const [put, get] = entries as [JournalEntry, JournalEntry];
      expect(put).toMatchObject({
        path: `/${bucket()}/journal/data.bin`,
        workspace_id: null,
        objstore: {
          bucket: bucket(),
          key: 'journal/data.bin',
          access_key_id: fullKey(ctx.fixtures).access_key_id,
          error_code: null,
        },
      });
      expect(put.request.body).toEqual({
        text: null,
        size: 20_000,
        content_type: 'application/octet-stream',
        truncated: false,
      });
      expect(put.request.headers.authorization).toMatch(
        /^AWS4-HMAC-SHA256 Credential=\S+, SignedHeaders=\S+, Signature=\*{8}$/,
      );
      expect(get.objstore).toMatchObject({ error_code: 'NoSuchKey' });
      expect(get.response.body.text).toContain('<Code>NoSuchKey</Code>');
      expect(JSON.stringify(entries)).not.toContain(fullKey(ctx.fixtures).secret_access_key);
    },
  );

  it(
    'answers GET /objstore/journal with its objstore requests in the older shape; DELETE /requests, a restore ' +
      'and a reset empty it',
    async () => {
      const client = s3();
      const put = () => client.send(new PutObjectCommand({ Bucket: bucket(), Key: 'journal/alias.txt', Body: 'x' }));
      await put();
      await expect(client.send(new GetObjectCommand({ Bucket: bucket(), Key: 'journal/missing' }))).rejects.toThrow();
      await acme().get('/api/v1/bulk-exports');
      const [putEntry, getEntry] = (await listed(ctx, '?source=objstore')) as [JournalEntry, JournalEntry];
      const accessKeyId = fullKey(ctx.fixtures).access_key_id;
      expect(await objstoreJournal(ctx)).toEqual([
        {
          time: putEntry.wall_time,
          method: 'PUT',
          operation: 'PutObject',
          bucket: bucket(),
          key: 'journal/alias.txt',
          accessKeyId,
          status: 200,
          errorCode: null,
        },
        {
          time: getEntry.wall_time,
          method: 'GET',
          operation: 'GetObject',
          bucket: bucket(),
          key: 'journal/missing',
          accessKeyId,
          status: 404,
          errorCode: 'NoSuchKey',
        },
      ]);

      await ctx.admin.request('DELETE', '/requests');
      expect(await objstoreJournal(ctx)).toEqual([]);

      expect((await ctx.admin.request('POST', '/snapshot', { body: { name: 'journal.snapshot' } })).status).toBe(200);
      await put();
      expect(await objstoreJournal(ctx)).toHaveLength(1);
      expect((await ctx.admin.request('POST', '/restore', { body: { name: 'journal.snapshot' } })).status).toBe(200);
      expect(await objstoreJournal(ctx)).toEqual([]);

      await put();
      expect(await objstoreJournal(ctx)).toHaveLength(1);
      await ctx.admin.request('POST', '/reset');
      expect(await objstoreJournal(ctx)).toEqual([]);
      client.destroy();
    },
  );

  it('masks the session token and signature an S3 SignatureDoesNotMatch document quotes', async () => {
    const key = fullKey(ctx.fixtures);
    const client = s3For(ctx.instance.objstoreUrl, { ...key, secret_access_key: 'not-the-secret' });
    client.config.credentials = async () => ({
      accessKeyId: key.access_key_id,
      secretAccessKey: 'not-the-secret',
      sessionToken: 'session-token-value',
    });
    await expect(
      client.send(new PutObjectCommand({ Bucket: bucket(), Key: 'journal/denied.txt', Body: 'x' })),
    ).rejects.toThrow();
    client.destroy();
    const [entry] = await listed(ctx, '?source=objstore');
    expect(entry!.objstore?.error_code).toBe('SignatureDoesNotMatch');
    expect(entry!.response.body.text).toContain('<SignatureProvided>********</SignatureProvided>');
    expect(entry!.response.body.text).toContain('x-amz-security-token:********');
    expect(entry!.request.headers['x-amz-security-token']).toBe('********');
    expect(JSON.stringify(entry)).not.toContain('session-token-value');
    expect(JSON.stringify(entry)).not.toContain(Buffer.from('session-token-value').toString('hex'));
  });

  it('masks the signature and token of a presigned URL in the query', async () => {
    const query =
      'X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIDEXAMPLE%2F20261004%2Fus-east-1%2Fs3%2Faws4_request' +
      '&X-Amz-Signature=deadbeefcafe&X-Amz-Security-Token=token-value';
    await fetch(`${ctx.instance.objstoreUrl}/${bucket()}/presigned?${query}`);
    const [entry] = await listed(ctx, '?source=objstore');
    expect(entry!.query).toMatchObject({
      'X-Amz-Signature': '********',
      'X-Amz-Security-Token': '********',
      'X-Amz-Algorithm': 'AWS4-HMAC-SHA256',
    });
    expect(JSON.stringify(entry)).not.toContain('deadbeefcafe');
    expect(JSON.stringify(entry)).not.toContain('token-value');
  });

  it('keeps at most 8 KiB of a body and says it is truncated', async () => {
    const body = JSON.stringify({ filter: 'x'.repeat(20_000) });
    await acme().request('POST', '/api/v1/bulk-exports', {
      rawBody: body,
      headers: { 'content-type': 'application/json' },
    });
    const [entry] = await listed(ctx);
    expect(entry!.request.body).toMatchObject({ size: body.length, truncated: true });
    expect(entry!.request.body.text).toHaveLength(8 * 1024);
  });

  describe('filters', () => {
    /** Four API requests and one objstore request, in this order. */
    async function traffic() {
      await acme().get('/api/v1/bulk-exports');
      await globex().get('/v2/deployments');
      await acme().get('/api/v1/bulk-exports/destinations/00000000-0000-4000-8000-000000000000');
      await acme().request('POST', '/api/v1/bulk-exports', { body: { filter: 'needle-in-the-body' } });
      const client = s3();
      await client.send(new PutObjectCommand({ Bucket: bucket(), Key: 'filters/a.txt', Body: 'a' }));
      client.destroy();
    }

    it('since a sequence id or a time, limit, method, path glob, status, workspace, source, header, body text', async () => {
      await traffic();
      const all = await listed(ctx);
      expect(all).toHaveLength(5);
      const [first, second] = all as [JournalEntry, JournalEntry];

      expect(ids(await listed(ctx, `?since=${first.id}`))).toEqual(ids(all.slice(1)));
      expect(ids(await listed(ctx, `?since=${first.id}&limit=2`))).toEqual(ids(all.slice(1, 3)));
      expect(ids(await listed(ctx, '?limit=2'))).toEqual(ids(all.slice(3)));
      expect(await listed(ctx, '?since=2026-10-04T12:00:01Z')).toEqual([]);
      expect(ids(await listed(ctx, `?since=${encodeURIComponent('2026-10-04T12:00:00Z')}`))).toEqual(ids(all));
      expect((await listed(ctx, '?method=post')).map((entry) => entry.path)).toEqual(['/api/v1/bulk-exports']);
      expect(await listed(ctx, '?path=/api/v1/bulk-exports/*')).toHaveLength(0);
      expect(await listed(ctx, '?path=/api/v1/bulk-exports/*/*')).toHaveLength(1);
      expect(await listed(ctx, '?path=/api/v1/**')).toHaveLength(3);
      expect(await listed(ctx, `?path=/${bucket()}/**`)).toHaveLength(1);
      expect((await listed(ctx, '?status=404')).map((entry) => entry.path)).toEqual([
        '/api/v1/bulk-exports/destinations/00000000-0000-4000-8000-000000000000',
      ]);
      expect((await listed(ctx, '?status=4xx')).length).toBe(
        all.filter((entry) => entry.status >= 400 && entry.status < 500).length,
      );
      expect(ids(await listed(ctx, `?workspace_id=${workspaceByTier(ctx.fixtures, 'enterprise').id}`))).toEqual([
        second.id,
      ]);
      expect((await listed(ctx, '?source=objstore')).map((entry) => entry.objstore?.key)).toEqual(['filters/a.txt']);
      expect(ids(await listed(ctx, `?header=X-Tenant-Id:${workspaceByTier(ctx.fixtures, 'enterprise').id}`))).toEqual([
        second.id,
      ]);
      expect(await listed(ctx, '?header=x-amz-content-sha256')).toHaveLength(1);
      expect((await listed(ctx, '?body_contains=needle-in-the')).map((entry) => entry.method)).toEqual(['POST']);
      expect(await listed(ctx, '?method=GET&source=api&status=2xx')).toHaveLength(2);
    });

    it('newest first (order=desc): all, the newest N, the newest N after a since id; the JSON filter too', async () => {
      await traffic();
      const all = ids(await listed(ctx));
      const newestFirst = [...all].reverse();
      expect(ids(await listed(ctx, '?order=desc'))).toEqual(newestFirst);
      expect(ids(await listed(ctx, '?order=desc&limit=2'))).toEqual(newestFirst.slice(0, 2));
      expect(ids(await listed(ctx, `?order=desc&limit=2&since=${all[1]}`))).toEqual(newestFirst.slice(0, 2));
      expect(ids(await listed(ctx, `?order=desc&since=${all[2]}`))).toEqual(newestFirst.slice(0, 2));
      expect(ids(await listed(ctx, '?order=asc&limit=2'))).toEqual(all.slice(-2));
      expect(ids(await listed(ctx, '?order=desc&limit=2&source=api&method=GET'))).toEqual([all[2], all[1]]);
      const found = await ctx.admin.request<Listed>('POST', '/requests/find', {
        body: { order: 'desc', limit: 1, source: 'api' },
      });
      expect(ids(found.body.requests)).toEqual([all[3]]);
      expect(ids(ctx.instance.requests.list({ order: 'desc', limit: 1 }))).toEqual([all[4]]);
    });

    it('by the fault rule that fired, and by text in the response body or in either body', async () => {
      await traffic();
      const rule = (
        await ctx.admin.request('POST', '/fault-rules', {
          body: { match: { path: '/v2/**' }, action: { status: 503, detail: 'fault-in-the-answer' }, count: 1 },
        })
      ).body;
      await globex().get('/v2/deployments');
      await globex().get('/v2/deployments');
      const [faulted] = await listed(ctx, `?fault_rule=${rule.id}`);
      expect(faulted).toMatchObject({ status: 503, fault_rule_id: rule.id });
      expect(ids(await listed(ctx, '?fault_rule=any'))).toEqual([faulted!.id]);
      expect(await listed(ctx, '?fault_rule=fault-rule-99')).toEqual([]);
      expect(
        ids((await ctx.admin.request<Listed>('POST', '/requests/find', { body: { fault_rule: 'any' } })).body.requests),
      ).toEqual([faulted!.id]);

      expect(ids(await listed(ctx, '?response_body_contains=fault-in-the-answer'))).toEqual([faulted!.id]);
      expect(await listed(ctx, '?body_contains=fault-in-the-answer')).toEqual([]);
      expect(await listed(ctx, '?response_body_contains=needle-in-the-body')).toEqual([]);
      const [posted] = await listed(ctx, '?body_contains=needle-in-the-body');
      expect(ids(await listed(ctx, '?any_body_contains=needle-in-the-body'))).toEqual([posted!.id]);
      expect(ids(await listed(ctx, '?any_body_contains=fault-in-the-answer'))).toEqual([faulted!.id]);
      expect(ids(await listed(ctx, '?any_body_contains=destination%2000000000&order=desc&limit=1'))).toEqual(
        ids(await listed(ctx, '?status=404')),
      );
    });

    it("by an objstore request's S3 operation, bucket and key, as globs; API requests have none", async () => {
      await acme().get('/api/v1/bulk-exports');
      const client = s3();
      try {
        await client.send(
          new PutObjectCommand({ Bucket: bucket(), Key: 'hive/export_id=7/day=2026-10-01/part-0.parquet', Body: 'p' }),
        );
        await client.send(new PutObjectCommand({ Bucket: bucket(), Key: 'notes.parquet', Body: 'n' }));
        await client.send(new ListObjectsV2Command({ Bucket: bucket(), Prefix: 'hive/' }));
      } finally {
        client.destroy();
      }
      const operations = async (query: string) =>
        (await listed(ctx, query)).map((entry) => `${entry.objstore?.operation} ${entry.objstore?.key}`);
      expect(await operations('?operation=PutObject')).toEqual([
        'PutObject hive/export_id=7/day=2026-10-01/part-0.parquet',
        'PutObject notes.parquet',
      ]);
      expect(await operations('?operation=List*')).toEqual(['ListObjectsV2 null']);
      expect(await operations(`?bucket=${bucket()}&key=hive/**`)).toEqual([
        'PutObject hive/export_id=7/day=2026-10-01/part-0.parquet',
      ]);
      expect(await operations('?key=*.parquet'), 'a * stays within a segment').toEqual(['PutObject notes.parquet']);
      expect(await operations('?key=**.parquet')).toHaveLength(2);
      expect(await operations('?key=hive/export_id=*/**'), 'the key as decoded').toHaveLength(1);
      expect(await operations('?bucket=no-such-bucket')).toEqual([]);
      expect(await operations('?operation=*&source=api'), 'an API request has no operation').toEqual([]);
      const found = await ctx.admin.request<Listed>('POST', '/requests/find', {
        body: { operation: 'Put*', key: 'notes.*' },
      });
      expect(found.body.requests.map((entry) => entry.objstore?.key)).toEqual(['notes.parquet']);
      expect(ctx.instance.requests.count({ bucket: bucket(), operation: 'PutObject' })).toBe(2);
      for (const query of ['?operation=', `?key=${'*a'.repeat(33)}`])
        expect((await ctx.admin.request('GET', `/requests${query}`)).status, query).toBe(422);
    });

    it('by text in API answers sent over a socket or in process, within the head the journal keeps', async () => {
      const workspace = workspaceByTier(ctx.fixtures, 'plus');
      await acme().get('/api/v1/bulk-exports/destinations/caf%C3%A9-n%C3%A4del-over-a-socket');
      await ctx.instance.request('/api/v1/bulk-exports/destinations/caf%C3%A9-n%C3%A4del-in-process', {
        headers: { 'x-api-key': workspace.api_key },
      });
      // 4,100 two-byte characters: the marker lies within the first 8,192 characters, past the first 8,192 bytes.
      const past = `${'é'.repeat(4100)}-past-the-kept-head`;
      await acme().post('/api/v1/bulk-exports', { bulk_export_destination_id: past });
      const post = {
        method: 'POST',
        headers: { 'x-api-key': workspace.api_key, 'content-type': 'application/json' },
        body: JSON.stringify({ bulk_export_destination_id: past }),
      };
      await ctx.instance.request('/api/v1/bulk-exports', post);

      const found = await listed(ctx, `?response_body_contains=${encodeURIComponent('café-nädel')}`);
      expect(found.map((entry) => entry.path)).toEqual([
        '/api/v1/bulk-exports/destinations/caf%C3%A9-n%C3%A4del-over-a-socket',
        '/api/v1/bulk-exports/destinations/caf%C3%A9-n%C3%A4del-in-process',
      ]);
      expect(ids(await listed(ctx, '?any_body_contains=n%C3%A4del-in-process'))).toEqual([found[1]!.id]);
      expect(await listed(ctx, '?response_body_contains=-past-the-kept-head')).toEqual([]);
      const kept = await listed(ctx, '?method=POST');
      expect(kept.map((entry) => entry.response.body)).toEqual([
        expect.objectContaining({ truncated: true, text: expect.stringContaining('éé') }),
        expect.objectContaining({ truncated: true, text: expect.stringContaining('éé') }),
      ]);
      expect(kept.every((entry) => !entry.response.body.text!.includes('-past-the-kept-head'))).toBe(true);
      expect(ids(await listed(ctx, '?body_contains=-past-the-kept-head'))).toEqual(ids(kept));
    });

    it('one entry by its id (GET /requests/{id}), while the journal keeps it', async () => {
      await traffic();
      const all = await listed(ctx);
      for (const entry of all) {
        const response = await ctx.admin.request('GET', `/requests/${entry.id}`);
        expect(response.status).toBe(200);
        expect(journalEntrySchema.parse(response.body)).toEqual(entry);
      }
      const after = await ctx.admin.request('GET', `/requests/${all.at(-1)!.id + 1}`);
      expect(after.status).toBe(404);
      expect(after.body).toEqual({ detail: `Request ${all.at(-1)!.id + 1} not found in the journal` });
      await ctx.admin.request('DELETE', '/requests');
      expect((await ctx.admin.request('GET', `/requests/${all[0]!.id}`)).status).toBe(404);
      const bad = await ctx.admin.request('GET', '/requests/first');
      expect(bad.status).toBe(422);
      expect(bad.body.detail[0].loc).toEqual(['path', 'request_id']);
    });

    it('counts, finds with a JSON filter, and is emptied by DELETE with ids going on', async () => {
      await traffic();
      expect(
        requestCountResponseSchema.parse(
          (await ctx.admin.request('GET', '/requests/count?source=api&method=GET')).body,
        ),
      ).toEqual({ count: 3, journal: { capacity: 10_000, first_kept_id: 1, dropped: 0 } });
      const found = await ctx.admin.request<Listed>('POST', '/requests/find', {
        body: { status: 404, path: '/api/**', header: { name: 'x-api-key' } },
      });
      expect(found.status).toBe(200);
      expect(found.body.requests.map((entry) => entry.status)).toEqual([404]);
      expect(
        (await ctx.admin.request<Listed>('POST', '/requests/find', { body: { since: 4, limit: 1 } })).body.requests.map(
          (entry) => entry.id,
        ),
      ).toEqual([5]);
      // The header as the query gives it, `Name:value` or `Name`, in JSON and in code too.
      const tenant = workspaceByTier(ctx.fixtures, 'enterprise').id;
      const byHeader = (await listed(ctx, `?header=${encodeURIComponent(`X-Tenant-Id:${tenant}`)}`)).map(
        (entry) => entry.id,
      );
      expect(byHeader).toHaveLength(1);
      expect(
        (
          await ctx.admin.request<Listed>('POST', '/requests/find', { body: { header: `X-Tenant-Id:${tenant}` } })
        ).body.requests.map((entry) => entry.id),
      ).toEqual(byHeader);
      expect(ctx.instance.requests.count({ header: `X-Tenant-Id:${tenant}` })).toBe(1);
      expect(ctx.instance.requests.count({ header: 'X-Tenant-Id' })).toBe(
        ctx.instance.requests.count({ header: { name: 'x-tenant-id' } }),
      );
      expect(() => ctx.instance.requests.count({ header: 'not a header:x' })).toThrow(TypeError);

      expect((await ctx.admin.request('DELETE', '/requests')).status).toBe(204);
      expect(await listed(ctx)).toEqual([]);
      await acme().get('/api/v1/bulk-exports');
      expect(ids(await listed(ctx))).toEqual([6]);
    });

    it.each([
      ['?status=4x', 'status'],
      ['?status=600', 'status'],
      ['?since=yesterday', 'since'],
      ['?limit=0', 'limit'],
      ['?limit=many', 'limit'],
      ['?source=s3', 'source'],
      ['?workspace_id=acme', 'workspace_id'],
      ['?header=:value', 'header'],
      ['?path=api/**', 'path'],
      ['?stauts=404', 'stauts'],
      ['?order=newest', 'order'],
      ['?fault_rule=rule-1', 'fault_rule'],
      ['?response_body_contains=', 'response_body_contains'],
      ['?any_body_contains=', 'any_body_contains'],
    ])('answers a bad filter %s with a 422 at %s', async (query, field) => {
      for (const path of ['/requests', '/requests/count']) {
        const response = await ctx.admin.request('GET', `${path}${query}`);
        expect(response.status, response.text).toBe(422);
        expect(response.body.detail[0].loc).toEqual(['query', field]);
      }
    });

    it.each([
      [{ status: 99 }, 'status'],
      [{ since: -1 }, 'since'],
      [{ limit: 'ten' }, 'limit'],
      [{ header: 'not a header name' }, 'header'],
      [{ method: 'GET', extra: true }, 'extra'],
    ])('answers a bad find body %j with a 422 at %s', async (body, field) => {
      const response = await ctx.admin.request('POST', '/requests/find', { body });
      expect(response.status, response.text).toBe(422);
      expect(response.body.detail[0].loc[1]).toBe(field);
    });
  });

  it('is cleared by reset, ids from 1 again', async () => {
    await acme().get('/api/v1/bulk-exports');
    await acme().get('/api/v1/bulk-exports');
    expect(ids(await listed(ctx))).toEqual([1, 2]);
    await ctx.admin.request('POST', '/reset');
    expect(await listed(ctx)).toEqual([]);
    await acme().get('/api/v1/bulk-exports');
    expect(ids(await listed(ctx))).toEqual([1]);
  });

  it('is there in the programmatic API: list, find, count, clear', async () => {
    await acme().get('/api/v1/bulk-exports');
    await acme().get('/api/v1/bulk-exports/destinations');
    const { requests } = ctx.instance;
    expect(requests.count({ method: 'GET', path: '/api/v1/bulk-exports' })).toBe(1);
    expect(requests.count({ path: '/api/v1/bulk-exports/**' })).toBe(1);
    expect(requests.list().map((entry) => entry.path)).toEqual([
      '/api/v1/bulk-exports',
      '/api/v1/bulk-exports/destinations',
    ]);
    expect(requests.find({ status: '2xx', limit: 1 }).map((entry) => entry.path)).toEqual([
      '/api/v1/bulk-exports/destinations',
    ]);
    expect(() => requests.count({ status: 'teapot' })).toThrow(TypeError);
    requests.clear();
    expect(requests.count()).toBe(0);
  });
});

describe('the request journal bounds', () => {
  const ctx = useLocalplane({ journalCapacity: 3 });

  it('keeps the most recent requests only', async () => {
    for (let i = 0; i < 5; i++) await ctx.api.request('GET', `/api/v1/bulk-exports?page=${i}`);
    expect((await listed(ctx)).map((entry) => [entry.id, entry.query.page])).toEqual([
      [3, '2'],
      [4, '3'],
      [5, '4'],
    ]);
  });

  it('totals a page of every kept entry in its id range by the ids, as a filter that reads each entry totals it', async () => {
    for (let i = 0; i < 5; i++) await ctx.api.request('GET', `/api/v1/bulk-exports?page=${i}`);
    const total = async (query: string) => {
      const response = await ctx.admin.request<{ total: number }>('GET', `/requests?limit=1${query}`);
      expect(response.status, response.text).toBe(200);
      return response.body.total;
    };
    // The three kept (the ids go on from the file's earlier tests). `method=GET` matches each of them, so its total is
    // counted entry by entry.
    const [first, , last] = ids(await listed(ctx));
    const ranges = [
      '',
      `&before=${last}`,
      `&since=${first}`,
      `&since=${first}&before=${last}`,
      `&before=${first}`,
      `&before=${first! - 1}`,
      `&since=${last}`,
      `&since=${last! + 4}`,
    ];
    const totals = await Promise.all(ranges.map(total));
    expect(totals).toEqual([3, 2, 2, 1, 0, 0, 0, 0]);
    expect(await Promise.all(ranges.map((range) => total(`${range}&method=GET`)))).toEqual(totals);
    expect(await total(`&order=desc&since=${first! - 1}&before=${last! + 100}`)).toBe(3);
  });

  it('bounds the objstore requests of GET /objstore/journal with the API ones', async () => {
    const bucket = ctx.fixtures.objstore.buckets[0]!;
    for (const key of ['one', 'two']) await fetch(`${ctx.instance.objstoreUrl}/${bucket}/${key}`);
    for (let i = 0; i < 2; i++) await ctx.api.request('GET', '/api/v1/bulk-exports');
    expect((await objstoreJournal(ctx)).map((record) => record.key)).toEqual(['two']);
  });
});

describe('the journal and fault rules in process (app.request, no socket)', () => {
  const journal = new RequestJournal();
  const faultRules = new FaultRules(1, () => true);
  const observer = new RequestObserver({
    journal,
    faultRules,
    clock: createClock(),
    workspaceOfApiKey: () => null,
    requestLog: null,
    colour: false,
  });
  const app = new Hono();
  app.use('*', observer.api());
  app.get('/items/:id', (c) => c.json({ id: c.req.param('id') }));

  it('journals the request and applies the rules; a dropped connection is a body that fails to read', async () => {
    expect(await (await app.request('/items/7?x=1')).json()).toEqual({ id: '7' });
    expect(journal.list()).toMatchObject([
      {
        id: 1,
        method: 'GET',
        path: '/items/7',
        query: { x: '1' },
        status: 200,
        response: { body: { text: '{"id":"7"}' } },
      },
    ]);
    faultRules.add(faultRuleRequest.parse({ action: { drop_connection: true }, count: 1 }));
    const dropped = await app.request('/items/8');
    await expect(dropped.text()).rejects.toThrow('connection reset by a fault rule');
    expect(journal.list({ since: { id: 1 } })).toMatchObject([{ status: 499, fault_rule_id: 'fault-rule-1' }]);
  });
});

describe('a body filter looking in what an answer was decoded from', () => {
  it('rules out only a text that cannot hold the needle', () => {
    const needle = new Needle('nädel');
    expect(needle.mayBeIn('eine nädel')).toBe(true);
    expect(needle.mayBeIn('eine nadel')).toBe(false);
    expect(needle.mayBeIn(Buffer.from('\uFEFFeine nädel'))).toBe(true);
    expect(needle.mayBeIn(Buffer.from('eine nadel'))).toBe(false);
    // A lone surrogate written in a string is U+FFFD in the text the journal shows.
    expect(new Needle('a\uFFFDb').mayBeIn('a\uD800b')).toBe(true);
    expect(new Needle('a\uFFFDb').mayBeIn(Buffer.from('a\uD800b'))).toBe(true);
  });
});
