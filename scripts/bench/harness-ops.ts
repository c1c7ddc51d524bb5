/**
 * What a test suite pays per test, with the shipped fixtures: reset over HTTP and in process,
 * snapshot and restore, and an instance's start plus stop, in process (the rows of
 * docs/harness.md's table). The calls are dist/'s, the code a test suite that depends on the
 * package runs. No peer does these in the same run, so each is set beside its goal where it has one.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createLocalplane, start, type InProcessLocalplane } from '../../dist/index.js';
import { prepareFixtures } from '../../dist/localplane.js';
import { OBJSTORE_PERMISSIONS } from '../../dist/objstore/index.js';
import { spawnLocalplane } from './processes.ts';
import { goal, median, medianAndRange, megabytes, milliseconds, type Row, times } from './report.ts';

/** Each operation is cheap: this many samples (after one warm-up) rather than the heavy rows' runs. */
export const HARNESS_SAMPLES = 50;
const RESET_GOAL_MS = 3;
const INSTANCE_GOALS = { createStopMs: 20, memoryCreateStopMs: 10, bytesEach: 3 * 1024 * 1024 };
/** Instances kept alive together in one process for the per-instance memory row. */
const INSTANCES_ALIVE = 50;
const INSTANCES_ALIVE_SCRIPT = fileURLToPath(new URL('./instances-alive.ts', import.meta.url));
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
  return {
    what,
    localplane: medianAndRange(samples, milliseconds),
    peer: `none in the same run: ${goalName}`,
    peerFigure: milliseconds(goalMs),
    ratio: times(figure / goalMs),
    goal: goal(`≤ ${goalMs} ms`, figure <= goalMs),
  };
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

interface InstancesAlive {
  createMs: number[];
  residentBytesEach: number;
  retainedBytesEach: number;
}

/** INSTANCES_ALIVE instances created one after another in a process of their own (instances-alive.ts). */
async function instancesAlive(): Promise<InstancesAlive> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--expose-gc', '--import', 'tsx', INSTANCES_ALIVE_SCRIPT, String(INSTANCES_ALIVE)],
    { maxBuffer: 1024 * 1024 },
  );
  return JSON.parse(stdout) as InstancesAlive;
}

function withoutGoal(what: string, samples: number[]): Row {
  return {
    what,
    localplane: medianAndRange(samples, milliseconds),
    peer: 'none in the same run, no goal set',
    peerFigure: '',
    ratio: '',
    goal: '',
  };
}

/**
 * Runs a one-time export of three days of a seeded project to its end, so that the state holds its runs and Parquet
 * files.
 */
async function finishThreeDayExport(lp: InProcessLocalplane): Promise<void> {
  const fixtures = (await (await lp.request('/_localplane/fixtures')).json()) as {
    workspaces: { api_key: string; tier: string; sessions: { id: string; name: string }[] }[];
    objstore: {
      buckets: string[];
      keys: { access_key_id: string; secret_access_key: string; permissions: string[] }[];
    };
  };
  const workspace = fixtures.workspaces.find((candidate) => candidate.tier === 'plus')!;
  const key = fixtures.objstore.keys.find((candidate) =>
    OBJSTORE_PERMISSIONS.every((permission) => candidate.permissions.includes(permission)),
  )!;
  const post = async (path: string, body: unknown) => {
    const response = await lp.request(path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'X-API-Key': workspace.api_key },
      body: JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`${path} answered ${response.status}: ${await response.text()}`);
    return (await response.json()) as { id: string };
  };
  await lp.clock.set('2026-11-01T00:00:00Z');
  const destination = await post('/api/v1/bulk-exports/destinations', {
    display_name: 'bench',
    config: { bucket_name: fixtures.objstore.buckets[0], prefix: 'bench' },
    credentials: { access_key_id: key.access_key_id, secret_access_key: key.secret_access_key },
  });
  await post('/api/v1/bulk-exports', {
    bulk_export_destination_id: destination.id,
    session_id: workspace.sessions.find((session) => session.name === 'support-bot-staging')!.id,
    start_time: '2026-10-01T00:00:00Z',
    end_time: '2026-10-04T00:00:00Z',
  });
  await lp.clock.advance(0);
}

