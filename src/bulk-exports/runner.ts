import { setImmediate as nextTurn } from 'node:timers/promises';

import type { InstanceLimits, Limits } from '../config.ts';
import type { ProgressListener } from '../progress.ts';
import type { Clock } from '../shared/clock.ts';
import type { IdGenerator } from '../shared/ids.ts';
import type { ScheduledTask, Scheduler } from '../shared/scheduler.ts';
import { dayPartitions, MICROS_PER_HOUR, MICROS_PER_SECOND, type Micros } from '../shared/time.ts';
import { compileFilter } from '../tracing/filter.ts';
import { RUN_COLUMNS, type RunColumn } from '../tracing/schema.ts';
import type { RunCursor } from '../tracing/pages.ts';
import type { TracingStore } from '../tracing/store.ts';
import { ObjstoreError, type ObjstoreClients, type ObjstoreConnection } from '../destinations/clients.ts';
import type { BulkExportFaults } from './faults.ts';
import type { EncodeRequest, EncoderThread } from './encoder-thread.ts';
import type { ExportStatus } from './statuses.ts';
import { runFolder } from './paths.ts';
import type {
  ExportDispatchTask,
  ExportRunStepTask,
  ExportRunTimeLimitTask,
  ExportTimeLimitTask,
  RecurringExportSpawnTask,
  RUN_STEPS,
} from './schemas.ts';
import { parseConfig, plannedRun, type BulkExportStore, type ExportRow, type ExportRunRow } from './store.ts';

export interface RunnerDeps {
  store: BulkExportStore;
  tracing: TracingStore;
  scheduler: Scheduler;
  clock: Clock;
  ids: IdGenerator;
  limits: InstanceLimits;
  faults: BulkExportFaults;
  objstoreClients: ObjstoreClients;
  resolveEndpoint: (endpointUrl: string | null | undefined) => Promise<string>;
  /** Reads and encodes the export files off the API thread. */
  encoder: EncoderThread;
  /** Told of each export's progress: every file recorded, every run ended. */
  progress?: ProgressListener;
}

const seconds = (value: number): Micros => Math.round(value * MICROS_PER_SECOND);

/**
 * Where a run goes on reading: after the last row written, in the tracing project it was
 * reading when the export covers all experiments (null for an export of one project).
 */
interface RunPosition {
  sessionId: string | null;
  after: RunCursor | null;
}

/** `<start_time>:<run id>`, after `<session id>/` for an export of all experiments. */
function encodePosition(position: { sessionId: string | null; after: RunCursor }): string {
  const cursor = `${position.after.startTime}:${position.after.id}`;
  return position.sessionId === null ? cursor : `${position.sessionId}/${cursor}`;
}

function decodePosition(text: string | null): RunPosition {
  if (!text) return { sessionId: null, after: null };
  const slash = text.indexOf('/');
  const cursor = text.slice(slash + 1);
  const colon = cursor.indexOf(':');
  return {
    sessionId: slash === -1 ? null : text.slice(0, slash),
    after: { startTime: Number(cursor.slice(0, colon)), id: cursor.slice(colon + 1) },
  };
}

interface PendingFile {
  /** `<bucket>/<key>` as exported_files lists it. */
  file: string;
  rows: number;
  /** The cursor after this file's last row. */
  cursor: string;
  upload: () => Promise<void>;
}

interface UploadingFile extends PendingFile {
  /**
   * Settles when the upload ends, with its failure or null: it never rejects, so a failure cannot go unhandled while
   * the run waits.
   */
  outcome: Promise<unknown>;
}

/**
 * Frees an uploaded file's bytes at the next scavenge instead of the next full GC: the worker's
 * files are external memory to this thread, whose heap holds their handles long enough to promote
 * them, and V8 lets dead external memory grow by some 64 MB before it collects the old generation.
 * The bytes move into a clone that nothing references. Only after the store has answered: a
 * failed upload's request may still be writing them.
 */
function freeUploaded(bytes: Uint8Array): void {
  // Only a buffer the file has to itself, and never a pooled or shared one (not transferable).
  if (bytes.byteOffset !== 0 || bytes.byteLength !== bytes.buffer.byteLength) return;
  try {
    structuredClone(bytes.buffer, { transfer: [bytes.buffer as ArrayBuffer] });
  } catch {
    // Left to the garbage collector.
  }
}

