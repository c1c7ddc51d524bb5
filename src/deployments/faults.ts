import { z } from 'zod';
import { CountedRules } from '../shared/counted-rules.ts';

export const REVISION_FAILURE_STAGES = ['create', 'build', 'deploy'] as const;
export type RevisionFailureStage = (typeof REVISION_FAILURE_STAGES)[number];

export const revisionFaultRequest = z.object({
  stage: z.enum(REVISION_FAILURE_STAGES),
  /** Only revisions of this deployment; omitted, the next revisions of any deployment. */
  deployment_id: z.guid().nullish(),
  count: z.int().min(1).default(1),
});
export type RevisionFaultRequest = z.output<typeof revisionFaultRequest>;

/** The deployment knob "make the next revision fail": armed by the admin API, taken by each new revision. */
export class RevisionFaults {
  private readonly rules = new CountedRules<RevisionFaultRequest>();

  arm(request: RevisionFaultRequest): void {
    this.rules.arm(request);
  }

  /** The stage at which a revision of this deployment, starting now, is to fail; null when it is to succeed. */
  take(deploymentId: string): RevisionFailureStage | null {
    return this.rules.take((rule) => !rule.deployment_id || rule.deployment_id === deploymentId)?.stage ?? null;
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
