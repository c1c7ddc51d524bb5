export { start, type Localplane, type StartOptions } from './localplane.ts';
export type { ClockControl } from './shared/clock-control.ts';
export type { Limits, LimitsPatch } from './config.ts';
