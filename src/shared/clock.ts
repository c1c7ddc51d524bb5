import { microsFromMillis, type Micros } from './time.ts';

/**
 * The emulator's clock. Real time by default; tests freeze it, set it and advance it.
 * A running clock keeps an offset from wall time, so set/advance work while it ticks.
 */
export interface Clock {
  now(): Micros;
  readonly frozen: boolean;
  freeze(): void;
  unfreeze(): void;
  set(micros: Micros): void;
  advance(micros: Micros): void;
  /** Back to the wall time, running or frozen there; then at `at` when given. */
  restart(frozen: boolean, at?: Micros): void;
}

export function createClock(wallTime: () => number = Date.now): Clock {
  let offset = 0;
  let frozenAt: Micros | null = null;
  const wallNow = () => microsFromMillis(wallTime());
  const clock: Clock = {
    now: () => frozenAt ?? wallNow() + offset,
    get frozen() {
      return frozenAt !== null;
    },
    freeze() {
      frozenAt ??= wallNow() + offset;
    },
    unfreeze() {
      if (frozenAt === null) return;
      offset = frozenAt - wallNow();
      frozenAt = null;
    },
    set(micros) {
      if (frozenAt !== null) frozenAt = micros;
      else offset = micros - wallNow();
    },
    advance(micros) {
      clock.set(clock.now() + micros);
    },
    restart(frozen, at) {
      offset = 0;
      frozenAt = null;
      if (frozen) clock.freeze();
      if (at !== undefined) clock.set(at);
    },
  };
  return clock;
}
