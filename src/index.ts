export {
  createLocalplane,
  start,
  type CreateOptions,
  type InProcessLocalplane,
  type Localplane,
  type ResetScope,
  type StartOptions,
} from './localplane.ts';
export type { ProgressEvent, ProgressListener } from './progress.ts';
export { DEFAULT_ENDPOINT_ALIASES } from './destinations/endpoints.ts';
export { SnapshotFileError } from './snapshots/format.ts';
export type { ClockControl } from './shared/clock-control.ts';
export type { Limits, LimitsPatch } from './config.ts';
export type { JournalBody, JournalEntry } from './journal/schemas.ts';
export type { FaultRuleInput, FaultRuleView } from './journal/fault-rules.ts';
export type { JournalFilterInput } from './journal/filter.ts';
export type { FaultRulesApi, RequestsApi } from './journal/programmatic.ts';
