import type { ClockControl } from '../shared/clock-control.ts';
import { taskView, type Task } from './schemas.ts';

/**
 * An instance's clock (`lp.clock`, the /_localplane/clock routes): the tasks that ran are answered as
 * GET /_localplane/tasks shows them, in process as over HTTP.
 */
export interface InstanceClock extends Omit<ClockControl, 'advanceToNext' | 'runUntilIdle'> {
  /** Moves the clock to the next task's due time and runs what is due then; answers the tasks that ran. */
  advanceToNext(): Promise<Task[]>;
  /**
   * Moves the clock from one due task to the next, running each, until none is due within `withinSeconds` (default a
   * day) or 10,000 steps were taken; answers the tasks that ran, in order.
   */
  runUntilIdle(options?: { withinSeconds?: number }): Promise<Task[]>;
}

export function instanceClock(control: ClockControl): InstanceClock {
  return {
    now: () => control.now(),
    get frozen() {
      return control.frozen;
    },
    freeze: () => control.freeze(),
    unfreeze: () => control.unfreeze(),
    set: (time) => control.set(time),
    advance: (seconds) => control.advance(seconds),
    advanceToNext: async () => (await control.advanceToNext()).map(taskView),
    runUntilIdle: async (options) => (await control.runUntilIdle(options)).map(taskView),
    settle: () => control.settle(),
  };
}
