import { z } from 'zod';
import { queryInteger, requestTimestamp } from '../shared/validation.ts';
import { EXPORT_STATUSES, RUN_STATUSES } from './statuses.ts';

export const DESTINATION_TYPES = ['objstore'] as const;
export const FORMATS = ['Parquet'] as const;
export const FORMAT_VERSIONS = ['v1', 'v2_beta'] as const;
export const COMPRESSIONS = ['none', 'gzip', 'snappy', 'zstandard'] as const;
export type FormatVersion = (typeof FORMAT_VERSIONS)[number];
export type Compression = (typeof COMPRESSIONS)[number];

/** Where the hosted service executes an export run's queries; localplane answers as its trace store does. */
export const EXECUTION_BACKENDS = ['clickhouse', 'smithdb'] as const;
export const EXECUTION_BACKEND: (typeof EXECUTION_BACKENDS)[number] = 'clickhouse';

/** A recurring export spawns a child export at most this many hours apart. */
export const MAX_INTERVAL_HOURS = 168;

const nullable = <S extends z.ZodType>(schema: S) => schema.nullable().optional();

export const objstoreClientConfig = z.object({
  addressing_style: nullable(z.enum(['auto', 'virtual', 'path'])),
  use_accelerate_endpoint: nullable(z.boolean()),
  payload_signing_enabled: nullable(z.boolean()),
  us_east_1_regional_endpoint: nullable(z.enum(['regional', 'legacy'])),
});

export const destinationConfig = z.object({
  endpoint_url: nullable(z.string().max(2048)),
  prefix: z.string().max(2048).default(''),
  bucket_name: nullable(z.string().min(3).max(63)),
  region: nullable(z.string().min(1)),
  objstore_additional_kwargs: nullable(z.record(z.string(), z.unknown())),
  config_kwargs_objstore: nullable(objstoreClientConfig),
  include_bucket_in_prefix: z.boolean().default(true),
  role_arn: nullable(z.string()),
});
export type DestinationConfig = z.output<typeof destinationConfig>;

export const destinationCredentials = z.object({
  access_key_id: z.string().min(1).max(255),
  secret_access_key: z.string().min(1).max(2048),
  session_token: nullable(z.string().max(2048)),
});
export type DestinationCredentials = z.output<typeof destinationCredentials>;

