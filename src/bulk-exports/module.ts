import type { InstanceCore } from '../core.ts';
import { nameComponents } from '../openapi/components.ts';
import { OpenApiHono } from '../openapi/routes.ts';
import { writeCounter } from '../shared/db.ts';
import type { UnchangingBody } from '../shared/response-capture.ts';
import { WriteScopedCache } from '../shared/write-scoped-cache.ts';
import type { Destinations } from '../destinations/module.ts';
import type { TracingStore } from '../tracing/store.ts';
import type { WorkspaceStore } from '../workspaces/store.ts';
import { EncoderThread } from './encoder-thread.ts';
import { BulkExportFaults } from './faults.ts';
import { bulkExportRoutes } from './routes.ts';
import { ExportRunner } from './runner.ts';
import { destinationResponseSchema, exportResponseSchema, runResponseSchema } from './schemas.ts';
import { BulkExportStore } from './store.ts';

// On load, not per instance: the document without routes (what responses are checked against) lists them too.
nameComponents({
  BulkExportDestination: destinationResponseSchema,
  BulkExport: exportResponseSchema,
  BulkExportRun: runResponseSchema,
});

export interface BulkExportModuleDeps {
  workspaces: WorkspaceStore;
  tracing: TracingStore;
  destinations: Destinations;
}

/** Bulk exports: their store, the runner that exports in the background, their faults, routes and state parts. */
export function bulkExportsModule(core: InstanceCore, deps: BulkExportModuleDeps) {
  const { db, scheduler, clock, ids, limits } = core;
  const store = new BulkExportStore(db);
  const faults = new BulkExportFaults();
  const { clients: objstoreClients, resolveEndpoint } = deps.destinations;
  const encoder = new EncoderThread(core.database);
  const runner = new ExportRunner({
    store,
    tracing: deps.tracing,
    scheduler,
    clock,
    ids,
    limits,
    faults,
    objstoreClients,
    resolveEndpoint,
    encoder,
    progress: core.progress,
  });
  // An export's last upload outlives its step: it lands before the store closes and the data dir goes.
  core.teardown.add('work', () => runner.stop());
  core.teardown.add('resources', () => encoder.close());
  core.parts.register('export runner', {
    stop: () => runner.stop(),
    resume: () => runner.recover(),
    stopWorkspace: (workspaceId) => runner.stopWorkspace(workspaceId),
  });
  core.parts.register('bulk-export faults', {
    reset: () => faults.clear(),
    resetWorkspace: (workspaceId) => faults.clearWorkspace(workspaceId),
  });
  const routes = new OpenApiHono().route(
    '/api/v1/bulk-exports',
    bulkExportRoutes({
      store,
      tracing: deps.tracing,
      workspaces: deps.workspaces,
      runner,
      clock,
      ids,
      faults,
      objstoreClients,
      resolveEndpoint,
      limits,
      responseCache: new WriteScopedCache<UnchangingBody>(writeCounter(db)),
    }),
  );
  return { store, faults, routes };
}

export type BulkExportModule = ReturnType<typeof bulkExportsModule>;
