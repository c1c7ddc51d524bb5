import { beforeEach, describe, expect, it } from 'vitest';
import { codehostDeploymentBody } from '../support/deployments.ts';
import { exportClient, harness, statuses } from '../support/exports.ts';
import { useLocalplane, workspaceByTier } from '../support/instance.ts';

const ctx = useLocalplane({ freezeClock: true });
const acme = exportClient(ctx, () => workspaceByTier(ctx.fixtures, 'plus'));
const { admin, advance, tasks } = harness(ctx);

beforeEach(async () => {
  await admin('POST', '/reset');
});

async function createRevision(name: string) {
  const created = await acme
    .client()
    .post('/v2/deployments', codehostDeploymentBody(workspaceByTier(ctx.fixtures, 'plus'), name));
  expect(created.status).toBe(201);
  const status = async () =>
    (await acme.client().get(`/v2/deployments/${created.body.id}/revisions/${created.body.latest_revision_id}`)).body
      .status;
  return { status };
}

describe('start({freezeClock: true})', () => {
  it('holds a new export until the test advances the clock; advance(0) runs what is due now', async () => {
    const frozenAt = (await admin('GET', '/clock')).body;
    expect(frozenAt.frozen).toBe(true);
    const exportId = await acme.startExport(await acme.createDestination('held'), 'support-bot-staging', {
      start_time: '2026-10-01T00:00:00Z',
      end_time: '2026-10-03T00:00:00Z',
    });
    // Whatever is running has ended, and nothing due has started.
    await ctx.instance.clock.settle();
    expect((await acme.getExport(exportId)).status).toBe('Created');
    expect(statuses(await acme.getRuns(exportId))).toEqual(['Created', 'Created']);
    expect((await tasks()).map((task) => task.label)).toContain(
      `dispatch exports of workspace ${workspaceByTier(ctx.fixtures, 'plus').id}`,
    );

    await advance(0);
    expect((await admin('GET', '/clock')).body).toEqual(frozenAt);
    const finished = await acme.getExport(exportId);
    expect(finished.status).toBe('Completed');
    expect(finished.finished_at).toBe(frozenAt.now);
    expect(statuses(await acme.getRuns(exportId))).toEqual(['Completed', 'Completed']);
  });

  it('holds a revision in each step until the clock passes its duration', async () => {
    const revision = await createRevision('frozen-steps');
    await ctx.instance.clock.settle();
    expect(await revision.status()).toBe('CREATING');
    await advance(0);
    expect(await revision.status()).toBe('CREATING');
    await advance(1);
    expect(await revision.status()).toBe('QUEUED');
    await advance(9);
    expect(await revision.status()).toBe('DEPLOYED');
  });

  it('runs every task due within a bound, or advances to the next due task alone: what ran, in order', async () => {
    const start = Date.parse((await admin('GET', '/clock')).body.now);
    // The seeded revisions still in progress finish within the hour.
    const idle = await admin('POST', '/clock/run-until-idle', { within_seconds: 3600 });
    expect(idle.status, idle.text).toBe(200);
    expect(idle.body.ran.length).toBeGreaterThan(1);
    expect(idle.body.ran.every((task: { kind: string }) => task.kind === 'revision_step')).toBe(true);
    const dueTimes = idle.body.ran.map((task: { due_at: string }) => Date.parse(task.due_at));
    expect(dueTimes).toEqual([...dueTimes].sort((a, b) => a - b));
    expect(Date.parse(idle.body.now), 'the clock stands at the last task it ran').toBe(dueTimes.at(-1));
    expect(await tasks()).toEqual([]);
    expect((await admin('POST', '/clock/advance-to-next')).body).toEqual({ now: idle.body.now, frozen: true, ran: [] });

    const revision = await createRevision('run-until-idle');
    await ctx.instance.clock.settle();
    const next = await admin('POST', '/clock/advance-to-next');
    expect(next.body.ran).toEqual([expect.objectContaining({ kind: 'revision_step' })]);
    expect(Date.parse(next.body.now)).toBe(Date.parse(next.body.ran[0].due_at));
    expect(await revision.status()).toBe('QUEUED');
    // In code, the same, each task as GET /tasks showed it queued.
    const queued = (await tasks()).map(({ state: _, ...task }) => task);
    const ran = await ctx.instance.clock.runUntilIdle({ withinSeconds: 60 });
    expect(ran.length).toBeGreaterThan(1);
    expect(ran[0]).toEqual(queued[0]);
    for (const task of ran) expect(Object.keys(task).sort()).toEqual(Object.keys(queued[0]!).sort());
    expect(ran.map((task) => task.kind)).toEqual(ran.map(() => 'revision_step'));
    expect(await revision.status()).toBe('DEPLOYED');
    expect(await ctx.instance.clock.advanceToNext()).toEqual([]);
    expect(Date.parse((await admin('GET', '/clock')).body.now) - start).toBeLessThan(3600_000);
    expect((await admin('POST', '/clock/run-until-idle', { within_seconds: 0 })).status).toBe(422);
  });

  it('goes back to the wall time, frozen, on a reset of everything; keep_clock leaves it where it is', async () => {
    const set = '2031-02-03T04:05:06Z';
    await admin('POST', '/clock/set', { time: set });
    expect((await admin('POST', '/reset', { keep_clock: true })).status).toBe(200);
    expect((await admin('GET', '/clock')).body).toEqual({ now: '2031-02-03T04:05:06.000000+00:00', frozen: true });
    await ctx.instance.clock.advance(60);
    await ctx.instance.reset({ keepClock: true });
    expect((await admin('GET', '/clock')).body).toEqual({ now: '2031-02-03T04:06:06.000000+00:00', frozen: true });

    const before = Date.now();
    expect((await admin('POST', '/reset')).status).toBe(200);
    const reset = (await admin('GET', '/clock')).body;
    expect(reset.frozen).toBe(true);
    expect(Date.parse(reset.now)).toBeGreaterThanOrEqual(before - 1);
    expect(Date.parse(reset.now)).toBeLessThanOrEqual(Date.now());
    expect((await admin('POST', '/reset', { keep_clock: 'yes' })).status).toBe(422);
  });

  it('holds even instant revision steps until advance(0)', async () => {
    await admin('PATCH', '/config', { revision_step_seconds: 0 });
    const revision = await createRevision('frozen-instant');
    await ctx.instance.clock.settle();
    expect(await revision.status()).toBe('CREATING');
    await advance(0);
    expect(await revision.status()).toBe('DEPLOYED');
  });

  it('lets scheduled work move by itself again once the clock is unfrozen', async () => {
    await admin('PATCH', '/config', { revision_step_seconds: 0 });
    const exportId = await acme.startExport(await acme.createDestination('unfrozen'), 'support-bot-staging', {
      start_time: '2026-10-01T00:00:00Z',
      end_time: '2026-10-02T00:00:00Z',
    });
    const revision = await createRevision('unfrozen');
    await admin('POST', '/clock/unfreeze');
    await ctx.instance.clock.settle();
    expect((await acme.getExport(exportId)).status).toBe('Completed');
    expect(await revision.status()).toBe('DEPLOYED');
  });
});
