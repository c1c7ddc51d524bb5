/**
 * Whether the machine was quiet: the load average around each row group, a wait for it to
 * settle before each, and the warning the table carries when it did not.
 */
import { loadavg } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';

/** The 1-minute load average above which a group's figures are not comparable with a quiet run's. */
export const QUIET_LOAD = 1;
export const NOT_QUIET = 'not quiet: figures not comparable';
/** How often the kernel updates the load average. */
const LOAD_AVERAGE_PERIOD_MS = 5_000;

/** 1-minute load averages at the start and the end of one group. */
export interface GroupLoad {
  group: string;
  before: number;
  after: number;
}

export const formatLoadAverage = ([one, five, fifteen]: readonly number[]) =>
  `${one!.toFixed(2)} ${five!.toFixed(2)} ${fifteen!.toFixed(2)} (1, 5, 15 min)`;

/**
 * Waits at most `maxSeconds` for the 1-minute load average to fall to QUIET_LOAD. The bench's
 * own last group counts in it too: after two busy CPUs it reads 2, and takes some 40 s to fall to 1.
 */
export async function waitForQuiet(maxSeconds: number, log: (line: string) => void): Promise<void> {
  if (maxSeconds === 0 || loadavg()[0]! <= QUIET_LOAD) return;
  const giveUpAt = performance.now() + maxSeconds * 1000;
  log(
    `load average ${formatLoadAverage(loadavg())}: waiting up to ${maxSeconds} s for the 1-minute one to fall ` +
      `to ${QUIET_LOAD}`,
  );
  while (loadavg()[0]! > QUIET_LOAD && performance.now() < giveUpAt) await sleep(LOAD_AVERAGE_PERIOD_MS);
}

/**
 * The line above the table when the load average was above QUIET_LOAD at the start of any group; undefined when it
 * never was.
 */
export function notQuietWarning(loads: readonly GroupLoad[]): string | undefined {
  const busy = loads.filter((load) => load.before > QUIET_LOAD);
  if (busy.length === 0) return undefined;
  const starts = busy.map((load) => `${load.group} (${load.before.toFixed(2)})`).join(', ');
  return `**${NOT_QUIET}**: the load average (1 min) was above ${QUIET_LOAD} at the start of ${starts}.`;
}

export function loadAveragesLine(loads: readonly GroupLoad[]): string {
  return (
    `Load average (1 min) at the start and the end of each ` +
    `group: ${loads.map((load) => `${load.group} ${load.before.toFixed(2)} → ${load.after.toFixed(2)}`).join(', ')}.`
  );
}
