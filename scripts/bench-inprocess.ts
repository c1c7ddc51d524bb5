/**
 * npm run bench:inprocess [-- --runs 50]
 *
 * Medians, with the shipped fixtures (template cached), of: createLocalplane() + stop() (no
 * port), start() + stop() (API and objstore ports), reset() of an instance, and restore() of a
 * snapshot of the seeded state (and of a state holding a finished three-day export). A
 * benchmark, not a timed test: the numbers depend on the machine.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createLocalplane, prepareFixtures, start } from '../src/localplane.ts';
import { OBJSTORE_PERMISSIONS } from '../src/objstore/index.ts';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '50' } } });
const runs = Number(values.runs);
if (!Number.isInteger(runs) || runs < 20) throw new Error('--runs must be a whole number of at least 20');
const quiet = { log: () => {} };

async function median(what: string, once: () => Promise<unknown>): Promise<void> {
  await once(); // warm-up: modules loaded, caches filled
  const timings: number[] = [];
  for (let i = 0; i < runs; i++) {
    const before = performance.now();
    await once();
    timings.push(performance.now() - before);
  }
  timings.sort((a, b) => a - b);
  const middle = timings[Math.floor(timings.length / 2)]!;
  console.log(`${what.padEnd(52)} median ${middle.toFixed(2)} ms  (min ${timings[0]!.toFixed(2)}, max ${timings.at(-1)!.toFixed(2)}, ${runs} runs)`);
}

prepareFixtures();
const scratch = mkdtempSync(join(tmpdir(), 'localplane-bench-inprocess-'));
try {
  await median('createLocalplane() + stop()', async () => (await createLocalplane(quiet)).stop());
  await median('start({ port: 0, objstorePort: 0 }) + stop()', async () => (await start({ port: 0, objstorePort: 0, ...quiet })).stop());

  const lp = await createLocalplane({ freezeClock: true, ...quiet });
  await median('reset() of the seeded state', () => lp.reset());
  const seeded = join(scratch, 'seeded.snapshot');
  const { bytes } = await lp.snapshot(seeded);
  await median(`restore() of the seeded state (${(bytes / 1024).toFixed(0)} KiB)`, () => lp.restore(seeded));

  // The same with a finished export in the state: its rows and its Parquet objects.
  const fixtures = (await (await lp.request('/_localplane/fixtures')).json()) as {
    workspaces: { id: string; api_key: string; tier: string; sessions: { id: string; name: string }[] }[];
    objstore: { buckets: string[]; keys: { access_key_id: string; secret_access_key: string; permissions: string[] }[] };
  };
  const workspace = fixtures.workspaces.find((candidate) => candidate.tier === 'plus')!;
  const key = fixtures.objstore.keys.find((candidate) => OBJSTORE_PERMISSIONS.every((permission) => candidate.permissions.includes(permission)))!;
  const call = async (path: string, body: unknown) => {
    const response = await lp.request(path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'X-API-Key': workspace.api_key },
      body: JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`${path} answered ${response.status}: ${await response.text()}`);
    return (await response.json()) as { id: string };
  };
  await lp.clock.set('2026-11-01T00:00:00Z');
  const destination = await call('/api/v1/bulk-exports/destinations', {
    display_name: 'bench',
    config: { bucket_name: fixtures.objstore.buckets[0], prefix: 'bench' },
    credentials: { access_key_id: key.access_key_id, secret_access_key: key.secret_access_key },
  });
  await call('/api/v1/bulk-exports', {
    bulk_export_destination_id: destination.id,
    session_id: workspace.sessions.find((session) => session.name === 'support-bot-staging')!.id,
    start_time: '2026-10-01T00:00:00Z',
    end_time: '2026-10-04T00:00:00Z',
  });
  await lp.clock.advance(0);
  const exported = join(scratch, 'exported.snapshot');
  const withExport = await lp.snapshot(exported);
  await median(`snapshot() with a finished export (${(withExport.bytes / 1024).toFixed(0)} KiB)`, () => lp.snapshot(exported));
  await median(`restore() with a finished export`, () => lp.restore(exported));
  await lp.stop();
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
