import { beforeEach, describe, expect, it } from 'vitest';
import { REVISION_STEP_STATUSES } from '../../src/config.ts';
import { codehostDeploymentBody, seededFamilies } from '../support/deployments.ts';
import { credentialsOf, fullKey, useLocalplane, workspaceByTier } from '../support/instance.ts';
import { expectSchema } from '../support/openapi.ts';

const ctx = useLocalplane({ freezeClock: true });
const acme = () => workspaceByTier(ctx.fixtures, 'plus');
const api = () => ctx.api.as(acme());
const admin = (method: string, path: string, body?: unknown) =>
  ctx.admin.request(method, path, body === undefined ? {} : { body });
const advance = (seconds: number) => admin('POST', '/clock/advance', { seconds });
const FINAL_STATUSES = ['DEPLOYED', 'CREATE_FAILED', 'BUILD_FAILED', 'DEPLOY_FAILED', 'SKIPPED'];
/** The default step durations: the seconds a revision spends in each in-progress status. */
const DEFAULT_STEPS = [1, 1, 1, 3, 1, 3];
const TOTAL_SECONDS = DEFAULT_STEPS.reduce((sum, seconds) => sum + seconds, 0);

beforeEach(async () => {
  await admin('POST', '/reset');
});

async function create(name: string) {
  const response = await api().post('/v2/deployments', codehostDeploymentBody(acme(), name));
  expect(response.status).toBe(201);
  return response.body;
}

const revision = async (deploymentId: string, revisionId: string) =>
  (await api().get(`/v2/deployments/${deploymentId}/revisions/${revisionId}`)).body;
const deployment = async (id: string) => (await api().get(`/v2/deployments/${id}`)).body;

/** What a polling client does: read the revision, and while it is in progress let a second pass. */
async function pollUntilFinal(
  deploymentId: string,
  revisionId: string,
): Promise<{ status: string; seen: string[]; seconds: number }> {
  const seen: string[] = [];
  for (let seconds = 0; seconds <= 120; seconds++) {
    const current = await revision(deploymentId, revisionId);
    expectSchema(current, 'Revision');
    if (seen.at(-1) !== current.status) seen.push(current.status);
    if (FINAL_STATUSES.includes(current.status)) return { status: current.status, seen, seconds };
    await advance(1);
  }
  throw new Error(`revision ${revisionId} still ${seen.at(-1)} after 120 s`);
}