/** A failure the run records: the store's own words for a storage failure. */
const describeError = (error: unknown) => (error instanceof Error ? error.message : String(error));

const workspaceLane = (tenantId: string) => `workspace ${tenantId}`;
const runLane = (runId: string) => `run ${runId}`;
const exportLane = (exportId: string) => `export ${exportId}`;

type RunStep = (typeof RUN_STEPS)[number];

/**
 * Executes exports on the emulator clock. An export is split into one run per UTC day.
 * A workspace executes up to `concurrent_exports_per_workspace` exports at once (the
 * others wait in Created, oldest first) and each export up to `concurrent_runs_per_export`
 * runs at once, in day order. A run encodes one Parquet file per scheduler step while the
 * previous file uploads, so slow runs, retries, time-outs and cancellation happen between
 * steps. Each run has its own scheduler lane (its steps and its time limit), each export
 * too (its time limit, a recurring export's spawns), so runs progress side by side.
 */
export class ExportRunner {
  private readonly uploads = new Map<string, UploadingFile>();
  private readonly queuedDispatches = new Map<string, ScheduledTask>();

  constructor(private readonly deps: RunnerDeps) {}

  /** Starts a newly created export: plans its runs, or schedules a recurring export's first child. */
  launch(exportRow: ExportRow): void {
    if (exportRow.interval_hours !== null) {
      this.scheduleSpawn(exportRow, exportRow.next_child_index);
      return;
    }
    const now = this.deps.clock.now();
    this.deps.store.transaction(() => {
      for (const day of dayPartitions(exportRow.start_time, exportRow.end_time!))
        this.deps.store.insertRun(plannedRun(this.deps.ids.uuid(), exportRow.id, day, now));
    });
    this.scheduleDispatch(exportRow.tenant_id, now);
  }

  /** Cancels an export; a recurring export's future children are not spawned, running ones go on. */
  cancel(exportRow: ExportRow): void {
    const now = this.deps.clock.now();
    this.deps.store.transaction(() => this.finishExport(exportRow.id, 'Cancelled', now));
    this.scheduleDispatch(exportRow.tenant_id, now);
  }

  /** Re-schedules the work implied by persisted state, after a restart on a kept --data-dir. */
  recover(): void {
    const now = this.deps.clock.now();
    const tenants = new Set<string>();
    for (const exportRow of this.deps.store.activeExports()) {
      if (exportRow.status === 'IntervalScheduled') {
        this.scheduleSpawn(exportRow, exportRow.next_child_index);
        continue;
      }
      tenants.add(exportRow.tenant_id);
      if (exportRow.status !== 'Running') continue;
      this.scheduleExportTimeLimit(exportRow);
      for (const run of this.deps.store.runsOf(exportRow.id)) {
        if (run.status === 'Running') this.scheduleRun(run, exportRow.tenant_id, now, 'resume');
      }
    }
    for (const tenantId of tenants) this.scheduleDispatch(tenantId, now);
  }

  /**
   * After the scheduler stopped every step (a reset, a restore): waits for the uploads still in
   * flight and forgets them, so that no object lands in the objstore once its state is replaced.
   */
  async stop(): Promise<void> {
    await this.settleUploads([...this.uploads.keys()]);
  }

  /**
   * Cancels every scheduled step of the workspace's exports, waits for those in flight and for their uploads, and
   * forgets them.
   */
  async stopWorkspace(tenantId: string): Promise<void> {
    const exports = this.deps.store.exports(tenantId, -1, 0);
    const runIds = exports.flatMap((exportRow) => this.deps.store.runsOf(exportRow.id).map((run) => run.id));
    await this.deps.scheduler.cancelLanes(
      new Set([workspaceLane(tenantId), ...exports.map((row) => exportLane(row.id)), ...runIds.map(runLane)]),
    );
    await this.settleUploads(runIds);
  }

  private async settleUploads(runIds: readonly string[]): Promise<void> {
    await Promise.all(runIds.flatMap((runId) => this.uploads.get(runId)?.outcome ?? []));
    for (const runId of runIds) this.uploads.delete(runId);
  }

