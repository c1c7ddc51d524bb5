import { z } from 'zod';
import { limitsPatch, type InstanceLimits } from '../config.ts';
import { exportRunFaultRequest, validationFaultRequest, type BulkExportFaults } from '../bulk-exports/faults.ts';
import { revisionFaultRequest, type RevisionFaults } from '../deployments/faults.ts';
import type { DeploymentStore } from '../deployments/store.ts';
import type { Fixtures } from '../fixtures/files.ts';
import type { EmbeddedObjstore } from '../objstore/types.ts';
import {
  clockRunSchema,
  clockStateSchema,
  faultsStateSchema,
  fixturesViewSchema,
  healthSchema,
  limitsSchema,
  listedTasksSchema,
  resetSchema,
  tierChangeSchema,
  type ListedTask,
  type Task,
} from './schemas.ts';
import { DEFAULT_IDLE_SECONDS, MAX_IDLE_STEPS } from '../shared/clock-control.ts';
import type { WatchdogCounts } from '../shared/scheduler.ts';
import type { InstanceClock } from './instance-clock.ts';
import { badRequest, notFound } from '../shared/errors.ts';
import { httpError } from '../openapi/errors.ts';
import { OpenApiHono } from '../openapi/routes.ts';
import { workspaceView } from './state.ts';
import { formatTimestamp, MICROS_PER_SECOND } from '../shared/time.ts';
import { requestTimestamp } from '../shared/validation.ts';
import type { TracingStore } from '../tracing/store.ts';
import { WORKSPACE_NOT_FOUND } from '../workspaces/errors.ts';
import { TIERS, type WorkspaceStore } from '../workspaces/store.ts';

export interface AdminDeps {
  fixtures: Fixtures;
  workspaces: WorkspaceStore;
  tracing: TracingStore;
  deployments: DeploymentStore;
  objstore: EmbeddedObjstore;
  /** Binds the objstore if it is not yet listening, and gives its URL. */
  objstoreEndpoint: () => Promise<string>;
  endpointAliases: readonly string[];
  clock: InstanceClock;
  faults: BulkExportFaults;
  revisionFaults: RevisionFaults;
  limits: InstanceLimits;
  /** The tasks in flight, then the queued ones (GET /tasks). */
  tasks: () => ListedTask[];
  watchdogCounts: () => WatchdogCounts;
  reset: (scope?: { workspaceId?: string; keepClock?: boolean }) => Promise<void>;
  startedAt: number;
}

/** The clock goes no further than its microseconds stay exact (2255-06-05). */
const LATEST_TIME = Number.MAX_SAFE_INTEGER;
const clockSet = z.object({ time: requestTimestamp });
const clockAdvance = z.object({ seconds: z.number().min(0) });
/** An empty body (or none) runs what is due within a day. */
const clockRunUntilIdle = z.strictObject({
  within_seconds: z
    .number()
    .positive()
    .max(366 * DEFAULT_IDLE_SECONDS)
    .optional(),
});
const tierChange = z.object({ tier: z.enum(TIERS) });
const workspaceParams = z.object({ workspace_id: z.guid() });
/**
 * An empty body (or none) resets everything; a workspace id, that workspace's resources alone; `keep_clock`, all but
 * the clock.
 */
const resetRequest = z.strictObject({ workspace_id: z.guid().optional(), keep_clock: z.boolean().optional() });

const CLOCK_LIMIT = `The clock cannot go past ${formatTimestamp(LATEST_TIME)}`;