describe('revision lifecycle on the emulator clock', () => {
  it('steps through every status to DEPLOYED, then is active and the deployment READY', async () => {
    const created = await create('lifecycle-steps');
    expect(created).toMatchObject({ status: 'AWAITING_DATABASE', active_revision_id: null });
    const revisionId = created.latest_revision_id;
    const observed: string[] = [];
    for (const seconds of DEFAULT_STEPS) {
      observed.push((await revision(created.id, revisionId)).status);
      await advance(seconds - 0.5);
      expect((await revision(created.id, revisionId)).status).toBe(observed.at(-1));
      await advance(0.5);
    }
    const deployed = await revision(created.id, revisionId);
    expect(observed).toEqual([...REVISION_STEP_STATUSES]);
    expect(deployed.status).toBe('DEPLOYED');
    expect(deployed.source_revision_config.repo_commit_sha).toMatch(/^[0-9a-f]{40}$/);
    expect(Date.parse(deployed.updated_at) - Date.parse(deployed.created_at)).toBe(TOTAL_SECONDS * 1000);
    const after = await deployment(created.id);
    expectSchema(after, 'Deployment');
    expect(after).toMatchObject({ status: 'READY', active_revision_id: revisionId, latest_revision_id: revisionId });
  });

  it(
    'replays the documented client flow: create, poll to DEPLOYED, patch, poll again, delete; the CLI finds it ' +
      'by name_contains',
    async () => {
      const name = 'documented-flow-agent';
      const created = await api().post('/v2/deployments', codehostDeploymentBody(acme(), name));
      expect(created.status).toBe(201);

      const lookup = await api().get(`/v2/deployments?name_contains=${name}`);
      expect(lookup.status).toBe(200);
      expect(lookup.body.resources.map((found: { id: string }) => found.id)).toEqual([created.body.id]);
      expect((await api().get('/v2/deployments?name_contains=DOCUMENTED-FLOW')).body.resources[0].id).toBe(
        created.body.id,
      );

      const revisions = await api().get(`/v2/deployments/${created.body.id}/revisions`);
      const first = revisions.body.resources[0];
      expect(first.status).toBe('CREATING');
      const firstRun = await pollUntilFinal(created.body.id, first.id);
      expect(firstRun).toMatchObject({ status: 'DEPLOYED', seen: [...REVISION_STEP_STATUSES, 'DEPLOYED'] });

      const patched = await api().patch(`/v2/deployments/${created.body.id}`, {
        source_revision_config: { repo_ref: 'release/2' },
      });
      expect(patched.status).toBe(200);
      const newest = (await api().get(`/v2/deployments/${created.body.id}/revisions`)).body.resources[0];
      expect(newest.id).toBe(patched.body.latest_revision_id);
      expect(newest.id).not.toBe(first.id);
      expect((await pollUntilFinal(created.body.id, newest.id)).status).toBe('DEPLOYED');
      expect(await deployment(created.body.id)).toMatchObject({ status: 'READY', active_revision_id: newest.id });
      expect((await revision(created.body.id, first.id)).status).toBe('DEPLOYED');

      const deleted = await api().delete(`/v2/deployments/${created.body.id}`);
      expect(deleted.status).toBe(204);
      expect(deleted.text).toBe('');
      expect((await api().get(`/v2/deployments?name_contains=${name}`)).body.resources).toEqual([]);
      expect((await api().get(`/v2/deployments/${created.body.id}`)).status).toBe(404);
    },
  );

  it('interrupts a revision still in progress when a newer one supersedes it', async () => {
    const created = await create('lifecycle-superseded');
    await advance(3);
    expect((await revision(created.id, created.latest_revision_id)).status).toBe('BUILDING');
    const patched = (
      await api().patch(`/v2/deployments/${created.id}`, {
        source_revision_config: { graph_config_path: 'other.json' },
      })
    ).body;
    expect((await revision(created.id, created.latest_revision_id)).status).toBe('INTERRUPTED');
    await advance(TOTAL_SECONDS);
    expect((await revision(created.id, created.latest_revision_id)).status).toBe('INTERRUPTED');
    expect((await revision(created.id, patched.latest_revision_id)).status).toBe('DEPLOYED');
    expect(await deployment(created.id)).toMatchObject({
      status: 'READY',
      active_revision_id: patched.latest_revision_id,
    });

    const interrupted = await api().get(`/v2/deployments/${created.id}/revisions?status=INTERRUPTED`);
    expect(interrupted.body.resources.map((found: { id: string }) => found.id)).toEqual([created.latest_revision_id]);
  });

  it('deploys a redeployed revision and makes it the active one', async () => {
    const created = await create('lifecycle-redeploy');
    await advance(TOTAL_SECONDS);
    const redeployed = (
      await api().post(`/v2/deployments/${created.id}/revisions/${created.latest_revision_id}/redeploy`)
    ).body;
    expect((await revision(created.id, redeployed.latest_revision_id)).status).toBe('CREATING');
    expect(redeployed.active_revision_id).toBe(created.latest_revision_id);
    await advance(TOTAL_SECONDS);
    expect(await deployment(created.id)).toMatchObject({ active_revision_id: redeployed.latest_revision_id });
  });

  it('takes step durations from the config knob: 0 is instant, and one step can be set alone', async () => {
    expect((await admin('PATCH', '/config', { revision_step_seconds: 0 })).body.revision_step_seconds).toEqual(
      Object.fromEntries(REVISION_STEP_STATUSES.map((status) => [status, 0])),
    );
    const instant = await create('lifecycle-instant');
    await advance(0);
    expect((await revision(instant.id, instant.latest_revision_id)).status).toBe('DEPLOYED');

    const config = (await admin('PATCH', '/config', { revision_step_seconds: { BUILDING: 30 } })).body;
    expect(config.revision_step_seconds).toMatchObject({ CREATING: 0, BUILDING: 30, DEPLOYING: 0 });
    const slowBuild = await create('lifecycle-slow-build');
    await advance(29);
    expect((await revision(slowBuild.id, slowBuild.latest_revision_id)).status).toBe('BUILDING');
    await advance(1);
    expect((await revision(slowBuild.id, slowBuild.latest_revision_id)).status).toBe('DEPLOYED');

    expect((await admin('PATCH', '/config', { revision_step_seconds: { BUILDING: -1 } })).status).toBe(422);
    const typo = await admin('PATCH', '/config', { revision_step_seconds: { BUILT: 1 } });
    expect(typo.status).toBe(422);
    expect(typo.body.detail[0]).toMatchObject({
      type: 'extra_forbidden',
      loc: ['body', 'revision_step_seconds', 'BUILT'],
    });
    expect((await admin('PATCH', '/config', { export_run_max_retry: 1 })).status).toBe(422);
  });

  it('keeps the other limits when the config knob changes one', async () => {
    await admin('PATCH', '/config', { export_run_max_retries: 3 });
    const config = (await admin('PATCH', '/config', { revision_step_seconds: { QUEUED: 7 } })).body;
    expect(config).toMatchObject({ export_run_max_retries: 3, revision_step_seconds: { QUEUED: 7, BUILDING: 3 } });
    await admin('POST', '/reset');
    expect((await admin('GET', '/config')).body).toMatchObject({
      export_run_max_retries: 20,
      revision_step_seconds: { QUEUED: 1 },
    });
  });
});

