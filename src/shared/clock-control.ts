import type { Clock } from './clock.ts';
import type { Scheduler } from './scheduler.ts';
import { MICROS_PER_SECOND, type Micros } from './time.ts';

/**
 * The clock as tests drive it: changing the time runs whatever became due, and the
 * returned promise settles once that work is done. With a frozen clock nothing scheduled
 * starts by itself: `advance(0)` runs what is due now without moving the clock.
 */
export interface ClockControl {
  now(): Micros;
  readonly frozen: boolean;
  freeze(): void;
  unfreeze(): void;
  /** Jumps to a time: forward runs everything due on the way, backward runs nothing. */
  set(time: Micros | Date | string): Promise<void>;
  advance(seconds: number): Promise<void>;
  /** Waits until no scheduled work is running and, unless the clock is frozen, none is due. */
  settle(): Promise<void>;
}

function toMicros(time: Micros | Date | string): Micros {
  if (typeof time === 'number') return time;
  return new Date(time).getTime() * 1000;
}

export function createClockControl(clock: Clock, scheduler: Scheduler): ClockControl {
  return {
    now: () => clock.now(),
    get frozen() {
      return clock.frozen;
    },
    freeze: () => clock.freeze(),
    unfreeze: () => {
      clock.unfreeze();
      scheduler.clockChanged();
    },
    async set(time) {
      const target = toMicros(time);
      if (target >= clock.now()) return scheduler.advanceTo(target);
      clock.set(target);
      scheduler.clockChanged();
    },
    advance: (seconds) => scheduler.advanceTo(clock.now() + Math.round(seconds * MICROS_PER_SECOND)),
    settle: () => scheduler.settle(),
  };
}