/** The harness knobs under /_localplane/: no auth, as in other local emulators. */
export function adminRoutes(deps: AdminDeps) {
  const app = new OpenApiHono('admin');
  const clockState = () => ({ now: formatTimestamp(deps.clock.now()), frozen: deps.clock.frozen });
  const clockResponse = {
    status: 200,
    description: "The emulator clock's time and whether it is frozen",
    schema: clockStateSchema,
  };
  const faultsResponse = {
    status: 200,
    description: 'Every armed knob, with the uses it has left',
    schema: faultsStateSchema,
  };

  app.openapi(
    {
      method: 'get',
      path: '/health',
      summary: "Health, the objstore URL, the uptime and what the scheduler's watchdog had to do",
      response: { status: 200, description: 'Up', schema: healthSchema },
    },
    (c) =>
      c.json({
        status: 'ok',
        objstore_url: deps.objstore.url,
        uptime_seconds: (Date.now() - deps.startedAt) / 1000,
        watchdog: deps.watchdogCounts(),
      }),
  );

  app.openapi(
    {
      method: 'get',
      path: '/fixtures',
      summary:
        'The fixture workspaces, their API keys, projects, integrations and deployments, and the objstore with its ' +
        'keys',
      response: { status: 200, description: 'The fixtures', schema: fixturesViewSchema },
    },
    async (c) =>
      c.json({
        workspaces: deps.workspaces.list().map((workspace) => ({
          ...workspaceView(deps, workspace),
          integrations: deps.deployments.integrations(workspace.id).map((integration) => ({
            id: integration.id,
            repos: deps.deployments
              .repos(integration.id)
              .map(({ id, url, default_branch }) => ({ id, url, default_branch })),
          })),
          listeners: deps.deployments.listeners(workspace.id).map((listener) => listener.id),
          deployments: deps.deployments
            .deploymentsOf(workspace.id)
            .map(({ id, name, source }) => ({ id, name, source })),
        })),
        unknown_api_key: deps.fixtures.workspaces.unknown_api_key,
        objstore: {
          // Handing out the endpoint is what binds an in-process instance's objstore.
          endpoint_url: await deps.objstoreEndpoint(),
          buckets: deps.fixtures.objstore.buckets,
          public_buckets: deps.fixtures.objstore.public_buckets,
          keys: deps.fixtures.objstore.keys,
          files_dir: deps.objstore.filesDir,
          endpoint_aliases: deps.endpointAliases,
        },
      }),
  );

  app.openapi(
    {
      method: 'post',
      path: '/reset',
      summary:
        "Back to the fixtures: everything (state, objstore, knobs, limits, ids and clock), or one workspace's " +
        'resources',
      description:
        'A reset of everything puts the emulator clock back to the wall time, frozen when the instance was ' +
        "started with a frozen clock, running otherwise; `keep_clock: true` leaves it as it is. A workspace's " +
        'reset never touches the clock.',
      body: resetRequest,
      bodyOptional: true,
      response: { status: 200, description: 'Reset', schema: resetSchema },
      errors: [WORKSPACE_NOT_FOUND],
    },
    async (c, { body }) => {
      const workspaceId = body?.workspace_id;
      await deps.reset({ workspaceId, keepClock: body?.keep_clock });
      return c.json(workspaceId === undefined ? { status: 'reset' } : { status: 'reset', workspace_id: workspaceId });
    },
  );

  app.openapi({ method: 'get', path: '/clock', summary: 'The emulator clock', response: clockResponse }, (c) =>
    c.json(clockState()),
  );
  app.openapi(
    { method: 'post', path: '/clock/freeze', summary: 'Freeze the emulator clock', response: clockResponse },
    (c) => {
      deps.clock.freeze();
      return c.json(clockState());
    },
  );
  app.openapi(
    { method: 'post', path: '/clock/unfreeze', summary: 'Let the emulator clock run again', response: clockResponse },
    (c) => {
      deps.clock.unfreeze();
      return c.json(clockState());
    },
  );
  app.openapi(
    {
      method: 'post',
      path: '/clock/set',
      summary: 'Set the emulator clock (what falls due runs)',
      body: clockSet,
      response: clockResponse,
    },
    async (c, { body }) => {
      await deps.clock.set(body.time);
      return c.json(clockState());
    },
  );
  app.openapi(
    {
      method: 'post',
      path: '/clock/advance',
      summary: 'Advance the emulator clock by some seconds (what falls due runs)',
      body: clockAdvance,
      response: clockResponse,
      errors: [httpError(400, 'The clock would go past what its microseconds hold exactly', { too_late: CLOCK_LIMIT })],
    },
    async (c, { body: { seconds } }) => {
      if (deps.clock.now() + seconds * MICROS_PER_SECOND > LATEST_TIME) throw badRequest(CLOCK_LIMIT);
      await deps.clock.advance(seconds);
      return c.json(clockState());
    },
  );

  const clockRun = (ran: Task[]) => ({ ...clockState(), ran });
  const clockRunResponse = {
    status: 200,
    description: 'The clock after the run, and the tasks that ran, in order',
    schema: clockRunSchema,
  };
  app.openapi(
    {
      method: 'post',
      path: '/clock/advance-to-next',
      summary: "Move the clock to the next task's due time and run what is due then (fake timers' runToNext)",
      response: clockRunResponse,
    },
    async (c) => c.json(clockRun(await deps.clock.advanceToNext())),
  );
  app.openapi(
    {
      method: 'post',
      path: '/clock/run-until-idle',
      summary:
        'Move the clock from due task to due task, running each, until none is due within within_seconds (default ' +
        'a day) of the start',
      description:
        `At most ${String(MAX_IDLE_STEPS).replace(/\B(?=(\d{3})+$)/g, ',')} steps, for work that keeps ` +
        `scheduling itself (a recurring export). Fake timers' runAll.`,
      body: clockRunUntilIdle,
      bodyOptional: true,
      response: clockRunResponse,
      errors: [httpError(400, 'The clock would go past what its microseconds hold exactly', { too_late: CLOCK_LIMIT })],
    },
    async (c, { body }) => {
      const seconds = body?.within_seconds ?? DEFAULT_IDLE_SECONDS;
      if (deps.clock.now() + seconds * MICROS_PER_SECOND > LATEST_TIME) throw badRequest(CLOCK_LIMIT);
      return c.json(clockRun(await deps.clock.runUntilIdle({ withinSeconds: seconds })));
    },
  );

  app.openapi(
    {
      method: 'get',
      path: '/tasks',
      summary: 'The task in flight of each lane, longest running first, then the queued tasks, soonest first',
      response: { status: 200, description: 'The tasks, running then queued', schema: listedTasksSchema },
    },
    (c) => c.json(deps.tasks()),
  );

  const limitsResponse = { status: 200, description: 'The limits in force', schema: limitsSchema };
  app.openapi({ method: 'get', path: '/config', summary: 'The limits in force', response: limitsResponse }, (c) =>
    c.json(deps.limits.get()),
  );
  app.openapi(
    {
      method: 'patch',
      path: '/config',
      summary: 'Change some limits (until reset)',
      body: limitsPatch,
      response: limitsResponse,
    },
    (c, { body }) => {
      deps.limits.patch(body);
      return c.json(deps.limits.get());
    },
  );

  const faultsState = () => ({ ...deps.faults.describe(), revisions: deps.revisionFaults.describe() });
  app.openapi({ method: 'get', path: '/faults', summary: 'The armed knobs', response: faultsResponse }, (c) =>
    c.json(faultsState()),
  );
  app.openapi({ method: 'delete', path: '/faults', summary: 'Disarm every knob', response: faultsResponse }, (c) => {
    deps.faults.clear();
    deps.revisionFaults.clear();
    return c.json(faultsState());
  });
  app.openapi(
    {
      method: 'post',
      path: '/faults/destination-validations',
      summary: 'Make the next destination validations fail, by name',
      body: validationFaultRequest,
      response: faultsResponse,
    },
    (c, { body }) => {
      deps.faults.armValidation(body);
      return c.json(faultsState());
    },
  );
  app.openapi(
    {
      method: 'post',
      path: '/faults/export-runs',
      summary: 'Make the next export runs fail or slow',
      body: exportRunFaultRequest,
      response: faultsResponse,
    },
    (c, { body }) => {
      deps.faults.armExportRuns(body);
      return c.json(faultsState());
    },
  );
  app.openapi(
    {
      method: 'post',
      path: '/faults/revisions',
      summary: 'Make the next revisions fail at a stage',
      body: revisionFaultRequest,
      response: faultsResponse,
    },
    (c, { body }) => {
      deps.revisionFaults.arm(body);
      return c.json(faultsState());
    },
  );

  app.openapi(
    {
      method: 'put',
      path: '/workspaces/:workspace_id/tier',
      summary: "Change a workspace's plan",
      params: workspaceParams,
      body: tierChange,
      response: { status: 200, description: 'The workspace and its plan', schema: tierChangeSchema },
      errors: [WORKSPACE_NOT_FOUND],
    },
    (c, { params: { workspace_id }, body: { tier } }) => {
      if (!deps.workspaces.setTier(workspace_id, tier)) throw notFound(`Workspace ${workspace_id} not found`);
      return c.json({ id: workspace_id, tier });
    },
  );

  return app;
}
