import { beforeEach, describe, expect, it } from 'vitest';
import { exportClient, harness } from '../support/exports.ts';
import { useLocalplane, workspaceByTier } from '../support/instance.ts';

const ctx = useLocalplane({ freezeClock: true });
const acme = exportClient(ctx, () => workspaceByTier(ctx.fixtures, 'plus'));
const globex = exportClient(ctx, () => workspaceByTier(ctx.fixtures, 'enterprise'));
const { admin, advance } = harness(ctx);
const ONE_HOUR = { start_time: '2026-10-01T00:00:00Z', end_time: '2026-10-01T01:00:00Z' };
const RATE_LIMITED = 'Rate limit exceeded: a workspace may create at most 3 bulk exports per hour. Try again later.';

beforeEach(async () => {
  await admin('POST', '/reset');
  await admin('POST', '/clock/set', { time: '2026-10-10T00:00:00Z' });
});

describe('export creates per rolling hour', () => {
  it(
    'answers 429 past the limit, stores nothing, counts per workspace, and accepts again once the oldest create ' +
      'is an hour old',
    async () => {
      expect((await admin('GET', '/config')).body).toMatchObject({
        export_creates_per_hour: 250,
        recurring_exports_per_workspace: 200,
      });
      await admin('PATCH', '/config', { export_creates_per_hour: 3 });
      const destinationId = await acme.createDestination('rate');
      await acme.startExport(destinationId, 'support-bot-staging', ONE_HOUR);
      await advance(600);
      await acme.startExport(destinationId, 'support-bot-staging', ONE_HOUR);
      await acme.startExport(destinationId, 'support-bot-staging', ONE_HOUR);
      const refused = await acme.createExport(destinationId, 'support-bot-staging', ONE_HOUR);
      expect(refused.status).toBe(429);
      expect(refused.body).toEqual({ detail: RATE_LIMITED });
      expect(await acme.listExports()).toHaveLength(3);
      const recurring = await acme.createExport(destinationId, 'support-bot-staging', {
        start_time: '2026-10-01T00:00:00Z',
        interval_hours: 24,
      });
      expect(recurring.status).toBe(429);

      await globex.startExport(await globex.createDestination('rate-other'), 'research-agent', ONE_HOUR);

      // The first create was at 00:00, the others at 00:10: one slot frees at 01:00.
      await advance(3000 - 1);
      expect((await acme.createExport(destinationId, 'support-bot-staging', ONE_HOUR)).status).toBe(429);
      await advance(1);
      await acme.startExport(destinationId, 'support-bot-staging', ONE_HOUR);
      expect((await acme.createExport(destinationId, 'support-bot-staging', ONE_HOUR)).status).toBe(429);
      expect(await acme.listExports()).toHaveLength(4);
    },
  );

  it('says in Retry-After the seconds until the rolling hour frees a slot, rounded up, on the emulator clock', async () => {
    await admin('PATCH', '/config', { export_creates_per_hour: 2 });
    const destinationId = await acme.createDestination('retry-after');
    await acme.startExport(destinationId, 'support-bot-staging', ONE_HOUR);
    await advance(600.25);
    await acme.startExport(destinationId, 'support-bot-staging', ONE_HOUR);
    await advance(0.5);
    // The first create, at 00:00:00, is an hour old at 01:00:00, 2,999.25 s from 00:10:00.75.
    const refused = await acme.createExport(destinationId, 'support-bot-staging', ONE_HOUR);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('3000');

    await advance(3000 - 1);
    const stillRefused = await acme.createExport(destinationId, 'support-bot-staging', ONE_HOUR);
    expect([stillRefused.status, stillRefused.headers.get('retry-after')]).toEqual([429, '1']);
    await advance(1);
    await acme.startExport(destinationId, 'support-bot-staging', ONE_HOUR);
    // At 01:00:00.75 the create of 00:10:00.25 fills the hour: it is an hour old 599.5 s on.
    expect((await acme.createExport(destinationId, 'support-bot-staging', ONE_HOUR)).headers.get('retry-after')).toBe(
      '600',
    );

    const documented = (await ctx.api.request('GET', '/openapi.json')).body.paths['/api/v1/bulk-exports'].post
      .responses['429'];
    expect(documented.headers['Retry-After'].schema).toEqual({ type: 'integer', minimum: 1 });
  });

  it(
    'counts Retry-After from the create that fills the hour when the limit is lowered, and sends none when no ' +
      'create ever fits',
    async () => {
      const destinationId = await acme.createDestination('retry-after-lowered');
      for (let create = 0; create < 3; create++) {
        await acme.startExport(destinationId, 'support-bot-staging', ONE_HOUR);
        await advance(600);
      }
      await admin('PATCH', '/config', { export_creates_per_hour: 2 });
      // Creates at 00:00, 00:10 and 00:20; at 00:30 a create fits once the one of 00:10 is an hour old.
      expect((await acme.createExport(destinationId, 'support-bot-staging', ONE_HOUR)).headers.get('retry-after')).toBe(
        '2400',
      );
      await advance(2400);
      await acme.startExport(destinationId, 'support-bot-staging', ONE_HOUR);

      await admin('PATCH', '/config', { export_creates_per_hour: 0 });
      const never = await acme.createExport(destinationId, 'support-bot-staging', ONE_HOUR);
      expect([never.status, never.headers.has('retry-after')]).toEqual([429, false]);
    },
  );

  it('does not count the children a recurring export spawns', async () => {
    await admin('PATCH', '/config', { export_creates_per_hour: 2 });
    await admin('POST', '/clock/set', { time: '2026-10-01T00:00:00Z' });
    const destinationId = await acme.createDestination('rate-children');
    const parent = await acme.startExport(destinationId, 'support-bot-staging', {
      start_time: '2026-10-01T00:00:00Z',
      interval_hours: 1,
    });
    // Children spawn at 01:10, 02:10 and 03:10; the parent's create is then over an hour old.
    await advance(3 * 3600 + 600);
    const children = (await acme.listExports()).filter((item) => item.id !== parent);
    expect(children).toHaveLength(3);
    await acme.startExport(destinationId, 'support-bot-staging', ONE_HOUR);
    await acme.startExport(destinationId, 'support-bot-staging', ONE_HOUR);
    expect((await acme.createExport(destinationId, 'support-bot-staging', ONE_HOUR)).status).toBe(429);
  });

  it('starts counting afresh after a reset', async () => {
    await admin('PATCH', '/config', { export_creates_per_hour: 1 });
    await acme.startExport(await acme.createDestination('rate-reset'), 'support-bot-staging', ONE_HOUR);
    await admin('POST', '/reset');
    await admin('POST', '/clock/set', { time: '2026-10-10T00:00:00Z' });
    await admin('PATCH', '/config', { export_creates_per_hour: 1 });
    await acme.startExport(await acme.createDestination('rate-reset'), 'support-bot-staging', ONE_HOUR);
  });
});