describe('revision knobs', () => {
  it.each([
    ['create', 'CREATING', 'CREATE_FAILED'],
    ['build', 'BUILDING', 'BUILD_FAILED'],
    ['deploy', 'DEPLOYING', 'DEPLOY_FAILED'],
  ])(
    'fails the next revision at %s: %s ends %s, the deployment keeps awaiting its database',
    async (stage, lastStep, failedStatus) => {
      const created = await create(`lifecycle-fail-${stage}`);
      const armed = await admin('POST', '/faults/revisions', { stage, deployment_id: created.id });
      expect(armed.status).toBe(200);
      // Armed after creation: it is the next revision, made by a patch, that fails.
      const patched = (
        await api().patch(`/v2/deployments/${created.id}`, { source_revision_config: { repo_ref: 'fix' } })
      ).body;
      const { status, seen } = await pollUntilFinal(created.id, patched.latest_revision_id);
      expect(status).toBe(failedStatus);
      expect(seen.at(-2)).toBe(lastStep);
      expect(await deployment(created.id)).toMatchObject({ status: 'AWAITING_DATABASE', active_revision_id: null });
      expect((await admin('GET', '/faults')).body.revisions).toEqual([]);

      const retried = (
        await api().patch(`/v2/deployments/${created.id}`, { source_revision_config: { repo_ref: 'fix-2' } })
      ).body;
      expect((await pollUntilFinal(created.id, retried.latest_revision_id)).status).toBe('DEPLOYED');
    },
  );

  it('fails the next revision of any deployment when no deployment is named, count times', async () => {
    await admin('POST', '/faults/revisions', { stage: 'build', count: 2 });
    const one = await create('lifecycle-any-1');
    const two = await create('lifecycle-any-2');
    const three = await create('lifecycle-any-3');
    await advance(TOTAL_SECONDS);
    expect((await revision(one.id, one.latest_revision_id)).status).toBe('BUILD_FAILED');
    expect((await revision(two.id, two.latest_revision_id)).status).toBe('BUILD_FAILED');
    expect((await revision(three.id, three.latest_revision_id)).status).toBe('DEPLOYED');
  });

  it('only fails revisions of the deployment it names', async () => {
    const named = await create('lifecycle-named');
    const other = await create('lifecycle-other');
    await advance(TOTAL_SECONDS);
    await admin('POST', '/faults/revisions', { stage: 'deploy', deployment_id: named.id });
    const otherPatched = (await api().patch(`/v2/deployments/${other.id}`, { secrets: [{ name: 'K', value: 'v' }] }))
      .body;
    const namedPatched = (await api().patch(`/v2/deployments/${named.id}`, { secrets: [{ name: 'K', value: 'v' }] }))
      .body;
    await advance(TOTAL_SECONDS);
    expect((await revision(other.id, otherPatched.latest_revision_id)).status).toBe('DEPLOYED');
    expect((await revision(named.id, namedPatched.latest_revision_id)).status).toBe('DEPLOY_FAILED');
    expect(await deployment(named.id)).toMatchObject({ status: 'READY', active_revision_id: named.latest_revision_id });
  });

  it(
    'sets a revision to any status: a final one stops it, DEPLOYED activates it, an in-progress one goes on from ' +
      'there',
    async () => {
      const created = await create('lifecycle-set-status');
      const path = `/deployments/${created.id}/revisions/${created.latest_revision_id}/status`;
      const failed = await admin('PUT', path, { status: 'BUILD_FAILED' });
      expect(failed.status).toBe(200);
      expectSchema(failed.body, 'Revision');
      expect(failed.body.status).toBe('BUILD_FAILED');
      await advance(TOTAL_SECONDS);
      expect((await revision(created.id, created.latest_revision_id)).status).toBe('BUILD_FAILED');

      await admin('PUT', path, { status: 'AWAITING_DEPLOY' });
      await advance(1);
      expect((await revision(created.id, created.latest_revision_id)).status).toBe('DEPLOYING');
      await advance(3);
      expect(await deployment(created.id)).toMatchObject({
        status: 'READY',
        active_revision_id: created.latest_revision_id,
      });

      for (const status of ['SKIPPED', 'UNKNOWN', 'INTERRUPTED', 'DEPLOY_FAILED', 'CREATE_FAILED']) {
        expect((await admin('PUT', path, { status })).body.status).toBe(status);
      }
      expect((await admin('PUT', path, { status: 'DONE' })).status).toBe(422);
      expect(
        (
          await admin('PUT', `/deployments/${created.id}/revisions/00000000-0000-4000-8000-000000000000/status`, {
            status: 'DEPLOYED',
          })
        ).status,
      ).toBe(404);
    },
  );

  it("sets a deployment's status, which the status filter then sees", async () => {
    const created = await create('lifecycle-deployment-status');
    const awaitingDelete = async () =>
      (await api().get('/v2/deployments?status=AWAITING_DELETE&limit=100')).body.resources.map(
        (found: { id: string }) => found.id,
      );
    expect(await awaitingDelete()).not.toContain(created.id);
    const set = await admin('PUT', `/deployments/${created.id}/status`, { status: 'AWAITING_DELETE' });
    expect(set.status).toBe(200);
    expectSchema(set.body, 'Deployment');
    expect(set.body.status).toBe('AWAITING_DELETE');
    expect(await awaitingDelete()).toContain(created.id);
    expect((await admin('PUT', `/deployments/${created.id}/status`, { status: 'GONE' })).status).toBe(422);
    expect(
      (await admin('PUT', '/deployments/00000000-0000-4000-8000-000000000000/status', { status: 'READY' })).status,
    ).toBe(404);
  });

  it('is cleared by reset, with the step durations', async () => {
    await admin('POST', '/faults/revisions', { stage: 'create' });
    await admin('PATCH', '/config', { revision_step_seconds: 0 });
    await admin('POST', '/reset');
    expect((await admin('GET', '/faults')).body.revisions).toEqual([]);
    const created = await create('lifecycle-after-reset');
    await advance(TOTAL_SECONDS);
    expect((await revision(created.id, created.latest_revision_id)).status).toBe('DEPLOYED');
  });

  it('refuses a malformed fault with 422', async () => {
    expect((await admin('POST', '/faults/revisions', { stage: 'test' })).status).toBe(422);
    expect((await admin('POST', '/faults/revisions', { stage: 'build', count: 0 })).status).toBe(422);
    expect((await admin('POST', '/faults/revisions', { stage: 'build', deployment_id: 'nope' })).status).toBe(422);
  });
});

