import type { Clock } from './clock.ts';
import type { Micros } from './time.ts';

/**
 * What a task does, to which resources, in the shape GET /_localplane/tasks answers beside the
 * label: the domain that schedules the task names its kind and the ids (snake_case, as the API).
 */
export interface TaskSubject {
  readonly kind: string;
  readonly workspace_id: string;
}

export interface ScheduledTask {
  readonly dueAt: Micros;
  /** Tasks of one lane run one at a time, in due order; tasks of different lanes run side by side. */
  readonly lane: string;
  readonly label: string;
  readonly subject: TaskSubject;
  /** Set once the task is cancelled before it started. */
  readonly cancelled: boolean;
  cancel(): void;
}

interface QueuedTask extends ScheduledTask {
  readonly sequence: number;
  readonly run: () => Promise<void> | void;
  cancelled: boolean;
}

/**
 * A task in flight: what runs, since when (emulator time and the timers' own time), and its end as a promise that never
 * rejects.
 */
export interface RunningTask {
  readonly task: ScheduledTask;
  readonly startedAt: Micros;
  readonly startedAtMs: number;
  readonly done: Promise<void>;
}

/** The timers a scheduler uses: Node's by default; a test hands in its own event loop. */
export interface SchedulerTimers {
  /** A timer that does not keep the process alive. */
  setTimeout(callback: () => void, delayMs: number): unknown;
  clearTimeout(handle: unknown): void;
  setImmediate(callback: () => void): void;
  /** Milliseconds on a clock that only moves forward, for how long a task has been in flight. */
  monotonicNow(): number;
}

const NODE_TIMERS: SchedulerTimers = {
  setTimeout: (callback, delayMs) => setTimeout(callback, delayMs).unref(),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
  setImmediate: (callback) => void setImmediate(callback),
  monotonicNow: () => performance.now(),
};

/** What the watchdog found and fixed since the instance started: each is also logged as an error. */
export interface WatchdogCounts {
  /**
   * Tasks it started because they were still waiting, past LATE_START_MICROS after their due time, with their lane free
   * and the clock running.
   */
  late_starts: number;
  /** Tasks in flight longer than the bound, whose lane it freed for the tasks behind them. */
  overruns: number;
}

export interface SchedulerOptions {
  /** A task's failure: it is reported and never escapes. */
  onError(label: string, error: unknown): void;
  /** What the watchdog did, one line each. */
  onWatchdog(line: string): void;
  /** Milliseconds a task may be in flight before the watchdog frees its lane. */
  inFlightLimitMs(): number;
  timers?: SchedulerTimers;
}

/** How long past its due time a task may wait with its lane free before the watchdog starts it. */
export const LATE_START_MICROS = 5_000_000;
/** How often the watchdog looks, while there is work queued or in flight. */
export const WATCHDOG_PERIOD_MS = 1000;

/** Longest timer Node accepts; a task further out is re-armed when the timer fires. */
const MAX_TIMER_MS = 2 ** 31 - 1;

const isPromise = (value: unknown): value is Promise<unknown> =>
  typeof (value as Promise<unknown> | undefined)?.then === 'function';

/**
 * Runs work when the emulator clock reaches it. Each task belongs to a lane: a lane runs
 * its tasks one at a time in due order (ties in scheduling order), while different lanes
 * run side by side, so one slow task holds back only its own lane. Due tasks start in due
 * order, synchronously one after another, so what they decide before their first await is
 * deterministic. A task's failure is reported and never escapes.
 *
 * With a running clock a timer wakes the queue. With a frozen clock nothing starts by
 * itself: `advanceTo` steps the clock from one due time to the next, runs every task due
 * at that time (and what they schedule for it) to the end before moving on, so every task
 * sees the time it was due at.
 *
 * A watchdog looks every WATCHDOG_PERIOD_MS while there is work: it starts a task left waiting
 * past its due time with its lane free, and frees the lane of a task in flight past the bound.
 * Neither should ever happen; each is logged and counted, so that a lost wake-up cannot go unseen.
 */
export class Scheduler {
  private queue: QueuedTask[] = [];
  private sequence = 0;
  /** The task in flight per lane. */
  private readonly running = new Map<string, RunningTask>();
  private readonly timers: SchedulerTimers;
  private timer: unknown = null;
  private watchdogTimer: unknown = null;
  private wakeQueued = false;
  private stopped = false;
  /** Set while `cancelAll` waits for the tasks in flight: nothing new starts meanwhile. */
  private cancelling = false;
  /** Set while `advanceTo` releases due work, which a frozen clock otherwise holds. */
  private releasing = false;
  private advancing: Promise<void> = Promise.resolve();
  /** The logs of `recording` calls under way: each gets every task started meanwhile. */
  private readonly logs = new Set<ScheduledTask[]>();
  private readonly counts: WatchdogCounts = { late_starts: 0, overruns: 0 };

