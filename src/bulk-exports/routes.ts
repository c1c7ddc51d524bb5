import { z } from 'zod';
import { DEFAULT_LIMITS, type InstanceLimits } from '../config.ts';
import { EXAMPLE_ID, httpError, notFoundError } from '../openapi/errors.ts';
import { OpenApiHono } from '../openapi/routes.ts';
import { requireWorkspace, WORKSPACE_AUTH, type AuthVariables } from '../workspaces/auth.ts';
import type { Clock } from '../shared/clock.ts';
import { conflict, HttpError, notFound } from '../shared/errors.ts';
import type { IdGenerator } from '../shared/ids.ts';
import { unchangingBody, type UnchangingBody } from '../shared/response-capture.ts';
import type { WriteScopedCache } from '../shared/write-scoped-cache.ts';
import type { TracingStore } from '../tracing/store.ts';
import { BULK_EXPORT_TIERS, type WorkspaceStore } from '../workspaces/store.ts';
import { credentialKeys, newDestination, newExport, storedCredentials, unknownExportFields } from './creation.ts';
import { checkDestination, forcedFailureDetails, type DestinationCheckDeps } from './destination-check.ts';
import { hourlyCreatesExceeded, recurringExportsExceeded } from './quotas.ts';
import { destinationResponse, exportResponse, runResponse } from './responses.ts';
import type { ExportRunner } from './runner.ts';
import {
  destinationCreate,
  destinationIdParams,
  destinationResponseSchema,
  destinationUpdate,
  exportCreate,
  exportIdParams,
  exportResponseSchema,
  exportUpdate,
  listQuery,
  runIdParams,
  runResponseSchema,
  runsFilterQuery,
} from './schemas.ts';
import { isTerminalStatus } from './statuses.ts';
import type { BulkExportStore, ExportRow } from './store.ts';

export interface BulkExportRouteDeps extends DestinationCheckDeps {
  store: BulkExportStore;
  tracing: TracingStore;
  workspaces: WorkspaceStore;
  runner: ExportRunner;
  clock: Clock;
  ids: IdGenerator;
  limits: InstanceLimits;
  /** Serialized exports by workspace and id: a polled export answers without querying or serializing again. */
  responseCache: WriteScopedCache<UnchangingBody>;
}

const TIER_REFUSAL =
  'Bulk export is only available on the Plus and Enterprise plans. Upgrade your plan to use bulk exports.';

const destinationNotFound = (id: string) => `Bulk export destination ${id} not found`;
export const exportNotFound = (id: string) => `Bulk export ${id} not found`;
const runNotFound = (id: string) => `Bulk export run ${id} not found`;

const DESTINATION_NOT_FOUND = notFoundError('Destination', destinationNotFound(EXAMPLE_ID));
export const EXPORT_NOT_FOUND = notFoundError('Bulk export', exportNotFound(EXAMPLE_ID));
const DESTINATION_VALIDATION_FAILED = httpError(
  400,
  'The destination failed validation: a probe object written with its key pair was refused (the validation knob ' +
    'forces these by name)',
  forcedFailureDetails('https://objstore.example.com'),
);
const destinations = z.array(destinationResponseSchema);
const exports = z.array(exportResponseSchema);
const runs = z.array(runResponseSchema);

