import { describe, expect, it } from 'vitest';
import { useLocalplane } from '../support/instance.ts';

const ctx = useLocalplane();

describe('harness endpoints', () => {
  it('reports health once ready', async () => {
    const response = await ctx.admin.request('GET', '/health');
    expect(response.status).toBe(200);
    expect(response.body.status).toBe('ok');
    expect(response.body.objstore_url).toBe(ctx.instance.objstoreUrl);
  });

  it('lists the seeded identities', async () => {
    const { workspaces, unknown_api_key, objstore } = ctx.fixtures;
    expect(workspaces.length).toBeGreaterThanOrEqual(3);
    expect(new Set(workspaces.map((workspace) => workspace.tier))).toEqual(
      new Set(['plus', 'enterprise', 'developer']),
    );
    expect(workspaces.map((workspace) => workspace.api_key)).not.toContain(unknown_api_key);
    const big = workspaces.flatMap((workspace) => workspace.sessions).find((session) => session.run_count >= 50_000);
    expect(big, 'a project of 50,000 runs or more').toBeDefined();
    const firstDay = Date.parse(big!.first_run_start_time);
    const lastDay = Date.parse(big!.last_run_start_time);
    expect(lastDay - firstDay).toBeGreaterThan(2 * 86_400_000);
    expect(objstore.endpoint_url).toBe(ctx.instance.objstoreUrl);
    expect(objstore.buckets.length).toBeGreaterThan(0);
    for (const key of objstore.keys) {
      expect(
        key.permissions.every((permission) => ['create', 'delete', 'get', 'multipart', 'buckets'].includes(permission)),
      ).toBe(true);
    }
  });

  it("counts a project's seeded and added runs together, and its first and last start times over both", async () => {
    const sessions = ctx.fixtures.workspaces.flatMap((workspace) => workspace.sessions);
    const seeded = sessions.find((session) => session.run_count > 0)!;
    const empty = sessions.find((session) => session.run_count === 0)!;
    const sessionNow = async (id: string) =>
      (await ctx.admin.request('GET', '/fixtures')).body.workspaces
        .flatMap((workspace: { sessions: unknown[] }) => workspace.sessions)
        .find((session: { id: string }) => session.id === id);
    const add = (id: string, start_time: string) =>
      ctx.admin.request('POST', `/sessions/${id}/runs`, { body: { count: 3, start_time, days: 1 } });
    const before = new Date(Date.parse(seeded.first_run_start_time) - 10 * 86_400_000).toISOString();
    const after = new Date(Date.parse(seeded.last_run_start_time) + 86_400_000).toISOString();

    expect((await add(seeded.id, before)).status).toBe(201);
    const earlier = await sessionNow(seeded.id);
    expect(earlier.run_count).toBe(seeded.run_count + 3);
    expect(Date.parse(earlier.first_run_start_time)).toBeLessThan(Date.parse(seeded.first_run_start_time));
    expect(earlier.last_run_start_time).toBe(seeded.last_run_start_time);
    expect((await add(seeded.id, after)).status).toBe(201);
    const later = await sessionNow(seeded.id);
    expect(later).toMatchObject({
      run_count: seeded.run_count + 6,
      first_run_start_time: earlier.first_run_start_time,
    });
    expect(Date.parse(later.last_run_start_time)).toBeGreaterThan(Date.parse(after));

    expect(empty).toMatchObject({ first_run_start_time: null, last_run_start_time: null });
    const added = await add(empty.id, after);
    expect(added.body.session).toMatchObject({ id: empty.id, run_count: 3 });
    expect(Date.parse(added.body.session.first_run_start_time)).toBeGreaterThanOrEqual(Date.parse(after));
    expect(await sessionNow(empty.id)).toEqual(added.body.session);
    await ctx.admin.request('POST', '/reset');
    expect(await sessionNow(seeded.id)).toEqual(seeded);
    expect(await sessionNow(empty.id)).toEqual(empty);
  });

  it('answers unknown paths with a detail 404', async () => {
    const response = await ctx.api.request('GET', '/nope');
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ detail: 'Not Found' });
  });

  it('resets to the seeded state', async () => {
    const workspace = ctx.fixtures.workspaces.find((candidate) => candidate.tier === 'plus')!;
    await ctx.admin.request('PUT', `/workspaces/${workspace.id}/tier`, { body: { tier: 'developer' } });
    const changed = (await ctx.admin.request('GET', '/fixtures')).body.workspaces.find(
      (w: { id: string }) => w.id === workspace.id,
    );
    expect(changed.tier).toBe('developer');
    await ctx.admin.request('POST', '/clock/freeze');
    expect((await ctx.admin.request('POST', '/reset')).status).toBe(200);
    const restored = (await ctx.admin.request('GET', '/fixtures')).body.workspaces.find(
      (w: { id: string }) => w.id === workspace.id,
    );
    expect(restored.tier).toBe('plus');
    expect((await ctx.admin.request('GET', '/clock')).body.frozen).toBe(false);
  });
});

describe('the clock knob', () => {
  it('freezes, sets and advances', async () => {
    await ctx.admin.request('POST', '/clock/freeze');
    const set = await ctx.admin.request('POST', '/clock/set', { body: { time: '2026-10-05T12:00:00Z' } });
    expect(set.body).toEqual({ now: '2026-10-05T12:00:00.000000+00:00', frozen: true });
    const advanced = await ctx.admin.request('POST', '/clock/advance', { body: { seconds: 90.5 } });
    expect(advanced.body.now).toBe('2026-10-05T12:01:30.500000+00:00');
    const bad = await ctx.admin.request('POST', '/clock/set', { body: { time: 'yesterday' } });
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0]).toMatchObject({ loc: ['body', 'time'], type: 'datetime_parsing' });
    await ctx.admin.request('POST', '/reset');
  });
});