  constructor(
    private readonly clock: Clock,
    private readonly options: SchedulerOptions,
  ) {
    this.timers = options.timers ?? NODE_TIMERS;
  }

  schedule(
    dueAt: Micros,
    lane: string,
    label: string,
    subject: TaskSubject,
    run: () => Promise<void> | void,
  ): ScheduledTask {
    const task: QueuedTask = {
      dueAt,
      lane,
      label,
      subject,
      run,
      sequence: this.sequence++,
      cancelled: this.stopped,
      cancel: () => this.drop((other) => other === task),
    };
    if (this.stopped) return task;
    const index = this.queue.findIndex((other) => other.dueAt > dueAt);
    this.queue.splice(index === -1 ? this.queue.length : index, 0, task);
    // Never from inside the caller: what schedules a task finishes before the task starts.
    this.wakeNextTurn();
    return task;
  }

  private wakeNextTurn(): void {
    if (this.wakeQueued) return;
    this.wakeQueued = true;
    this.timers.setImmediate(() => {
      this.wakeQueued = false;
      this.wake();
    });
  }

  /** Cancels the lane's tasks that have not started (its task in flight, if any, runs to its end). */
  cancelLane(lane: string): void {
    this.drop((task) => task.lane === lane);
  }

  /**
   * Cancels the tasks of these lanes, waits for their tasks in flight, and cancels what those
   * scheduled meanwhile in the same lanes; other lanes go on all along.
   */
  async cancelLanes(lanes: ReadonlySet<string>): Promise<void> {
    const cancel = () => this.drop((task) => lanes.has(task.lane));
    cancel();
    for (;;) {
      const inFlight = [...lanes].flatMap((lane) => this.running.get(lane)?.done ?? []);
      if (inFlight.length === 0) return;
      await Promise.all(inFlight);
      cancel();
    }
  }

  pending(): readonly ScheduledTask[] {
    return [...this.queue];
  }

  /** The task in flight of each lane that has one, the longest running first. */
  inFlight(): readonly RunningTask[] {
    return [...this.running.values()].sort((a, b) => a.startedAtMs - b.startedAtMs);
  }

  watchdogCounts(): WatchdogCounts {
    return { ...this.counts };
  }

  /** When the next task is due; null when none is scheduled. */
  nextDueAt(): Micros | null {
    return this.peek()?.dueAt ?? null;
  }

  /** Runs `work` and answers the tasks that started meanwhile, in the order they started. */
  async recording(work: () => Promise<void>): Promise<ScheduledTask[]> {
    const log: ScheduledTask[] = [];
    this.logs.add(log);
    try {
      await work();
    } finally {
      this.logs.delete(log);
    }
    return log;
  }

  /**
   * Resolves once no task is running and, unless the clock is frozen, none is due. Each round arms
   * the timer again: `advanceTo` moves the clock between rounds, and while it waits for a task in
   * flight, tasks of other lanes fall due on the clock it moved.
   */
  async settle(): Promise<void> {
    for (;;) {
      this.wake();
      if (this.running.size === 0) return;
      await Promise.all(this.inFlightEnds());
    }
  }

  /**
   * Moves the clock forward to `target`, running every task that falls due on the way at
   * its own time; `target` may be now, which runs what is due now. Calls run one after another.
   */
  advanceTo(target: Micros): Promise<void> {
    const advance = this.advancing.then(async () => {
      this.releasing = true;
      try {
        await this.settle();
        for (let next = this.peek(); next && next.dueAt <= target; next = this.peek()) {
          if (next.dueAt > this.clock.now()) this.clock.set(next.dueAt);
          await this.settle();
        }
        if (target > this.clock.now()) this.clock.set(target);
        await this.settle();
      } finally {
        this.releasing = false;
        this.wake();
      }
    });
    this.advancing = advance.catch(() => undefined);
    return advance;
  }

  /** Called after the clock was changed from outside (set, unfreeze). */
  clockChanged(): void {
    this.wake();
  }

  /**
   * Cancels the queued tasks that pass `test` and takes them out of the queue: a task cancelled
   * long before its time (a run's time limit once the run ended) would otherwise stay in it, and
   * every scheduling and cancelling would walk past all of them.
   */
  private drop(test: (task: QueuedTask) => boolean): void {
    this.queue = this.queue.filter((task) => {
      if (!test(task)) return true;
      task.cancelled = true;
      return false;
    });
  }

  /** Cancels every task that has not started. */
  private clear(): void {
    for (const task of this.queue) task.cancelled = true;
    this.queue = [];
    this.disarm();
  }

