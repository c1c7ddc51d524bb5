/**
 * An export's and an export run's statuses, as the API spells them: no zod here, so the CLI's progress line can read
 * them without loading it.
 */
export const EXPORT_STATUSES = [
  'Cancelled',
  'Completed',
  'Created',
  'IntervalScheduled',
  'Failed',
  'TimedOut',
  'Running',
] as const;
export const RUN_STATUSES = ['Cancelled', 'Completed', 'Created', 'Failed', 'TimedOut', 'Running'] as const;
export type ExportStatus = (typeof EXPORT_STATUSES)[number];
export type RunStatus = (typeof RUN_STATUSES)[number];

/** The statuses an export or a run ends in. */
const TERMINAL_STATUSES = ['Cancelled', 'Completed', 'Failed', 'TimedOut'] as const satisfies readonly RunStatus[];
export type TerminalStatus = (typeof TERMINAL_STATUSES)[number];

export const isTerminalStatus = (status: string): status is TerminalStatus =>
  (TERMINAL_STATUSES as readonly string[]).includes(status);