describe('the revision history (GET /_localplane/deployments/{id}/revisions/{rid}/history)', () => {
  it('gives each status reached with its emulator-clock time, a forced ending with its words', async () => {
    const created = await create('lifecycle-history');
    const start = Date.parse(created.created_at);
    const history = async (revisionId: string) => {
      const response = await admin('GET', `/deployments/${created.id}/revisions/${revisionId}/history`);
      expect(response.status, response.text).toBe(200);
      return (response.body as { status: string; at: string; detail: string | null }[]).map(
        ({ status, at, detail }) => ({ status, seconds: (Date.parse(at) - start) / 1000, detail }),
      );
    };
    expect(await history(created.latest_revision_id)).toEqual([{ status: 'CREATING', seconds: 0, detail: null }]);
    await advance(TOTAL_SECONDS);
    let elapsed = 0;
    const expected = [...REVISION_STEP_STATUSES, 'DEPLOYED'].map((status, index) => {
      const entry = { status, seconds: elapsed, detail: null };
      elapsed += DEFAULT_STEPS[index] ?? 0;
      return entry;
    });
    expect(await history(created.latest_revision_id)).toEqual(expected);

    await admin('POST', '/faults/revisions', {
      stage: 'build',
      deployment_id: created.id,
      message: 'npm ERR! missing script: build',
    });
    const failing = (await api().post(`/v2/deployments/${created.id}/revisions`, {})).body;
    await advance(TOTAL_SECONDS);
    expect((await history(failing.id)).at(-1)).toEqual({
      status: 'BUILD_FAILED',
      seconds: TOTAL_SECONDS + 6,
      detail: 'npm ERR! missing script: build',
    });

    expect(
      (await admin('GET', `/deployments/${created.id}/revisions/00000000-0000-4000-8000-000000000000/history`)).status,
    ).toBe(404);
    expect(
      (await admin('GET', `/deployments/00000000-0000-4000-8000-000000000000/revisions/${failing.id}/history`)).status,
    ).toBe(404);
  });

  it(
    'shows the steps a seeded revision went through before localplane started at its creation time, its status ' +
      'at its last update',
    async () => {
      const seeded = [...seededFamilies().values()]
        .flatMap((family) => family.deployments)
        .find((candidate) => candidate.revisions.at(-1)!.status === 'DEPLOYED')!;
      const newest = seeded.revisions.at(-1)!;
      const response = await admin('GET', `/deployments/${seeded.row.id}/revisions/${newest.id}/history`);
      expect(response.body.map((entry: { status: string }) => entry.status)).toEqual([
        ...REVISION_STEP_STATUSES,
        'DEPLOYED',
      ]);
      const times = response.body.map((entry: { at: string }) => Date.parse(entry.at));
      const revision = (
        await ctx.api
          .as(ctx.fixtures.workspaces.find((workspace) => workspace.id === seeded.row.tenant_id)!)
          .get(`/v2/deployments/${seeded.row.id}/revisions/${newest.id}`)
      ).body;
      expect(times).toEqual([
        ...REVISION_STEP_STATUSES.map(() => Date.parse(revision.created_at)),
        Date.parse(revision.updated_at),
      ]);
    },
  );
});