  /**
   * A dispatch queued and not yet started covers every later request to dispatch: it reads the state when it starts.
   */
  private scheduleDispatch(tenantId: string, at: Micros): void {
    const queued = this.queuedDispatches.get(tenantId);
    if (queued && !queued.cancelled && queued.dueAt <= at) return;
    const subject: ExportDispatchTask = { kind: 'export_dispatch', workspace_id: tenantId };
    const task = this.deps.scheduler.schedule(
      at,
      workspaceLane(tenantId),
      `dispatch exports of workspace ${tenantId}`,
      subject,
      () => {
        if (this.queuedDispatches.get(tenantId) === task) this.queuedDispatches.delete(tenantId);
        this.dispatch(tenantId);
      },
    );
    this.queuedDispatches.set(tenantId, task);
  }

  /** The run's next step, of the attempt `run.retry_number`. */
  private scheduleStep(
    run: Pick<ExportRunRow, 'id' | 'bulk_export_id' | 'retry_number'>,
    tenantId: string,
    at: Micros,
    step: RunStep,
  ): void {
    const subject: ExportRunStepTask = {
      kind: 'export_run_step',
      workspace_id: tenantId,
      bulk_export_id: run.bulk_export_id,
      run_id: run.id,
      step,
      retry_number: run.retry_number,
    };
    this.deps.scheduler.schedule(at, runLane(run.id), `export run step ${run.id}`, subject, () => this.step(run.id));
  }

  private scheduleSpawn(parent: ExportRow, index: number): ScheduledTask {
    const interval = parent.interval_hours! * MICROS_PER_HOUR;
    const dueAt =
      parent.start_time + (index + 1) * interval + seconds(this.deps.limits.get().recurring_start_delay_seconds);
    const subject: RecurringExportSpawnTask = {
      kind: 'recurring_export_spawn',
      workspace_id: parent.tenant_id,
      bulk_export_id: parent.id,
      child_index: index,
    };
    return this.deps.scheduler.schedule(
      dueAt,
      exportLane(parent.id),
      `spawn child ${index} of ${parent.id}`,
      subject,
      () => this.spawn(parent.id, index),
    );
  }

  /**
   * Spawns the child of window `index` and schedules the next. A recurring export that starts
   * far back has a child due for every window since: while they are due, each spawn holds its
   * lane for one turn of the event loop, so requests are answered between them.
   */
  private spawn(parentId: string, index: number): Promise<void> | undefined {
    const parent = this.deps.store.exportById(parentId);
    if (!parent || parent.status !== 'IntervalScheduled' || parent.next_child_index !== index) return undefined;
    const now = this.deps.clock.now();
    const interval = parent.interval_hours! * MICROS_PER_HOUR;
    const child: ExportRow = {
      ...parent,
      id: this.deps.ids.uuid(),
      start_time: parent.start_time + index * interval,
      end_time: parent.start_time + (index + 1) * interval,
      interval_hours: null,
      status: 'Created',
      created_at: now,
      updated_at: now,
      finished_at: null,
      started_at: null,
      source_bulk_export_id: parent.id,
      next_child_index: 0,
    };
    this.deps.store.transaction(() => {
      this.deps.store.insertExport(child);
      this.deps.store.updateExport(parent.id, { next_child_index: index + 1, updated_at: now });
      this.launch(child);
    });
    const next = this.scheduleSpawn({ ...parent, next_child_index: index + 1 }, index + 1);
    return next.dueAt <= now ? nextTurn() : undefined;
  }

  /**
   * Starts what the concurrency limits allow in a workspace, oldest export first: runs of
   * the exports already running, then exports waiting for a slot; completes the exports
   * whose runs are all done.
   */
  private dispatch(tenantId: string): void {
    const limits = this.deps.limits.get();
    const now = this.deps.clock.now();
    const exports = this.deps.store.dispatchableExports(tenantId, limits.concurrent_exports_per_workspace);
    let running = exports.filter((exportRow) => exportRow.status === 'Running').length;
    for (const exportRow of exports) {
      if (exportRow.status === 'Created') {
        if (running >= limits.concurrent_exports_per_workspace) continue;
        running++;
      }
      this.startRuns(exportRow, limits, now);
    }
  }

