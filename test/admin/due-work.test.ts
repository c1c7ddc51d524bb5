/**
 * GET /_localplane/tasks: the due work on the emulator clock, each task `running` (since its
 * `started_at`) or `queued`, with its `due_at` and `label` as before, and what it does to which
 * resources (`kind`, `workspace_id`, the ids and the kind's own fields), checked against the
 * served document by the test client.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { codehostDeploymentBody } from '../support/deployments.ts';
import { exportClient, exportWithStepInFlight, harness, type ListedTask } from '../support/exports.ts';
import { useLocalplane, workspaceByTier } from '../support/instance.ts';
import { startObjstoreProxy } from '../support/objstore-proxy.ts';

const ctx = useLocalplane({ freezeClock: true });
const plus = () => workspaceByTier(ctx.fixtures, 'plus');
const acme = exportClient(ctx, plus);
const { admin, advance } = harness(ctx);
const ONE_DAY = { start_time: '2026-10-01T00:00:00Z', end_time: '2026-10-02T00:00:00Z' };

interface Task extends ListedTask {
  kind: string;
  workspace_id: string;
}

/** A queued task as the list shows it, before the fields of its kind. */
const QUEUED_TASK = { state: 'queued', due_at: expect.any(String) };

const tasks = async () => (await admin('GET', '/tasks')).body as Task[];
const now = async () => Date.parse((await admin('GET', '/clock')).body.now);
const tasksOf = async (id: string) => (await tasks()).filter((task) => Object.values(task).includes(id));

beforeEach(async () => {
  await admin('POST', '/reset');
});

async function createDeployment(name: string) {
  const response = await ctx.api.as(plus()).post('/v2/deployments', codehostDeploymentBody(plus(), name));
  expect(response.status, response.text).toBe(201);
  return response.body as { id: string; latest_revision_id: string };
}

describe('the tasks of deployments', () => {
  it('name the revision that moves, its deployment and workspace, and the statuses from and to', async () => {
    const deployment = await createDeployment('due-steps');
    const revisionId = deployment.latest_revision_id;
    const expected = (from: string, to: string) => ({
      ...QUEUED_TASK,
      label: `revision ${revisionId} ${from}`,
      kind: 'revision_step',
      workspace_id: plus().id,
      deployment_id: deployment.id,
      revision_id: revisionId,
      from_status: from,
      to_status: to,
    });
    const start = await now();
    expect(await tasksOf(revisionId)).toEqual([expected('CREATING', 'QUEUED')]);
    expect(Date.parse((await tasksOf(revisionId))[0]!.due_at) - start).toBe(1000);
    await advance(1);
    expect(await tasksOf(revisionId)).toEqual([expected('QUEUED', 'AWAITING_BUILD')]);
    await advance(5);
    expect(await tasksOf(revisionId)).toEqual([expected('AWAITING_DEPLOY', 'DEPLOYING')]);
    await advance(4);
    expect(await tasksOf(revisionId)).toEqual([]);
  });

  it('say where a revision fault ends it: BUILD_FAILED after BUILDING, SKIPPED after QUEUED', async () => {
    const deployment = await createDeployment('due-faults');
    await admin('POST', '/faults/revisions', { stage: 'build', deployment_id: deployment.id });
    const failing = (await ctx.api.as(plus()).post(`/v2/deployments/${deployment.id}/revisions`, {})).body as {
      id: string;
    };
    await advance(3);
    expect(await tasksOf(failing.id)).toMatchObject([
      { kind: 'revision_step', from_status: 'BUILDING', to_status: 'BUILD_FAILED' },
    ]);

    await admin('POST', '/faults/revisions', { stage: 'skip', deployment_id: deployment.id });
    const skipped = (await ctx.api.as(plus()).post(`/v2/deployments/${deployment.id}/revisions`, {})).body as {
      id: string;
    };
    await advance(1);
    expect(await tasksOf(skipped.id)).toMatchObject([
      { kind: 'revision_step', from_status: 'QUEUED', to_status: 'SKIPPED' },
    ]);
  });

  it('name the deletion that completes, and when', async () => {
    await admin('PATCH', '/config', { deployment_deletion_seconds: 60 });
    const deployment = await createDeployment('due-deletion');
    const start = await now();
    expect((await ctx.api.as(plus()).delete(`/v2/deployments/${deployment.id}`)).status).toBe(204);
    const [deletion] = await tasksOf(deployment.id);
    expect(deletion).toEqual({
      ...QUEUED_TASK,
      label: `deletion of deployment ${deployment.id}`,
      kind: 'deployment_deletion',
      workspace_id: plus().id,
      deployment_id: deployment.id,
    });
    expect(Date.parse(deletion!.due_at) - start).toBe(60_000);
  });
});

