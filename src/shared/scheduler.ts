import type { Clock } from './clock.ts';
import type { Micros } from './time.ts';

export interface ScheduledTask {
  readonly dueAt: Micros;
  readonly label: string;
  cancel(): void;
}

interface QueuedTask extends ScheduledTask {
  readonly sequence: number;
  readonly run: () => Promise<void> | void;
  cancelled: boolean;
}

/** Longest timer Node accepts; a task further out is re-armed when the timer fires. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Runs work when the emulator clock reaches it. Tasks run one at a time, in due order,
 * so that state changes are deterministic. With a running clock a timer wakes the queue;
 * with a frozen clock only due work runs, and `advanceTo` steps the clock from one due
 * task to the next so every task sees the time it was due at.
 */
export class Scheduler {
  private queue: QueuedTask[] = [];
  private sequence = 0;
  private draining: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    private readonly clock: Clock,
    private readonly onError: (label: string, error: unknown) => void,
  ) {}

  schedule(dueAt: Micros, label: string, run: () => Promise<void> | void): ScheduledTask {
    const task: QueuedTask = {
      dueAt,
      label,
      run,
      sequence: this.sequence++,
      cancelled: false,
      cancel: () => {
        task.cancelled = true;
      },
    };
    const index = this.queue.findIndex((other) => other.dueAt > dueAt);
    this.queue.splice(index === -1 ? this.queue.length : index, 0, task);
    this.wake();
    return task;
  }

  pending(): readonly ScheduledTask[] {
    return this.queue.filter((task) => !task.cancelled);
  }

  /** Resolves once no task is running and none is due. */
  async settle(): Promise<void> {
    while (this.draining || this.nextDue()) {
      await (this.draining ?? this.drain());
    }
  }

  /** Moves the clock forward to `target`, running every task that falls due on the way at its own time. */
  async advanceTo(target: Micros): Promise<void> {
    await this.settle();
    for (let next = this.peek(); next && next.dueAt <= target; next = this.peek()) {
      if (next.dueAt > this.clock.now()) this.clock.set(next.dueAt);
      await this.settle();
    }
    if (target > this.clock.now()) this.clock.set(target);
    await this.settle();
    this.wake();
  }

  /** Called after the clock was changed from outside (set, unfreeze). */
  clockChanged(): void {
    this.wake();
  }

  clear(): void {
    for (const task of this.queue) task.cancelled = true;
    this.queue = [];
    this.disarm();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.clear();
    await this.draining;
  }

  private peek(): QueuedTask | undefined {
    while (this.queue[0]?.cancelled) this.queue.shift();
    return this.queue[0];
  }

  private nextDue(): QueuedTask | undefined {
    const next = this.peek();
    return next && next.dueAt <= this.clock.now() ? next : undefined;
  }

  private wake(): void {
    if (this.stopped) return;
    if (this.nextDue()) {
      if (!this.draining) setImmediate(() => void this.drain());
      return;
    }
    this.arm();
  }

  private drain(): Promise<void> {
    // The promise is stored before its completion handler can clear it, even when nothing is due.
    this.draining ??= this.runDueTasks().finally(() => {
      this.draining = null;
      this.arm();
    });
    return this.draining;
  }

  private async runDueTasks(): Promise<void> {
    for (let task = this.nextDue(); task && !this.stopped; task = this.nextDue()) {
      this.queue.shift();
      try {
        await task.run();
      } catch (error) {
        this.onError(task.label, error);
      }
    }
  }

  private arm(): void {
    this.disarm();
    const next = this.peek();
    if (!next || this.clock.frozen || this.stopped) return;
    const delayMs = Math.min(MAX_TIMER_MS, Math.max(0, (next.dueAt - this.clock.now()) / 1000));
    this.timer = setTimeout(() => this.wake(), delayMs);
    this.timer.unref();
  }

  private disarm(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
