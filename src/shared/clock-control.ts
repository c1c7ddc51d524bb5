import type { Clock } from './clock.ts';
import type { ScheduledTask, Scheduler } from './scheduler.ts';
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
  /**
   * Moves the clock to the next task's due time (not back: a task already due runs now) and runs what is due then;
   * answers the tasks that ran, none when none is scheduled.
   */
  advanceToNext(): Promise<ScheduledTask[]>;
  /**
   * Moves the clock from one due task to the next, running each, until no task is due within
   * `withinSeconds` (default a day) of the time it started from, or MAX_IDLE_STEPS steps were
   * taken (work that keeps scheduling itself); answers the tasks that ran, in order.
   */
  runUntilIdle(options?: { withinSeconds?: number }): Promise<ScheduledTask[]>;
  /** Waits until no scheduled work is running and, unless the clock is frozen, none is due. */
  settle(): Promise<void>;
}

/** The most steps runUntilIdle takes. */
export const MAX_IDLE_STEPS = 10_000;
/** How far ahead runUntilIdle runs due work unless told: a day. */
export const DEFAULT_IDLE_SECONDS = 86_400;

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
    advanceToNext: () =>
      scheduler.recording(async () => {
        const next = scheduler.nextDueAt();
        if (next !== null) await scheduler.advanceTo(Math.max(next, clock.now()));
      }),
    runUntilIdle: ({ withinSeconds = DEFAULT_IDLE_SECONDS } = {}) => {
      const horizon = clock.now() + Math.round(withinSeconds * MICROS_PER_SECOND);
      return scheduler.recording(async () => {
        await scheduler.advanceTo(clock.now());
        for (
          let step = 0, next = scheduler.nextDueAt();
          step < MAX_IDLE_STEPS && next !== null && next <= horizon;
          step++, next = scheduler.nextDueAt()
        ) {
          await scheduler.advanceTo(Math.max(next, clock.now()));
        }
      });
    },
    settle: () => scheduler.settle(),
  };
}
