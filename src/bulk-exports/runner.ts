import type { Limits } from '../config.ts';
import type { Clock } from '../shared/clock.ts';
import type { IdGenerator } from '../shared/ids.ts';
import type { Scheduler } from '../shared/scheduler.ts';
import { MICROS_PER_DAY, MICROS_PER_HOUR, MICROS_PER_SECOND, startOfUtcDay, type Micros } from '../shared/time.ts';
import { compileFilter } from '../tracing/filter.ts';
import { RUN_COLUMNS, type RunColumn } from '../tracing/schema.ts';
import type { RunCursor, TracingStore } from '../tracing/store.ts';
import { objectSize, uploadFile, type ObjstoreTarget } from '../objstore/client.ts';
import type { BulkExportFaults } from './faults.ts';
import type { encodeRunsParquet } from './parquet.ts';
import { TERMINAL_STATUSES, type ExportStatus } from './schemas.ts';
import { runFolder } from './paths.ts';
import { parseConfig, type BulkExportStore, type ExportRow, type ExportRunRow } from './store.ts';

export interface RunnerDeps {
  store: BulkExportStore;
  tracing: TracingStore;
  scheduler: Scheduler;
  clock: Clock;
  ids: IdGenerator;
  limits: () => Limits;
  faults: BulkExportFaults;
  resolveEndpoint: (endpointUrl: string | null | undefined) => string;
}

const seconds = (value: number): Micros => Math.round(value * MICROS_PER_SECOND);

let parquetEncoder: Promise<typeof encodeRunsParquet> | null = null;

/** apache-arrow and parquet-wasm take a tenth of a second to load: only once an export runs, not at start. */
function loadParquetEncoder(): Promise<typeof encodeRunsParquet> {
  return (parquetEncoder ??= import('./parquet.ts').then((module) => module.encodeRunsParquet));
}

export function encodeCursor(cursor: RunCursor): string {
  return `${cursor.startTime}:${cursor.id}`;
}

function decodeCursor(text: string | null): RunCursor | null {
  if (!text) return null;
  const split = text.indexOf(':');
  return { startTime: Number(text.slice(0, split)), id: text.slice(split + 1) };
}

/** Splits [start, end) at UTC midnights: one export run per day partition. */
export function dayPartitions(start: Micros, end: Micros): [Micros, Micros][] {
  const partitions: [Micros, Micros][] = [];
  for (let day = startOfUtcDay(start); day < end; day += MICROS_PER_DAY) {
    partitions.push([Math.max(start, day), Math.min(end, day + MICROS_PER_DAY)]);
  }
  return partitions;
}

/**
 * Executes exports on the emulator clock. An export is split into one run per UTC day;
 * runs go one after another, each run encodes one Parquet file per scheduler step (while
 * the previous file uploads), so slow runs, retries, time-outs and cancellation all happen
 * between steps.
 */
interface PendingFile {
  /** `<bucket>/<key>` as exported_files lists it. */
  file: string;
  rows: number;
  /** The cursor after this file's last row. */
  cursor: string;
  upload: () => Promise<void>;
  done?: Promise<void>;
}

export class ExportRunner {
  private readonly uploads = new Map<string, PendingFile & { done: Promise<void> }>();

  constructor(private readonly deps: RunnerDeps) {}

  /** Starts a newly created export: plans its runs, or schedules a recurring export's first child. */
  launch(exportRow: ExportRow): void {
    if (exportRow.interval_hours !== null) {
      this.scheduleSpawn(exportRow, exportRow.next_child_index);
      return;
    }
    const now = this.deps.clock.now();
    this.deps.store.transaction(() => {
      for (const [start, end] of dayPartitions(exportRow.start_time, exportRow.end_time!)) {
        this.deps.store.insertRun({
          id: this.deps.ids.uuid(),
          bulk_export_id: exportRow.id,
          status: 'Created',
          retry_number: 0,
          errors: null,
          created_at: now,
          updated_at: now,
          finished_at: null,
          start_time: start,
          end_time: end,
          started_at: null,
          rows_written: 0,
          exported_files: '[]',
          latest_cursor: null,
          access_key_id: null,
          secret_access_key: null,
          session_token: null,
          failing_attempts: 0,
          step_delay: 0,
        });
      }
    });
    this.scheduleAdvance(exportRow.id, now);
  }