  /** Cancels everything, waits for the tasks in flight, and cancels what they scheduled meanwhile. */
  async cancelAll(): Promise<void> {
    this.cancelling = true;
    try {
      this.clear();
      while (this.running.size > 0) await Promise.all(this.inFlightEnds());
      this.clear();
    } finally {
      this.cancelling = false;
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.cancelAll();
    this.disarmWatchdog();
  }

  private peek(): QueuedTask | undefined {
    return this.queue[0];
  }

  private inFlightEnds(): Promise<void>[] {
    return [...this.running.values()].map((running) => running.done);
  }

  private mayStart(): boolean {
    return !this.stopped && !this.cancelling && (this.releasing || !this.clock.frozen);
  }

  /** Starts, in due order, every task due at `now` whose lane is free. */
  private startDueTasks(now: Micros): void {
    if (!this.mayStart()) return;
    for (;;) {
      const index = this.queue.findIndex((task) => task.dueAt <= now && !this.running.has(task.lane));
      if (index === -1) return;
      const [task] = this.queue.splice(index, 1);
      this.start(task!);
    }
  }

  private start(task: QueuedTask): void {
    for (const log of this.logs) log.push(task);
    let result: Promise<void> | void;
    try {
      result = task.run();
    } catch (error) {
      this.options.onError(task.label, error);
      return;
    }
    if (!isPromise(result)) return;
    const running: RunningTask = {
      task,
      startedAt: this.clock.now(),
      startedAtMs: this.timers.monotonicNow(),
      done: result
        .then(undefined, (error: unknown) => this.options.onError(task.label, error))
        .finally(() => {
          // The watchdog may have freed the lane already, and another task may hold it now.
          if (this.running.get(task.lane) === running) this.running.delete(task.lane);
          // On the next turn of the event loop: tasks that end without I/O would otherwise start the next ones from
          // this promise chain, and requests would wait until no task is left.
          this.wakeNextTurn();
        }),
    };
    this.running.set(task.lane, running);
    this.armWatchdog();
  }

  /**
   * Starts what is due and arms a timer for what is not, both from one reading of the clock: read
   * twice, a task falling due between the readings would be neither started nor waited for.
   */
  private wake(): void {
    const now = this.clock.now();
    this.startDueTasks(now);
    this.arm(now);
  }

  /** A timer for the next task not yet due at `now`, while the clock runs. */
  private arm(now: Micros): void {
    this.disarm();
    this.armWatchdog();
    if (this.clock.frozen || this.stopped) return;
    const next = this.queue.find((task) => task.dueAt > now);
    if (!next) return;
    const delayMs = Math.min(MAX_TIMER_MS, (next.dueAt - now) / 1000);
    this.timer = this.timers.setTimeout(() => {
      this.timer = null;
      this.wake();
    }, delayMs);
  }

  private disarm(): void {
    if (this.timer !== null) this.timers.clearTimeout(this.timer);
    this.timer = null;
  }

  /** While a task is in flight, or queued with the clock running: a frozen clock's queue has nothing to watch. */
  private armWatchdog(): void {
    if (this.watchdogTimer !== null || this.stopped) return;
    if (this.running.size === 0 && (this.queue.length === 0 || this.clock.frozen)) return;
    this.watchdogTimer = this.timers.setTimeout(() => {
      this.watchdogTimer = null;
      this.watch();
      this.armWatchdog();
    }, WATCHDOG_PERIOD_MS);
  }

  private disarmWatchdog(): void {
    if (this.watchdogTimer !== null) this.timers.clearTimeout(this.watchdogTimer);
    this.watchdogTimer = null;
  }

  private watch(): void {
    if (this.releaseOverruns()) this.wake();
    if (this.clock.frozen || !this.mayStart() || this.lateTasks(this.clock.now()).length === 0) return;
    // After this turn's own wake-ups (a lane freed in this turn wakes its queue with setImmediate), so that only a task
    // nothing else would start counts.
    this.timers.setImmediate(() => {
      if (this.clock.frozen || !this.mayStart()) return;
      const now = this.clock.now();
      for (const task of this.lateTasks(now)) {
        this.counts.late_starts++;
        this.options.onWatchdog(
          `watchdog: task "${task.label}" was still waiting ${((now - task.dueAt) / 1_000_000).toFixed(1)} s ` +
            `after its due time with its lane free: started now`,
        );
      }
      this.wake();
    });
  }

  /** Frees the lanes whose task has been in flight past the bound; true when it freed one. */
  private releaseOverruns(): boolean {
    const limitMs = this.options.inFlightLimitMs();
    const nowMs = this.timers.monotonicNow();
    let released = false;
    for (const [lane, running] of this.running) {
      const ranMs = nowMs - running.startedAtMs;
      if (ranMs <= limitMs) continue;
      this.running.delete(lane);
      this.counts.overruns++;
      released = true;
      this.options.onWatchdog(
        `watchdog: task "${running.task.label}" has been in flight ${(ranMs / 1000).toFixed(1)} s, past ` +
          `the ${limitMs / 1000} s bound: the tasks behind it in lane "${lane}" go on`,
      );
    }
    return released;
  }

  /** Queued tasks past LATE_START_MICROS after their due time whose lane is free. */
  private lateTasks(now: Micros): QueuedTask[] {
    return this.queue.filter((task) => task.dueAt + LATE_START_MICROS <= now && !this.running.has(task.lane));
  }
}
