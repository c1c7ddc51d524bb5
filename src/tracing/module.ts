import type { InstanceCore } from '../core.ts';
import { OpenApiHono } from '../openapi/routes.ts';
import { serverInfoRoutes } from './info-routes.ts';
import { tracingKnobRoutes } from './knob-routes.ts';
import { TracingStore } from './store.ts';

/**
 * Tracing projects and their runs: the store, the knob that adds runs to a project, and GET /info, which the tracing
 * SDKs read when they start.
 */
export function tracingModule(core: InstanceCore) {
  const store = new TracingStore(core.db);
  const chunks = store.addedChunkWriter!;
  core.teardown.add('resources', () => chunks.close());
  // The database part resets and restores the chunks' table; then the file follows, and runs without chunks get them.
  core.parts.register('added run chunks', { reset: () => chunks.clear(), resume: () => chunks.cover() });
  const routes = serverInfoRoutes();
  const adminRoutes = new OpenApiHono('admin').route(
    '/sessions',
    tracingKnobRoutes({ tracing: store, clock: core.clock, seed: core.seed }),
  );
  return { store, routes, adminRoutes };
}