  /** Cancels an export; a recurring export's future children are not spawned, running ones go on. */
  cancel(exportRow: ExportRow): void {
    const now = this.deps.clock.now();
    this.deps.store.transaction(() => {
      this.finishExport(exportRow.id, 'Cancelled', now);
    });
  }

  /** Re-schedules the work implied by persisted state, after a restart on a kept --data-dir. */
  recover(): void {
    const now = this.deps.clock.now();
    for (const exportRow of this.deps.store.activeExports()) {
      if (exportRow.status === 'IntervalScheduled') this.scheduleSpawn(exportRow, exportRow.next_child_index);
      else this.scheduleAdvance(exportRow.id, now);
    }
  }

  private scheduleAdvance(exportId: string, at: Micros): void {
    this.deps.scheduler.schedule(at, `advance export ${exportId}`, () => this.advance(exportId));
  }

  private scheduleStep(runId: string, at: Micros): void {
    this.deps.scheduler.schedule(at, `export run step ${runId}`, () => this.step(runId));
  }

  private scheduleSpawn(parent: ExportRow, index: number): void {
    const interval = parent.interval_hours! * MICROS_PER_HOUR;
    const dueAt = parent.start_time + (index + 1) * interval + seconds(this.deps.limits().recurring_start_delay_seconds);
    this.deps.scheduler.schedule(dueAt, `spawn child ${index} of ${parent.id}`, () => this.spawn(parent.id, index));
  }

  private spawn(parentId: string, index: number): void {
    const parent = this.deps.store.exportById(parentId);
    if (!parent || parent.status !== 'IntervalScheduled' || parent.next_child_index !== index) return;
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
    this.scheduleSpawn({ ...parent, next_child_index: index + 1 }, index + 1);
  }

  /** Moves an export to its next run, or finishes it when every run is done. */
  private advance(exportId: string): void {
    const exportRow = this.deps.store.exportById(exportId);
    if (!exportRow || TERMINAL_STATUSES.includes(exportRow.status)) return;
    const now = this.deps.clock.now();
    const next = this.deps.store.runsOf(exportId).find((run) => run.status === 'Created' || run.status === 'Running');
    if (!next) {
      this.deps.store.updateExport(exportId, { status: 'Completed', finished_at: now, updated_at: now });
      return;
    }
    if (next.status === 'Running') {
      this.scheduleStep(next.id, now);
      this.scheduleTimeLimits(exportRow, next);
      return;
    }
    const destination = this.deps.store.destinationById(exportRow.bulk_export_destination_id);
    const effect = this.deps.faults.takeRun(next.id);
    const started: Partial<ExportRunRow> = {
      status: 'Running',
      started_at: now,
      updated_at: now,
      access_key_id: destination?.access_key_id ?? null,
      secret_access_key: destination?.secret_access_key ?? null,
      session_token: destination?.session_token ?? null,
      failing_attempts: effect.failingAttempts,
      step_delay: effect.stepDelay,
    };
    this.deps.store.transaction(() => {
      this.deps.store.updateRun(next.id, started);
      if (exportRow.status === 'Created') {
        this.deps.store.updateExport(exportId, { status: 'Running', started_at: now, updated_at: now });
      }
    });
    const running = { ...next, ...started } as ExportRunRow;
    this.scheduleTimeLimits({ ...exportRow, started_at: exportRow.started_at ?? now }, running);
    this.scheduleStep(next.id, now + running.step_delay);
  }