describe('the tasks of exports', () => {
  it('name the dispatch of a workspace, then the run that starts, its next file and its time limits', async () => {
    await admin('POST', '/faults/export-runs', { mode: 'slow', count: 1, delay_seconds: 60 });
    const exportId = await acme.startExport(await acme.createDestination('due-runs'), 'support-bot-staging', ONE_DAY);
    expect((await tasks()).filter((task) => task.kind === 'export_dispatch')).toEqual([
      {
        ...QUEUED_TASK,
        label: `dispatch exports of workspace ${plus().id}`,
        kind: 'export_dispatch',
        workspace_id: plus().id,
      },
    ]);
    await advance(0);
    const [run] = await acme.getRuns(exportId);
    const ids = { workspace_id: plus().id, bulk_export_id: exportId, run_id: run!.id };
    expect(await tasksOf(exportId)).toEqual(
      expect.arrayContaining([
        {
          ...QUEUED_TASK,
          label: `export run step ${run!.id}`,
          kind: 'export_run_step',
          ...ids,
          step: 'start',
          retry_number: 0,
        },
        { ...QUEUED_TASK, label: `time limit of run ${run!.id}`, kind: 'export_run_time_limit', ...ids },
        {
          ...QUEUED_TASK,
          label: `time limit of export ${exportId}`,
          kind: 'export_time_limit',
          workspace_id: plus().id,
          bulk_export_id: exportId,
        },
      ]),
    );
    await advance(60);
    expect((await tasksOf(run!.id)).find((task) => task.kind === 'export_run_step')).toMatchObject({
      step: 'next_file',
      retry_number: 0,
    });
  });

  it('name the retry of a failed attempt, with its number', async () => {
    await admin('POST', '/faults/export-runs', { mode: 'fail', count: 1, attempts: 1 });
    const exportId = await acme.startExport(await acme.createDestination('due-retry'), 'support-bot-staging', ONE_DAY);
    await advance(0);
    const [run] = await acme.getRuns(exportId);
    expect(run!.retry_number).toBe(1);
    expect((await tasksOf(run!.id)).find((task) => task.kind === 'export_run_step')).toMatchObject({
      step: 'retry',
      retry_number: 1,
      bulk_export_id: exportId,
    });
  });

  it("name a recurring export's next child", async () => {
    const parentId = await acme.startExport(await acme.createDestination('due-recurring'), 'support-bot-staging', {
      start_time: '2026-10-01T00:00:00Z',
      interval_hours: 24,
    });
    expect(await tasksOf(parentId)).toEqual([
      {
        ...QUEUED_TASK,
        label: `spawn child 0 of ${parentId}`,
        kind: 'recurring_export_spawn',
        workspace_id: plus().id,
        bulk_export_id: parentId,
        child_index: 0,
      },
    ]);
  });
});

describe('a task in flight', () => {
  it('comes first, running since its start, beside the queued tasks; it leaves the list when it ends', async () => {
    const proxy = await startObjstoreProxy(ctx.instance.objstoreUrl);
    try {
      const startedAt = (await admin('GET', '/clock')).body.now as string;
      const { exportId, advancing } = await exportWithStepInFlight(ctx, plus, proxy, 'due-running');
      const [run] = await acme.getRuns(exportId);
      const ids = { workspace_id: plus().id, bulk_export_id: exportId, run_id: run!.id };
      const [running, ...queued] = await tasksOf(exportId);
      expect(running).toEqual({
        state: 'running',
        started_at: startedAt,
        due_at: startedAt,
        label: `export run step ${run!.id}`,
        kind: 'export_run_step',
        ...ids,
        step: 'next_file',
        retry_number: 0,
      });
      expect(queued).toHaveLength(2);
      expect(queued).toEqual(
        expect.arrayContaining([
          { ...QUEUED_TASK, label: `time limit of run ${run!.id}`, kind: 'export_run_time_limit', ...ids },
          {
            ...QUEUED_TASK,
            label: `time limit of export ${exportId}`,
            kind: 'export_time_limit',
            workspace_id: plus().id,
            bulk_export_id: exportId,
          },
        ]),
      );

      proxy.release();
      await advancing;
      expect((await tasks()).filter((task) => task.state === 'running')).toEqual([]);
    } finally {
      proxy.release();
      await proxy.close();
    }
  });
});
