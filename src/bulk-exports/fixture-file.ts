import { z } from 'zod';
import { fixtureTimestamp, MAX_LISTED, refineUniqueIds } from '../shared/fixture-files.ts';
import { compileFilter } from '../tracing/filter.ts';
import { RUN_COLUMNS } from '../tracing/schema.ts';
import {
  COMPRESSIONS,
  DESTINATION_TYPES,
  destinationConfig,
  displayName,
  FORMAT_VERSIONS,
  FORMATS,
  MAX_INTERVAL_HOURS,
} from './schemas.ts';
import { EXPORT_STATUSES } from './statuses.ts';

/** A destination without credentials: it signs with a key pair of objstore.json, named by its access key id. */
export const destinationFixture = z.object({
  id: z.guid(),
  destination_type: z.enum(DESTINATION_TYPES).default('objstore'),
  display_name: displayName.max(255),
  /** bucket_name is one of objstore.json's buckets. */
  config: destinationConfig.extend({ bucket_name: z.string().min(3).max(63) }),
  /** Omitted: a destination saved without credentials. */
  objstore_key: z.string().min(1).optional(),
  created_at: fixtureTimestamp,
  updated_at: fixtureTimestamp,
});
export type DestinationFixture = z.infer<typeof destinationFixture>;

/** An export as the API answers it; its runs are not held (see the template). */
export const exportFixture = z
  .object({
    id: z.guid(),
    bulk_export_destination_id: z.guid(),
    session_id: z.guid().nullable().default(null),
    all_experiments: z.boolean().default(false),
    start_time: fixtureTimestamp,
    end_time: fixtureTimestamp.nullable().default(null),
    interval_hours: z.int().min(1).max(MAX_INTERVAL_HOURS).nullable().default(null),
    filter: z
      .string()
      .nullable()
      .default(null)
      .refine((filter) => filter === null || filter === '' || compiles(filter), 'a filter that parses'),
    format: z.enum(FORMATS).default('Parquet'),
    format_version: z.enum(FORMAT_VERSIONS).default('v1'),
    compression: z.enum(COMPRESSIONS).default('gzip'),
    export_fields: z.array(z.enum(RUN_COLUMNS)).nullable().default(null),
    status: z.enum(EXPORT_STATUSES),
    created_at: fixtureTimestamp,
    updated_at: fixtureTimestamp,
    finished_at: fixtureTimestamp.nullable().default(null),
    source_bulk_export_id: z.guid().nullable().default(null),
  })
  .superRefine((exportFixture, ctx) => {
    if ((exportFixture.session_id !== null) === exportFixture.all_experiments) {
      ctx.addIssue({ code: 'custom', message: 'exactly one of session_id or all_experiments', path: ['session_id'] });
    }
    if ((exportFixture.end_time !== null) === (exportFixture.interval_hours !== null)) {
      ctx.addIssue({
        code: 'custom',
        message: 'exactly one of end_time (one-time export) or interval_hours (recurring export)',
        path: ['end_time'],
      });
    } else if (
      exportFixture.end_time !== null &&
      Date.parse(exportFixture.end_time) <= Date.parse(exportFixture.start_time)
    ) {
      ctx.addIssue({ code: 'custom', message: 'start_time must be before end_time', path: ['end_time'] });
    }
    if (exportFixture.status === 'IntervalScheduled' && exportFixture.interval_hours === null) {
      ctx.addIssue({
        code: 'custom',
        message: 'an IntervalScheduled export is a recurring one (interval_hours)',
        path: ['status'],
      });
    }
  });
export type ExportFixture = z.infer<typeof exportFixture>;

function compiles(filter: string): boolean {
  try {
    compileFilter(filter);
    return true;
  } catch {
    return false;
  }
}

const bulkExportWorkspaceFixture = z
  .object({
    workspace_id: z.guid(),
    destinations: z.array(destinationFixture).max(MAX_LISTED),
    exports: z.array(exportFixture).max(MAX_LISTED),
  })
  .superRefine((workspace, ctx) => {
    const destinationIds = new Set(workspace.destinations.map((destination) => destination.id));
    const exportIds = new Set(workspace.exports.map((exportFixture) => exportFixture.id));
    workspace.exports.forEach((exportFixture, index) => {
      if (!destinationIds.has(exportFixture.bulk_export_destination_id)) {
        ctx.addIssue({
          code: 'custom',
          message: `${exportFixture.bulk_export_destination_id} is not a destination of this workspace`,
          path: ['exports', index, 'bulk_export_destination_id'],
        });
      }
      const source = exportFixture.source_bulk_export_id;
      if (source !== null && !exportIds.has(source)) {
        ctx.addIssue({
          code: 'custom',
          message: `${source} is not an export of this workspace`,
          path: ['exports', index, 'source_bulk_export_id'],
        });
      }
    });
  });
export type BulkExportWorkspaceFixture = z.infer<typeof bulkExportWorkspaceFixture>;

/** bulk-exports.json, which a fixtures directory may leave out: destinations and exports per workspace. */
export const bulkExportsFile = z.object({ workspaces: z.array(bulkExportWorkspaceFixture) }).superRefine(
  refineUniqueIds('destination or export id', (file: { workspaces: BulkExportWorkspaceFixture[] }) =>
    file.workspaces.flatMap((workspace, w) => [
      ...workspace.destinations.map((destination, d) => ({
        id: destination.id,
        path: ['workspaces', w, 'destinations', d, 'id'],
      })),
      ...workspace.exports.map((exportFixture, e) => ({
        id: exportFixture.id,
        path: ['workspaces', w, 'exports', e, 'id'],
      })),
    ]),
  ),
);
export type BulkExportsFile = z.infer<typeof bulkExportsFile>;