  private scheduleTimeLimits(exportRow: ExportRow, run: ExportRunRow): void {
    const limits = this.deps.limits();
    const enforce = () => void this.enforceTimeLimits(run.id);
    this.deps.scheduler.schedule(run.started_at! + seconds(limits.export_run_time_limit_seconds), `time limit of run ${run.id}`, enforce);
    this.deps.scheduler.schedule(exportRow.started_at! + seconds(limits.export_time_limit_seconds), `time limit of export ${exportRow.id}`, enforce);
  }

  /** TimedOut when the run or its export has been running longer than the configured limit. */
  private enforceTimeLimits(runId: string): boolean {
    const run = this.deps.store.runById(runId);
    if (!run || run.status !== 'Running') return false;
    const exportRow = this.deps.store.exportById(run.bulk_export_id)!;
    const limits = this.deps.limits();
    const now = this.deps.clock.now();
    const runExpired = now >= run.started_at! + seconds(limits.export_run_time_limit_seconds);
    const exportExpired = now >= exportRow.started_at! + seconds(limits.export_time_limit_seconds);
    if (!runExpired && !exportExpired) return false;
    this.deps.store.transaction(() => {
      this.deps.store.updateRun(runId, { status: 'TimedOut', finished_at: now, updated_at: now });
      this.finishExport(exportRow.id, 'TimedOut', now);
    });
    return true;
  }

  /**
   * One scheduler step of a running run: encodes its next file while the previous one is
   * still uploading, then records the previous upload once the store confirmed it. A run
   * completes when no rows are left and its last upload is recorded.
   */
  private async step(runId: string): Promise<void> {
    const run = this.deps.store.runById(runId);
    if (!run || run.status !== 'Running') return this.abandonUpload(runId);
    if (this.enforceTimeLimits(runId)) return this.abandonUpload(runId);
    const exportRow = this.deps.store.exportById(run.bulk_export_id)!;
    if (TERMINAL_STATUSES.includes(exportRow.status)) return this.abandonUpload(runId);
    let more: boolean;
    try {
      if (run.failing_attempts !== 0) {
        if (run.failing_attempts > 0) this.deps.store.updateRun(runId, { failing_attempts: run.failing_attempts - 1 });
        throw new Error(this.deps.faults.failureMessage(runId));
      }
      const inFlight = this.uploads.get(runId);
      const next = this.encodeNextFile(run, exportRow, inFlight, await loadParquetEncoder());
      await this.recordUpload(runId);
      if (next) this.uploads.set(runId, { ...next, done: next.upload() });
      more = next !== null;
    } catch (error) {
      await this.abandonUpload(runId);
      this.failAttempt(runId, error instanceof Error ? error.message : String(error));
      return;
    }
    const current = this.deps.store.runById(runId)!;
    if (current.status !== 'Running') return this.abandonUpload(runId);
    const now = this.deps.clock.now();
    if (more) {
      this.scheduleStep(runId, now + current.step_delay);
      return;
    }
    this.deps.store.updateRun(runId, { status: 'Completed', finished_at: now, updated_at: now });
    this.scheduleAdvance(exportRow.id, now);
  }