describe('seeded revisions in progress', () => {
  it('go on from their seeded status once the clock moves, and their deployments become READY', async () => {
    const inProgress = [...seededFamilies().values()]
      .flatMap((family) => family.deployments)
      .filter((seeded) => REVISION_STEP_STATUSES.includes(seeded.revisions.at(-1)!.status as never));
    expect(inProgress.length).toBeGreaterThan(0);
    const clientOf = (tenantId: string) =>
      ctx.api.as(ctx.fixtures.workspaces.find((workspace) => workspace.id === tenantId)!);
    for (const seeded of inProgress) {
      const current = await clientOf(seeded.row.tenant_id).get(
        `/v2/deployments/${seeded.row.id}/revisions/${seeded.revisions.at(-1)!.id}`,
      );
      expect(current.body.status).toBe(seeded.revisions.at(-1)!.status);
    }
    await advance(TOTAL_SECONDS);
    for (const seeded of inProgress) {
      const newest = seeded.revisions.at(-1)!;
      const client = clientOf(seeded.row.tenant_id);
      expect((await client.get(`/v2/deployments/${seeded.row.id}/revisions/${newest.id}`)).body.status).toBe(
        'DEPLOYED',
      );
      const after = (await client.get(`/v2/deployments/${seeded.row.id}`)).body;
      expect(after.active_revision_id).toBe(newest.id);
      expect(after.status).toBe(seeded.row.status === 'AWAITING_DATABASE' ? 'READY' : seeded.row.status);
    }
  });
});

