/**
 * What a test suite pays per test: reset over HTTP and in process, restore of a snapshot, and
 * an in-process start plus stop, with the shipped fixtures. No peer does these in the same
 * run, so each is set beside its goal where it has one.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLocalplane, prepareFixtures, start } from '../../src/localplane.ts';
import { spawnLocalplane } from './processes.ts';
import { goal, median, medianAndRange, milliseconds, type Row, times } from './report.ts';

/** Each operation is cheap: this many samples (after one warm-up) rather than the heavy rows' runs. */
export const HARNESS_SAMPLES = 50;
const RESET_GOAL_MS = 5;
const quiet = { log: () => {} };

async function timings(once: () => Promise<unknown>): Promise<number[]> {
  await once(); // warm-up: modules loaded, caches filled
  const samples: number[] = [];
  for (let i = 0; i < HARNESS_SAMPLES; i++) {
    const before = performance.now();
    await once();
    samples.push(performance.now() - before);
  }
  return samples;
}

function againstGoal(what: string, samples: number[], goalMs: number, goalName: string): Row {
  const figure = median(samples);
  return { what, localplane: medianAndRange(samples, milliseconds), peer: `none in the same run: ${goalName}`, peerFigure: milliseconds(goalMs), ratio: times(figure / goalMs), goal: goal(`≤ ${goalMs} ms`, figure <= goalMs) };
}

async function httpResets(): Promise<number[]> {
  const server = await spawnLocalplane();
  try {
    return await timings(async () => {
      const response = await fetch(`${server.apiUrl}/_localplane/reset`, { method: 'POST' });
      await response.arrayBuffer();
      if (!response.ok) throw new Error(`POST /_localplane/reset answered ${response.status}`);
    });
  } finally {
    await server.stop();
  }
}

export async function measureHarnessOps(options: { log: (line: string) => void }): Promise<Row[]> {
  prepareFixtures();
  const scratch = mkdtempSync(join(tmpdir(), 'localplane-bench-harness-'));
  const lp = await createLocalplane({ freezeClock: true, ...quiet });
  try {
    const overHttp = await httpResets();
    const inProcess = await timings(() => lp.reset());
    const snapshot = join(scratch, 'seeded.snapshot');
    const { bytes } = await lp.snapshot(snapshot);
    const restores = await timings(() => lp.restore(snapshot));
    const startStops = await timings(async () => (await start({ port: 0, objstorePort: 0, ...quiet })).stop());
    options.log(`harness: ${HARNESS_SAMPLES} samples each measured`);
    const samples = `${HARNESS_SAMPLES} samples`;
    return [
      againstGoal(`reset: POST /_localplane/reset over HTTP (spawned CLI, ${samples})`, overHttp, RESET_GOAL_MS, 'the goal'),
      againstGoal(`reset: in-process reset() (${samples})`, inProcess, RESET_GOAL_MS, 'the goal'),
      againstGoal(`restore() of a snapshot of the seeded state (${Math.round(bytes / 1024)} KiB, ${samples})`, restores, RESET_GOAL_MS, "reset's goal (restore has none of its own)"),
      {
        what: `in-process start({ port: 0, objstorePort: 0 }) + stop() (${samples})`,
        localplane: medianAndRange(startStops, milliseconds),
        peer: 'none in the same run, no goal set',
        peerFigure: '',
        ratio: '',
        goal: '',
      },
    ];
  } finally {
    await lp.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
}