describe('active recurring exports', () => {
  it('answers 429 past the limit of the workspace, stores nothing, and accepts again once one is cancelled', async () => {
    await admin('PATCH', '/config', { recurring_exports_per_workspace: 2 });
    const destinationId = await acme.createDestination('recurring-limit');
    const recurring = { start_time: '2026-10-01T00:00:00Z', interval_hours: 24 };
    const first = await acme.startExport(destinationId, 'support-bot-staging', recurring);
    await acme.startExport(destinationId, 'support-bot-staging', recurring);
    const refused = await acme.createExport(destinationId, 'support-bot-staging', recurring);
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({
      detail:
        'Too many recurring bulk exports: a workspace may have at most 2 active at once. Cancel one before ' +
        'creating another.',
    });
    // No time frees this slot, only a cancel.
    expect(refused.headers.has('retry-after')).toBe(false);
    expect(await acme.listExports()).toHaveLength(2);
    // One-time exports are not limited by it, nor other workspaces.
    await acme.startExport(destinationId, 'support-bot-staging', ONE_HOUR);
    await globex.startExport(await globex.createDestination('recurring-other'), 'research-agent', recurring);

    expect((await acme.client().patch(`/api/v1/bulk-exports/${first}`, { status: 'Cancelled' })).status).toBe(200);
    await acme.startExport(destinationId, 'support-bot-staging', recurring);
  });
});

describe('the limits in the config', () => {
  it('refuses limits that are not whole numbers in range', async () => {
    for (const patch of [
      { export_creates_per_hour: -1 },
      { recurring_exports_per_workspace: 1.5 },
      { concurrent_runs_per_export: 0 },
      { concurrent_exports_per_workspace: 'many' },
    ]) {
      const response = await admin('PATCH', '/config', patch);
      expect(response.status).toBe(422);
      expect(response.body.detail[0].loc).toEqual(['body', Object.keys(patch)[0]]);
    }
  });
});
