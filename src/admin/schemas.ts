import { z } from 'zod';
import { exportRunFaultRequest, validationFaultRequest } from '../bulk-exports/faults.ts';
import { limitsPatch } from '../config.ts';
import { revisionFaultRequest } from '../deployments/faults.ts';
import { REVISION_STEP_STATUSES } from '../deployments/schemas.ts';
import { OBJSTORE_PERMISSIONS } from '../objstore/types.ts';
import { TIERS } from '../workspaces/store.ts';

// What the harness knobs answer: the served OpenAPI document's schemas for /_localplane.

const timestamp = z.iso.datetime({ offset: true });

export const healthSchema = z.object({ status: z.literal('ok'), objstore_url: z.string(), uptime_seconds: z.number() });

export const sessionViewSchema = z.object({
  id: z.guid(),
  name: z.string(),
  run_count: z.int(),
  first_run_start_time: timestamp.nullable(),
  last_run_start_time: timestamp.nullable(),
});

const fixtureKeySchema = z.object({
  access_key_id: z.string(),
  secret_access_key: z.string(),
  permissions: z.array(z.enum(OBJSTORE_PERMISSIONS)),
  description: z.string().optional(),
});

export const fixturesViewSchema = z.object({
  workspaces: z.array(
    z.object({
      id: z.guid(),
      name: z.string(),
      tier: z.enum(TIERS),
      api_key: z.string(),
      sessions: z.array(sessionViewSchema),
      self_hosted: z.boolean(),
      integrations: z.array(z.object({ id: z.guid(), repos: z.array(z.object({ id: z.int(), url: z.string(), default_branch: z.string() })) })),
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

export const resetSchema = z.object({ status: z.literal('reset') });

export const clockStateSchema = z.object({ now: timestamp, frozen: z.boolean() });

export const tasksSchema = z.array(z.object({ due_at: timestamp, label: z.string() }));

export const limitsSchema = limitsPatch.required().extend({
  revision_step_seconds: z.strictObject(Object.fromEntries(REVISION_STEP_STATUSES.map((status) => [status, z.number()]))),
});

const remaining = { remaining: z.int() };
export const faultsStateSchema = z.object({
  destination_validations: z.array(validationFaultRequest.extend(remaining)),
  export_runs: z.array(z.union(exportRunFaultRequest.options.map((option) => option.extend(remaining)))),
  revisions: z.array(revisionFaultRequest.extend(remaining)),
});

export const tierChangeSchema = z.object({ id: z.guid(), tier: z.enum(TIERS) });

export const objstoreJournalSchema = z.array(
  z.object({
    time: timestamp,
    method: z.string(),
    operation: z.string(),
    bucket: z.string().nullable(),
    key: z.string().nullable(),
    accessKeyId: z.string().nullable(),
    status: z.int(),
    errorCode: z.string().nullable(),
  }),
);

export const objstoreKeySchema = z.object({ access_key_id: z.string(), permissions: z.array(z.enum(OBJSTORE_PERMISSIONS)) });

export const runsAddedSchema = z.object({ added: z.int(), session: sessionViewSchema });
