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

/** Longest timer Node accepts; a task further out is re-armed when the timer fires. */
const MAX_TIMER_MS = 2 ** 31 - 1;

const isPromise = (value: unknown): value is Promise<unknown> => typeof (value as Promise<unknown> | undefined)?.then === 'function';

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
 */
export class Scheduler {
  private queue: QueuedTask[] = [];
  private sequence = 0;
  /** The task in flight per lane, as a promise that never rejects. */
  private readonly running = new Map<string, Promise<void>>();
  private timer: NodeJS.Timeout | null = null;
  private wakeQueued = false;
  private stopped = false;
  /** Set while `cancelAll` waits for the tasks in flight: nothing new starts meanwhile. */
  private cancelling = false;
  /** Set while `advanceTo` releases due work, which a frozen clock otherwise holds. */
  private releasing = false;
  private advancing: Promise<void> = Promise.resolve();
  /** The logs of `recording` calls under way: each gets every task started meanwhile. */
  private readonly logs = new Set<ScheduledTask[]>();

  constructor(
    private readonly clock: Clock,
    private readonly onError: (label: string, error: unknown) => void,
  ) {}

  schedule(dueAt: Micros, lane: string, label: string, subject: TaskSubject, run: () => Promise<void> | void): ScheduledTask {
    const task: QueuedTask = {
      dueAt,
      lane,
      label,
      subject,
      run,
      sequence: this.sequence++,
      cancelled: false,
      cancel: () => this.drop((other) => other === task),
    };
    const index = this.queue.findIndex((other) => other.dueAt > dueAt);
    this.queue.splice(index === -1 ? this.queue.length : index, 0, task);
    // Never from inside the caller: what schedules a task finishes before the task starts.
    this.wakeNextTurn();
    return task;
  }

  private wakeNextTurn(): void {
    if (this.wakeQueued) return;
    this.wakeQueued = true;
    setImmediate(() => {
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
      const inFlight = [...lanes].flatMap((lane) => this.running.get(lane) ?? []);
      if (inFlight.length === 0) return;
      await Promise.all(inFlight);
      cancel();
    }
  }

  pending(): readonly ScheduledTask[] {
    return [...this.queue];
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

  /** Resolves once no task is running and, unless the clock is frozen, none is due. */
  async settle(): Promise<void> {
    for (;;) {
      this.startDueTasks();
      if (this.running.size === 0) return;
      await Promise.all(this.running.values());
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
      while (this.running.size > 0) await Promise.all(this.running.values());
      this.clear();
    } finally {
      this.cancelling = false;
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.cancelAll();
  }

  private peek(): QueuedTask | undefined {
    return this.queue[0];
  }

  private mayStart(): boolean {
    return !this.stopped && !this.cancelling && (this.releasing || !this.clock.frozen);
  }

  /** Starts, in due order, every due task whose lane is free. */
  private startDueTasks(): void {
    if (!this.mayStart()) return;
    for (;;) {
      const now = this.clock.now();
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
      this.onError(task.label, error);
      return;
    }
    if (!isPromise(result)) return;
    const done = result
      .then(undefined, (error: unknown) => this.onError(task.label, error))
      .finally(() => {
        this.running.delete(task.lane);
        // On the next turn of the event loop: tasks that end without I/O would otherwise start the next ones from this promise chain, and requests would wait until no task is left.
        this.wakeNextTurn();
      });
    this.running.set(task.lane, done);
  }

  private wake(): void {
    this.startDueTasks();
    this.arm();
  }

  /** A timer for the next task not yet due, while the clock runs. */
  private arm(): void {
    this.disarm();
    if (this.clock.frozen || this.stopped) return;
    const now = this.clock.now();
    const next = this.queue.find((task) => task.dueAt > now);
    if (!next) return;
    const delayMs = Math.min(MAX_TIMER_MS, Math.max(0, (next.dueAt - now) / 1000));
    this.timer = setTimeout(() => this.wake(), delayMs);
    this.timer.unref();
  }

  private disarm(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
