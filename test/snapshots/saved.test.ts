/**
 * The snapshots folder over HTTP (/_localplane/snapshots): saved snapshots listed, downloaded,
 * uploaded (checked before they are kept), restored by name and deleted; where the folder is
 * (the data dir's by default, snapshotsDir, --snapshots-dir, LOCALPLANE_SNAPSHOTS_DIR).
 * What a request cannot make it read or write (paths, links) is in safety.test.ts.
 */
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  utimesSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createLocalplane, type CreateOptions, type InProcessLocalplane } from '../../src/index.ts';
import { startCli } from '../support/cli.ts';
import { fixturesOf, inProcessApi } from '../support/in-process.ts';
import { workspaceByTier, type FixturesView } from '../support/instance.ts';

const scratch = mkdtempSync(join(tmpdir(), 'localplane-saved-snapshots-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
let folders = 0;

const instances: InProcessLocalplane[] = [];
afterEach(async () => {
  await Promise.all(instances.splice(0).map((lp) => lp.stop()));
});

async function create(options: CreateOptions = {}): Promise<InProcessLocalplane> {
  const lp = await createLocalplane({ freezeClock: true, log: () => {}, ...options });
  instances.push(lp);
  return lp;
}

/** The plus workspace's destinations: what a snapshot holds and a reset takes away. */
async function destinationNames(lp: InProcessLocalplane, fixtures: FixturesView): Promise<string[]> {
  const reply = await inProcessApi(lp, workspaceByTier(fixtures, 'plus')).get<{ display_name: string }[]>(
    '/api/v1/bulk-exports/destinations',
  );
  return reply.body.map((destination) => destination.display_name).sort();
}

async function addDestination(lp: InProcessLocalplane, fixtures: FixturesView, name: string): Promise<void> {
  const key = fixtures.objstore.keys.find((candidate) => candidate.permissions.includes('create'))!;
  const reply = await inProcessApi(lp, workspaceByTier(fixtures, 'plus')).post('/api/v1/bulk-exports/destinations', {
    destination_type: 'objstore',
    display_name: name,
    config: { bucket_name: fixtures.objstore.buckets[0], prefix: name, endpoint_url: fixtures.objstore.endpoint_url },
    credentials: { access_key_id: key.access_key_id, secret_access_key: key.secret_access_key },
  });
  expect(reply.status, reply.text).toBe(200);
}

/** How many of this process's file descriptors are open on `file` (Linux's /proc). */
const openDescriptorsOf = (file: string) =>
  readdirSync('/proc/self/fd').filter((descriptor) => {
    try {
      return readlinkSync(`/proc/self/fd/${descriptor}`) === file;
    } catch {
      return false;
    }
  }).length;

const put = (lp: InProcessLocalplane, name: string, body: Uint8Array, headers: Record<string, string> = {}) =>
  lp.request(`/_localplane/snapshots/${name}`, {
    method: 'PUT',
    body: body as Uint8Array<ArrayBuffer>,
    headers: { 'content-type': 'application/octet-stream', ...headers },
  });

describe('saved snapshots', () => {
  it('round trip: save, list, download, upload under another name, reset, restore that one by name, delete', async () => {
    const lp = await create({ snapshotsDir: join(scratch, `round-trip-${++folders}`) });
    const api = inProcessApi(lp);
    const fixtures = await fixturesOf(lp);
    await addDestination(lp, fixtures, 'kept-by-snapshot');

    const saved = await api.post('/_localplane/snapshot', { name: 'before-reset.snapshot' });
    expect(saved.status, saved.text).toBe(200);
    const file = join(lp.snapshotsDir, 'before-reset.snapshot');
    expect(saved.body).toEqual({
      name: 'before-reset.snapshot',
      bytes: lstatSync(file).size,
      modified_at: new Date(lstatSync(file).mtimeMs).toISOString(),
    });
    expect((await api.get('/_localplane/snapshots')).body).toEqual({
      folder: lp.snapshotsDir,
      snapshots: [saved.body],
    });

    const download = await lp.request('/_localplane/snapshots/before-reset.snapshot');
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toBe('application/octet-stream');
    expect(download.headers.get('content-disposition')).toBe('attachment; filename="before-reset.snapshot"');
    const bytes = new Uint8Array(await download.arrayBuffer());
    expect(Buffer.from(bytes).equals(readFileSync(file)), 'the saved file, byte for byte').toBe(true);
    expect(Number(download.headers.get('content-length'))).toBe(bytes.byteLength);

    const head = await lp.request('/_localplane/snapshots/before-reset.snapshot', { method: 'HEAD' });
    expect([head.status, head.headers.get('content-length')]).toEqual([200, String(bytes.byteLength)]);
    expect(openDescriptorsOf(file), 'a HEAD or a read download leaves the file closed').toBe(0);

    const uploaded = await put(lp, 'uploaded.snapshot', bytes);
    expect(uploaded.status, await uploaded.clone().text()).toBe(200);
    expect(await uploaded.json()).toMatchObject({ name: 'uploaded.snapshot', bytes: bytes.byteLength });
    expect(
      readFileSync(join(lp.snapshotsDir, 'uploaded.snapshot')).equals(readFileSync(file)),
      'the uploaded file, byte for byte',
    ).toBe(true);
    expect((lstatSync(join(lp.snapshotsDir, 'uploaded.snapshot')).mode & 0o777).toString(8)).toBe('600');

    await lp.reset();
    expect(await destinationNames(lp, fixtures)).toEqual([]);
    const restored = await api.post('/_localplane/restore', { name: 'uploaded.snapshot' });
    expect(restored.status, restored.text).toBe(200);
    expect(restored.body).toEqual({ status: 'restored', name: 'uploaded.snapshot' });
    expect(await destinationNames(lp, fixtures)).toEqual(['kept-by-snapshot']);

    for (const name of ['before-reset.snapshot', 'uploaded.snapshot'])
      expect((await api.delete(`/_localplane/snapshots/${name}`)).status).toBe(204);
    expect((await api.get('/_localplane/snapshots')).body.snapshots).toEqual([]);
    const again = await api.delete('/_localplane/snapshots/uploaded.snapshot');
    expect(again.status).toBe(404);
    expect(again.body.detail).toBe(`there is no saved snapshot named "uploaded.snapshot" in ${lp.snapshotsDir}`);
    expect((await api.get('/_localplane/snapshots/uploaded.snapshot')).status).toBe(404);
    expect((await api.post('/_localplane/restore', { name: 'uploaded.snapshot' })).status).toBe(404);
  });

  it(
    'lists the saved snapshots newest first by modification time, then by name; not hidden files, folders or other ' +
      'names',
    async () => {
      const lp = await create({ snapshotsDir: join(scratch, `listed-${++folders}`) });
      const api = inProcessApi(lp);
      for (const name of ['old.snapshot', 'new-b.snapshot', 'new-a.snapshot', 'middle'])
        expect((await api.post('/_localplane/snapshot', { name })).status).toBe(200);
      const at = (iso: string) => new Date(iso);
      utimesSync(join(lp.snapshotsDir, 'old.snapshot'), at('2026-01-01T00:00:00Z'), at('2026-01-01T00:00:00Z'));
      utimesSync(join(lp.snapshotsDir, 'middle'), at('2026-02-01T00:00:00Z'), at('2026-02-01T00:00:00Z'));
      for (const name of ['new-a.snapshot', 'new-b.snapshot'])
        utimesSync(join(lp.snapshotsDir, name), at('2026-03-01T00:00:00Z'), at('2026-03-01T00:00:00Z'));
      // What is no saved snapshot: an upload still arriving, an earlier save cut short, a folder.
      await lp.snapshot(join(lp.snapshotsDir, '.upload-0123456789ab'));
      await lp.snapshot(join(lp.snapshotsDir, '.x.snapshot.partial-99'));
      mkdirSync(join(lp.snapshotsDir, 'a-folder.snapshot'));
      const listed = (await api.get('/_localplane/snapshots')).body.snapshots as {
        name: string;
        modified_at: string;
      }[];
      expect(listed.map((saved) => [saved.name, saved.modified_at])).toEqual([
        ['new-a.snapshot', '2026-03-01T00:00:00.000Z'],
        ['new-b.snapshot', '2026-03-01T00:00:00.000Z'],
        ['middle', '2026-02-01T00:00:00.000Z'],
        ['old.snapshot', '2026-01-01T00:00:00.000Z'],
      ]);
    },
  );

  it(
    'refuses a damaged, cut, empty or foreign upload with 400 and keeps nothing: a snapshot of that name stays as ' +
      'it was',
    async () => {
      const lp = await create({ snapshotsDir: join(scratch, `uploads-${++folders}`) });
      const api = inProcessApi(lp);
      expect((await api.post('/_localplane/snapshot', { name: 'good.snapshot' })).status).toBe(200);
      const good = readFileSync(join(lp.snapshotsDir, 'good.snapshot'));
      const damaged = Buffer.from(good);
      damaged[damaged.length - 10]! ^= 0xff;
      const cases: [string, Uint8Array, RegExp][] = [
        ['damaged', damaged, /does not match its checksum/],
        ['cut', good.subarray(0, good.length - 100), /header announces/],
        ['empty', new Uint8Array(0), /does not start as a snapshot file does/],
        ['foreign', Buffer.from('PK\u0003\u0004 a zip file, say'), /does not start as a snapshot file does/],
        [
          'another version',
          Buffer.concat([Buffer.from('localplane-snapshot 99'), good.subarray(good.indexOf(0x0a))]),
          /format version 99/,
        ],
      ];
      for (const [what, body, detail] of cases) {
        for (const name of ['good.snapshot', 'fresh.snapshot']) {
          const reply = await put(lp, name, body);
          const answer = (await reply.json()) as { detail: string };
          expect(reply.status, `${what} as ${name}`).toBe(400);
          expect(answer.detail, what).toMatch(
            new RegExp(`^the upload "${name}" is not a usable localplane snapshot: .*${detail.source}`),
          );
        }
      }
      expect(readdirSync(lp.snapshotsDir)).toEqual(['good.snapshot']);
      expect(readFileSync(join(lp.snapshotsDir, 'good.snapshot')).equals(good), 'the earlier snapshot, unchanged').toBe(
        true,
      );
    },
  );

  it('refuses an upload declared over 1 GiB with 413 before reading it', async () => {
    const lp = await create({ snapshotsDir: join(scratch, `too-large-${++folders}`) });
    const reply = await put(lp, 'huge.snapshot', new Uint8Array(16), { 'content-length': String(1024 ** 3 + 1) });
    expect(reply.status).toBe(413);
    expect(((await reply.json()) as { detail: string }).detail).toBe(
      'a snapshot upload is at most 1 GiB, the most a snapshot file may hold',
    );
    expect(existsSync(lp.snapshotsDir)).toBe(false);
  });

  it('keeps the folder in <dataDir>/snapshots by default, made 0700 on the first save and not before', async () => {
    const dataDir = join(scratch, `data-${++folders}`);
    const lp = await create({ dataDir });
    const api = inProcessApi(lp);
    expect(lp.snapshotsDir).toBe(join(dataDir, 'snapshots'));
    expect((await api.get('/_localplane/snapshots')).body).toEqual({
      folder: join(dataDir, 'snapshots'),
      snapshots: [],
    });
    expect(existsSync(lp.snapshotsDir)).toBe(false);
    expect((await api.post('/_localplane/snapshot', { name: 'first.snapshot' })).status).toBe(200);
    expect((lstatSync(lp.snapshotsDir).mode & 0o777).toString(8)).toBe('700');
    expect((lstatSync(join(lp.snapshotsDir, 'first.snapshot')).mode & 0o777).toString(8)).toBe('600');
  });
});

describe('the snapshots folder of the CLI', () => {
  it('is --snapshots-dir, else LOCALPLANE_SNAPSHOTS_DIR, else <data dir>/snapshots', async () => {
    const root = join(scratch, `cli-${++folders}`);
    const cases: [flags: string[], env: NodeJS.ProcessEnv, folder: string][] = [
      [
        ['--snapshots-dir', join(root, 'by-flag')],
        { LOCALPLANE_SNAPSHOTS_DIR: join(root, 'by-env') },
        join(root, 'by-flag'),
      ],
      [[], { LOCALPLANE_SNAPSHOTS_DIR: join(root, 'by-env') }, join(root, 'by-env')],
      [[], {}, join(root, 'data', 'snapshots')],
    ];
    for (const [flags, env, folder] of cases) {
      const instance = await startCli(['--quiet', '--data-dir', join(root, 'data'), ...flags], {
        ...process.env,
        LOCALPLANE_SNAPSHOTS_DIR: '',
        ...env,
      });
      try {
        const saved = await fetch(`${instance.apiUrl}/_localplane/snapshot`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ name: 'cli.snapshot' }),
        });
        expect(saved.status, folder).toBe(200);
        const listed = (await (await fetch(`${instance.apiUrl}/_localplane/snapshots`)).json()) as { folder: string };
        expect(listed.folder).toBe(folder);
        expect(existsSync(join(folder, 'cli.snapshot')), folder).toBe(true);
      } finally {
        await instance.kill('SIGTERM');
      }
    }
  });
});
