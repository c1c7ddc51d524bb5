/**
 * The scheduler on a simulated event loop (test/shared/support/simulated-loop.ts), so that every timer
 * turn can be inspected: a task starts when its due time comes whatever the two clocks read
 * between its timer and its start, and the watchdog starts what a lost wake-up would leave
 * waiting, frees a lane held by a task that never ends, and logs and counts both.
 */
import { describe, expect, it } from 'vitest';
import { createClock } from '../../src/shared/clock.ts';
import { createClockControl } from '../../src/shared/clock-control.ts';
import { LATE_START_MICROS, Scheduler, WATCHDOG_PERIOD_MS } from '../../src/shared/scheduler.ts';
import { SimulatedLoop } from './support/simulated-loop.ts';

const EPOCH_MS = Date.UTC(2026, 10, 29);
const SUBJECT = { kind: 'test', workspace_id: 'w' };

function simulatedScheduler(options: { inFlightLimitMs?: number; wall?: (loop: SimulatedLoop) => number } = {}) {
  const loop = new SimulatedLoop(EPOCH_MS);
  const clock = createClock(() => (options.wall ?? ((l) => l.wallNow()))(loop));
  const watchdogLines: string[] = [];
  const errors: string[] = [];
  const scheduler = new Scheduler(clock, {
    onError: (label) => errors.push(label),
    onWatchdog: (line) => watchdogLines.push(line),
    inFlightLimitMs: () => options.inFlightLimitMs ?? 600_000,
    timers: loop,
  });
  return { loop, clock, scheduler, watchdogLines, errors };
}

describe('a running clock', () => {
  it('starts a task whose timer fires while the wall clock still reads the millisecond before its due time', async () => {
    // Node's timers count from a millisecond-truncated monotonic clock, and Date.now() ticks on its own: a
    // timer often fires while Date.now() is a millisecond short of the due time, and may tick on before
    // the scheduler reads it again. Read twice, the task was not due for the start and was due for the timer.
    const early: number[] = [];
    const { loop, clock, scheduler } = simulatedScheduler({ wall: (l) => early.shift() ?? l.wallNow() });
    const dueAt = clock.now() + 5_000;
    let startedAt: number | null = null;
    scheduler.schedule(dueAt, 'deployment d', 'revision r CREATING', SUBJECT, () => {
      startedAt = clock.now();
    });
    await loop.runDue();
    early.push(EPOCH_MS + 4);
    await loop.runUntil(60_000);
    expect(startedAt).toBe(dueAt + 1_000);
    expect(scheduler.watchdogCounts()).toEqual({ late_starts: 0, overruns: 0 });
  });

  it('starts the next task of a lane on the turn after the task before it ends', async () => {
    const { loop, clock, scheduler } = simulatedScheduler();
    const started: string[] = [];
    const first = () => new Promise<void>((resolve) => loop.setTimeout(resolve, 50));
    scheduler.schedule(clock.now(), 'lane', 'first', SUBJECT, () => (started.push(`first@${loop.elapsedMs}`), first()));
    scheduler.schedule(
      clock.now() + 10_000,
      'lane',
      'second',
      SUBJECT,
      () => void started.push(`second@${loop.elapsedMs}`),
    );
    await loop.runUntil(1_000);
    expect(started).toEqual(['first@0', 'second@50']);
  });

  it(
    'starts the tasks of other lanes that fall due on the clock an advance moved, while it waits for a task in ' +
      'flight',
    async () => {
      // Found by the model test (seed 1337073130): the timer armed before the advance was for the old time.
      const { loop, clock, scheduler } = simulatedScheduler();
      const control = createClockControl(clock, scheduler);
      const start = clock.now();
      scheduler.schedule(
        start + 1_000_000,
        'export run',
        'long step',
        SUBJECT,
        () => new Promise<void>((resolve) => loop.setTimeout(resolve, 5_000)),
      );
      let otherStartedAt: number | null = null;
      scheduler.schedule(
        start + 1_010_000,
        'deployment d',
        'revision step',
        SUBJECT,
        () => void (otherStartedAt = clock.now()),
      );
      await loop.runDue();
      void control.advance(1);
      await loop.runUntil(20);
      expect(otherStartedAt).toBe(start + 1_010_000);
    },
  );

  it(
    'cancels what a task in flight schedules during a cancelAll, an advance under way too, and runs what comes ' +
      'after',
    async () => {
      const { loop, clock, scheduler } = simulatedScheduler();
      const control = createClockControl(clock, scheduler);
      const ran: string[] = [];
      scheduler.schedule(clock.now(), 'lane', 'in flight', SUBJECT, async () => {
        await new Promise<void>((resolve) => loop.setTimeout(resolve, 100));
        scheduler.schedule(
          clock.now(),
          'lane',
          'scheduled while cancelling',
          SUBJECT,
          () => void ran.push('cancelled one'),
        );
      });
      await loop.runDue();
      let cancelled = false;
      let advanced = false;
      void scheduler.cancelAll().then(() => (cancelled = true));
      void control.advance(1).then(() => (advanced = true));
      await loop.runUntil(50);
      expect([cancelled, advanced]).toEqual([false, false]);
      await loop.runUntil(200);
      expect([cancelled, advanced]).toEqual([true, true]);
      scheduler.schedule(clock.now() + 1_000, 'lane', 'after', SUBJECT, () => void ran.push('after'));
      await loop.runUntil(300);
      expect(ran).toEqual(['after']);
    },
  );
});

