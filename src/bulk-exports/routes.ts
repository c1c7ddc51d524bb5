import { Hono } from 'hono';
import type { Limits } from '../config.ts';
import type { Clock } from '../shared/clock.ts';
import { requireWorkspace, type AuthVariables } from '../shared/auth.ts';
import { badRequest, conflict, HttpError, notFound } from '../shared/errors.ts';
import type { IdGenerator } from '../shared/ids.ts';
import { jsonBody, pathParams, queryParams } from '../shared/validation.ts';
import { compileFilter, FilterSyntaxError } from '../tracing/filter.ts';
import { RUN_COLUMNS } from '../tracing/schema.ts';
import type { TracingStore } from '../tracing/store.ts';
import type { WorkspaceStore } from '../workspaces/store.ts';
import { checkDestination, type DestinationCheckDeps } from './destination-check.ts';
import { checkCreateQuota } from './quotas.ts';
import { destinationResponse, exportResponse, runResponse } from './responses.ts';
import type { ExportRunner } from './runner.ts';
import {
  destinationCreate,
  destinationIdParams,
  destinationUpdate,
  exportCreate,
  exportIdParams,
  exportUpdate,
  listQuery,
  runIdParams,
  runsFilterQuery,
  TERMINAL_STATUSES,
  type DestinationCredentials,
} from './schemas.ts';
import type { BulkExportStore, ExportRow } from './store.ts';

export interface BulkExportRouteDeps extends DestinationCheckDeps {
  store: BulkExportStore;
  tracing: TracingStore;
  workspaces: WorkspaceStore;
  runner: ExportRunner;
  clock: Clock;
  ids: IdGenerator;
  limits: () => Limits;
}

const BULK_EXPORT_TIERS = ['plus', 'enterprise'];

function credentialKeys(credentials: DestinationCredentials | null | undefined): string[] {
  if (!credentials) return [];
  return ['access_key_id', 'secret_access_key', ...(credentials.session_token ? ['session_token'] : [])];
}