  /** Reads and encodes the run's next file after what was written or is uploading; null when no rows are left. */
  private encodeNextFile(run: ExportRunRow, exportRow: ExportRow, inFlight: PendingFile | undefined, encode: typeof encodeRunsParquet): PendingFile | null {
    const limits = this.deps.limits();
    const written = JSON.parse(run.exported_files) as string[];
    if (inFlight && inFlight.rows < limits.export_rows_per_file) return null;
    const rows = this.deps.tracing.runsPage({
      sessionId: exportRow.session_id,
      from: run.start_time,
      to: run.end_time,
      after: decodeCursor(inFlight?.cursor ?? run.latest_cursor),
      limit: limits.export_rows_per_file,
      filter: exportRow.filter ? compileFilter(exportRow.filter) : null,
    });
    if (rows.length === 0) return null;
    const destination = this.deps.store.destinationById(exportRow.bulk_export_destination_id);
    if (!destination) throw new Error('The bulk export destination no longer exists');
    const config = parseConfig(destination);
    const columns = exportRow.export_fields ? (JSON.parse(exportRow.export_fields) as RunColumn[]) : RUN_COLUMNS;
    const body = encode(rows, {
      formatVersion: exportRow.format_version,
      compression: exportRow.compression,
      columns,
      rowGroupSize: limits.export_row_group_size,
    });
    const sequence = written.length + (inFlight ? 1 : 0);
    const key = `${runFolder(config.prefix, exportRow, run.start_time)}/${run.id}_${sequence}.parquet`;
    const target: ObjstoreTarget = {
      endpoint: this.deps.resolveEndpoint(config.endpoint_url),
      region: config.region ?? 'us-east-1',
      credentials: {
        accessKeyId: run.access_key_id ?? '',
        secretAccessKey: run.secret_access_key ?? '',
        ...(run.session_token ? { sessionToken: run.session_token } : {}),
      },
    };
    const bucket = config.bucket_name!;
    const last = rows.at(-1)!;
    return {
      file: config.include_bucket_in_prefix ? `${bucket}/${key}` : key,
      rows: rows.length,
      cursor: encodeCursor({ startTime: last.start_time, id: last.id }),
      upload: async () => {
        await uploadFile(target, bucket, key, body, limits.multipart_part_size_bytes);
        const size = await objectSize(target, bucket, key);
        if (size !== null && size !== body.byteLength) {
          throw new Error(`Uploaded file ${key} has ${size} bytes, expected ${body.byteLength}`);
        }
      },
    };
  }

  /** Waits for the run's in-flight upload and records it: rows, file, cursor. Throws its failure. */
  private async recordUpload(runId: string): Promise<void> {
    const pending = this.uploads.get(runId);
    if (!pending) return;
    this.uploads.delete(runId);
    await pending.done;
    const run = this.deps.store.runById(runId)!;
    this.deps.store.updateRun(runId, {
      rows_written: run.rows_written + pending.rows,
      exported_files: JSON.stringify([...(JSON.parse(run.exported_files) as string[]), pending.file]),
      latest_cursor: pending.cursor,
      updated_at: this.deps.clock.now(),
    });
  }

  /** Lets an upload the run no longer needs settle, so its failure is neither recorded nor unhandled. */
  private async abandonUpload(runId: string): Promise<void> {
    const pending = this.uploads.get(runId);
    this.uploads.delete(runId);
    await pending?.done.catch(() => undefined);
  }

  /** Records an attempt's error under retry_N, then retries later or fails the run and its export. */
  private failAttempt(runId: string, message: string): void {
    const run = this.deps.store.runById(runId)!;
    const now = this.deps.clock.now();
    const errors = { ...(run.errors ? (JSON.parse(run.errors) as Record<string, string>) : {}), [`retry_${run.retry_number}`]: message };
    const limits = this.deps.limits();
    if (run.retry_number >= limits.export_run_max_retries) {
      this.deps.store.transaction(() => {
        this.deps.store.updateRun(runId, { status: 'Failed', errors: JSON.stringify(errors), finished_at: now, updated_at: now });
        this.finishExport(run.bulk_export_id, 'Failed', now);
      });
      return;
    }
    this.deps.store.updateRun(runId, { errors: JSON.stringify(errors), retry_number: run.retry_number + 1, updated_at: now });
    this.scheduleStep(runId, now + seconds(limits.export_run_retry_delay_seconds));
  }

  /** Ends an export; its runs that had not finished end Cancelled. */
  private finishExport(exportId: string, status: ExportStatus, now: Micros): void {
    this.deps.store.updateExport(exportId, { status, finished_at: now, updated_at: now });
    for (const run of this.deps.store.runsOf(exportId)) {
      if (run.status === 'Created' || run.status === 'Running') {
        this.deps.store.updateRun(run.id, { status: 'Cancelled', finished_at: now, updated_at: now });
      }
    }
  }
}