export const displayName = z
  .string()
  .min(1)
  .regex(/^[a-zA-Z0-9\-_ ']+$/);

export const destinationCreate = z.object({
  destination_type: z.enum(DESTINATION_TYPES).default('objstore'),
  display_name: displayName,
  config: destinationConfig,
  credentials: nullable(destinationCredentials),
});

export const destinationUpdate = z.object({ credentials: destinationCredentials });

export const exportCreate = z
  .object({
    bulk_export_destination_id: z.guid(),
    session_id: nullable(z.guid()),
    all_experiments: z.boolean().default(false),
    start_time: requestTimestamp,
    end_time: nullable(requestTimestamp),
    filter: nullable(z.string()),
    format: z.enum(FORMATS).default('Parquet'),
    format_version: z.enum(FORMAT_VERSIONS).default('v1'),
    compression: z.enum(COMPRESSIONS).default('gzip'),
    interval_hours: nullable(z.int().min(1).max(MAX_INTERVAL_HOURS)),
    export_fields: nullable(z.array(z.string())),
  })
  .superRefine((body, ctx) => {
    const oneProject = body.session_id !== null && body.session_id !== undefined;
    if (oneProject === body.all_experiments) {
      ctx.addIssue({ code: 'custom', message: 'Exactly one of session_id or all_experiments must be set', path: [] });
    }
    const oneTime = body.end_time !== null && body.end_time !== undefined;
    const recurring = body.interval_hours !== null && body.interval_hours !== undefined;
    if (oneTime === recurring) {
      ctx.addIssue({
        code: 'custom',
        message: 'Exactly one of end_time (one-time export) or interval_hours (recurring export) must be set',
        path: [],
      });
    } else if (oneTime && body.end_time! <= body.start_time) {
      ctx.addIssue({ code: 'custom', message: 'start_time must be before end_time', path: [] });
    }
  });
export type ExportCreate = z.output<typeof exportCreate>;

export const exportUpdate = z.object({ status: z.enum(['Cancelled']).default('Cancelled') });

export const listQuery = z.object({
  limit: queryInteger({ min: 1, max: 1000 }).default(100),
  offset: queryInteger({ min: 0 }).default(0),
});

export const runsFilterQuery = z.object({ source_bulk_export_id: z.guid() });

export const exportIdParams = z.object({ bulk_export_id: z.guid() });
export const runIdParams = z.object({ bulk_export_id: z.guid(), run_id: z.guid() });
export const destinationIdParams = z.object({ destination_id: z.guid() });

// Response shapes, as reference-openapi.json declares them.
const timestamp = z.iso.datetime({ offset: true });

export const destinationResponseSchema = z.object({
  destination_type: z.enum(DESTINATION_TYPES),
  display_name: z.string(),
  config: destinationConfig,
  id: z.guid(),
  tenant_id: z.guid(),
  created_at: timestamp,
  updated_at: timestamp,
  credentials_keys: z.array(z.string()),
});
export type DestinationResponse = z.infer<typeof destinationResponseSchema>;

export const exportResponseSchema = z.object({
  bulk_export_destination_id: z.guid(),
  /** null for an export of all experiments. */
  session_id: z.guid().nullable(),
  all_experiments: z.boolean(),
  start_time: timestamp,
  end_time: timestamp.nullable(),
  filter: z.string().nullable(),
  format: z.enum(FORMATS),
  format_version: z.enum(FORMAT_VERSIONS),
  compression: z.enum(COMPRESSIONS),
  interval_hours: z.int().nullable(),
  export_fields: z.array(z.string()).nullable(),
  id: z.guid(),
  tenant_id: z.guid(),
  status: z.enum(EXPORT_STATUSES),
  created_at: timestamp,
  updated_at: timestamp,
  finished_at: timestamp.nullable(),
  source_bulk_export_id: z.guid().nullable(),
});
export type ExportResponse = z.infer<typeof exportResponseSchema>;

export const runProgressSchema = z.object({
  rows_written: z.int(),
  exported_files: z.array(z.string()),
  export_path: z.string(),
  latest_cursor: z.string().nullable(),
  pending_upload: z
    .object({ target_cursor: z.string().nullable(), file_path: z.string(), rows_count: z.int() })
    .nullable(),
});

export const runResponseSchema = z.object({
  bulk_export_id: z.guid(),
  metadata: z.object({
    prefix: z.string(),
    start_time: timestamp,
    end_time: timestamp,
    execution_backend: z.enum(EXECUTION_BACKENDS).nullable(),
    result: runProgressSchema.nullable(),
  }),
  id: z.guid(),
  status: z.enum(RUN_STATUSES),
  retry_number: z.int(),
  errors: z.record(z.string(), z.string()).nullable(),
  created_at: timestamp,
  updated_at: timestamp,
  finished_at: timestamp.nullable(),
  start_time: timestamp,
  end_time: timestamp,
});
export type RunResponse = z.infer<typeof runResponseSchema>;

// The work the export runner schedules, as GET /_localplane/tasks describes each task beside its label.
const workspaceTask = { workspace_id: z.guid() };
/**
 * Starts what the concurrency limits allow in the workspace: waiting exports and their runs; completes exports whose
 * runs are done.
 */
export const exportDispatchTaskSchema = z.object({ kind: z.literal('export_dispatch'), ...workspaceTask });
export const RUN_STEPS = ['start', 'next_file', 'retry', 'resume'] as const;
export const exportRunStepTaskSchema = z.object({
  kind: z.literal('export_run_step'),
  ...workspaceTask,
  bulk_export_id: z.guid(),
  run_id: z.guid(),
  /**
   * `start`: the run's first file; `next_file`; `retry`: after a failed attempt; `resume`: after a restart or a
   * restore.
   */
  step: z.enum(RUN_STEPS),
  /** The attempt the step belongs to: 0, then 1 for the first retry, ... */
  retry_number: z.int(),
});
export const exportRunTimeLimitTaskSchema = z.object({
  kind: z.literal('export_run_time_limit'),
  ...workspaceTask,
  bulk_export_id: z.guid(),
  run_id: z.guid(),
});
export const exportTimeLimitTaskSchema = z.object({
  kind: z.literal('export_time_limit'),
  ...workspaceTask,
  bulk_export_id: z.guid(),
});
export const recurringExportSpawnTaskSchema = z.object({
  kind: z.literal('recurring_export_spawn'),
  ...workspaceTask,
  /** The recurring export whose child is made. */
  bulk_export_id: z.guid(),
  /** Which window the child covers: 0 for the first interval after start_time. */
  child_index: z.int(),
});
export type ExportDispatchTask = z.infer<typeof exportDispatchTaskSchema>;
export type ExportRunStepTask = z.infer<typeof exportRunStepTaskSchema>;
export type ExportRunTimeLimitTask = z.infer<typeof exportRunTimeLimitTaskSchema>;
export type ExportTimeLimitTask = z.infer<typeof exportTimeLimitTaskSchema>;
export type RecurringExportSpawnTask = z.infer<typeof recurringExportSpawnTaskSchema>;
