import type { InstanceLimits } from '../config.ts';
import type { Clock } from '../shared/clock.ts';
import type { ScheduledTask, Scheduler } from '../shared/scheduler.ts';
import { MICROS_PER_SECOND } from '../shared/time.ts';
import type { RevisionLifecycle } from './lifecycle.ts';
import type { DeploymentDeletionTask } from './schemas.ts';
import type { DeploymentDeletionRow, DeploymentRow, DeploymentStore } from './store.ts';

export interface DeploymentDeletionDeps {
  store: DeploymentStore;
  scheduler: Scheduler;
  clock: Clock;
  limits: InstanceLimits;
  lifecycle: RevisionLifecycle;
}

/**
 * DELETE of a deployment. With `deployment_deletion_seconds` at 0 it is gone at once; above 0
 * it stays AWAITING_DELETE (its revisions in progress interrupted) for that long on the
 * emulator clock, as the hosted service deletes, and a scheduled step removes it then. The
 * pending deletions are rows, so they survive a restart and are in snapshots.
 */
export class DeploymentDeletions {
  /** The scheduled removal of each deployment AWAITING_DELETE. */
  private readonly removals = new Map<string, { tenantId: string; task: ScheduledTask }>();

  constructor(private readonly deps: DeploymentDeletionDeps) {}

  /** Deletes, or starts deleting; a deployment already AWAITING_DELETE keeps its due time. */
  delete(deployment: DeploymentRow, options: { deleteTracingProject: boolean }): void {
    const { store, lifecycle, clock } = this.deps;
    if (store.deletion(deployment.id)) return;
    lifecycle.stop(deployment.id);
    const seconds = this.deps.limits.get().deployment_deletion_seconds;
    if (seconds === 0) {
      store.delete(deployment, options);
      return;
    }
    const now = clock.now();
    store.startDeletion(deployment, now + Math.round(seconds * MICROS_PER_SECOND), { ...options, now });
    this.schedule(store.deletion(deployment.id)!);
  }

  /** After a start, a reset or a restore: every pending deletion falls due at its time (at once if past). */
  resume(): void {
    this.removals.clear();
    for (const deletion of this.deps.store.deletions()) this.schedule(deletion);
  }

  stopWorkspace(tenantId: string): void {
    for (const [deploymentId, removal] of this.removals) {
      if (removal.tenantId !== tenantId) continue;
      removal.task.cancel();
      this.removals.delete(deploymentId);
    }
  }

  resumeWorkspace(tenantId: string): void {
    for (const deletion of this.deps.store.deletions()) if (deletion.tenant_id === tenantId) this.schedule(deletion);
  }

  private schedule(deletion: DeploymentDeletionRow): void {
    const subject: DeploymentDeletionTask = {
      kind: 'deployment_deletion',
      workspace_id: deletion.tenant_id,
      deployment_id: deletion.deployment_id,
    };
    const task = this.deps.scheduler.schedule(
      deletion.due_at,
      `deployment ${deletion.deployment_id}`,
      `deletion of deployment ${deletion.deployment_id}`,
      subject,
      () => this.remove(deletion),
    );
    this.removals.set(deletion.deployment_id, { tenantId: deletion.tenant_id, task });
  }

  private remove(deletion: DeploymentDeletionRow): void {
    this.removals.delete(deletion.deployment_id);
    const deployment = this.deps.store.deployment(deletion.tenant_id, deletion.deployment_id);
    if (deployment && this.deps.store.deletion(deployment.id)) {
      this.deps.store.delete(deployment, { deleteTracingProject: deletion.delete_tracing_project === 1 });
    }
  }
}