export async function measureHarnessOps(options: { log: (line: string) => void }): Promise<Row[]> {
  prepareFixtures();
  const scratch = mkdtempSync(join(tmpdir(), 'localplane-bench-harness-'));
  const lp = await createLocalplane({ freezeClock: true, ...quiet });
  try {
    const overHttp = await httpResets();
    const inProcess = await timings(() => lp.reset());
    const seeded = join(scratch, 'seeded.snapshot');
    const { bytes: seededBytes } = await lp.snapshot(seeded);
    const seededRestores = await timings(() => lp.restore(seeded));
    await finishThreeDayExport(lp);
    const exported = join(scratch, 'exported.snapshot');
    const exportedSnapshots = await timings(() => lp.snapshot(exported));
    const { bytes: exportedBytes } = await lp.snapshot(exported);
    const exportedRestores = await timings(() => lp.restore(exported));
    const createStops = await timings(async () => (await createLocalplane(quiet)).stop());
    const memoryCreateStops = await timings(async () =>
      (await createLocalplane({ ...quiet, objstoreStorage: 'memory' })).stop(),
    );
    const startStops = await timings(async () => (await start({ port: 0, objstorePort: 0, ...quiet })).stop());
    const alive = await instancesAlive();
    options.log(`harness: ${HARNESS_SAMPLES} samples each measured`);
    const samples = `${HARNESS_SAMPLES} samples`;
    return [
      againstGoal(
        `reset: POST /_localplane/reset over HTTP (spawned CLI, ${samples})`,
        overHttp,
        RESET_GOAL_MS,
        'the goal',
      ),
      againstGoal(`reset: in-process reset() (${samples})`, inProcess, RESET_GOAL_MS, 'the goal'),
      againstGoal(
        `restore() of a snapshot of the seeded state (${Math.round(seededBytes / 1024)} KiB, ${samples})`,
        seededRestores,
        RESET_GOAL_MS,
        "reset's goal (restore has none of its own)",
      ),
      withoutGoal(
        `snapshot() with a finished three-day export (${Math.round(exportedBytes / 1024)} KiB, ${samples})`,
        exportedSnapshots,
      ),
      withoutGoal(`restore() of that snapshot, its Parquet files placed again (${samples})`, exportedRestores),
      againstGoal(
        `in-process createLocalplane() + stop() (${samples})`,
        createStops,
        INSTANCE_GOALS.createStopMs,
        'the goal',
      ),
      againstGoal(
        `in-process createLocalplane({ objstoreStorage: 'memory' }) + stop() (${samples})`,
        memoryCreateStops,
        INSTANCE_GOALS.memoryCreateStopMs,
        'the goal',
      ),
      withoutGoal(`createLocalplane() with ${INSTANCES_ALIVE} instances alive in one process (each)`, alive.createMs),
      {
        what:
          `memory of each of ${INSTANCES_ALIVE} in-process instances alive in one process: resident set ` +
          `growth (heap and external retained: ${megabytes(alive.retainedBytesEach)})`,
        localplane: megabytes(alive.residentBytesEach),
        peer: 'none in the same run: the goal',
        peerFigure: megabytes(INSTANCE_GOALS.bytesEach),
        ratio: times(alive.residentBytesEach / INSTANCE_GOALS.bytesEach),
        goal: goal(`≤ ${megabytes(INSTANCE_GOALS.bytesEach)}`, alive.residentBytesEach <= INSTANCE_GOALS.bytesEach),
      },
      withoutGoal(`in-process start({ port: 0, objstorePort: 0 }) + stop() (${samples})`, startStops),
    ];
  } finally {
    await lp.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
}