describe('a stopped scheduler', () => {
  it('takes no more tasks, so that an advance under way ends', async () => {
    const { loop, clock, scheduler } = simulatedScheduler();
    const control = createClockControl(clock, scheduler);
    await scheduler.stop();
    const task = scheduler.schedule(clock.now(), 'lane', 'too late', SUBJECT, () => undefined);
    let advanced = false;
    void control.advance(10).then(() => (advanced = true));
    await loop.runUntil(10);
    expect([task.cancelled, advanced, scheduler.pending()]).toEqual([true, true, []]);
  });
});

describe('the watchdog', () => {
  it('starts a task left waiting past its due time with its lane free, and logs and counts it', async () => {
    // Linux's monotonic clock stops while the machine sleeps and the wall clock does not: after a
    // suspend the timer of a task an hour out is still most of an hour away, though the task is due.
    let suspendedMs = 0;
    const { loop, clock, scheduler, watchdogLines } = simulatedScheduler({ wall: (l) => l.wallNow() + suspendedMs });
    const dueAt = clock.now() + 3_600_000_000;
    let startedAt: number | null = null;
    scheduler.schedule(dueAt, 'deployment d', 'revision r QUEUED', SUBJECT, () => {
      startedAt = clock.now();
    });
    await loop.runUntil(1_000);
    suspendedMs = 3_600_000;
    // From here the task is as many seconds overdue as the loop has run; the watchdog looks once a second.
    await loop.runUntil(LATE_START_MICROS / 1000 - WATCHDOG_PERIOD_MS / 2);
    expect(startedAt).toBeNull();
    await loop.runUntil(LATE_START_MICROS / 1000 + WATCHDOG_PERIOD_MS);
    expect(startedAt! - dueAt).toBe(LATE_START_MICROS);
    expect(scheduler.watchdogCounts()).toEqual({ late_starts: 1, overruns: 0 });
    expect(watchdogLines).toEqual([
      expect.stringMatching(
        new RegExp(
          String.raw`^watchdog: task "revision r QUEUED" was still waiting [\d.]+ s after its due time ` +
            'with its lane free: started now$',
        ),
      ),
    ]);
  });

  it('frees the lane of a task in flight past the bound, and lists it in flight until then', async () => {
    const { loop, clock, scheduler, watchdogLines } = simulatedScheduler({ inFlightLimitMs: 2_500 });
    scheduler.schedule(clock.now(), 'lane', 'never ends', SUBJECT, () => new Promise<void>(() => undefined));
    let nextStarted = false;
    scheduler.schedule(clock.now() + 1_000, 'lane', 'behind it', SUBJECT, () => void (nextStarted = true));
    await loop.runUntil(2_000);
    expect(scheduler.inFlight().map((running) => [running.task.label, running.startedAtMs])).toEqual([
      ['never ends', 0],
    ]);
    expect(nextStarted).toBe(false);
    await loop.runUntil(3_000);
    expect(nextStarted).toBe(true);
    expect(scheduler.inFlight()).toEqual([]);
    expect(scheduler.watchdogCounts()).toEqual({ late_starts: 0, overruns: 1 });
    expect(watchdogLines).toEqual([
      'watchdog: task "never ends" has been in flight 3.0 s, past the 2.5 s bound: the tasks behind it in lane ' +
        '"lane" go on',
    ]);
  });

  it('has no timer while there is no work', async () => {
    const { loop, clock, scheduler } = simulatedScheduler();
    scheduler.schedule(clock.now() + 1_000, 'lane', 'one', SUBJECT, () => undefined);
    await loop.runDue();
    expect(loop.pendingTimers).toBe(2);
    await loop.runUntil(10_000);
    expect(loop.pendingTimers).toBe(0);
  });
});
