import {
  GetObjectCommand,
  HeadBucketCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { beforeEach, describe, expect, it } from 'vitest';
import { MAX_LATENCY_MS } from '../../src/journal/fault-rules.ts';
import { faultRuleResponseSchema, faultRulesResponseSchema, type JournalEntry } from '../../src/journal/schemas.ts';
import { exportClient, harness } from '../support/exports.ts';
import { s3For } from '../support/objstore.ts';
import { start } from '../../src/index.ts';
import { eventually, fullKey, useLocalplane, workspaceByTier } from '../support/instance.ts';

const ONE_DAY = { start_time: '2026-10-01T00:00:00Z', end_time: '2026-10-02T00:00:00Z' };

describe('fault rules', () => {
  const ctx = useLocalplane({ freezeClock: true });
  const { admin, advance } = harness(ctx);
  const plus = () => workspaceByTier(ctx.fixtures, 'plus');
  const acme = () => ctx.api.as(plus());
  const globex = () => ctx.api.as(workspaceByTier(ctx.fixtures, 'enterprise'));
  const bucket = () => ctx.fixtures.objstore.buckets[0]!;
  const addRule = async (rule: unknown) => {
    const response = await admin('POST', '/fault-rules', rule);
    expect(response.status, response.text).toBe(201);
    return faultRuleResponseSchema.parse(response.body);
  };
  const rules = async () => faultRulesResponseSchema.parse((await admin('GET', '/fault-rules')).body).rules;
  const journal = async (query = '') => (await admin('GET', `/requests${query}`)).body.requests as JournalEntry[];

  beforeEach(async () => {
    await admin('POST', '/reset');
    await admin('POST', '/clock/set', { time: '2026-10-10T00:00:00Z' });
  });

  it('are added, listed with their fired counts, removed one by one and all at once', async () => {
    const created = await admin('POST', '/fault-rules', {
      match: { method: 'get', path: '/v2/**' },
      action: { status: 503 },
      count: 2,
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: 'fault-rule-1',
      match: { method: 'get', path: '/v2/**' },
      action: { status: 503 },
      probability: 1,
      count: 2,
      checked: 0,
      fired: 0,
      remaining: 2,
    });
    await addRule({ match: { method: 'POST' }, action: { latency_ms: 1 } });
    await acme().get('/v2/deployments');
    await acme().get('/api/v1/bulk-exports');
    // The first rule fired on the first request (the second was not checked), and missed the second.
    expect((await rules()).map(({ id, checked, fired, remaining }) => ({ id, checked, fired, remaining }))).toEqual([
      { id: 'fault-rule-1', checked: 2, fired: 1, remaining: 1 },
      { id: 'fault-rule-2', checked: 1, fired: 0, remaining: null },
    ]);
    expect((await admin('DELETE', '/fault-rules/fault-rule-1')).status).toBe(204);
    expect((await rules()).map((rule) => rule.id)).toEqual(['fault-rule-2']);
    const missing = await admin('DELETE', '/fault-rules/fault-rule-1');
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ detail: 'Fault rule fault-rule-1 not found' });
    expect((await admin('DELETE', '/fault-rules')).status).toBe(204);
    expect(await rules()).toEqual([]);
  });

  it('answer with a status and detail for `count` requests, then are spent', async () => {
    await addRule({
      match: { method: 'GET', path: '/api/v1/bulk-exports' },
      action: { status: 429, detail: 'Slow down, test' },
      count: 2,
    });
    for (const expected of [429, 429, 200]) {
      const response = await acme().get('/api/v1/bulk-exports');
      expect(response.status).toBe(expected);
      if (expected === 429) expect(response.body).toEqual({ detail: 'Slow down, test' });
    }
    expect((await rules())[0]).toMatchObject({ fired: 2, remaining: 0 });
    expect((await journal()).map((entry) => [entry.status, entry.fault_rule_id])).toEqual([
      [429, 'fault-rule-1'],
      [429, 'fault-rule-1'],
      [200, null],
    ]);
  });

  it('match on workspace, header, method and path glob; other requests pass', async () => {
    await addRule({ match: { workspace_id: plus().id }, action: { status: 500 } });
    await addRule({
      match: { header: { name: 'X-Test-Case', value: 'broken' } },
      action: { status: 502, detail: 'bad gateway' },
    });
    await addRule({ match: { method: 'DELETE', path: '/v2/deployments/*' }, action: { status: 409 } });
    expect((await acme().get('/v2/deployments')).status).toBe(500);
    expect((await globex().get('/v2/deployments')).status).toBe(200);
    expect((await globex().request('GET', '/v2/deployments', { headers: { 'X-Test-Case': 'broken' } })).body).toEqual({
      detail: 'bad gateway',
    });
    expect((await globex().request('GET', '/v2/deployments', { headers: { 'X-Test-Case': 'fine' } })).status).toBe(200);
    const deleted = await globex().delete('/v2/deployments/00000000-0000-4000-8000-000000000000');
    expect(deleted.status).toBe(409);
    expect(deleted.body).toEqual({ detail: 'Conflict' });
    expect((await globex().delete('/v2/deployments/00000000-0000-4000-8000-000000000000/revisions')).status).not.toBe(
      409,
    );
  });

  it('never apply to /_localplane', async () => {
    await addRule({ match: { path: '/**' }, action: { status: 500 } });
    await addRule({ action: { drop_connection: true } });
    expect((await admin('GET', '/health')).status).toBe(200);
    expect((await rules()).map((rule) => rule.fired)).toEqual([0, 0]);
  });

  it('drop the connection: the client sees a reset and no reply', async () => {
    await addRule({ match: { source: 'api' }, action: { drop_connection: true }, count: 1 });
    const failure = await fetch(`${ctx.instance.apiUrl}/api/v1/bulk-exports`, {
      headers: { 'X-API-Key': plus().api_key },
    }).catch((error: Error) => error);
    expect(failure).toBeInstanceOf(TypeError);
    expect(((failure as TypeError).cause as NodeJS.ErrnoException).code).toBe('ECONNRESET');
    expect((await acme().get('/api/v1/bulk-exports')).status).toBe(200);
    expect((await journal())[0]).toMatchObject({ status: 499, fault_rule_id: 'fault-rule-1' });
  });

  it('answer with an empty reply: the connection closes without a byte', async () => {
    await addRule({ action: { empty_reply: true }, count: 1 });
    const failure = await fetch(`${ctx.instance.apiUrl}/api/v1/bulk-exports`, {
      headers: { 'X-API-Key': plus().api_key },
    }).catch((error: Error) => error);
    expect(failure).toBeInstanceOf(TypeError);
    expect(((failure as TypeError).cause as Error).message).toMatch(/other side closed/);
  });

  it('add a fixed latency, or one drawn from a distribution, then serve the request', async () => {
    await addRule({ match: { path: '/api/v1/bulk-exports' }, action: { latency_ms: 150 }, count: 1 });
    let startedAt = performance.now();
    expect((await acme().get('/api/v1/bulk-exports')).status).toBe(200);
    expect(performance.now() - startedAt).toBeGreaterThanOrEqual(140);

    await addRule({
      match: { path: '/api/v1/bulk-exports' },
      action: { latency: { distribution: 'uniform', min_ms: 100, max_ms: 120 } },
      count: 1,
    });
    startedAt = performance.now();
    expect((await acme().get('/api/v1/bulk-exports')).status).toBe(200);
    expect(performance.now() - startedAt).toBeGreaterThanOrEqual(90);

    await addRule({
      match: { path: '/api/v1/bulk-exports' },
      action: { latency: { distribution: 'normal', mean_ms: 5, stddev_ms: 1 } },
      count: 1,
    });
    expect((await acme().get('/api/v1/bulk-exports')).status).toBe(200);
    expect((await rules()).map((rule) => rule.fired)).toEqual([1, 1, 1]);
    expect((await journal()).map((entry) => entry.duration_ms >= 100)).toEqual([true, true, false]);
  });

  it('fire with their probability, the same way on every run of the same seed', async () => {
    const firings = async () => {
      await addRule({ action: { status: 503 }, probability: 0.5 });
      const statuses: number[] = [];
      for (let i = 0; i < 24; i++) statuses.push((await acme().get('/api/v1/bulk-exports')).status);
      return statuses;
    };
    const first = await firings();
    expect(first).toContain(503);
    expect(first).toContain(200);
    await admin('POST', '/reset');
    expect(await firings()).toEqual(first);
    await admin('POST', '/reset');
    await addRule({ action: { status: 503 }, probability: 0 });
    expect((await acme().get('/api/v1/bulk-exports')).status).toBe(200);
  });

  it('are cleared by reset, ids from 1 again', async () => {
    await addRule({ action: { status: 500 } });
    await admin('POST', '/reset');
    expect(await rules()).toEqual([]);
    expect((await acme().get('/api/v1/bulk-exports')).status).toBe(200);
    expect((await addRule({ action: { status: 500 } })).id).toBe('fault-rule-1');
  });

  it.each([
    [{}, ['body', 'action']],
    [{ action: {} }, ['body', 'action']],
    [{ action: { status: 500, latency_ms: 10 } }, ['body', 'action']],
    [{ action: { detail: 'no status' } }, ['body', 'action']],
    [{ action: { status: 200 } }, ['body', 'action', 'status']],
    [{ action: { latency_ms: -1 } }, ['body', 'action', 'latency_ms']],
    [{ action: { latency: { distribution: 'uniform', min_ms: 10, max_ms: 5 } } }, ['body', 'action']],
    [{ action: { latency: { distribution: 'pareto' } } }, ['body', 'action', 'latency', 'distribution']],
    [{ action: { drop_connection: false } }, ['body', 'action', 'drop_connection']],
    [{ action: { status: 500 }, probability: 2 }, ['body', 'probability']],
    [{ action: { status: 500 }, count: 0 }, ['body', 'count']],
    [{ action: { status: 500 }, match: { host: 'x' } }, ['body', 'match', 'host']],
    [{ action: { status: 500 }, match: { path: 'no-slash' } }, ['body', 'match', 'path']],
    [{ action: { status: 500 }, match: { source: 'db' } }, ['body', 'match', 'source']],
  ])('refuse %j with a 422 at %j', async (rule, loc) => {
    const response = await admin('POST', '/fault-rules', rule);
    expect(response.status, response.text).toBe(422);
    expect(response.body.detail[0].loc).toEqual(loc);
    expect(await rules()).toEqual([]);
  });

  it(
    'that could never fire are refused with a 422 naming why: the harness paths, a workspace that does not ' +
      'exist, a workspace on objstore requests',
    async () => {
      const refusal = async (match: object) => {
        const response = await admin('POST', '/fault-rules', { match, action: { status: 503 } });
        expect(response.status, JSON.stringify(match)).toBe(422);
        return response.body.detail as { loc: string[]; msg: string }[];
      };
      for (const path of ['/_localplane/reset', '/_localplane/**', '/ui', '/docs/**', '/openapi.json']) {
        expect(await refusal({ path }), path).toEqual([
          expect.objectContaining({ loc: ['body', 'match', 'path'], msg: expect.stringContaining('never faulted') }),
        ]);
      }
      const unknown = '00000000-0000-4000-8000-00000000abcd';
      expect(await refusal({ workspace_id: unknown })).toEqual([
        expect.objectContaining({
          loc: ['body', 'match', 'workspace_id'],
          msg: `Value error, there is no workspace ${unknown}: this rule would never fire`,
        }),
      ]);
      expect(await refusal({ source: 'objstore', workspace_id: plus().id })).toEqual([
        expect.objectContaining({
          loc: ['body', 'match', 'workspace_id'],
          msg: 'Value error, objstore requests belong to no workspace: this rule would never fire',
        }),
      ]);
      expect(() => ctx.instance.faultRules.add({ match: { workspace_id: unknown }, action: { status: 503 } })).toThrow(
        new TypeError(`match.workspace_id: Value error, there is no workspace ${unknown}: this rule would never fire`),
      );
      expect(await rules()).toEqual([]);
      // Paths that only begin like the harness's, a workspace in upper case, and an objstore bucket glob are rules like
      // any other.
      for (const match of [
        { path: '/uikit/**' },
        { path: '/docs-and-more' },
        { workspace_id: plus().id.toUpperCase() },
        { source: 'objstore', path: '/_localplane/**' },
      ]) {
        expect(
          (await admin('POST', '/fault-rules', { match, action: { status: 503 } })).status,
          JSON.stringify(match),
        ).toBe(201);
      }
    },
  );

  it('answer with headers beside their own (Retry-After) and, on the API, a JSON body of their own', async () => {
    await addRule({
      match: { path: '/v2/deployments' },
      action: {
        status: 429,
        headers: { 'Retry-After': '7', 'X-RateLimit-Remaining': '0' },
        body: { error: 'rate_limited', retry_in: 7 },
      },
      count: 1,
    });
    const limited = await fetch(`${ctx.instance.apiUrl}/v2/deployments`, { headers: { 'x-api-key': plus().api_key } });
    expect(limited.status).toBe(429);
    expect([
      limited.headers.get('retry-after'),
      limited.headers.get('x-ratelimit-remaining'),
      limited.headers.get('x-localplane-fault-rule'),
    ]).toEqual(['7', '0', 'fault-rule-1']);
    expect(await limited.json()).toEqual({ error: 'rate_limited', retry_in: 7 });
    expect((await acme().get('/v2/deployments')).status, 'spent').toBe(200);

    await addRule({
      match: { source: 'objstore' },
      action: { status: 503, headers: { 'Retry-After': '3' } },
      count: 1,
    });
    const slowed = await fetch(`${ctx.instance.objstoreUrl}/${bucket()}/any-key`);
    expect(slowed.status).toBe(503);
    expect(slowed.headers.get('retry-after')).toBe('3');
    expect(await slowed.text()).toMatch(/<Code>SlowDown<\/Code>/);
  });

  it.each([
    [{ status: 429, headers: { 'Content-Length': '5' } }, ['body', 'action', 'headers']],
    [{ status: 429, headers: { 'Retry-After': 'a\r\nSet-Cookie: x' } }, ['body', 'action', 'headers', 'Retry-After']],
    [{ status: 429, headers: { 'bad name': '1' } }, ['body', 'action', 'headers', 'bad name']],
    [{ latency_ms: 5, headers: { 'Retry-After': '1' } }, ['body', 'action']],
  ])('refuse the action %j with a 422 at %j', async (action, loc) => {
    const response = await admin('POST', '/fault-rules', { action });
    expect(response.status).toBe(422);
    expect(response.body.detail.map((detail: { loc: unknown[] }) => detail.loc)).toContainEqual(loc);
  });

  it('refuse a body on objstore answers, which are S3 error documents', async () => {
    const response = await admin('POST', '/fault-rules', {
      match: { source: 'objstore' },
      action: { status: 503, body: { no: 'xml' } },
    });
    expect(response.status).toBe(422);
    expect(response.body.detail).toEqual([
      expect.objectContaining({
        loc: ['body', 'action', 'body'],
        msg: expect.stringContaining('a body is for API answers'),
      }),
    ]);
  });

  it('are there in the programmatic API', async () => {
    const rule = ctx.instance.faultRules.add({ match: { path: '/api/**' }, action: { status: 418, detail: 'teapot' } });
    expect((await acme().get('/api/v1/bulk-exports')).status).toBe(418);
    expect(ctx.instance.faultRules.list()).toMatchObject([{ id: rule.id, fired: 1 }]);
    expect(ctx.instance.faultRules.remove(rule.id)).toBe(true);
    expect(ctx.instance.faultRules.remove(rule.id)).toBe(false);
    expect(() => ctx.instance.faultRules.add({ action: {} })).toThrow(TypeError);
    ctx.instance.faultRules.add({ action: { status: 500 } });
    ctx.instance.faultRules.clear();
    expect(ctx.instance.faultRules.list()).toEqual([]);
  });

  describe('on the objstore', () => {
    /** A PutObject through the SDK that a rule on `glob` answers 503 once: the SDK's retry stores it. */
    const putPastRule = async (glob: string, key: string) => {
      const s3 = s3For(ctx.instance.objstoreUrl, fullKey(ctx.fixtures));
      await addRule({ match: { source: 'objstore', method: 'PUT', path: glob }, action: { status: 503 }, count: 1 });
      try {
        const put = await s3.send(new PutObjectCommand({ Bucket: bucket(), Key: key, Body: 'parquet' }));
        expect(put.$metadata.attempts, 'the first attempt met the rule').toBe(2);
      } finally {
        s3.destroy();
      }
      return journal('?source=objstore&method=PUT');
    };

    it('answer an S3 client with an S3 error: the status, a code (SlowDown for 503 unless given) and the detail', async () => {
      const s3 = s3For(ctx.instance.objstoreUrl, fullKey(ctx.fixtures));
      await addRule({ match: { source: 'objstore', method: 'PUT' }, action: { status: 503 }, count: 1 });
      await addRule({
        match: { source: 'objstore', method: 'GET', path: `/${bucket()}/faulted/*` },
        action: { status: 500, code: 'InternalError', detail: 'injected' },
      });
      try {
        const put = await s3.send(new PutObjectCommand({ Bucket: bucket(), Key: 'faulted/a.txt', Body: 'a' }));
        expect(put.$metadata.attempts).toBe(2);
        const failure = await s3
          .send(new GetObjectCommand({ Bucket: bucket(), Key: 'faulted/a.txt' }), { requestTimeout: 5000 })
          .catch((error: unknown) => error);
        expect(failure).toBeInstanceOf(S3ServiceException);
        expect(failure).toMatchObject({
          name: 'InternalError',
          message: 'injected',
          $metadata: { httpStatusCode: 500 },
        });
      } finally {
        s3.destroy();
      }
      const objstore = await journal('?source=objstore');
      expect(
        objstore.slice(0, 2).map((entry) => [entry.status, entry.objstore?.error_code, entry.fault_rule_id]),
      ).toEqual([
        [503, 'SlowDown', 'fault-rule-1'],
        [200, null, null],
      ]);
      expect(objstore.at(-1)).toMatchObject({
        status: 500,
        fault_rule_id: 'fault-rule-2',
        objstore: { error_code: 'InternalError' },
      });
    });

    it("match the path as decoded too: a rule on export_id=* fires on the SDK's uploads, which send = as %3D", async () => {
      const [faulted, stored] = await putPastRule(
        `/${bucket()}/hive/export_id=*/**`,
        'hive/export_id=0a1b/day=2026-10-01/part-0.parquet',
      );
      expect(faulted).toMatchObject({
        status: 503,
        fault_rule_id: 'fault-rule-1',
        path: `/${bucket()}/hive/export_id%3D0a1b/day%3D2026-10-01/part-0.parquet`,
      });
      expect(stored).toMatchObject({ status: 200, fault_rule_id: null });
      // The journal's filters read paths the same way, encoded or decoded.
      for (const path of [
        `/${bucket()}/hive/export_id=*/**`,
        `/${bucket()}/hive/export_id%3D*/**`,
        `/${bucket()}/**/day=2026-10-01/*.parquet`,
      ]) {
        expect(
          (await journal(`?method=PUT&path=${encodeURIComponent(path)}`)).map((entry) => entry.status),
          path,
        ).toEqual([503, 200]);
      }
      expect(await journal(`?method=PUT&path=${encodeURIComponent(`/${bucket()}/hive/export_id=ff*/**`)}`)).toEqual([]);
    });

    it("name the faulted request's operation, bucket and key: the journal's filters on them find it", async () => {
      const key = 'named/export_id=0a1b/part-0.parquet';
      const [faulted, stored] = await putPastRule(`/${bucket()}/named/**`, key);
      expect(faulted).toMatchObject({ status: 503, fault_rule_id: 'fault-rule-1' });
      expect(faulted!.objstore).toMatchObject({
        operation: 'PutObject',
        bucket: bucket(),
        key,
        error_code: 'SlowDown',
      });
      expect(stored).toMatchObject({ status: 200, objstore: { operation: 'PutObject', bucket: bucket(), key } });
      const byPath = await journal(`?path=${encodeURIComponent(`/${bucket()}/named/**`)}`);
      expect(byPath.map((entry) => entry.id)).toEqual([faulted!.id, stored!.id]);
      for (const filter of [
        `key=${encodeURIComponent('named/export_id=*/**')}`,
        'operation=PutObject',
        `bucket=${encodeURIComponent(bucket())}&operation=Put*`,
      ]) {
        expect(
          (await journal(`?${filter}`)).map((entry) => entry.id),
          filter,
        ).toEqual(byPath.map((entry) => entry.id));
      }
    });

    it("match a bucket's own requests as /bucket and /bucket/ alike", async () => {
      const s3 = s3For(ctx.instance.objstoreUrl, fullKey(ctx.fixtures));
      try {
        await s3.send(new ListObjectsV2Command({ Bucket: bucket(), Prefix: 'none/' }));
        await s3.send(new HeadBucketCommand({ Bucket: bucket() }));
      } finally {
        s3.destroy();
      }
      const own = await journal('?source=objstore');
      expect(own.map((entry) => entry.objstore?.operation)).toEqual(['ListObjectsV2', 'HeadBucket']);
      for (const path of [`/${bucket()}`, `/${bucket()}/`])
        expect(await journal(`?source=objstore&path=${encodeURIComponent(path)}`), path).toEqual(own);
      expect(
        await journal(`?source=objstore&path=${encodeURIComponent(`/${bucket()}-other`)}`),
        'another bucket',
      ).toEqual([]);
      await addRule({
        match: { source: 'objstore', path: `/${bucket()}` },
        action: { status: 503, code: 'SlowDown' },
        count: 1,
      });
      const client = s3For(ctx.instance.objstoreUrl, fullKey(ctx.fixtures));
      try {
        const listed = await client.send(new ListObjectsV2Command({ Bucket: bucket(), Prefix: 'none/' }));
        expect(listed.$metadata.attempts).toBe(2);
      } finally {
        client.destroy();
      }
    });

    it('near misses: the requests no rule acted on, each beside the closest rule and the fields it missed', async () => {
      const nearMisses = async (query = '') => {
        const response = await admin('GET', `/fault-rules/near-misses${query}`);
        expect(response.status, response.text).toBe(200);
        return response.body.near_misses as {
          request: { id: number; method: string; path: string };
          rule_id: string;
          missed: { field: string; wanted: string; got: string | null }[];
        }[];
      };
      await acme().get('/v2/deployments');
      expect(await nearMisses(), 'no rules, no near misses').toEqual([]);
      const glob = `/${bucket()}/hive/export_id=ff*/**`;
      await addRule({ match: { source: 'objstore', method: 'PUT', path: glob }, action: { status: 503 } });
      await addRule({ match: { method: 'DELETE', path: '/v2/**' }, action: { status: 500 }, probability: 0 });
      const s3 = s3For(ctx.instance.objstoreUrl, fullKey(ctx.fixtures));
      try {
        await s3.send(new PutObjectCommand({ Bucket: bucket(), Key: 'hive/export_id=0a/part.parquet', Body: 'p' }));
      } finally {
        s3.destroy();
      }
      await acme().request('DELETE', '/v2/deployments/00000000-0000-4000-8000-000000000000');

      const [get, put, deleted] = await nearMisses();
      expect(get).toMatchObject({
        request: { method: 'GET', path: '/v2/deployments' },
        rule_id: 'fault-rule-2',
        missed: [{ field: 'method', wanted: 'DELETE', got: 'GET' }],
      });
      expect(put).toMatchObject({
        request: { method: 'PUT' },
        rule_id: 'fault-rule-1',
        missed: [
          {
            field: 'path',
            wanted: glob,
            got: `/${bucket()}/hive/export_id%3D0a/part.parquet (decoded /${bucket()}/hive/export_id=0a/part.parquet)`,
          },
        ],
      });
      expect(deleted, 'matched, but its probability is 0').toMatchObject({
        request: { method: 'DELETE' },
        rule_id: 'fault-rule-2',
        missed: [],
      });
      expect((await nearMisses(`?since=${put!.request.id}`)).map((miss) => miss.request.method)).toEqual(['DELETE']);
      expect(await nearMisses('?limit=1')).toHaveLength(1);
      expect((await admin('GET', '/fault-rules/near-misses?limit=0')).status).toBe(422);
    });

    it('drop the connection of an S3 client', async () => {
      const s3 = s3For(ctx.instance.objstoreUrl, fullKey(ctx.fixtures));
      await addRule({ match: { source: 'objstore' }, action: { drop_connection: true } });
      try {
        await expect(s3.send(new GetObjectCommand({ Bucket: bucket(), Key: 'anything' }))).rejects.toThrow(
          /ECONNRESET|socket hang up/,
        );
      } finally {
        s3.destroy();
      }
      expect((await journal('?source=objstore&status=499')).length).toBeGreaterThan(0);
    });

    it('a SlowDown on the Parquet upload makes the export run retry, then complete', async () => {
      const exports = exportClient(ctx, plus);
      const destinationId = await exports.createDestination('slowed-down');
      await addRule({
        match: { source: 'objstore', method: 'PUT', path: `/${bucket()}/slowed-down/**` },
        action: { status: 503, detail: 'Please reduce your request rate.' },
        count: 1,
      });
      const exportId = await exports.startExport(destinationId, 'support-bot-staging', ONE_DAY);
      await advance(0);
      let [run] = await exports.getRuns(exportId);
      expect(run).toMatchObject({ status: 'Running', retry_number: 1 });
      expect(run!.errors!.retry_0).toContain(
        'An error occurred (SlowDown) when calling the PutObject operation: Please reduce your request rate.',
      );
      await advance(30);
      [run] = await exports.getRuns(exportId);
      expect(run).toMatchObject({ status: 'Completed', retry_number: 1 });
      expect(
        ctx.instance.requests.count({
          source: 'objstore',
          method: 'PUT',
          path: `/${bucket()}/slowed-down/**`,
          status: 503,
        }),
      ).toBe(1);
    });
  });
});

