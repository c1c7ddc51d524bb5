import type { InstanceCore } from '../core.ts';
import { OpenApiHono } from '../openapi/routes.ts';
import { tracingKnobRoutes } from './knob-routes.ts';
import { TracingStore } from './store.ts';

/** Tracing projects and their runs: the store and the knob that adds runs to a project. */
export function tracingModule(core: InstanceCore) {
  const store = new TracingStore(core.db);
  const adminRoutes = new OpenApiHono('admin').route('/sessions', tracingKnobRoutes({ tracing: store, clock: core.clock, seed: core.seed }));
  return { store, adminRoutes };
}
