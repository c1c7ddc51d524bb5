import { z } from 'zod';
import type { RunningTask, ScheduledTask } from '../shared/scheduler.ts';
import { formatTimestamp } from '../shared/time.ts';
import { objstoreKeySchema } from '../objstore/key-routes.ts';
import { sessionViewSchema } from '../tracing/knob-routes.ts';
import { exportRunFaultRequest, validationFaultRequest } from '../bulk-exports/faults.ts';
import {
  destinationResponseSchema,
  exportDispatchTaskSchema,
  exportResponseSchema,
  exportRunStepTaskSchema,
  exportRunTimeLimitTaskSchema,
  exportTimeLimitTaskSchema,
  recurringExportSpawnTaskSchema,
  runResponseSchema,
} from '../bulk-exports/schemas.ts';
import { limitsPatch, REVISION_STEP_STATUSES } from '../config.ts';
import { revisionFaultRequest } from '../deployments/faults.ts';
import { listenerResponseSchema } from '../deployments/listener-schemas.ts';
import {
  codehostIntegrationSchema,
  codehostRepositorySchema,
  deploymentDeletionTaskSchema,
  deploymentResponseSchema,
  oauthProviderResponseSchema,
  revisionResponseSchema,
  revisionStepTaskSchema,
} from '../deployments/schemas.ts';
import { OBJSTORE_PERMISSIONS } from '../objstore/types.ts';
import { TIERS } from '../workspaces/store.ts';

// What the harness knobs answer: the served OpenAPI document's schemas for /_localplane.

const timestamp = z.iso.datetime({ offset: true });

/**
 * What the scheduler's watchdog had to do since the start (each is a lost wake-up or a stuck task, and logged as an
 * error): 0 and 0 normally.
 */
const watchdogSchema = z.object({
  late_starts: z
    .int()
    .min(0)
    .describe(
      'Tasks it started because they were still waiting 5 s past their due time with their lane free and the ' +
        'clock running',
    ),
  overruns: z
    .int()
    .min(0)
    .describe('Tasks in flight past `task_in_flight_limit_seconds`, whose lane it let go on without them'),
});
export const healthSchema = z.object({
  status: z.literal('ok'),
  objstore_url: z.string().nullable(),
  uptime_seconds: z.number(),
  watchdog: watchdogSchema,
});
export type Health = z.output<typeof healthSchema>;

const fixtureKeySchema = z.object({
  access_key_id: z.string(),
  secret_access_key: z.string(),
  permissions: z.array(z.enum(OBJSTORE_PERMISSIONS)),
  description: z.string().optional(),
});

/** A workspace as the fixtures view and the state dump begin it (the dump masks the API key). */
const workspaceViewSchema = z.object({
  id: z.guid(),
  name: z.string(),
  tier: z.enum(TIERS),
  api_key: z.string(),
  self_hosted: z.boolean(),
  sessions: z.array(sessionViewSchema),
});

export const fixturesViewSchema = z.object({
  workspaces: z.array(
    workspaceViewSchema.extend({
      integrations: z.array(
        z.object({
          id: z.guid(),
          repos: z.array(z.object({ id: z.int(), url: z.string(), default_branch: z.string() })),
        }),
      ),
      listeners: z.array(z.string()),
      deployments: z.array(z.object({ id: z.guid(), name: z.string(), source: z.string() })),
    }),
  ),
  unknown_api_key: z.string(),
  objstore: z.object({
    endpoint_url: z.string(),
    buckets: z.array(z.string()),
    public_buckets: z.array(z.string()),
    keys: z.array(fixtureKeySchema),
    files_dir: z.string().nullable(),
    endpoint_aliases: z.array(z.string()),
  }),
});
export type FixturesView = z.output<typeof fixturesViewSchema>;

export const resetSchema = z.object({ status: z.literal('reset'), workspace_id: z.guid().optional() });

export const clockStateSchema = z.object({ now: timestamp, frozen: z.boolean() });
export type ClockState = z.output<typeof clockStateSchema>;

/**
 * A task of every kind, each with `head` first: then when it is due and its label (as before kinds were added), then
 * what it does to which resources: the fields of its `kind`.
 */
