/**
 * Model-based test of the scheduler: fast-check drives the real Scheduler, on a simulated event
 * loop whose wall clock may lag its timers by a millisecond, through schedule, cancel,
 * cancelLane(s), cancelAll, clock set/advance/freeze/unfreeze and waits, with tasks that end at
 * once, later, or throw, that schedule the next step of their lane, in lanes shared or not.
 * A reference follows which tasks exist, which may be cancelled, and which are in flight, and
 * says at every time the loop stops at which tasks must have started:
 * - liveness: with a running clock and no cancelAll under way, no task that is due and whose
 *   lane is free is still waiting after one more timer turn;
 * - a task starts at or after its due time, never while its lane has one in flight, never before
 *   a task of its lane due earlier (or as early and scheduled first), never once cancelled, and
 *   with a frozen clock only while the clock is being moved;
 * - only what was asked is cancelled, every cancelAll and clock change settles, and the watchdog
 *   never has anything to do.
 *
 * `npm test` runs 1,000 cases from a fixed seed; `npm run fuzz` runs LOCALPLANE_FUZZ_RUNS
 * (100,000) from a random seed; LOCALPLANE_FUZZ_SEED=<seed> replays one.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createClock } from '../../src/shared/clock.ts';
import { createClockControl } from '../../src/shared/clock-control.ts';
import { Scheduler, type ScheduledTask } from '../../src/shared/scheduler.ts';
import { fuzzSettings } from '../support/fuzz-settings.ts';
import { SimulatedLoop } from './support/simulated-loop.ts';

const { runs: RUNS, seed: SEED } = fuzzSettings(1_000, 20_261_129);
const EPOCH_MS = Date.UTC(2026, 10, 29);
const LANES = ['a', 'b', 'c'] as const;
/** Past every wait and task length a case draws: by then everything must have settled. */
const DRAIN_MS = 60_000;

type Behaviour =
  | { end: 'sync' }
  | { end: 'throw' }
  | { end: 'resolved' }
  | { end: 'later'; ms: number; reject: boolean }
  /** Schedules the next step of its lane (as a revision step does), then ends at once or later. */
  | { end: 'next-step'; offsetMs: number; laterMs: number | null };

type Command =
  | { op: 'schedule'; offsetMs: number; lane: number; behaviour: Behaviour }
  | { op: 'cancel'; pick: number }
  | { op: 'cancelLane'; lane: number }
  | { op: 'cancelLanes'; lanes: number[] }
  | { op: 'cancelAll' }
  | { op: 'set'; offsetMs: number }
  | { op: 'advance'; ms: number }
  | { op: 'freeze' }
  | { op: 'unfreeze' }
  | { op: 'wait'; ms: number };

const lane = fc.integer({ min: 0, max: LANES.length - 1 });
const behaviour: fc.Arbitrary<Behaviour> = fc.oneof(
  fc.constant({ end: 'sync' as const }),
  fc.constant({ end: 'throw' as const }),
  fc.constant({ end: 'resolved' as const }),
  fc.record({ end: fc.constant('later' as const), ms: fc.integer({ min: 0, max: 3_000 }), reject: fc.boolean() }),
  fc.record({
    end: fc.constant('next-step' as const),
    offsetMs: fc.integer({ min: -500, max: 3_000 }),
    laterMs: fc.option(fc.integer({ min: 0, max: 2_000 }), { nil: null }),
  }),
);
const command: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      op: fc.constant('schedule' as const),
      offsetMs: fc.integer({ min: -2_000, max: 5_000 }),
      lane,
      behaviour,
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('cancel' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('cancelLane' as const), lane }) },
  {
    weight: 1,
    arbitrary: fc.record({ op: fc.constant('cancelLanes' as const), lanes: fc.uniqueArray(lane, { minLength: 1 }) }),
  },
  { weight: 1, arbitrary: fc.constant({ op: 'cancelAll' as const }) },
  {
    weight: 1,
    arbitrary: fc.record({ op: fc.constant('set' as const), offsetMs: fc.integer({ min: -3_000, max: 3_000 }) }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 3_000 }) }) },
  { weight: 1, arbitrary: fc.constant({ op: 'freeze' as const }) },
  { weight: 1, arbitrary: fc.constant({ op: 'unfreeze' as const }) },
  { weight: 5, arbitrary: fc.record({ op: fc.constant('wait' as const), ms: fc.integer({ min: 0, max: 3_000 }) }) },
);

