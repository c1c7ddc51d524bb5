/**
 * Response headers in the journal: kept for the API's, the admin-faulted and the objstore's
 * requests, secrets masked as a request's are, shown in the Requests view's detail, and matched
 * by the `response_header` filter of the list, count and find routes.
 */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { beforeEach, describe, expect, it } from 'vitest';
import { connect } from '../../src/index.ts';
import { requestsResponseSchema, type JournalEntry } from '../../src/journal/schemas.ts';
import { s3For } from '../support/objstore.ts';
import { fullKey, useLocalplane, workspaceByTier } from '../support/instance.ts';

const SESSION_SECRET = 'response-header-session-secret';
const TOKEN_SECRET = 'response-header-token-secret';

describe('response headers in the request journal', () => {
  const ctx = useLocalplane({ freezeClock: true });
  const acme = () => ctx.api.as(workspaceByTier(ctx.fixtures, 'plus'));
  const entry = async (id: number) => (await ctx.admin.request<JournalEntry>('GET', `/requests/${id}`)).body;
  const listed = async (query: string) => {
    const response = await ctx.admin.request('GET', `/requests${query}`);
    expect(response.status, response.text).toBe(200);
    return requestsResponseSchema.parse(response.body).requests;
  };

  beforeEach(async () => {
    await ctx.admin.request('POST', '/reset');
  });

  /** A fault rule's 503 with a Retry-After and two secret-bearing headers, answered once; the entry it made. */
  async function faulted(): Promise<JournalEntry> {
    const rule = await ctx.admin.request<{ id: string }>('POST', '/fault-rules', {
      body: {
        match: { path: '/api/v1/bulk-exports' },
        action: {
          status: 503,
          detail: 'try later',
          headers: {
            'Retry-After': '120',
            'Set-Cookie': `session=${SESSION_SECRET}`,
            'X-Upstream-Token': TOKEN_SECRET,
          },
        },
        count: 1,
      },
    });
    expect(rule.status, rule.text).toBe(201);
    const answer = await acme().get('/api/v1/bulk-exports');
    expect([answer.status, answer.headers.get('retry-after')]).toEqual([503, '120']);
    const [kept] = await listed('?fault_rule=any&order=desc&limit=1');
    expect(kept!.fault_rule_id).toBe(rule.body.id);
    return kept!;
  }

  it("keeps a fault rule's headers (Retry-After) with the response, secrets masked as a request's are", async () => {
    const kept = await faulted();
    expect(await entry(kept.id)).toEqual(kept);
    expect(kept.response.headers).toMatchObject({
      'retry-after': '120',
      'content-type': 'application/json',
      'set-cookie': '********',
      'x-upstream-token': '********',
      'x-localplane-fault-rule': kept.fault_rule_id,
    });
    expect(JSON.stringify(kept)).not.toContain(SESSION_SECRET);
    expect(JSON.stringify(kept)).not.toContain(TOKEN_SECRET);
  });

  it("keeps an API answer's and an objstore answer's headers", async () => {
    await acme().get('/api/v1/bulk-exports');
    const client = s3For(ctx.instance.objstoreUrl, fullKey(ctx.fixtures));
    await client.send(new PutObjectCommand({ Bucket: ctx.fixtures.objstore.buckets[0]!, Key: 'h/a.txt', Body: 'a' }));
    client.destroy();
    const [api, objstore] = await listed('');
    expect(api!.response.headers['content-type']).toBe('application/json');
    expect(objstore!.response.headers).toMatchObject({
      'x-amz-request-id': expect.stringMatching(/^[0-9A-F]{16}$/),
      etag: expect.stringMatching(/^"[0-9a-f]{32}"$/),
    });
  });

  it('shows them in the Requests view beside the request headers', async () => {
    const kept = await faulted();
    const pane = await (
      await fetch(`${ctx.instance.apiUrl}/ui/requests/${kept.id}`, { headers: { 'hx-request': 'true' } })
    ).text();
    const shown = /<h3>Response headers<\/h3><dl class="details mono">(.*?)<\/dl>/s.exec(pane)?.[1];
    expect(shown).toContain('<dt>retry-after</dt><dd>120</dd>');
    expect(shown).toContain('<dt>set-cookie</dt><dd>********</dd>');
    expect(pane.indexOf('<h3>Request headers</h3>')).toBeLessThan(pane.indexOf('<h3>Response headers</h3>'));
    expect(pane).not.toContain(SESSION_SECRET);
  });

  it('finds entries by a response header (any value, or the value as journalled) and no others', async () => {
    const kept = await faulted();
    await acme().get('/api/v1/bulk-exports');
    await ctx.api.request('GET', '/v2/deployments');
    const ids = (entries: JournalEntry[]) => entries.map((each) => each.id);

    expect(ids(await listed('?response_header=Retry-After'))).toEqual([kept.id]);
    expect(ids(await listed('?response_header=retry-after:120'))).toEqual([kept.id]);
    expect(await listed('?response_header=Retry-After:60')).toEqual([]);
    expect(ids(await listed('?response_header=Set-Cookie:********'))).toEqual([kept.id]);
    expect(await listed(`?response_header=Set-Cookie:session=${SESSION_SECRET}`)).toEqual([]);
    expect((await ctx.admin.request('GET', '/requests/count?response_header=Retry-After')).body).toMatchObject({
      count: 1,
    });
    const found = await ctx.admin.request('POST', '/requests/find', {
      body: { response_header: { name: 'Retry-After', value: '120' } },
    });
    expect(ids(requestsResponseSchema.parse(found.body).requests)).toEqual([kept.id]);

    const lp = connect(ctx.instance.apiUrl);
    expect(await lp.requests.count({ response_header: { name: 'Retry-After' } })).toBe(1);
    expect(ids(await lp.requests.list({ response_header: 'Retry-After:120' }))).toEqual([kept.id]);

    const refused = await ctx.admin.request('GET', '/requests?response_header=' + encodeURIComponent('bad name:1'));
    expect(refused.status).toBe(422);
    expect(refused.body.detail[0].loc).toEqual(['query', 'response_header']);
  });
});
