import type { SchedulerTimers } from '../../../src/shared/scheduler.ts';

/** Node's longest timer; a longer or shorter delay (or NaN) becomes 1 ms, as in Node. */
const TIMEOUT_MAX = 2 ** 31 - 1;
/** A loop that keeps turning at one time is work that never settles: a bug of the code under test. */
const MAX_TURNS_AT_ONE_TIME = 10_000;

/** Lets every microtask queued so far, and those they queue, run. */
const drainMicrotasks = () => new Promise<void>((resolve) => setImmediate(resolve));

interface SimulatedTimer {
  readonly at: number;
  readonly order: number;
  readonly callback: () => void;
}

/**
 * Node's event loop in simulated milliseconds, for code that takes its timers as a dependency:
 * a turn runs the timers due by then in due order, then the immediates queued before the turn's
 * check phase, with the microtasks drained after each callback, as Node does. Time moves only
 * when the test moves it, so that what must have run by when can be checked at every step.
 *
 * Its wall clock may lag the timers' clock by a millisecond, as Date.now() does beside Node's
 * millisecond-truncated monotonic timer clock: `lags` says, read after read, whether it lags
 * (it never goes back).
 */
export class SimulatedLoop implements SchedulerTimers {
  private time = 0;
  private order = 0;
  private nextHandle = 1;
  private readonly timers = new Map<number, SimulatedTimer>();
  private immediates: (() => void)[] = [];
  private lastWall = 0;
  private wallReads = 0;

  constructor(
    private readonly epochMs: number,
    private readonly lags: readonly boolean[] = [],
  ) {}

  /** Milliseconds since the epoch, as Date.now() answers. */
  readonly wallNow = (): number => {
    const lag = this.lags.length > 0 && this.lags[this.wallReads++ % this.lags.length] ? 1 : 0;
    this.lastWall = Math.max(this.lastWall, this.epochMs + this.time - lag);
    return this.lastWall;
  };

  setTimeout(callback: () => void, delayMs: number): unknown {
    const delay = delayMs >= 1 && delayMs <= TIMEOUT_MAX ? Math.ceil(delayMs) : 1;
    const handle = this.nextHandle++;
    this.timers.set(handle, { at: this.time + delay, order: this.order++, callback });
    return handle;
  }

  clearTimeout(handle: unknown): void {
    this.timers.delete(handle as number);
  }

  setImmediate(callback: () => void): void {
    this.immediates.push(callback);
  }

  monotonicNow(): number {
    return this.time;
  }

  get pendingTimers(): number {
    return this.timers.size;
  }

  /** Simulated milliseconds since the loop began. */
  get elapsedMs(): number {
    return this.time;
  }

  /** Turns the loop at the current time until nothing is left to run then; calls `idle` once it is. */
  async runDue(idle: () => void = () => undefined): Promise<void> {
    for (let turns = 0; await this.turn(); turns++) {
      if (turns === MAX_TURNS_AT_ONE_TIME)
        throw new Error(`the loop kept turning at ${this.time} ms: work that never settles`);
    }
    idle();
  }

  /** Moves time forward to `ms` after the start, timer by timer, calling `idle` at every time the loop stops at. */
  async runUntil(ms: number, idle: () => void = () => undefined): Promise<void> {
    await this.runDue(idle);
    for (let next = this.nextTimerAt(); next !== null && next <= ms; next = this.nextTimerAt()) {
      this.time = next;
      await this.runDue(idle);
    }
    if (ms > this.time) {
      this.time = ms;
      await this.runDue(idle);
    }
  }

  private nextTimerAt(): number | null {
    let next: number | null = null;
    for (const timer of this.timers.values()) if (next === null || timer.at < next) next = timer.at;
    return next;
  }

  /** One turn: due timers, then the immediates queued before it. Answers whether anything ran. */
  private async turn(): Promise<boolean> {
    await drainMicrotasks();
    let ran = false;
    for (;;) {
      const due = [...this.timers]
        .filter(([, timer]) => timer.at <= this.time)
        .sort(([, a], [, b]) => a.at - b.at || a.order - b.order)[0];
      if (!due) break;
      this.timers.delete(due[0]);
      due[1].callback();
      await drainMicrotasks();
      ran = true;
    }
    const immediates = this.immediates;
    this.immediates = [];
    for (const callback of immediates) {
      callback();
      await drainMicrotasks();
      ran = true;
    }
    return ran;
  }
}
