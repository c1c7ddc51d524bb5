import type { Fixtures } from '../fixtures/files.ts';
import { CLOCK_PART, type InstanceCore } from '../core.ts';
import type { BulkExportModule } from '../bulk-exports/module.ts';
import type { DeploymentModule } from '../deployments/module.ts';
import type { ObjstoreModule } from '../objstore/module.ts';
import { notFound } from '../shared/errors.ts';
import type { TracingStore } from '../tracing/store.ts';
import type { WorkspaceStore } from '../workspaces/store.ts';
import { instanceClock } from './instance-clock.ts';
import { adminRoutes } from './routes.ts';
import { listedTasks, taskView } from './schemas.ts';
import { stateRoutes } from './state.ts';

/** Which state a reset puts back to the seed: everything, or one workspace's resources. */
export interface ResetScope {
  workspaceId?: string;
  /**
   * Leaves the emulator clock as it is, frozen or running. Otherwise a reset of everything puts
   * it back to the wall time, frozen when the instance was started with `freezeClock`. A
   * workspace's reset never touches it.
   */
  keepClock?: boolean;
}

export interface AdminModuleDeps {
  fixtures: Fixtures;
  workspaces: WorkspaceStore;
  tracing: TracingStore;
  objstore: ObjstoreModule;
  bulkExports: BulkExportModule;
  deployments: DeploymentModule;
  endpointAliases: readonly string[];
  /** Wall time of the start, in epoch milliseconds. */
  startedAt: number;
}

/** The harness knobs under /_localplane (reset, clock, limits, faults, fixtures, state) and the reset they drive. */
export function adminModule(core: InstanceCore, deps: AdminModuleDeps) {
  const { workspaces, tracing, objstore, bulkExports, deployments } = deps;
  const reset = async (scope: ResetScope = {}) => {
    if (scope.workspaceId === undefined) return core.parts.resetAll(scope.keepClock ? [CLOCK_PART] : []);
    if (!workspaces.find(scope.workspaceId)) throw notFound(`Workspace ${scope.workspaceId} not found`);
    return core.parts.resetWorkspace(scope.workspaceId);
  };
  const pendingTasks = () => core.scheduler.pending().map(taskView);
  const clock = instanceClock(core.clockControl);
  const knobs = adminRoutes({
    fixtures: deps.fixtures,
    workspaces,
    tracing,
    deployments: deployments.store,
    objstore: objstore.objstore,
    objstoreEndpoint: objstore.bind,
    endpointAliases: deps.endpointAliases,
    clock,
    faults: bulkExports.faults,
    revisionFaults: deployments.faults,
    limits: core.limits,
    tasks: () => listedTasks(core.scheduler.inFlight(), core.scheduler.pending()),
    watchdogCounts: () => core.scheduler.watchdogCounts(),
    reset,
    startedAt: deps.startedAt,
  });
  const state = stateRoutes({
    workspaces,
    tracing,
    bulkExports: bulkExports.store,
    deployments: deployments.store,
    objstore: objstore.objstore,
    objstoreKeys: objstore.keys,
    clock: core.clockControl,
    limits: core.limits,
    faults: bulkExports.faults,
    revisionFaults: deployments.faults,
    pendingTasks,
  });
  return { reset, clock, knobs, state };
}