  private startRuns(exportRow: ExportRow, limits: Limits, now: Micros): void {
    const { running, waiting: starting } = this.deps.store.startableRuns(
      exportRow.id,
      limits.concurrent_runs_per_export,
    );
    if (running === 0 && starting.length === 0) {
      this.deps.store.updateExport(exportRow.id, { status: 'Completed', finished_at: now, updated_at: now });
      this.deps.scheduler.cancelLane(exportLane(exportRow.id));
      this.reportProgress(exportRow.id);
      return;
    }
    if (starting.length === 0) return;
    const destination = this.deps.store.destinationById(exportRow.bulk_export_destination_id);
    const started = starting.map((run): ExportRunRow => {
      const effect = this.deps.faults.takeRun(run.id);
      return {
        ...run,
        status: 'Running',
        started_at: now,
        updated_at: now,
        access_key_id: destination?.access_key_id ?? null,
        secret_access_key: destination?.secret_access_key ?? null,
        session_token: destination?.session_token ?? null,
        failing_attempts: effect.failingAttempts,
        step_delay: effect.stepDelay,
      };
    });
    this.deps.store.transaction(() => {
      for (const run of started) this.deps.store.updateRun(run.id, run);
      if (exportRow.status === 'Created') {
        this.deps.store.updateExport(exportRow.id, { status: 'Running', started_at: now, updated_at: now });
      }
    });
    if (exportRow.status === 'Created') this.scheduleExportTimeLimit({ ...exportRow, started_at: now });
    for (const run of started) this.scheduleRun(run, exportRow.tenant_id, now + run.step_delay, 'start');
  }

  /** A running run's next step and its time limit, both in the run's lane. */
  private scheduleRun(run: ExportRunRow, tenantId: string, firstStepAt: Micros, firstStep: RunStep): void {
    const limit = run.started_at! + seconds(this.deps.limits.get().export_run_time_limit_seconds);
    const subject: ExportRunTimeLimitTask = {
      kind: 'export_run_time_limit',
      workspace_id: tenantId,
      bulk_export_id: run.bulk_export_id,
      run_id: run.id,
    };
    this.deps.scheduler.schedule(limit, runLane(run.id), `time limit of run ${run.id}`, subject, () =>
      this.timeOutRun(run.id),
    );
    this.scheduleStep(run, tenantId, firstStepAt, firstStep);
  }

  private scheduleExportTimeLimit(exportRow: ExportRow): void {
    const limit = exportRow.started_at! + seconds(this.deps.limits.get().export_time_limit_seconds);
    const subject: ExportTimeLimitTask = {
      kind: 'export_time_limit',
      workspace_id: exportRow.tenant_id,
      bulk_export_id: exportRow.id,
    };
    this.deps.scheduler.schedule(limit, exportLane(exportRow.id), `time limit of export ${exportRow.id}`, subject, () =>
      this.timeOutExport(exportRow.id),
    );
  }

  /** The run has been running for the configured limit: it and its export end TimedOut. */
  private timeOutRun(runId: string): void {
    const run = this.deps.store.runById(runId);
    if (!run || run.status !== 'Running') return;
    const now = this.deps.clock.now();
    this.endRun(run, { status: 'TimedOut' }, now);
  }

  /** The export has been running for the configured limit: it and its running runs end TimedOut. */
  private timeOutExport(exportId: string): void {
    const exportRow = this.deps.store.exportById(exportId);
    if (!exportRow || exportRow.status !== 'Running') return;
    const now = this.deps.clock.now();
    this.deps.store.transaction(() => this.finishExport(exportId, 'TimedOut', now, 'TimedOut'));
    this.dispatch(exportRow.tenant_id);
  }

  /**
   * One scheduler step of a running run: encodes its next file while the previous one is
   * still uploading, then records the previous upload once the store confirmed it. A run
   * completes when no rows are left and its last upload is recorded. Whatever fails in a
   * step is an attempt's error.
   */
  private async step(runId: string): Promise<void> {
    const run = this.deps.store.runById(runId);
    if (!run || run.status !== 'Running') return;
    const exportRow = this.deps.store.exportById(run.bulk_export_id)!;
    let next: PendingFile | null;
    try {
      if (run.failing_attempts !== 0) {
        if (run.failing_attempts > 0) this.deps.store.updateRun(runId, { failing_attempts: run.failing_attempts - 1 });
        throw new Error(this.deps.faults.failureMessage(runId));
      }
      next = await this.encodeNextFile(run, exportRow, this.uploads.get(runId), await this.endpointOf(exportRow));
      await this.recordUpload(runId);
    } catch (error) {
      await this.abandonUpload(runId);
      this.failAttempt(runId, exportRow.tenant_id, error);
      return;
    }
    // The run may have ended (cancelled, its export failed) while its upload finished.
    const current = this.deps.store.runById(runId);
    if (current?.status !== 'Running') return;
    const now = this.deps.clock.now();
    if (!next) {
      this.endRun(current, { status: 'Completed' }, now);
      return;
    }
    this.uploads.set(runId, {
      ...next,
      outcome: next.upload().then(
        () => null,
        (error: unknown) => error,
      ),
    });
    this.scheduleStep(current, exportRow.tenant_id, now + current.step_delay, 'next_file');
  }