interface TrackedTask {
  readonly name: string;
  readonly task: ScheduledTask;
  readonly sequence: number;
  readonly async: boolean;
  startedAt: number | null;
  ended: boolean;
  /**
   * Whether a call asked for it to be cancelled (or it fell in the window of one that cancels what is scheduled
   * meanwhile).
   */
  mayBeCancelled: boolean;
}

/** Runs one case; answers the first broken rule, or null. */
async function runCase(commands: readonly Command[], lags: readonly boolean[]): Promise<string | null> {
  const loop = new SimulatedLoop(EPOCH_MS, lags);
  const clock = createClock(loop.wallNow);
  const problems: string[] = [];
  const scheduler = new Scheduler(clock, {
    onError: () => undefined,
    onWatchdog: (line) => problems.push(line),
    inFlightLimitMs: () => Number.POSITIVE_INFINITY,
    timers: loop,
  });
  const control = createClockControl(clock, scheduler);
  const tasks: TrackedTask[] = [];
  /**
   * The lanes of each cancelLanes under way, and a null for each cancelAll under way: they also cancel what is
   * scheduled meanwhile.
   */
  const cancellingWindows = new Set<{ lanes: ReadonlySet<string> | null }>();
  let clockMoves = 0;
  const unsettled = new Set<string>();
  const track = (what: string, promise: Promise<unknown>) => {
    unsettled.add(what);
    void promise.then(
      () => unsettled.delete(what),
      (error: unknown) => problems.push(`${what} failed: ${String(error)}`),
    );
  };
  const cancelAllUnderWay = () => [...cancellingWindows].some((window) => window.lanes === null);

  const schedule = (offsetMs: number, laneName: string, what: Behaviour): void => {
    const sequence = tasks.length;
    const name = `#${sequence} (${laneName}, ${what.end})`;
    const dueAt = clock.now() + offsetMs * 1000;
    const tracked: TrackedTask = {
      name,
      sequence,
      async: what.end === 'resolved' || what.end === 'later' || (what.end === 'next-step' && what.laterMs !== null),
      startedAt: null,
      ended: false,
      mayBeCancelled: [...cancellingWindows].some((window) => window.lanes === null || window.lanes.has(laneName)),
      task: scheduler.schedule(dueAt, laneName, name, { kind: 'model', workspace_id: 'w' }, () => {
        started(tracked);
        const end = () => void (tracked.ended = true);
        switch (what.end) {
          case 'sync':
            return end();
          case 'throw':
            end();
            throw new Error('a task that throws');
          case 'resolved':
            return Promise.resolve().then(end);
          case 'later':
            return new Promise<void>((resolve, reject) =>
              loop.setTimeout(() => {
                end();
                if (what.reject) reject(new Error('a task that fails later'));
                else resolve();
              }, what.ms),
            );
          case 'next-step':
            schedule(what.offsetMs, laneName, { end: 'sync' });
            if (what.laterMs === null) return end();
            return new Promise<void>((resolve) => loop.setTimeout(() => (end(), resolve()), what.laterMs!));
        }
      }),
    };
    tasks.push(tracked);
  };

  const started = (tracked: TrackedTask): void => {
    const now = clock.now();
    const { dueAt, lane: taskLane } = tracked.task;
    if (tracked.startedAt !== null) problems.push(`${tracked.name} started twice`);
    tracked.startedAt = now;
    if (tracked.task.cancelled) problems.push(`${tracked.name} started though cancelled`);
    if (now < dueAt) problems.push(`${tracked.name} started at ${now}, before its due time ${dueAt}`);
    if (clock.frozen && clockMoves === 0)
      problems.push(`${tracked.name} started with the clock frozen and not being moved`);
    for (const other of tasks) {
      if (other === tracked || other.task.lane !== taskLane) continue;
      if (other.async && other.startedAt !== null && !other.ended)
        problems.push(`${tracked.name} started while ${other.name} of its lane was in flight`);
      const earlier = other.task.dueAt < dueAt || (other.task.dueAt === dueAt && other.sequence < tracked.sequence);
      if (earlier && other.startedAt === null && !other.task.cancelled)
        problems.push(`${tracked.name} started before ${other.name}, due earlier in its lane`);
    }
  };

  /**
   * Due tasks with their lane free, and the loop time at which each was first seen waiting. Date.now()
   * may lag the timers by a millisecond, so one more timer turn is allowed: a task still waiting at a
   * later time of the loop is one nothing will start.
   */
  const waitingSince = new Map<TrackedTask, number>();
  const mustHaveStarted = (): void => {
    const now = clock.now();
    for (const tracked of tasks) {
      if (tracked.task.cancelled && !tracked.mayBeCancelled)
        problems.push(`${tracked.name} was cancelled though nothing asked for it`);
    }
    if (clock.frozen || cancelAllUnderWay()) return waitingSince.clear();
    const busyLanes = new Set(tasks.filter((t) => t.async && t.startedAt !== null && !t.ended).map((t) => t.task.lane));
    const waiting = tasks.filter(
      (t) => t.startedAt === null && !t.task.cancelled && t.task.dueAt <= now && !busyLanes.has(t.task.lane),
    );
    for (const tracked of waitingSince.keys()) if (!waiting.includes(tracked)) waitingSince.delete(tracked);
    for (const tracked of waiting) {
      const since = waitingSince.get(tracked);
      if (since === undefined) waitingSince.set(tracked, loop.elapsedMs);
      else if (loop.elapsedMs > since) {
        problems.push(
          `${tracked.name} was due at ${tracked.task.dueAt} and still waiting at ${now} (loop at ${since} ` +
            `and ${loop.elapsedMs} ms) with its lane free`,
        );
      }
    }
  };

  const cancelling = (lanes: ReadonlySet<string> | null, what: string, promise: Promise<void>): void => {
    const window = { lanes };
    cancellingWindows.add(window);
    track(
      what,
      promise.finally(() => cancellingWindows.delete(window)),
    );
  };
  const movingClock = (what: string, promise: Promise<unknown>): void => {
    clockMoves++;
    track(
      what,
      promise.finally(() => clockMoves--),
    );
  };

  for (const [index, step] of commands.entries()) {
    const where = `step ${index} ${step.op}`;
    switch (step.op) {
      case 'schedule':
        schedule(step.offsetMs, LANES[step.lane]!, step.behaviour);
        break;
      case 'cancel': {
        const tracked = tasks[step.pick % Math.max(1, tasks.length)];
        if (!tracked) break;
        tracked.mayBeCancelled = true;
        tracked.task.cancel();
        break;
      }
      case 'cancelLane':
        for (const tracked of tasks) if (tracked.task.lane === LANES[step.lane]) tracked.mayBeCancelled = true;
        scheduler.cancelLane(LANES[step.lane]!);
        break;
      case 'cancelLanes': {
        const lanes = new Set<string>(step.lanes.map((l) => LANES[l]!));
        for (const tracked of tasks) if (lanes.has(tracked.task.lane)) tracked.mayBeCancelled = true;
        cancelling(lanes, where, scheduler.cancelLanes(lanes));
        break;
      }
      case 'cancelAll':
        for (const tracked of tasks) tracked.mayBeCancelled = true;
        cancelling(null, where, scheduler.cancelAll());
        break;
      case 'set':
        movingClock(where, control.set(clock.now() + step.offsetMs * 1000));
        break;
      case 'advance':
        movingClock(where, control.advance(step.ms / 1000));
        break;
      case 'freeze':
        control.freeze();
        break;
      case 'unfreeze':
        control.unfreeze();
        break;
      case 'wait':
        await loop.runUntil(loop.elapsedMs + step.ms, mustHaveStarted);
        break;
    }
    await loop.runDue(mustHaveStarted);
    if (problems.length > 0) return `${where}: ${problems[0]}`;
  }
  control.unfreeze();
  await loop.runUntil(loop.elapsedMs + DRAIN_MS, mustHaveStarted);
  if (problems.length === 0 && unsettled.size > 0) problems.push(`never settled: ${[...unsettled].join(', ')}`);
  if (problems.length === 0 && scheduler.watchdogCounts().late_starts > 0) problems.push('the watchdog started a task');
  await scheduler.stop();
  return problems[0] ?? null;
}

describe('the scheduler against its reference', () => {
  it(
    `keeps every rule over ${RUNS.toLocaleString('en')} cases (seed ${SEED})`,
    { timeout: 60_000 + RUNS * 50 },
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(command, { minLength: 1, maxLength: 40 }),
          fc.array(fc.boolean(), { maxLength: 8 }),
          async (commands, lags) => {
            const problem = await runCase(commands, lags);
            expect(problem).toBeNull();
          },
        ),
        { numRuns: RUNS, seed: SEED },
      );
    },
  );
});
