export { start, type Localplane, type StartOptions } from './localplane.ts';
export type { ProgressEvent, ProgressListener } from './progress.ts';
export { DEFAULT_ENDPOINT_ALIASES } from './objstore/endpoints.ts';
export type { ClockControl } from './shared/clock-control.ts';
export type { Limits, LimitsPatch } from './config.ts';
