import { z } from 'zod';
import { MAX_SPAN_SECONDS } from './shared/time.ts';

const seconds = z.number().min(0).max(MAX_SPAN_SECONDS);

/** The statuses a revision passes through on its way to DEPLOYED, in order: each lasts its `revision_step_seconds`. */
export const REVISION_STEP_STATUSES = [
  'CREATING',
  'QUEUED',
  'AWAITING_BUILD',
  'BUILDING',
  'AWAITING_DEPLOY',
  'DEPLOYING',
] as const;
export type RevisionStepStatus = (typeof REVISION_STEP_STATUSES)[number];

/** Emulator-clock seconds a new revision spends in each in-progress status. */
export type RevisionStepSeconds = Record<RevisionStepStatus, number>;
const revisionStepSeconds = z.strictObject(
  Object.fromEntries(REVISION_STEP_STATUSES.map((status) => [status, seconds])) as Record<
    RevisionStepStatus,
    typeof seconds
  >,
);

/**
 * Operational limits of the hosted service. They have changed over time there, so here
 * they are configuration (start options, and PATCH /_localplane/config at run time).
 * A patch names only what it changes; `revision_step_seconds` takes one number for
 * every step or an object of some steps.
 */
export const limitsPatch = z
  .strictObject({
    export_run_max_retries: z.int().min(0),
    export_run_retry_delay_seconds: seconds,
    export_run_time_limit_seconds: seconds.positive(),
    export_time_limit_seconds: seconds.positive(),
    /** Emulator-clock delay between a recurring window's end and the start of its child export. */
    recurring_start_delay_seconds: seconds,
    export_rows_per_file: z.int().min(1),
    export_row_group_size: z.int().min(1),
    multipart_part_size_bytes: z.int().min(5 * 1024 * 1024),
    revision_step_seconds: z.union([seconds, revisionStepSeconds.partial()]),
    /** Emulator-clock seconds a deleted deployment stays AWAITING_DELETE before it is gone (0: at once). */
    deployment_deletion_seconds: seconds,
    /** Exports a workspace may create in a rolling hour of the emulator clock (recurring children not counted). */
    export_creates_per_hour: z.int().min(0),
    /** Recurring exports (IntervalScheduled) a workspace may have at once. */
    recurring_exports_per_workspace: z.int().min(0),
    /** Runs of one export that execute at once. */
    concurrent_runs_per_export: z.int().min(1),
    /** Exports of one workspace that execute at once; the others wait in Created. */
    concurrent_exports_per_workspace: z.int().min(1),
    /** Rows POST /_localplane/sql answers at most; a result cut there says `truncated`. */
    sql_row_limit: z.int().min(1).max(100_000),
    /** Wall-clock seconds a query of POST /_localplane/sql may run before DuckDB is interrupted. */
    sql_time_limit_seconds: z.number().positive().max(3600),
    /**
     * Memory (MB) DuckDB may hold for POST /_localplane/sql and Parquet previews; its process is bounded a little
     * above.
     */
    sql_memory_limit_mb: z.int().min(100).max(1_000_000),
    /** Memory (MiB) the objstore's memory storage may hold in objects and upload parts together. */
    objstore_memory_limit_mb: z.int().min(1).max(1_000_000),
    /**
     * Wall-clock seconds a scheduled task may be in flight before the watchdog logs it and lets the tasks behind it in
     * its lane go on.
     */
    task_in_flight_limit_seconds: z.number().positive().max(MAX_SPAN_SECONDS),
  })
  .partial();
export type LimitsPatch = z.input<typeof limitsPatch>;

export interface Limits extends Required<Omit<z.output<typeof limitsPatch>, 'revision_step_seconds'>> {
  revision_step_seconds: RevisionStepSeconds;
}

export const DEFAULT_LIMITS: Limits = {
  export_run_max_retries: 20,
  export_run_retry_delay_seconds: 30,
  export_run_time_limit_seconds: 4 * 3600,
  export_time_limit_seconds: 72 * 3600,
  recurring_start_delay_seconds: 600,
  export_rows_per_file: 5_000,
  export_row_group_size: 2_500,
  multipart_part_size_bytes: 8 * 1024 * 1024,
  // A few seconds in all, so that a polling client sees every status go by.
  revision_step_seconds: { CREATING: 1, QUEUED: 1, AWAITING_BUILD: 1, BUILDING: 3, AWAITING_DEPLOY: 1, DEPLOYING: 3 },
  deployment_deletion_seconds: 0,
  export_creates_per_hour: 250,
  recurring_exports_per_workspace: 200,
  concurrent_runs_per_export: 45,
  concurrent_exports_per_workspace: 15,
  sql_row_limit: 1_000,
  sql_time_limit_seconds: 10,
  sql_memory_limit_mb: 1_000,
  objstore_memory_limit_mb: 1_024,
  task_in_flight_limit_seconds: 600,
};

/** `current` with the patch's fields changed (the patch is validated here). */
export function applyLimitsPatch(current: Limits, patch: LimitsPatch = {}): Limits {
  // Once per start or PATCH: zod's compiled fast path would cost more to generate than it saves.
  const { revision_step_seconds: steps, ...changes } = limitsPatch.parse(patch, { jitless: true });
  const stepSeconds =
    typeof steps === 'number'
      ? (Object.fromEntries(REVISION_STEP_STATUSES.map((status) => [status, steps])) as RevisionStepSeconds)
      : { ...current.revision_step_seconds, ...steps };
  return { ...current, ...changes, revision_step_seconds: stepSeconds };
}

/** The limits an instance has in force: set at start, patched at run time, put back by a reset or a restore. */
export class InstanceLimits {
  private current: Limits;

  constructor(private readonly initial: Limits) {
    this.current = initial;
  }

  get(): Limits {
    return this.current;
  }

  patch(changes: LimitsPatch): Limits {
    return (this.current = applyLimitsPatch(this.current, changes));
  }

  replace(limits: Limits): void {
    this.current = limits;
  }

  reset(): void {
    this.current = this.initial;
  }
}