describe('the tracing project of a deployment', () => {
  it('takes runs from the runs knob, and an export of it completes with exactly those runs', async () => {
    const created = await create('lifecycle-exported');
    const fixtures = (await admin('GET', '/fixtures')).body as {
      workspaces: { id: string; sessions: { id: string; name: string; run_count: number }[] }[];
    };
    const project = fixtures.workspaces
      .find((workspace) => workspace.id === acme().id)!
      .sessions.find((session) => session.name === created.name)!;
    expect(project.run_count).toBe(0);

    const added = await admin('POST', `/sessions/${project.id}/runs`, {
      count: 400,
      start_time: '2026-10-01T00:00:00Z',
      days: 2,
    });
    expect(added.status).toBe(201);
    expect(added.body).toMatchObject({ added: 400, session: { id: project.id, run_count: 400 } });
    expect(
      (await admin('POST', `/sessions/${project.id}/runs`, { count: 100, start_time: '2026-10-01T00:00:00Z', days: 2 }))
        .body.session.run_count,
    ).toBe(500);
    expect((await admin('POST', '/sessions/00000000-0000-4000-8000-000000000000/runs', { count: 1 })).status).toBe(404);
    expect((await admin('POST', `/sessions/${project.id}/runs`, { count: 0 })).status).toBe(422);

    const destination = await api().post('/api/v1/bulk-exports/destinations', {
      display_name: 'deployment project',
      config: {
        bucket_name: ctx.fixtures.objstore.buckets[0],
        prefix: 'deployment-runs',
        endpoint_url: ctx.fixtures.objstore.endpoint_url,
      },
      credentials: credentialsOf(fullKey(ctx.fixtures)),
    });
    expect(destination.status).toBe(200);
    const exported = await api().post('/api/v1/bulk-exports', {
      bulk_export_destination_id: destination.body.id,
      session_id: project.id,
      start_time: '2026-10-01T00:00:00Z',
      end_time: '2026-10-03T00:00:00Z',
    });
    expect(exported.status).toBe(200);
    let status = exported.body.status;
    for (let attempt = 0; attempt < 600 && !['Completed', 'Failed'].includes(status); attempt++) {
      await advance(1);
      status = (await api().get(`/api/v1/bulk-exports/${exported.body.id}`)).body.status;
    }
    expect(status).toBe('Completed');
    const runs = (await api().get(`/api/v1/bulk-exports/${exported.body.id}/runs`)).body;
    const rows = runs.map(
      (run: { metadata: { result: { rows_written: number } } }) => run.metadata.result.rows_written,
    );
    expect(rows.reduce((sum: number, count: number) => sum + count, 0)).toBe(500);
  });
});
