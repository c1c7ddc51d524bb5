import type { Limits } from '../config.ts';
import { badRequest, notFound } from '../shared/errors.ts';
import type { IdGenerator } from '../shared/ids.ts';
import type { Micros } from '../shared/time.ts';
import { compileFilter, FilterSyntaxError } from '../tracing/filter.ts';
import { RUN_COLUMNS } from '../tracing/schema.ts';
import type { TracingStore } from '../tracing/store.ts';
import { checkCreateQuota } from './quotas.ts';
import type { DestinationCredentials, ExportCreate } from './schemas.ts';
import type { BulkExportStore, DestinationRow, ExportRow } from './store.ts';

export interface ExportCreationContext {
  store: BulkExportStore;
  tracing: TracingStore;
  limits: Limits;
  ids: IdGenerator;
  tenantId: string;
  now: Micros;
}

/** The names of the credential fields a destination keeps (its response's `credentials_keys`). */
export function credentialKeys(credentials: DestinationCredentials | null | undefined): string[] {
  if (!credentials) return [];
  return ['access_key_id', 'secret_access_key', ...(credentials.session_token ? ['session_token'] : [])];
}

/** The stored form of a destination's key pair. */
export function storedCredentials(credentials: DestinationCredentials | null | undefined) {
  return {
    access_key_id: credentials?.access_key_id ?? null,
    secret_access_key: credentials?.secret_access_key ?? null,
    session_token: credentials?.session_token ?? null,
  };
}

/** A destination's row, from a request already validated against the storage side. */
export function newDestination(
  body: {
    destination_type: DestinationRow['destination_type'];
    display_name: string;
    config: object;
    credentials?: DestinationCredentials | null;
  },
  context: { ids: IdGenerator; tenantId: string; now: Micros },
): DestinationRow {
  return {
    id: context.ids.uuid(),
    tenant_id: context.tenantId,
    destination_type: body.destination_type,
    display_name: body.display_name,
    config: JSON.stringify(body.config),
    credentials_keys: JSON.stringify(credentialKeys(body.credentials)),
    ...storedCredentials(body.credentials),
    created_at: context.now,
    updated_at: context.now,
  };
}

function checkFilter(filter: string | null | undefined): void {
  if (!filter) return;
  try {
    compileFilter(filter);
  } catch (error) {
    if (error instanceof FilterSyntaxError) throw badRequest(`Invalid filter: ${error.message}`);
    throw error;
  }
}

export const unknownExportFields = (fields: readonly string[]) =>
  `Invalid export_fields: ${fields.join(', ')}. Valid fields are: ${RUN_COLUMNS.join(', ')}`;

function checkExportFields(fields: readonly string[]): void {
  const unknownFields = fields.filter((field) => !(RUN_COLUMNS as readonly string[]).includes(field));
  if (unknownFields.length > 0) throw badRequest(unknownExportFields(unknownFields));
}

/**
 * The row of a new export, after the real service's checks in its order: the destination and
 * the session exist in the workspace (404), the filter parses and the fields exist (400), the
 * create quotas allow it (429). Nothing is stored here.
 */
export function newExport(body: ExportCreate, context: ExportCreationContext): ExportRow {
  const { store, tenantId, now } = context;
  if (!store.destination(tenantId, body.bulk_export_destination_id)) {
    throw notFound(`Bulk export destination ${body.bulk_export_destination_id} not found`);
  }
  if (body.session_id && !context.tracing.findSession(tenantId, body.session_id))
    throw notFound(`Session ${body.session_id} not found`);
  checkFilter(body.filter);
  checkExportFields(body.export_fields ?? []);
  const recurring = body.interval_hours !== null && body.interval_hours !== undefined;
  checkCreateQuota(store, context.limits, tenantId, recurring, now);
  return {
    id: context.ids.uuid(),
    tenant_id: tenantId,
    bulk_export_destination_id: body.bulk_export_destination_id,
    session_id: body.session_id ?? null,
    all_experiments: body.all_experiments ? 1 : 0,
    start_time: body.start_time,
    end_time: body.end_time ?? null,
    interval_hours: body.interval_hours ?? null,
    filter: body.filter ?? null,
    format: body.format,
    format_version: body.format_version,
    compression: body.compression,
    export_fields: body.export_fields
      ? JSON.stringify(RUN_COLUMNS.filter((column) => body.export_fields!.includes(column)))
      : null,
    status: recurring ? 'IntervalScheduled' : 'Created',
    created_at: now,
    updated_at: now,
    finished_at: null,
    started_at: null,
    source_bulk_export_id: null,
    next_child_index: 0,
  };
}
