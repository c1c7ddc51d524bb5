import { z } from 'zod';
import { CountedRules } from '../shared/counted-rules.ts';

/** Where a forced revision ends early: failing at create, build or deploy, or SKIPPED once queued. */
export const REVISION_FAULT_STAGES = ['create', 'build', 'deploy', 'skip'] as const;
export type RevisionFaultStage = (typeof REVISION_FAULT_STAGES)[number];

export const revisionFaultRequest = z.object({
  stage: z.enum(REVISION_FAULT_STAGES),
  /** Only revisions of this deployment; omitted, the next revisions of any deployment. */
  deployment_id: z.guid().nullish(),
  count: z.int().min(1).default(1),
  /**
   * The line the revision's logs end with (the build error of a BUILD_FAILED, say); omitted, a stock line of the stage.
   */
  message: z.string().min(1).max(2000).nullish(),
});
export type RevisionFaultRequest = z.output<typeof revisionFaultRequest>;
export type RevisionFaultInput = z.input<typeof revisionFaultRequest>;

/** How a revision starting now is to end early. */
export interface RevisionFault {
  stage: RevisionFaultStage;
  message: string | null;
}

/**
 * The deployment knob "make the next revision fail (or be skipped)": armed by the admin API, taken by each new
 * revision.
 */
export class RevisionFaults {
  private readonly rules = new CountedRules<RevisionFaultRequest>();

  arm(request: RevisionFaultRequest): void {
    this.rules.arm(request);
  }

  /** How a revision of this deployment, starting now, is to end early; null when it is to succeed. */
  take(deploymentId: string): RevisionFault | null {
    const rule = this.rules.take((candidate) => !candidate.deployment_id || candidate.deployment_id === deploymentId);
    return rule ? { stage: rule.stage, message: rule.message ?? null } : null;
  }

  describe() {
    return this.rules.describe();
  }

  clear(): void {
    this.rules.clear();
  }

  /** Disarms the knobs aimed at these deployments. */
  clearDeployments(deploymentIds: ReadonlySet<string>): void {
    this.rules.remove((rule) => !!rule.deployment_id && deploymentIds.has(rule.deployment_id));
  }
}