describe('an added latency under way when the instance stops', () => {
  it('ends: the waiting requests get no reply, and nothing runs against the stopped instance', async () => {
    const logs: string[] = [];
    const instance = await start({ port: 0, objstorePort: 0, log: (line) => logs.push(line) });
    // The longest latency there is: a stop that waited it out would outlast the test's timeout.
    instance.faultRules.add({ action: { latency_ms: MAX_LATENCY_MS } });
    const outcome = (sent: Promise<Response>) =>
      sent.then(
        (response) => response.status,
        (error: unknown) => error,
      );
    const api = outcome(
      fetch(`${instance.apiUrl}/api/v1/bulk-exports`, { headers: { 'X-API-Key': 'lp_test_acme_plus_0001' } }),
    );
    const objstore = outcome(fetch(`${instance.objstoreUrl}/exports`));
    await eventually(async () => instance.faultRules.list()[0]!.fired === 2, 'both requests waiting');
    await instance.stop();
    expect(await api).toBeInstanceOf(TypeError);
    expect(await objstore).toBeInstanceOf(TypeError);
    // Each latency ended with the stop and its request was cut off (499) instead of served: had
    // one gone on, it would have met a closed database.
    await eventually(async () => instance.requests.count({ status: 499 }) === 2, 'both requests journalled as cut off');
    expect(
      instance.requests
        .list()
        .map((entry) => entry.source)
        .sort(),
    ).toEqual(['api', 'objstore']);
    expect(logs.filter((line) => line.includes('internal error'))).toEqual([]);
  });
});