const taskOfEveryKind = <H extends z.ZodRawShape>(head: H) => {
  const task = <S extends z.ZodRawShape>(subject: z.ZodObject<S>) =>
    z.object({ ...head, due_at: timestamp, label: z.string(), ...subject.shape });
  return z.discriminatedUnion('kind', [
    task(revisionStepTaskSchema),
    task(deploymentDeletionTaskSchema),
    task(exportDispatchTaskSchema),
    task(exportRunStepTaskSchema),
    task(exportRunTimeLimitTaskSchema),
    task(exportTimeLimitTaskSchema),
    task(recurringExportSpawnTaskSchema),
  ]);
};
/**
 * A task as the clock's runs (`ran`) and the state dump (`pending_tasks`) list it: without a `state`, which each list's
 * name says.
 */
const taskSchema = taskOfEveryKind({});
export type Task = z.infer<typeof taskSchema>;
const tasksSchema = z.array(taskSchema);

/** A task as GET /_localplane/tasks lists it: in flight since `started_at` (emulator clock), or queued. */
const listedTaskSchema = z.discriminatedUnion('state', [
  taskOfEveryKind({
    state: z.literal('running').describe('In flight: started, not ended yet'),
    started_at: timestamp.describe('When it started, on the emulator clock'),
  }),
  taskOfEveryKind({ state: z.literal('queued').describe('Not started: waiting for its due time or for its lane') }),
]);
export type ListedTask = z.infer<typeof listedTaskSchema>;
export const listedTasksSchema = z.array(listedTaskSchema);

/**
 * A scheduled task as the admin API shows it; the domains type each subject with its kind's schema (taskSchema lists
 * them).
 */
export const taskView = (task: ScheduledTask) =>
  ({ due_at: formatTimestamp(task.dueAt), label: task.label, ...task.subject }) as Task;

/**
 * GET /_localplane/tasks: the task in flight of each lane, longest running first, then the queued ones, soonest first.
 */
export const listedTasks = (running: readonly RunningTask[], queued: readonly ScheduledTask[]): ListedTask[] => [
  ...running.map(({ task, startedAt }) => ({
    state: 'running' as const,
    started_at: formatTimestamp(startedAt),
    ...taskView(task),
  })),
  ...queued.map((task) => ({ state: 'queued' as const, ...taskView(task) })),
];

/** The clock after a run of due work, and the tasks that ran, in order. */
export const clockRunSchema = z.object({ now: timestamp, frozen: z.boolean(), ran: tasksSchema });
export type ClockRun = z.output<typeof clockRunSchema>;

export const limitsSchema = limitsPatch.required().extend({
  revision_step_seconds: z.strictObject(
    Object.fromEntries(REVISION_STEP_STATUSES.map((status) => [status, z.number()])),
  ),
});

const remaining = { remaining: z.int() };
export const faultsStateSchema = z.object({
  destination_validations: z.array(validationFaultRequest.extend(remaining)),
  export_runs: z.array(z.union(exportRunFaultRequest.options.map((option) => option.extend(remaining)))),
  revisions: z.array(revisionFaultRequest.extend(remaining)),
});
export type FaultsState = z.output<typeof faultsStateSchema>;

export const tierChangeSchema = z.object({ id: z.guid(), tier: z.enum(TIERS) });
export type TierChange = z.output<typeof tierChangeSchema>;

/** GET /_localplane/state: every resource in the API's own shapes, secrets masked. */
export const stateSchema = z.object({
  clock: clockStateSchema,
  limits: limitsSchema,
  workspaces: z.array(
    workspaceViewSchema.extend({
      destinations: z.array(destinationResponseSchema),
      bulk_exports: z.array(exportResponseSchema.extend({ runs: z.array(runResponseSchema) })),
      deployments: z.array(deploymentResponseSchema.extend({ revisions: z.array(revisionResponseSchema) })),
      listeners: z.array(listenerResponseSchema),
      oauth_providers: z.array(oauthProviderResponseSchema),
      codehost_integrations: z.array(codehostIntegrationSchema.extend({ repos: z.array(codehostRepositorySchema) })),
    }),
  ),
  objstore: z.object({
    url: z.string().nullable(),
    files_dir: z.string().nullable(),
    buckets: z.array(z.object({ name: z.string(), objects: z.array(z.object({ key: z.string(), size: z.int() })) })),
    keys: z.array(objstoreKeySchema),
  }),
  faults: faultsStateSchema,
  pending_tasks: tasksSchema,
});
export type State = z.output<typeof stateSchema>;
