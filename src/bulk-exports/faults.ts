import { z } from 'zod';
import { CountedRules } from '../shared/counted-rules.ts';
import { MAX_SPAN_SECONDS, MICROS_PER_SECOND } from '../shared/time.ts';

export const VALIDATION_FAILURES = ['access_denied', 'unknown_key_id', 'invalid_endpoint', 'invalid_bucket'] as const;
export type ValidationFailure = (typeof VALIDATION_FAILURES)[number];

export const validationFaultRequest = z.object({
  error: z.enum(VALIDATION_FAILURES),
  count: z.int().min(1).default(1),
  workspace_id: z.guid().nullable().optional(),
  endpoint_url: z.string().nullable().optional(),
});
export type ValidationFaultRequest = z.output<typeof validationFaultRequest>;
export type ValidationFaultInput = z.input<typeof validationFaultRequest>;

export const exportRunFaultRequest = z.discriminatedUnion('mode', [
  z.object({
    mode: z.literal('fail'),
    count: z.int().min(1).default(1),
    /** How many attempts of each affected run fail; omitted, every attempt fails and the run ends Failed. */
    attempts: z.int().min(1).nullable().optional(),
    message: z.string().min(1).default('Injected failure: the export run failed'),
  }),
  z.object({
    mode: z.literal('slow'),
    count: z.int().min(1).default(1),
    /** Emulator-clock seconds before each file of an affected run is written. */
    delay_seconds: z.number().positive().max(MAX_SPAN_SECONDS).default(60),
  }),
]);
export type ExportRunFaultRequest = z.output<typeof exportRunFaultRequest>;
export type ExportRunFaultInput = z.input<typeof exportRunFaultRequest>;

export interface RunFaultEffect {
  failingAttempts: number;
  stepDelay: number;
}

/** The bulk-export knobs: armed by the admin API, consumed by validations and export runs. */
export class BulkExportFaults {
  private readonly validation = new CountedRules<ValidationFaultRequest>();
  private runs: (ExportRunFaultRequest & { remaining: number })[] = [];
  private readonly failureMessages = new Map<string, string>();

  armValidation(request: ValidationFaultRequest) {
    this.validation.arm(request);
  }

  armExportRuns(request: ExportRunFaultRequest) {
    this.runs.push({ ...request, remaining: request.count });
  }

  /** The failure to report for this validation, if a matching knob is armed. */
  takeValidation(workspaceId: string, endpointUrl: string | null): ValidationFailure | null {
    const rule = this.validation.take(
      (candidate) =>
        (!candidate.workspace_id || candidate.workspace_id === workspaceId) &&
        (!candidate.endpoint_url || candidate.endpoint_url === endpointUrl),
    );
    return rule?.error ?? null;
  }

  /** What the knobs do to a run that is starting now. */
  takeRun(runId: string): RunFaultEffect {
    const effect: RunFaultEffect = { failingAttempts: 0, stepDelay: 0 };
    for (const rule of this.runs) {
      if (rule.mode === 'fail' && effect.failingAttempts === 0) {
        effect.failingAttempts = rule.attempts ?? -1;
        this.failureMessages.set(runId, rule.message);
      } else if (rule.mode === 'slow' && effect.stepDelay === 0) {
        effect.stepDelay = Math.round(rule.delay_seconds * MICROS_PER_SECOND);
      } else continue;
      rule.remaining--;
    }
    this.runs = this.runs.filter((rule) => rule.remaining > 0);
    return effect;
  }

  failureMessage(runId: string): string {
    return this.failureMessages.get(runId) ?? 'Injected failure: the export run failed';
  }

  describe() {
    return {
      destination_validations: this.validation.describe(),
      export_runs: this.runs.map(({ remaining, ...rule }) => ({ ...rule, remaining })),
    };
  }

  /** Disarms the validation knobs aimed at this workspace (export-run knobs name no workspace). */
  clearWorkspace(workspaceId: string) {
    this.validation.remove((rule) => rule.workspace_id === workspaceId);
  }

  clear() {
    this.validation.clear();
    this.runs = [];
    this.failureMessages.clear();
  }
}
