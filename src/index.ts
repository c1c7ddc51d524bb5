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
export { DEFAULT_ENDPOINT_ALIASES } from './objstore/endpoints.ts';
export { SnapshotFileError } from './snapshots/format.ts';
export type { ClockControl } from './shared/clock-control.ts';
export type { Limits, LimitsPatch } from './config.ts';
