import type { InstanceLimits } from '../config.ts';
import type { Clock } from '../shared/clock.ts';
import type { ScheduledTask, Scheduler } from '../shared/scheduler.ts';
import { MICROS_PER_SECOND, type Micros } from '../shared/time.ts';
import type { RevisionFault, RevisionFaults, RevisionFaultStage } from './faults.ts';
import { REVISION_STEP_STATUSES, type RevisionStepStatus } from '../config.ts';
import type { RevisionStatus, RevisionStepTask } from './schemas.ts';
import type { DeploymentStore, RevisionRow } from './store.ts';

export interface RevisionLifecycleDeps {
  store: DeploymentStore;
  scheduler: Scheduler;
  clock: Clock;
  limits: InstanceLimits;
  faults: RevisionFaults;
}

/** The step at whose end a revision ends early when the knob names that stage, and the status it ends with. */
const FORCED_ENDINGS: Record<RevisionFaultStage, { step: RevisionStepStatus; status: RevisionStatus }> = {
  create: { step: 'CREATING', status: 'CREATE_FAILED' },
  skip: { step: 'QUEUED', status: 'SKIPPED' },
  build: { step: 'BUILDING', status: 'BUILD_FAILED' },
  deploy: { step: 'DEPLOYING', status: 'DEPLOY_FAILED' },
};

const isStep = (status: RevisionStatus): status is RevisionStepStatus =>
  (REVISION_STEP_STATUSES as readonly string[]).includes(status);

function statusAfter(step: RevisionStepStatus): RevisionStatus {
  return REVISION_STEP_STATUSES[REVISION_STEP_STATUSES.indexOf(step) + 1] ?? 'DEPLOYED';
}

/**
 * Moves revisions through CREATING → … → DEPLOYING → DEPLOYED on the emulator clock, one
 * scheduled step per status, each lasting `revision_step_seconds` of that status. A step
 * re-reads its revision and does nothing if the status moved meanwhile (a knob, a newer
 * revision that interrupted it, a deletion).
 */
export class RevisionLifecycle {
  /** The next step of each revision in progress. */
  private readonly steps = new Map<string, { deploymentId: string; task: ScheduledTask }>();
  /** Revisions the knob made to end early, and how. */
  private readonly faults = new Map<string, RevisionFault>();

  constructor(private readonly deps: RevisionLifecycleDeps) {}

  /**
   * A revision was just created (E9, E7, POST .../revisions, redeploy); the store has already interrupted the ones it
   * supersedes.
   */
  started(revision: RevisionRow): void {
    this.stop(revision.deployment_id);
    const fault = this.deps.faults.take(revision.deployment_id);
    if (fault) this.faults.set(revision.id, fault);
    this.scheduleStep(revision);
  }

  /** Drops the pending steps of a deployment's revisions (deleted, or superseded). */
  stop(deploymentId: string): void {
    for (const [revisionId, step] of this.steps) {
      if (step.deploymentId !== deploymentId) continue;
      step.task.cancel();
      this.steps.delete(revisionId);
      this.faults.delete(revisionId);
    }
  }

  /**
   * The knob: puts a revision in any status, with what reaching it implies; an in-progress status goes on from there.
   */
  setStatus(revision: RevisionRow, status: RevisionStatus): void {
    this.steps.get(revision.id)?.task.cancel();
    this.steps.delete(revision.id);
    this.moveTo(revision, status);
  }

  /** After a start or a reset: every revision in progress (seeded ones included) goes on from its status now. */
  resume(): void {
    this.steps.clear();
    this.faults.clear();
    for (const revision of this.deps.store.revisionsInProgress()) this.scheduleStep(revision);
  }

  /** Drops the pending steps of the workspace's deployments. */
  stopWorkspace(tenantId: string): void {
    for (const deployment of this.deps.store.deploymentsOf(tenantId)) this.stop(deployment.id);
  }

  /** After a workspace reset: its revisions in progress (seeded ones included) go on from their status now. */
  resumeWorkspace(tenantId: string): void {
    const deployments = new Set(this.deps.store.deploymentsOf(tenantId).map((deployment) => deployment.id));
    for (const revision of this.deps.store.revisionsInProgress()) {
      if (deployments.has(revision.deployment_id)) this.scheduleStep(revision);
    }
  }

  private scheduleStep(revision: RevisionRow): void {
    const { status } = revision;
    if (!isStep(status)) return;
    // A revision whose deployment is gone has nothing left to move.
    const deployment = this.deps.store.deploymentById(revision.deployment_id);
    if (!deployment) return;
    const dueAt: Micros =
      this.deps.clock.now() + Math.round(this.deps.limits.get().revision_step_seconds[status] * MICROS_PER_SECOND);
    const subject: RevisionStepTask = {
      kind: 'revision_step',
      workspace_id: deployment.tenant_id,
      deployment_id: revision.deployment_id,
      revision_id: revision.id,
      from_status: status,
      to_status: this.endOfStep(revision.id, status).status,
    };
    const task = this.deps.scheduler.schedule(
      dueAt,
      `deployment ${revision.deployment_id}`,
      `revision ${revision.id} ${status}`,
      subject,
      () => this.step(revision, status),
    );
    this.steps.set(revision.id, { deploymentId: revision.deployment_id, task });
  }

  /**
   * Where a revision goes at the end of a step: the next status, or the ending its fault forces there (with the fault's
   * words).
   */
  private endOfStep(revisionId: string, step: RevisionStepStatus): { status: RevisionStatus; detail: string | null } {
    const fault = this.faults.get(revisionId);
    const ending = fault && FORCED_ENDINGS[fault.stage].step === step ? FORCED_ENDINGS[fault.stage] : null;
    return ending ? { status: ending.status, detail: fault!.message } : { status: statusAfter(step), detail: null };
  }

  private step({ deployment_id: deploymentId, id }: RevisionRow, expected: RevisionStepStatus): void {
    this.steps.delete(id);
    const revision = this.deps.store.revision(deploymentId, id);
    if (revision?.status !== expected) return;
    const end = this.endOfStep(id, expected);
    this.moveTo(revision, end.status, end.detail);
  }

  private moveTo(revision: RevisionRow, status: RevisionStatus, detail: string | null = null): void {
    this.deps.store.setRevisionStatus(revision, status, this.deps.clock.now(), detail);
    if (!isStep(status)) this.faults.delete(revision.id);
    this.scheduleStep({ ...revision, status });
  }
}