export function bulkExportRoutes(deps: BulkExportRouteDeps) {
  const { store, clock, ids } = deps;
  const app = new OpenApiHono<{ Variables: AuthVariables }>('bulk-exports');

  app.guard(
    {
      ...WORKSPACE_AUTH,
      errors: [
        ...WORKSPACE_AUTH.errors,
        httpError(403, 'The workspace is not on a plan with bulk exports', { plan: TIER_REFUSAL }),
      ],
    },
    requireWorkspace(deps.workspaces, (workspace) => {
      if (!BULK_EXPORT_TIERS.includes(workspace.tier)) throw new HttpError(403, TIER_REFUSAL);
    }),
  );

  const findDestination = (tenantId: string, id: string) => {
    const destination = store.destination(tenantId, id);
    if (!destination) throw notFound(destinationNotFound(id));
    return destination;
  };
  const findExport = (tenantId: string, id: string) => {
    const exportRow = store.export(tenantId, id);
    if (!exportRow) throw notFound(exportNotFound(id));
    return exportRow;
  };
  const toRunResponses = (exportRow: ExportRow) => {
    const destination = store.destinationById(exportRow.bulk_export_destination_id);
    return store.runsOf(exportRow.id).map((run) => runResponse(run, exportRow, destination));
  };

  app.openapi(
    {
      method: 'get',
      path: '/destinations',
      summary: "List the workspace's destinations",
      response: { status: 200, description: 'The destinations', schema: destinations },
    },
    (c) => c.json(store.destinations(c.get('workspace').id).map(destinationResponse)),
  );

  app.openapi(
    {
      method: 'post',
      path: '/destinations',
      summary: 'Create a destination, validated by writing a probe object with its key pair',
      body: destinationCreate,
      response: { status: 200, description: 'The destination', schema: destinationResponseSchema },
      errors: [DESTINATION_VALIDATION_FAILED],
    },
    async (c, { body }) => {
      const workspace = c.get('workspace');
      await checkDestination(deps, workspace.id, body.config, body.credentials);
      const row = newDestination(body, { ids, tenantId: workspace.id, now: clock.now() });
      store.insertDestination(row);
      return c.json(destinationResponse(row));
    },
  );

  app.openapi(
    {
      method: 'get',
      path: '/destinations/:destination_id',
      summary: 'Get a destination',
      params: destinationIdParams,
      response: { status: 200, description: 'The destination', schema: destinationResponseSchema },
      errors: [DESTINATION_NOT_FOUND],
    },
    (c, { params }) => c.json(destinationResponse(findDestination(c.get('workspace').id, params.destination_id))),
  );

  app.openapi(
    {
      method: 'patch',
      path: '/destinations/:destination_id',
      summary: "Replace a destination's key pair, validated as on creation",
      params: destinationIdParams,
      body: destinationUpdate,
      response: { status: 200, description: 'The destination', schema: destinationResponseSchema },
      errors: [DESTINATION_VALIDATION_FAILED, DESTINATION_NOT_FOUND],
    },
    async (c, { params, body: { credentials } }) => {
      const workspace = c.get('workspace');
      const destination = findDestination(workspace.id, params.destination_id);
      await checkDestination(deps, workspace.id, JSON.parse(destination.config), credentials);
      store.updateCredentials(destination.id, storedCredentials(credentials), credentialKeys(credentials), clock.now());
      return c.json(destinationResponse(store.destinationById(destination.id)!));
    },
  );

  app.openapi(
    {
      method: 'delete',
      path: '/destinations/:destination_id',
      summary: 'Delete a destination that no active export uses',
      params: destinationIdParams,
      response: { status: 204, description: 'Deleted' },
      errors: [
        DESTINATION_NOT_FOUND,
        httpError(409, 'An active export uses the destination', {
          in_use: `Bulk export destination ${EXAMPLE_ID} is in use by bulk export(s) ${EXAMPLE_ID}; cancel them first`,
        }),
      ],
    },
    (c, { params }) => {
      const destination = findDestination(c.get('workspace').id, params.destination_id);
      const users = store.activeExportsUsing(destination.id);
      if (users.length > 0) {
        throw conflict(
          `Bulk export destination ${destination.id} is in use by bulk export(s) ${users.join(', ')}; cancel them ` +
            `first`,
        );
      }
      store.deleteDestination(destination.id);
      return c.body(null, 204);
    },
  );

  app.openapi(
    {
      method: 'get',
      path: '/runs',
      summary: 'List the runs of the exports a recurring export spawned',
      query: runsFilterQuery,
      response: { status: 200, description: 'The runs', schema: runs },
      errors: [EXPORT_NOT_FOUND],
    },
    (c, { query }) => {
      const source = findExport(c.get('workspace').id, query.source_bulk_export_id);
      const destination = store.destinationById(source.bulk_export_destination_id);
      return c.json(
        store
          .runsOfChildren(source.id)
          .map((run) => runResponse(run, store.exportById(run.bulk_export_id)!, destination)),
      );
    },
  );

  app.openapi(
    {
      method: 'get',
      path: '/',
      summary: "List the workspace's exports",
      query: listQuery,
      response: { status: 200, description: 'The exports', schema: exports },
    },
    (c, { query }) => c.json(store.exports(c.get('workspace').id, query.limit, query.offset).map(exportResponse)),
  );

  app.openapi(
    {
      method: 'post',
      path: '/',
      summary: 'Create a one-time or recurring export',
      body: exportCreate,
      response: { status: 200, description: 'The export', schema: exportResponseSchema },
      errors: [
        httpError(400, 'The filter does not parse, or an export field does not exist', {
          invalid_filter: 'Invalid filter: Expected an expression but found end of input at position 9',
          invalid_export_fields: unknownExportFields(['colour']),
        }),
        httpError(404, 'The destination or the session does not exist in the workspace', {
          destination_not_found: destinationNotFound(EXAMPLE_ID),
          session_not_found: `Session ${EXAMPLE_ID} not found`,
        }),
        httpError(
          429,
          'A create quota is used up (see GET /_localplane/config)',
          {
            hourly_creates: hourlyCreatesExceeded(DEFAULT_LIMITS),
            recurring_exports: recurringExportsExceeded(DEFAULT_LIMITS),
          },
          {
            'Retry-After': {
              description:
                'With hourly_creates: the seconds (whole, rounded up) of the emulator clock until the rolling ' +
                'hour frees a slot, that is until the create that fills it is an hour old. Not sent when ' +
                'export_creates_per_hour is 0, nor with recurring_exports (only a cancel frees that slot)',
              schema: { type: 'integer', minimum: 1 },
            },
          },
        ),
      ],
    },
    (c, { body }) => {
      const row = newExport(body, {
        store,
        tracing: deps.tracing,
        limits: deps.limits.get(),
        ids,
        tenantId: c.get('workspace').id,
        now: clock.now(),
      });
      // One transaction: a crash never leaves an export without its runs (it would complete empty).
      store.transaction(() => {
        store.insertExport(row);
        deps.runner.launch(row);
      });
      return c.json(exportResponse(row));
    },
  );

  app.openapi(
    {
      method: 'get',
      path: '/:bulk_export_id',
      summary: 'Get an export',
      params: exportIdParams,
      response: { status: 200, description: 'The export', schema: exportResponseSchema },
      errors: [EXPORT_NOT_FOUND],
    },
    (c, { params }) => {
      const tenantId = c.get('workspace').id;
      const cacheKey = `${tenantId}/${params.bulk_export_id}`;
      let body = deps.responseCache.get(cacheKey);
      if (body === undefined) {
        body = unchangingBody(JSON.stringify(exportResponse(findExport(tenantId, params.bulk_export_id))));
        deps.responseCache.set(cacheKey, body);
      }
      return c.body(body, 200, { 'Content-Type': 'application/json' });
    },
  );

  app.openapi(
    {
      method: 'patch',
      path: '/:bulk_export_id',
      summary: 'Cancel an export (cancelling a cancelled one changes nothing)',
      params: exportIdParams,
      body: exportUpdate,
      response: { status: 200, description: 'The export', schema: exportResponseSchema },
      errors: [
        httpError(400, 'The export has already ended', {
          already_ended: `Bulk export ${EXAMPLE_ID} is already Completed and cannot be cancelled`,
        }),
        EXPORT_NOT_FOUND,
      ],
    },
    (c, { params }) => {
      const exportRow = findExport(c.get('workspace').id, params.bulk_export_id);
      if (exportRow.status !== 'Cancelled') {
        if (isTerminalStatus(exportRow.status)) {
          throw new HttpError(
            400,
            `Bulk export ${exportRow.id} is already ${exportRow.status} and cannot be cancelled`,
          );
        }
        deps.runner.cancel(exportRow);
      }
      return c.json(exportResponse(store.exportById(exportRow.id)!));
    },
  );

  app.openapi(
    {
      method: 'get',
      path: '/:bulk_export_id/runs',
      summary: "List an export's runs",
      params: exportIdParams,
      response: { status: 200, description: 'The runs', schema: runs },
      errors: [EXPORT_NOT_FOUND],
    },
    (c, { params }) => c.json(toRunResponses(findExport(c.get('workspace').id, params.bulk_export_id))),
  );

  app.openapi(
    {
      method: 'get',
      path: '/:bulk_export_id/runs/:run_id',
      summary: 'Get a run of an export',
      params: runIdParams,
      response: { status: 200, description: 'The run', schema: runResponseSchema },
      errors: [
        httpError(404, 'The export or the run does not exist', {
          export_not_found: exportNotFound(EXAMPLE_ID),
          run_not_found: runNotFound(EXAMPLE_ID),
        }),
      ],
    },
    (c, { params }) => {
      const exportRow = findExport(c.get('workspace').id, params.bulk_export_id);
      const run = store.run(exportRow.id, params.run_id);
      if (!run) throw notFound(runNotFound(params.run_id));
      return c.json(runResponse(run, exportRow, store.destinationById(exportRow.bulk_export_destination_id)));
    },
  );

  return app;
}