  /** The endpoint the export's destination is served from (null when the destination is gone). */
  private async endpointOf(exportRow: ExportRow): Promise<string | null> {
    const destination = this.deps.store.destinationById(exportRow.bulk_export_destination_id);
    return destination ? this.deps.resolveEndpoint(parseConfig(destination).endpoint_url) : null;
  }

  /** Reads and encodes the run's next file after what was written or is uploading; null when no rows are left. */
  private async encodeNextFile(
    run: ExportRunRow,
    exportRow: ExportRow,
    inFlight: PendingFile | undefined,
    endpoint: string | null,
  ): Promise<PendingFile | null> {
    const limits = this.deps.limits.get();
    const written = JSON.parse(run.exported_files) as string[];
    // A one-project export's short file was its last: nothing is left to read.
    if (inFlight && exportRow.session_id !== null && inFlight.rows < limits.export_rows_per_file) return null;
    const encoded = await this.deps.encoder.encode({
      reads: this.projectReads(exportRow, decodePosition(inFlight?.cursor ?? run.latest_cursor)),
      from: run.start_time,
      to: run.end_time,
      limit: limits.export_rows_per_file,
      filter: exportRow.filter ? compileFilter(exportRow.filter) : null,
      parquet: {
        formatVersion: exportRow.format_version,
        compression: exportRow.compression,
        columns: exportRow.export_fields ? (JSON.parse(exportRow.export_fields) as RunColumn[]) : RUN_COLUMNS,
        rowGroupSize: limits.export_row_group_size,
      },
    });
    if (!encoded) return null;
    const { sessionId, parquet: body } = encoded;
    const destination = this.deps.store.destinationById(exportRow.bulk_export_destination_id);
    if (!destination || endpoint === null) throw new Error('The bulk export destination no longer exists');
    const config = parseConfig(destination);
    const sequence = written.length + (inFlight ? 1 : 0);
    const key = `${runFolder(config.prefix, exportRow, sessionId, run.start_time)}/${run.id}_${sequence}.parquet`;
    const target: ObjstoreConnection = {
      endpoint,
      region: config.region ?? 'us-east-1',
      credentials: {
        accessKeyId: run.access_key_id ?? '',
        secretAccessKey: run.secret_access_key ?? '',
        ...(run.session_token ? { sessionToken: run.session_token } : {}),
      },
    };
    const bucket = config.bucket_name!;
    return {
      file: config.include_bucket_in_prefix ? `${bucket}/${key}` : key,
      rows: encoded.rows,
      cursor: encodePosition({ sessionId: exportRow.session_id === null ? sessionId : null, after: encoded.last }),
      upload: async () => {
        await this.deps.objstoreClients.uploadFile(target, bucket, key, body, limits.multipart_part_size_bytes);
        const size = await this.deps.objstoreClients.objectSize(target, bucket, key);
        if (size !== null && size !== body.byteLength) {
          throw new Error(`Uploaded file ${key} has ${size} bytes, expected ${body.byteLength}`);
        }
        freeUploaded(body);
      },
    };
  }

  /**
   * Where the run's next rows are, after `position`: in the export's project or, for all
   * experiments, in the workspace's projects in id order (one project per file, a project
   * made meanwhile included), the first of them with rows.
   */
  private projectReads(exportRow: ExportRow, position: RunPosition): EncodeRequest['reads'] {
    if (exportRow.session_id !== null) return [{ sessionId: exportRow.session_id, after: position.after }];
    return this.deps.tracing
      .sessionsOf(exportRow.tenant_id)
      .map((session) => session.id)
      .filter((id) => position.sessionId === null || id >= position.sessionId)
      .sort()
      .map((sessionId) => ({
        sessionId,
        after: position.sessionId === null || sessionId === position.sessionId ? position.after : null,
      }));
  }