export function bulkExportRoutes(deps: BulkExportRouteDeps) {
  const { store, clock, ids } = deps;
  const app = new Hono<{ Variables: AuthVariables }>();

  app.use('*', requireWorkspace(deps.workspaces), async (c, next) => {
    if (!BULK_EXPORT_TIERS.includes(c.get('workspace').tier)) {
      throw new HttpError(403, 'Bulk export is only available on the Plus and Enterprise plans. Upgrade your plan to use bulk exports.');
    }
    await next();
  });

  const findDestination = (tenantId: string, id: string) => {
    const destination = store.destination(tenantId, id);
    if (!destination) throw notFound(`Bulk export destination ${id} not found`);
    return destination;
  };
  const findExport = (tenantId: string, id: string) => {
    const exportRow = store.export(tenantId, id);
    if (!exportRow) throw notFound(`Bulk export ${id} not found`);
    return exportRow;
  };
  const toRunResponses = (exportRow: ExportRow) => {
    const destination = store.destinationById(exportRow.bulk_export_destination_id);
    return store.runsOf(exportRow.id).map((run) => runResponse(run, exportRow, destination));
  };

  app.get('/destinations', (c) => c.json(store.destinations(c.get('workspace').id).map(destinationResponse)));

  app.post('/destinations', async (c) => {
    const body = await jsonBody(c, destinationCreate);
    const workspace = c.get('workspace');
    await checkDestination(deps, workspace.id, body.config, body.credentials);
    const now = clock.now();
    const row = {
      id: ids.uuid(),
      tenant_id: workspace.id,
      destination_type: body.destination_type,
      display_name: body.display_name,
      config: JSON.stringify(body.config),
      credentials_keys: JSON.stringify(credentialKeys(body.credentials)),
      access_key_id: body.credentials?.access_key_id ?? null,
      secret_access_key: body.credentials?.secret_access_key ?? null,
      session_token: body.credentials?.session_token ?? null,
      created_at: now,
      updated_at: now,
    };
    store.insertDestination(row);
    return c.json(destinationResponse(row));
  });

  app.get('/destinations/:destination_id', (c) => {
    const { destination_id } = pathParams(c, destinationIdParams);
    return c.json(destinationResponse(findDestination(c.get('workspace').id, destination_id)));
  });

  app.patch('/destinations/:destination_id', async (c) => {
    const { destination_id } = pathParams(c, destinationIdParams);
    const workspace = c.get('workspace');
    const destination = findDestination(workspace.id, destination_id);
    const { credentials } = await jsonBody(c, destinationUpdate);
    const config = JSON.parse(destination.config);
    await checkDestination(deps, workspace.id, config, credentials);
    const stored = {
      access_key_id: credentials.access_key_id,
      secret_access_key: credentials.secret_access_key,
      session_token: credentials.session_token ?? null,
    };
    store.updateCredentials(destination.id, stored, credentialKeys(credentials), clock.now());
    return c.json(destinationResponse(store.destinationById(destination.id)!));
  });

  app.delete('/destinations/:destination_id', (c) => {
    const { destination_id } = pathParams(c, destinationIdParams);
    const destination = findDestination(c.get('workspace').id, destination_id);
    const users = store.activeExportsUsing(destination.id);
    if (users.length > 0) {
      throw conflict(`Bulk export destination ${destination.id} is in use by bulk export(s) ${users.join(', ')}; cancel them first`);
    }
    store.deleteDestination(destination.id);
    return c.body(null, 204);
  });

  app.get('/runs', (c) => {
    const { source_bulk_export_id } = queryParams(c, runsFilterQuery);
    const source = findExport(c.get('workspace').id, source_bulk_export_id);
    const destination = store.destinationById(source.bulk_export_destination_id);
    return c.json(
      store.runsOfChildren(source.id).map((run) => runResponse(run, store.exportById(run.bulk_export_id)!, destination)),
    );
  });

  app.get('/', (c) => {
    const { limit, offset } = queryParams(c, listQuery);
    return c.json(store.exports(c.get('workspace').id, limit, offset).map(exportResponse));
  });

  app.post('/', async (c) => {
    const body = await jsonBody(c, exportCreate);
    const workspace = c.get('workspace');
    if (!store.destination(workspace.id, body.bulk_export_destination_id)) {
      throw notFound(`Bulk export destination ${body.bulk_export_destination_id} not found`);
    }
    if (!deps.tracing.findSession(workspace.id, body.session_id)) {
      throw notFound(`Session ${body.session_id} not found`);
    }
    if (body.filter) {
      try {
        compileFilter(body.filter);
      } catch (error) {
        if (error instanceof FilterSyntaxError) throw badRequest(`Invalid filter: ${error.message}`);
        throw error;
      }
    }
    const unknownFields = (body.export_fields ?? []).filter((field) => !(RUN_COLUMNS as readonly string[]).includes(field));
    if (unknownFields.length > 0) {
      throw badRequest(`Invalid export_fields: ${unknownFields.join(', ')}. Valid fields are: ${RUN_COLUMNS.join(', ')}`);
    }
    const now = clock.now();
    const recurring = body.interval_hours !== null && body.interval_hours !== undefined;
    checkCreateQuota(store, deps.limits(), workspace.id, recurring, now);
    const row: ExportRow = {
      id: ids.uuid(),
      tenant_id: workspace.id,
      bulk_export_destination_id: body.bulk_export_destination_id,
      session_id: body.session_id,
      start_time: body.start_time,
      end_time: body.end_time ?? null,
      interval_hours: body.interval_hours ?? null,
      filter: body.filter ?? null,
      format: body.format,
      format_version: body.format_version,
      compression: body.compression,
      export_fields: body.export_fields ? JSON.stringify(RUN_COLUMNS.filter((column) => body.export_fields!.includes(column))) : null,
      status: recurring ? 'IntervalScheduled' : 'Created',
      created_at: now,
      updated_at: now,
      finished_at: null,
      started_at: null,
      source_bulk_export_id: null,
      next_child_index: 0,
    };
    // One transaction: a crash never leaves an export without its runs (it would complete empty).
    store.transaction(() => {
      store.insertExport(row);
      deps.runner.launch(row);
    });
    return c.json(exportResponse(row));
  });

  app.get('/:bulk_export_id', (c) => {
    const { bulk_export_id } = pathParams(c, exportIdParams);
    return c.json(exportResponse(findExport(c.get('workspace').id, bulk_export_id)));
  });

  app.patch('/:bulk_export_id', async (c) => {
    const { bulk_export_id } = pathParams(c, exportIdParams);
    const exportRow = findExport(c.get('workspace').id, bulk_export_id);
    await jsonBody(c, exportUpdate);
    if (exportRow.status !== 'Cancelled') {
      if (TERMINAL_STATUSES.includes(exportRow.status)) {
        throw badRequest(`Bulk export ${exportRow.id} is already ${exportRow.status} and cannot be cancelled`);
      }
      deps.runner.cancel(exportRow);
    }
    return c.json(exportResponse(store.exportById(exportRow.id)!));
  });

  app.get('/:bulk_export_id/runs', (c) => {
    const { bulk_export_id } = pathParams(c, exportIdParams);
    return c.json(toRunResponses(findExport(c.get('workspace').id, bulk_export_id)));
  });

  app.get('/:bulk_export_id/runs/:run_id', (c) => {
    const { bulk_export_id, run_id } = pathParams(c, runIdParams);
    const exportRow = findExport(c.get('workspace').id, bulk_export_id);
    const run = store.run(exportRow.id, run_id);
    if (!run) throw notFound(`Bulk export run ${run_id} not found`);
    return c.json(runResponse(run, exportRow, store.destinationById(exportRow.bulk_export_destination_id)));
  });

  return app;
}