  /** Waits for the run's in-flight upload and records it: rows, file, cursor. Throws its failure. */
  private async recordUpload(runId: string): Promise<void> {
    const pending = this.uploads.get(runId);
    if (!pending) return;
    this.uploads.delete(runId);
    const failure = await pending.outcome;
    if (failure !== null) throw failure;
    const run = this.deps.store.runById(runId)!;
    this.deps.store.updateRun(runId, {
      rows_written: run.rows_written + pending.rows,
      exported_files: JSON.stringify([...(JSON.parse(run.exported_files) as string[]), pending.file]),
      latest_cursor: pending.cursor,
      updated_at: this.deps.clock.now(),
    });
    this.reportProgress(run.bulk_export_id);
  }

  private reportProgress(exportId: string): void {
    if (!this.deps.progress) return;
    const exportRow = this.deps.store.exportById(exportId);
    if (!exportRow) return;
    const totals = this.deps.store.runTotals(exportId);
    this.deps.progress({
      kind: 'export',
      exportId,
      status: exportRow.status,
      runsDone: totals.done,
      runsTotal: totals.total,
      rowsWritten: totals.rowsWritten,
    });
  }

  /** Lets an upload the run no longer needs end (a retry writes its file again); its outcome is not recorded. */
  private async abandonUpload(runId: string): Promise<void> {
    const pending = this.uploads.get(runId);
    this.uploads.delete(runId);
    await pending?.outcome;
  }

  /**
   * Records an attempt's error under retry_N, then retries later, or fails the run and its
   * export when the retries are used up or the store's answer is one no retry can change.
   */
  private failAttempt(runId: string, tenantId: string, error: unknown): void {
    const run = this.deps.store.runById(runId);
    if (!run || run.status !== 'Running') return;
    const now = this.deps.clock.now();
    const errors = {
      ...(run.errors ? (JSON.parse(run.errors) as Record<string, string>) : {}),
      [`retry_${run.retry_number}`]: describeError(error),
    };
    const limits = this.deps.limits.get();
    const permanent = error instanceof ObjstoreError && error.permanent;
    if (permanent || run.retry_number >= limits.export_run_max_retries) {
      this.endRun(run, { status: 'Failed', errors: JSON.stringify(errors) }, now);
      return;
    }
    const retry = { ...run, retry_number: run.retry_number + 1 };
    this.deps.store.updateRun(runId, {
      errors: JSON.stringify(errors),
      retry_number: retry.retry_number,
      updated_at: now,
    });
    this.scheduleStep(retry, tenantId, now + seconds(limits.export_run_retry_delay_seconds), 'retry');
  }

  /**
   * Ends a run. A completed run frees its slot; a run that failed or timed out ends its
   * export the same way. Either way the workspace's waiting work may start.
   */
  private endRun(
    run: ExportRunRow,
    end: { status: 'Completed' | 'Failed' | 'TimedOut'; errors?: string },
    now: Micros,
  ): void {
    this.deps.store.transaction(() => {
      this.deps.store.updateRun(run.id, { ...end, finished_at: now, updated_at: now });
      if (end.status !== 'Completed') this.finishExport(run.bulk_export_id, end.status, now);
    });
    this.stopRun(run.id);
    this.reportProgress(run.bulk_export_id);
    this.dispatch(this.deps.store.exportById(run.bulk_export_id)!.tenant_id);
  }

  /** Drops a run's pending steps and time limit, and forgets its upload in flight (whose outcome never rejects). */
  private stopRun(runId: string): void {
    this.deps.scheduler.cancelLane(runLane(runId));
    this.uploads.delete(runId);
  }

  /**
   * Ends an export and cancels its pending work (time limits, steps, spawns). Its runs
   * that had not finished end Cancelled, or `runningRunsEnd` for those running.
   */
  private finishExport(
    exportId: string,
    status: ExportStatus,
    now: Micros,
    runningRunsEnd: 'Cancelled' | 'TimedOut' = 'Cancelled',
  ): void {
    this.deps.store.updateExport(exportId, { status, finished_at: now, updated_at: now });
    this.deps.scheduler.cancelLane(exportLane(exportId));
    for (const run of this.deps.store.runsOf(exportId)) {
      if (run.status !== 'Created' && run.status !== 'Running') continue;
      const runStatus = run.status === 'Running' ? runningRunsEnd : 'Cancelled';
      this.deps.store.updateRun(run.id, { status: runStatus, finished_at: now, updated_at: now });
      this.stopRun(run.id);
    }
  }
}
