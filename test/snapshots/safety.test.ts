/**
 * Hostile snapshot files, config files and data dirs: a restore
 * checks the whole file before it changes anything, never reads what is not a regular file of
 * bounded size, and never reaches outside the data dir; nor does a start on a tampered data
 * dir; the config file keeps the data dir and the imported snapshot inside its own folder;
 * what localplane writes is readable by its user alone.
 */
import { spawn } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, relative } from 'node:path';
import {
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  PutObjectCommand,
  PutObjectTaggingCommand,
} from '@aws-sdk/client-s3';
import Database from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createLocalplane, type CreateOptions, type InProcessLocalplane } from '../../src/index.ts';
import { MAX_SNAPSHOT_BYTES } from '../../src/snapshots/format.ts';
import { BIN, launch, runCli, startCli } from '../support/cli.ts';
import { fillEveryTable } from '../support/every-row.ts';
import { fixturesOf, inProcessApi } from '../support/in-process.ts';
import { credentialsOf, fullKey, type FixturesView } from '../support/instance.ts';
import { getBytes, listKeys, s3For } from '../support/objstore.ts';
import { readSnapshotParts, snapshotBytes, withDatabase, type SnapshotParts } from '../support/snapshot-files.ts';

const scratch = mkdtempSync(join(tmpdir(), 'localplane-snapshot-safety-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
let folders = 0;

/**
 * A project folder as a cloned repository would hold one, and beside the data dir a `victim`
 * folder with a file in it: a bucket named `../../victim` is that folder, seen from the store's
 * and the file view's folders inside `<project>/.lp`.
 */
function project(): { root: string; dataDir: string; victim: string } {
  const root = join(scratch, `project-${++folders}`);
  mkdirSync(join(root, 'victim'), { recursive: true });
  writeFileSync(join(root, 'victim', 'keep.txt'), "not localplane's");
  return { root, dataDir: join(root, '.lp'), victim: join(root, 'victim') };
}

/** What is in the project outside its data dir: must stay as it was. */
function outsideTheDataDir(root: string): string[] {
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .map((entry) => relative(root, join(entry.parentPath, entry.name)))
    .filter((path) => path !== '.lp' && !path.startsWith('.lp/'))
    .sort();
}

const instances: InProcessLocalplane[] = [];
afterEach(async () => {
  await Promise.all(instances.splice(0).map((lp) => lp.stop()));
});

/** Its snapshots folder is the scratch folder, where the crafted files are. */
async function create(options: CreateOptions = {}): Promise<InProcessLocalplane> {
  const lp = await createLocalplane({ freezeClock: true, log: () => {}, snapshotsDir: scratch, ...options });
  instances.push(lp);
  return lp;
}

async function stop(lp: InProcessLocalplane): Promise<void> {
  instances.splice(instances.indexOf(lp), 1);
  await lp.stop();
}

/** The state as GET /_localplane/state dumps it (pending work left out: derived), and every plain file. */
async function stateOf(lp: InProcessLocalplane) {
  const { pending_tasks: _derived, ...state } = (await inProcessApi(lp).get('/_localplane/state')).body;
  const files = readdirSync(lp.filesDir!, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => {
      const path = join(entry.parentPath, entry.name);
      return `${relative(lp.filesDir!, path)} ${readFileSync(path, 'utf8')}`;
    })
    .sort();
  return { state, files };
}

/** A snapshot of the instance as it is, taken apart. */
async function partsOf(lp: InProcessLocalplane): Promise<SnapshotParts> {
  const file = join(scratch, `taken-${++folders}.snapshot`);
  await lp.snapshot(file);
  return readSnapshotParts(file);
}

function craft(name: string, parts: SnapshotParts): string {
  const file = join(scratch, `${++folders}-${name.replace(/[^\w.-]/g, '-')}`);
  writeFileSync(file, snapshotBytes(parts));
  return file;
}

/** Restores a file of the scratch folder by its name. */
const restore = (lp: InProcessLocalplane, file: string) =>
  inProcessApi(lp).post('/_localplane/restore', { name: basename(file) });

const createdBucket = (name: string) => (db: Database.Database) =>
  db
    .prepare(
      'INSERT INTO objstore_created_buckets (name, workspace_id, region, created_at) VALUES (?, NULL, NULL, ' +
        "'2026-11-01T00:00:00.000Z')",
    )
    .run(name);

/** 17 objects in the first configured bucket, as in the reproduction. */
async function seventeenObjects(lp: InProcessLocalplane, fixtures: FixturesView) {
  const s3 = s3For(await lp.objstoreEndpoint(), fullKey(fixtures));
  const bucket = fixtures.objstore.buckets[0]!;
  const keys = Array.from({ length: 17 }, (_, index) => `kept/${index % 3}/object-${index}.txt`);
  for (const key of keys) await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: `content of ${key}` }));
  return { s3, bucket, keys: keys.sort() };
}

describe('a restore checks the whole file before it changes anything', () => {
  it(
    'refuses a bucket named ../../victim, creates and deletes nothing outside the data dir, and the next start ' +
      'works',
    async () => {
      const { root, dataDir, victim } = project();
      const lp = await create({ dataDir });
      const file = craft('victim.snapshot', withDatabase(await partsOf(lp), createdBucket('../../victim')));
      const before = await stateOf(lp);
      const outside = outsideTheDataDir(root);

      const reply = await restore(lp, file);
      expect(reply.status, reply.text).toBe(400);
      expect(reply.body.detail).toMatch(/objstore_created_buckets holds the bucket name "\.\.\/\.\.\/victim"/);
      expect(await stateOf(lp)).toEqual(before);
      await stop(lp);
      const again = await create({ dataDir });
      expect((await inProcessApi(again).get('/_localplane/health')).status).toBe(200);
      await stop(again);
      expect(outsideTheDataDir(root)).toEqual(outside);
      expect(readFileSync(join(victim, 'keep.txt'), 'utf8')).toBe("not localplane's");
    },
  );

  it('refuses every row whose value would become a path or a key the store could not use, as on creation', async () => {
    const lp = await create();
    const parts = await partsOf(lp);
    const before = await stateOf(lp);
    const cases: [string, (db: Database.Database) => unknown, RegExp][] = [
      ['a/b', createdBucket('a/b'), /bucket name "a\/b"/],
      ['..', createdBucket('..'), /bucket name "\.\."/],
      ['upper case', createdBucket('Upper-Case'), /bucket name "Upper-Case"/],
      ['too long', createdBucket('b'.repeat(64)), /bucket name "b{64}"/],
      ['a configured name', createdBucket('exports'), /"exports", one of the configured buckets/],
      [
        'not text',
        (db) => db.prepare("INSERT INTO objstore_created_buckets VALUES (x'2e2e2f78', NULL, NULL, 'x')").run(),
        /bucket name/,
      ],
      [
        'a region',
        (db) => db.prepare("INSERT INTO objstore_created_buckets VALUES ('fine-name', NULL, '../x', 'x')").run(),
        /region "\.\.\/x"/,
      ],
      [
        'a configured bucket',
        (db) => db.prepare("INSERT INTO objstore_buckets VALUES ('../../victim')").run(),
        /objstore_buckets/,
      ],
      [
        'a configured bucket gone',
        (db) => db.prepare("DELETE FROM objstore_buckets WHERE name = 'exports'").run(),
        /objstore_buckets/,
      ],
      [
        'key permissions',
        (db) => db.prepare("UPDATE objstore_keys SET permissions = 'not json'").run(),
        /objstore_keys holds/,
      ],
    ];
    for (const [name, edit, detail] of cases) {
      const reply = await restore(lp, craft(`row-${name}.snapshot`, withDatabase(parts, edit)));
      expect(reply.status, `${name}: ${reply.text}`).toBe(400);
      expect(reply.body.detail, name).toMatch(detail);
    }
    expect(await stateOf(lp)).toEqual(before);
  });

  it(
    'refuses every row the API or the background work could not read, in every domain, naming its table, column ' +
      'and value, and no secret',
    async () => {
      const lp = await create();
      await fillEveryTable(lp);
      const parts = await partsOf(lp);
      const before = await stateOf(lp);
      const cases: [string, string, RegExp][] = [
        [
          'a plan no workspace has',
          "UPDATE workspaces SET tier = 'platinum'",
          /workspaces holds "platinum" in tier, which takes one of developer, plus, enterprise$/,
        ],
        [
          'a NULL key',
          'UPDATE workspaces SET id = NULL WHERE rowid = 1',
          /workspaces holds NULL in id, which takes text$/,
        ],
        [
          'a project created at a text',
          "UPDATE sessions SET created_at = 'yesterday'",
          /sessions holds "yesterday" in created_at, which takes a time in microseconds from 1684 to 2255$/,
        ],
        [
          'a traced run after 2255',
          'UPDATE runs SET start_time = 4611686018427387904',
          /runs holds the number 4611686018427388000 in start_time, which takes a time/,
        ],
        [
          'a traced run named by a blob',
          "UPDATE runs SET name = x'00'",
          /runs holds a blob in name, which takes text$/,
        ],
        [
          'key permissions unknown',
          `UPDATE objstore_keys SET permissions = '["get","root"]'`,
          new RegExp(
            String.raw`objstore_keys holds "\[\\"get\\",\\"root\\"\]" in permissions, ` +
              String.raw`JSON of another shape than it keeps \(\[1\]: `,
          ),
        ],
        [
          'a destination config not JSON',
          "UPDATE bulk_export_destinations SET config = '{bad'",
          /bulk_export_destinations holds "\{bad" in config, which takes JSON$/,
        ],
        [
          'a destination config without its prefix',
          "UPDATE bulk_export_destinations SET config = json_remove(config, '$.prefix')",
          /bulk_export_destinations holds ".*" in config, JSON of another shape than it keeps \(prefix: /,
        ],
        [
          'credential keys as an object',
          "UPDATE bulk_export_destinations SET credentials_keys = '{}'",
          /bulk_export_destinations holds "\{\}" in credentials_keys, JSON of another shape/,
        ],
        [
          'a secret key as a blob',
          "UPDATE bulk_export_destinations SET secret_access_key = x'00'",
          /bulk_export_destinations holds a blob in secret_access_key, which takes text or NULL$/,
        ],
        [
          'an export status of none',
          "UPDATE bulk_exports SET status = 'Paused'",
          new RegExp(
            'bulk_exports holds "Paused" in status, which takes one of ' +
              'Cancelled, Completed, Created, IntervalScheduled, Failed, TimedOut, Running$',
          ),
        ],
        [
          'a filter that does not parse',
          "UPDATE bulk_exports SET filter = 'eq(is_root' WHERE filter IS NOT NULL",
          /bulk_exports holds "eq\(is_root" in filter, which takes a filter that parses$/,
        ],
        [
          'export fields no run has',
          `UPDATE bulk_exports SET export_fields = '["id","password"]' WHERE export_fields IS NOT NULL`,
          /bulk_exports holds .* in export_fields, JSON of another shape than it keeps \(\[1\]: /,
        ],
        [
          'an interval of a year',
          'UPDATE bulk_exports SET interval_hours = 8760 WHERE interval_hours IS NOT NULL',
          /bulk_exports holds the number 8760 in interval_hours, which takes a whole number from 1 to 168 or NULL$/,
        ],
        [
          'a recurring export without its interval',
          "UPDATE bulk_exports SET status = 'IntervalScheduled', interval_hours = NULL WHERE interval_hours IS NOT " +
            'NULL',
          /bulk_exports holds an IntervalScheduled export without interval_hours \(id "[\da-f-]{36}"\)$/,
        ],
        [
          'exported files not JSON',
          "UPDATE bulk_export_runs SET exported_files = 'a.parquet'",
          /bulk_export_runs holds "a\.parquet" in exported_files, which takes JSON$/,
        ],
        [
          'errors as a list',
          `UPDATE bulk_export_runs SET errors = '["failed"]' WHERE errors IS NOT NULL`,
          /bulk_export_runs holds .* in errors, JSON of another shape than it keeps \(Invalid input: expected record/,
        ],
        [
          'a running run never started',
          "UPDATE bulk_export_runs SET started_at = NULL WHERE status = 'Running'",
          /bulk_export_runs holds a Running run without started_at \(id "[\da-f-]{36}"\)$/,
        ],
        [
          'a creation time as a real',
          'UPDATE bulk_export_runs SET created_at = 1.5',
          /bulk_export_runs holds the number 1\.5 in created_at, which takes a time/,
        ],
        [
          'a step delay beyond 100 years',
          'UPDATE bulk_export_runs SET step_delay = 9007199254740991',
          /bulk_export_runs holds the number 9007199254740991 in step_delay, which takes a delay/,
        ],
        [
          'secrets not JSON',
          "UPDATE deployments SET secrets = 'every-row-secret'",
          /deployments holds a text \(a secret, not shown\) in secrets, which takes JSON$/,
        ],
        [
          'secrets of another shape',
          `UPDATE deployments SET secrets = '[{"name": 1, "value": "every-row-secret"}]'`,
          new RegExp(
            String.raw`deployments holds a text \(a secret, not shown\) in secrets, ` +
              String.raw`JSON of another shape than it keeps \(\[0\]\.name: `,
          ),
        ],
        [
          'a source config as a list',
          "UPDATE deployments SET source_config = '[]'",
          /deployments holds "\[\]" in source_config, JSON of another shape/,
        ],
        [
          'tag value ids not JSON',
          "UPDATE deployments SET tag_value_ids = '{bad'",
          /deployments holds "\{bad" in tag_value_ids, which takes JSON$/,
        ],
        [
          'a deployment status of none',
          "UPDATE deployments SET status = 'GONE'",
          /deployments holds "GONE" in status, which takes one of AWAITING_DATABASE/,
        ],
        [
          'a revision ref as a number',
          `UPDATE deployment_revisions SET source_revision_config = '{"repo_ref": 5}'`,
          /deployment_revisions holds .* in source_revision_config, JSON of another shape than it keeps \(repo_ref: /,
        ],
        [
          'a revision status of none',
          "UPDATE deployment_revisions SET status = 'PAUSED'",
          /deployment_revisions holds "PAUSED" in status, which takes one of CREATING/,
        ],
        [
          'a revision event at a text',
          "UPDATE deployment_revision_events SET at = 'now'",
          /deployment_revision_events holds "now" in at, which takes a time/,
        ],
        [
          'a deletion due at a blob',
          "UPDATE deployment_deletions SET due_at = x'00'",
          /deployment_deletions holds a blob in due_at, which takes a time/,
        ],
        [
          'listener namespaces as a text',
          `UPDATE listeners SET compute_config = '{"k8s_namespaces": "rows"}'`,
          /listeners holds .* in compute_config, JSON of another shape than it keeps \(k8s_namespaces: /,
        ],
        [
          'a PKCE flag of 2',
          'UPDATE oauth_providers SET uses_pkce = 2',
          /oauth_providers holds the number 2 in uses_pkce, which takes one of 0, 1$/,
        ],
      ];
      for (const [name, sql, detail] of cases) {
        const reply = await restore(
          lp,
          craft(
            `values-${name}.snapshot`,
            withDatabase(parts, (db) => db.exec(sql)),
          ),
        );
        expect(reply.status, `${name}: ${reply.text}`).toBe(400);
        expect(reply.body.detail, name).toMatch(new RegExp(`cannot be restored here: its table ${detail.source}`));
        expect(reply.text, name).not.toMatch(/every-row(-key|-client)?-secret|every-row-token/);
      }
      expect(await stateOf(lp)).toEqual(before);
      // The rows as the API made them are all usable.
      expect((await restore(lp, craft('every-row.snapshot', parts))).status).toBe(200);
    },
  );

  it('refuses an objstore part with a file where a bucket folder belongs, and the 17 objects are still there', async () => {
    const lp = await create();
    const fixtures = await fixturesOf(lp);
    const { s3, bucket, keys } = await seventeenObjects(lp, fixtures);
    const parts = await partsOf(lp);
    const before = await stateOf(lp);
    const crafted = {
      ...parts,
      objstore: parts.objstore.map((entry) =>
        entry.path === bucket ? { path: bucket, data: Buffer.from('a file') } : entry,
      ),
    };

    const reply = await restore(lp, craft('file-for-bucket.snapshot', crafted));
    expect(reply.status, reply.text).toBe(400);
    expect(reply.body.detail).toMatch(new RegExp(`"${bucket}" is a file, where the storage keeps a folder`));
    expect(await listKeys(s3, bucket, '')).toEqual(keys);
    for (const key of keys) expect(Buffer.from(await getBytes(s3, bucket, key)).toString()).toBe(`content of ${key}`);
    expect(await stateOf(lp)).toEqual(before);
    s3.destroy();
  });

  it('refuses stray root folders and files and hostile paths, and the next start on the data dir works', async () => {
    const { root, dataDir } = project();
    const lp = await create({ dataDir });
    const parts = await partsOf(lp);
    const before = await stateOf(lp);
    const outside = outsideTheDataDir(root);
    const folder = (path: string) => ({ path, data: null });
    const file = (path: string) => ({ path, data: Buffer.from('x') });
    const cases: [string, SnapshotParts['objstore'], RegExp][] = [
      ['an upload still arriving, as a folder', [folder('.incoming-stray')], /".incoming-stray" is no bucket/],
      ['a stray folder', [folder('stray')], /"stray" is no bucket/],
      ['a stray file', [file('stray.txt')], /"stray.txt" is no bucket/],
      ['a parent path', [file('exports/../../victim/x')], /leaves the storage/],
      ['an absolute path', [file('/tmp/x')], /leaves the storage/],
      ['an empty segment', [file('exports//x')], /leaves the storage/],
      ['a NUL', [file('exports/a\u0000b')], /leaves the storage/],
      ['a segment longer than a file name may be', [file(`exports/${'n'.repeat(256)}`)], /leaves the storage/],
      [
        'a file inside a file',
        [file('exports/a'), file('exports/a/b')],
        /"exports\/a\/b" is inside "exports\/a", which is no folder/,
      ],
      [
        'a file before its folder',
        [file('exports/later/x'), folder('exports/later')],
        /"exports\/later\/x" is inside "exports\/later", which is no folder/,
      ],
      ['the same path twice', [file('exports/x'), file('exports/x')], /"exports\/x" appears twice/],
    ];
    for (const [name, entries, detail] of cases) {
      const reply = await restore(
        lp,
        craft(`tree-${name}.snapshot`, { ...parts, objstore: [...parts.objstore, ...entries] }),
      );
      expect(reply.status, `${name}: ${reply.text}`).toBe(400);
      expect(reply.body.detail, name).toMatch(detail);
    }
    expect(await stateOf(lp)).toEqual(before);
    await stop(lp);
    const again = await create({ dataDir });
    expect((await inProcessApi(again).get('/_localplane/health')).status).toBe(200);
    expect(outsideTheDataDir(root)).toEqual(outside);
  });

  it('restores a sound file with objects whole after refusing bad ones: nothing of the bad ones is left', async () => {
    const lp = await create();
    const fixtures = await fixturesOf(lp);
    const { s3, bucket, keys } = await seventeenObjects(lp, fixtures);
    const good = join(scratch, 'seventeen.snapshot');
    await lp.snapshot(good);
    const expected = await stateOf(lp);
    const parts = readSnapshotParts(good);
    await lp.reset();
    expect(
      (
        await restore(
          lp,
          craft('bad-then-good.snapshot', { ...parts, objstore: [...parts.objstore, { path: 'stray', data: null }] }),
        )
      ).status,
    ).toBe(400);
    const reply = await restore(lp, good);
    expect(reply.status, reply.text).toBe(200);
    expect(await stateOf(lp)).toEqual(expected);
    expect(await listKeys(s3, bucket, '')).toEqual(keys);
    expect(readdirSync(lp.dataDir).filter((name) => name.startsWith('objstore'))).toEqual(['objstore']);
    s3.destroy();
  });
});

describe('over HTTP, a snapshot is a file of the snapshots folder, never a path', () => {
  /** An instance on `<project>/.lp` with the snapshots folder in its default place, `.lp/snapshots`. */
  async function inProject() {
    const { root, dataDir, victim } = project();
    const lp = await create({ dataDir, snapshotsDir: undefined });
    expect(lp.snapshotsDir).toBe(join(dataDir, 'snapshots'));
    return { root, lp, victim, api: inProcessApi(lp) };
  }

  it('refuses a path (absolute or relative) with a 400 that says to send a name, and writes or reads nothing', async () => {
    const { root, lp, api } = await inProject();
    const target = join(root, 'stolen.snapshot');
    await lp.snapshot(join(scratch, 'elsewhere.snapshot'));
    const outside = outsideTheDataDir(root);
    for (const body of [{ path: target }, { path: 'stolen.snapshot' }, { path: target, name: 'fine.snapshot' }]) {
      const saved = await api.post('/_localplane/snapshot', body);
      expect(saved.status, JSON.stringify(body)).toBe(400);
      expect(saved.body.detail).toMatch(
        new RegExp(
          String.raw`^a snapshot over HTTP is a file in the snapshots folder, named by "name" \(a plain file name\), ` +
            'not "path"; a file elsewhere is for localplane start --import',
        ),
      );
    }
    const restored = await api.post('/_localplane/restore', { path: join(scratch, 'elsewhere.snapshot') });
    expect(restored.status).toBe(400);
    expect(restored.body.detail).toMatch(/not "path"/);
    expect(existsSync(target)).toBe(false);
    expect(existsSync(lp.snapshotsDir)).toBe(false);
    expect(outsideTheDataDir(root)).toEqual(outside);
  });

  it(
    'refuses a name that is a path, a parent, hidden, empty or too long, in a body or in the URL, with a 422 ' +
      'naming the rule',
    async () => {
      const { root, lp, api } = await inProject();
      const outside = outsideTheDataDir(root);
      const names = [
        join(root, 'stolen.snapshot'),
        '../stolen.snapshot',
        '..',
        '.',
        'a/b',
        'a\\b',
        '.hidden',
        '',
        'n'.repeat(129),
        'a\u0000b',
        'snapshot 1',
        'é.snapshot',
      ];
      for (const name of names) {
        for (const path of ['/_localplane/snapshot', '/_localplane/restore']) {
          const reply = await api.post(path, { name });
          expect(reply.status, `${path} ${JSON.stringify(name)}`).toBe(422);
          expect(reply.body.detail[0], `${path} ${JSON.stringify(name)}`).toMatchObject({
            loc: ['body', 'name'],
            msg: expect.stringContaining('a snapshot name is a plain file name'),
          });
        }
      }
      for (const name of ['..%2Fstolen.snapshot', '.hidden', 'a%5Cb', 'n'.repeat(129)]) {
        for (const method of ['GET', 'PUT', 'DELETE']) {
          const reply = await api.call(method, `/_localplane/snapshots/${name}`);
          expect(reply.status, `${method} ${name}`).toBe(422);
          expect(reply.body.detail[0].loc, `${method} ${name}`).toEqual(['path', 'name']);
        }
      }
      expect(existsSync(lp.snapshotsDir)).toBe(false);
      expect(outsideTheDataDir(root)).toEqual(outside);
    },
  );

  it(
    'follows no symbolic link in the snapshots folder: not listed, not restored, downloaded or deleted, and a ' +
      'save replaces the link, not its target',
    async () => {
      const { root, lp, victim, api } = await inProject();
      const elsewhere = join(scratch, `linked-to-${folders}.snapshot`);
      await lp.snapshot(elsewhere);
      const elsewhereBytes = readFileSync(elsewhere);
      // A snapshot of another state, so that one written through a link would show.
      await lp.clock.advance(60);
      expect((await api.post('/_localplane/snapshot', { name: 'kept.snapshot' })).status).toBe(200);
      // A link to a sound snapshot outside, to a file outside, and to a folder outside.
      symlinkSync(elsewhere, join(lp.snapshotsDir, 'sound.snapshot'));
      symlinkSync(join(victim, 'keep.txt'), join(lp.snapshotsDir, 'keep.txt'));
      symlinkSync(victim, join(lp.snapshotsDir, 'victim'));
      const outside = outsideTheDataDir(root);

      expect(
        (await api.get('/_localplane/snapshots')).body.snapshots.map((saved: { name: string }) => saved.name),
      ).toEqual(['kept.snapshot']);
      for (const name of ['sound.snapshot', 'keep.txt', 'victim']) {
        const restored = await api.post('/_localplane/restore', { name });
        expect(restored.status, name).toBe(400);
        expect(restored.body.detail, name).toBe(
          `${join(lp.snapshotsDir, name)} is not a saved snapshot: it is not a regular file (a symbolic link, a ` +
            `folder or a named pipe)`,
        );
        expect((await api.get(`/_localplane/snapshots/${name}`)).status, name).toBe(400);
        expect((await api.delete(`/_localplane/snapshots/${name}`)).status, name).toBe(400);
        expect(lstatSync(join(lp.snapshotsDir, name)).isSymbolicLink(), name).toBe(true);
      }
      const victimFile = join(victim, 'keep.txt');
      expect((await api.post('/_localplane/snapshot', { name: 'keep.txt' })).status).toBe(200);
      const bytes = readFileSync(join(lp.snapshotsDir, 'kept.snapshot'));
      expect((await lp.request('/_localplane/snapshots/sound.snapshot', { method: 'PUT', body: bytes })).status).toBe(
        200,
      );
      expect(lstatSync(join(lp.snapshotsDir, 'keep.txt')).isFile()).toBe(true);
      expect(lstatSync(join(lp.snapshotsDir, 'sound.snapshot')).isFile()).toBe(true);
      expect(readFileSync(victimFile, 'utf8')).toBe("not localplane's");
      expect(readFileSync(elsewhere).equals(elsewhereBytes), 'the file elsewhere, unchanged').toBe(true);
      expect(readFileSync(join(lp.snapshotsDir, 'sound.snapshot')).equals(bytes), 'the snapshot, byte for byte').toBe(
        true,
      );
      expect(outsideTheDataDir(root)).toEqual(outside);
    },
  );

  it('refuses a snapshots folder that is a symbolic link, on every endpoint, and writes nothing through it', async () => {
    const { root, lp, victim, api } = await inProject();
    symlinkSync(victim, lp.snapshotsDir);
    await lp.snapshot(join(victim, 'planted.snapshot'));
    const outside = outsideTheDataDir(root);
    const bytes = readFileSync(join(victim, 'planted.snapshot'));
    const replies = [
      await api.get('/_localplane/snapshots'),
      await api.post('/_localplane/snapshot', { name: 'planted.snapshot' }),
      await api.post('/_localplane/snapshot', { name: 'new.snapshot' }),
      await api.post('/_localplane/restore', { name: 'planted.snapshot' }),
      await api.get('/_localplane/snapshots/planted.snapshot'),
      await api.delete('/_localplane/snapshots/planted.snapshot'),
      await inProcessReply(lp.request('/_localplane/snapshots/new.snapshot', { method: 'PUT', body: bytes })),
    ];
    for (const reply of replies) {
      expect(reply.status, reply.text).toBe(400);
      expect(reply.body.detail).toBe(
        `${lp.snapshotsDir} is a symbolic link, where localplane keeps its snapshots folder: remove it, or give ` +
          `another folder with snapshotsDir (--snapshots-dir)`,
      );
    }
    expect(outsideTheDataDir(root)).toEqual(outside);
    expect(readFileSync(join(victim, 'planted.snapshot')).equals(bytes), 'the planted file, unchanged').toBe(true);
  });
});

async function inProcessReply(response: Promise<Response>) {
  const reply = await response;
  const text = await reply.text();
  return { status: reply.status, text, body: JSON.parse(text) as { detail: string } };
}

/**
 * Not a timing check: a process stuck in a read never answers, and giving up after this long
 * lets the test fail and kill it (the test's own timeout would leave the process running).
 */
const ANSWER_WITHIN_MS = 10_000;

async function post(url: string, body: unknown): Promise<{ status: number; detail: string }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(ANSWER_WITHIN_MS),
  });
  return { status: response.status, detail: ((await response.json()) as { detail: string }).detail };
}

describe('a restore reads only a regular file of bounded size', () => {
  it(
    'over HTTP, refuses by name a named pipe, a link to a device, a folder and a file over the size cap without ' +
      'reading them, and both ports go on answering',
    async () => {
      const folder = join(scratch, 'reads-snapshots');
      mkdirSync(folder);
      await new Promise<void>((done, failed) =>
        spawn('mkfifo', [join(folder, 'state.fifo')]).once('exit', (code) =>
          code === 0 ? done() : failed(new Error(`mkfifo: ${code}`)),
        ),
      );
      symlinkSync('/dev/zero', join(folder, 'zero.snapshot'));
      mkdirSync(join(folder, 'folder.snapshot'));
      writeFileSync(join(folder, 'huge.snapshot'), '');
      truncateSync(join(folder, 'huge.snapshot'), MAX_SNAPSHOT_BYTES + 1);
      // Its own data dir, so that a process that has to be killed leaves nothing behind outside the scratch folder.
      const instance = await startCli(['--quiet', '--data-dir', join(scratch, 'reads'), '--snapshots-dir', folder]);
      try {
        for (const [name, detail] of [
          ['state.fifo', /is not a saved snapshot: it is not a regular file/],
          ['zero.snapshot', /is not a saved snapshot: it is not a regular file/],
          ['folder.snapshot', /is not a saved snapshot: it is not a regular file/],
          ['huge.snapshot', /larger than the 1 GiB a snapshot file may hold/],
        ] as const) {
          const reply = await post(`${instance.apiUrl}/_localplane/restore`, { name });
          expect(reply.status, name).toBe(400);
          expect(reply.detail, name).toMatch(detail);
        }
        expect(
          (await fetch(`${instance.apiUrl}/_localplane/health`, { signal: AbortSignal.timeout(ANSWER_WITHIN_MS) }))
            .status,
        ).toBe(200);
        expect((await fetch(instance.objstoreUrl, { signal: AbortSignal.timeout(ANSWER_WITHIN_MS) })).status).toBe(403);
      } finally {
        // A process stuck in a read answers no signal it handles.
        await instance.kill('SIGKILL');
      }
    },
  );

  it('from --import, refuses a named pipe, a device and a folder without reading them', async () => {
    const fifo = join(scratch, 'import.fifo');
    await new Promise<void>((done, failed) =>
      spawn('mkfifo', [fifo]).once('exit', (code) => (code === 0 ? done() : failed(new Error(`mkfifo: ${code}`)))),
    );
    for (const file of [fifo, '/dev/zero', scratch]) {
      const run = await importing(file);
      expect(run.code, `${file}: ${run.stderr}`).toBe(2);
      expect(run.stderr, file).toMatch(/is not a regular file/);
    }
  });
});

/** `localplane start --import <file>` to its end: a process stuck in a read is killed after ANSWER_WITHIN_MS. */
function importing(file: string): Promise<{ code: number | null; stderr: string }> {
  const flags = [
    'start',
    '--port',
    '0',
    '--objstore-port',
    '0',
    '--quiet',
    '--data-dir',
    join(scratch, 'imports'),
    '--import',
    file,
  ];
  const child = spawn(process.execPath, [BIN, ...flags], {
    stdio: ['ignore', 'ignore', 'pipe'],
    timeout: ANSWER_WITHIN_MS,
    killSignal: 'SIGKILL',
  });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stderr })));
}

describe('a start on a data dir that was tampered with', () => {
  it('refuses a database holding a bucket named ../../victim, and deletes nothing outside the data dir', async () => {
    const { root, dataDir, victim } = project();
    await stop(await create({ dataDir }));
    const db = new Database(join(dataDir, 'localplane.sqlite'));
    createdBucket('../../victim')(db);
    db.close();
    const outside = outsideTheDataDir(root);

    await expect(create({ dataDir })).rejects.toThrow(
      new RegExp(
        String.raw`localplane\.sqlite holds data localplane cannot use: ` +
          String.raw`objstore_created_buckets holds the bucket name "\.\.\/\.\.\/victim"`,
      ),
    );
    expect(outsideTheDataDir(root)).toEqual(outside);
    expect(readFileSync(join(victim, 'keep.txt'), 'utf8')).toBe("not localplane's");
  });

  it(
    'refuses a database holding rows the API or the background work could not read, in one line that shows no ' +
      'secret',
    async () => {
      const dataDir = join(scratch, `unreadable-${++folders}`);
      const lp = await create({ dataDir });
      await fillEveryTable(lp);
      await stop(lp);
      const cases: [string, string, string, RegExp][] = [
        [
          'exported files not JSON',
          "UPDATE bulk_export_runs SET exported_files = 'a.parquet' WHERE rowid = 1",
          "UPDATE bulk_export_runs SET exported_files = '[]' WHERE rowid = 1",
          /bulk_export_runs holds "a\.parquet" in exported_files, which takes JSON/,
        ],
        [
          'secrets of another shape',
          `UPDATE deployments SET secrets = '{"EVERY_ROW_KEY": "every-row-secret"}' WHERE name = 'every-row-agent'`,
          `UPDATE deployments SET secrets = '[]' WHERE name = 'every-row-agent'`,
          /deployments holds a text \(a secret, not shown\) in secrets, JSON of another shape than it keeps/,
        ],
        [
          'a running export that never started',
          "UPDATE bulk_exports SET started_at = NULL WHERE status = 'Running'",
          "UPDATE bulk_exports SET started_at = created_at WHERE status = 'Running'",
          /bulk_exports holds a Running export without started_at/,
        ],
      ];
      const database = (sql: string) => {
        const db = new Database(join(dataDir, 'localplane.sqlite'));
        db.exec(sql);
        db.close();
      };
      for (const [name, tamper, undo, detail] of cases) {
        database(tamper);
        const refusal = await create({ dataDir }).then(
          () => expect.fail(`${name}: started`),
          (error: Error) => error.message,
        );
        expect(refusal, name).toMatch(
          new RegExp(
            `localplane\\.sqlite holds data localplane cannot use: ${detail.source}.*: remove that data dir or ` +
              `choose another --data-dir$`,
          ),
        );
        expect(refusal.split('\n'), name).toHaveLength(1);
        expect(refusal, name).not.toContain('every-row-secret');
        database(undo);
      }
      await stop(await create({ dataDir }));
    },
  );

  it('follows no symbolic link planted in the file view, and refuses one in the store', async () => {
    const { root, dataDir, victim } = project();
    await stop(await create({ dataDir }));
    rmSync(join(dataDir, 'files', 'exports'), { recursive: true });
    symlinkSync(victim, join(dataDir, 'files', 'exports'));
    const outside = outsideTheDataDir(root);
    await stop(await create({ dataDir }));
    expect(outsideTheDataDir(root)).toEqual(outside);
    expect(lstatSync(join(dataDir, 'files', 'exports')).isDirectory()).toBe(true);

    rmSync(join(dataDir, 'objstore', 'exports'), { recursive: true });
    symlinkSync(victim, join(dataDir, 'objstore', 'exports'));
    await expect(create({ dataDir })).rejects.toThrow(/objstore\/exports is a symbolic link/);
    expect(outsideTheDataDir(root)).toEqual(outside);
  });
});

/**
 * `localplane start` in `cwd` (where it finds localplane.config.json), stopped with SIGTERM once ready: its exit code
 * and stderr.
 */
function startIn(
  cwd: string,
  flags: readonly string[] = [],
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [BIN, 'start', '--port', '0', '--objstore-port', '0', '--quiet', ...flags], {
    cwd,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  child.stdout.on('data', (chunk: Buffer) => {
    if (chunk.toString().includes('localplane ready')) child.kill('SIGTERM');
  });
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stderr })));
}

describe('the config file', () => {
  it(
    'with {"dataDir": ".lp", "import": "state.lps"} and a bucket ../../victim in state.lps: two starts leave ' +
      'everything outside the data dir alone',
    async () => {
      const { root, victim } = project();
      const lp = await create();
      writeFileSync(
        join(root, 'state.lps'),
        snapshotBytes(withDatabase(await partsOf(lp), createdBucket('../../victim'))),
      );
      writeFileSync(join(root, 'localplane.config.json'), JSON.stringify({ dataDir: '.lp', import: 'state.lps' }));
      const outside = outsideTheDataDir(root);
      for (const attempt of [1, 2]) {
        const run = await startIn(root);
        expect(run.code, `start ${attempt}: ${run.stderr}`).toBe(2);
        expect(run.stderr.trim().split('\n'), `start ${attempt}`).toHaveLength(1);
        expect(run.stderr).toMatch(
          new RegExp(
            String.raw`state\.lps cannot be restored here: ` +
              String.raw`its table objstore_created_buckets holds the bucket name "\.\.\/\.\.\/victim"`,
          ),
        );
      }
      expect(outsideTheDataDir(root)).toEqual(outside);
      expect(readFileSync(join(victim, 'keep.txt'), 'utf8')).toBe("not localplane's");
    },
  );

  it(
    'refuses a dataDir, import, snapshotsDir or exportOnExit that leaves its folder, symlinks included; flags ' +
      'and environment variables take any path',
    async () => {
      const { root } = project();
      const elsewhere = join(scratch, `elsewhere-${folders}`);
      mkdirSync(elsewhere);
      const lp = await create();
      await lp.snapshot(join(elsewhere, 'state.lps'));
      symlinkSync(elsewhere, join(root, 'linked'));
      const cases: [Record<string, string>, RegExp][] = [
        [{ dataDir: '../elsewhere-data' }, /"dataDir" must stay inside the config file's folder/],
        [{ dataDir: elsewhere }, /"dataDir" must stay inside the config file's folder/],
        [{ dataDir: 'linked/data' }, /"dataDir" must stay inside the config file's folder/],
        [{ dataDir: 'linked' }, /"dataDir" must stay inside the config file's folder/],
        [{ import: join(elsewhere, 'state.lps') }, /"import" must stay inside the config file's folder/],
        [{ import: 'linked/state.lps' }, /"import" must stay inside the config file's folder/],
        [{ exportOnExit: '../stolen.lps' }, /"exportOnExit" must stay inside the config file's folder/],
        [{ snapshotsDir: elsewhere }, /"snapshotsDir" must stay inside the config file's folder/],
        [{ snapshotsDir: 'linked/snapshots' }, /"snapshotsDir" must stay inside the config file's folder/],
      ];
      for (const [config, words] of cases) {
        writeFileSync(join(root, 'localplane.config.json'), JSON.stringify(config));
        const run = await startIn(root);
        expect(run.code, `${JSON.stringify(config)}: ${run.stderr}`).toBe(2);
        expect(run.stderr.trim().split('\n')).toHaveLength(1);
        expect(run.stderr).toMatch(words);
        expect(run.stderr).toContain('--');
      }
      expect(readdirSync(elsewhere)).toEqual(['state.lps']);

      writeFileSync(join(root, 'localplane.config.json'), JSON.stringify({ dataDir: '.lp', import: 'state.lps' }));
      const byFlags = await startIn(root, [
        '--data-dir',
        join(elsewhere, 'by-flag'),
        '--import',
        join(elsewhere, 'state.lps'),
      ]);
      expect(byFlags.code, byFlags.stderr).toBe(0);
      const byEnv = await startIn(root, [], {
        ...process.env,
        LOCALPLANE_DATA_DIR: join(elsewhere, 'by-env'),
        LOCALPLANE_IMPORT: join(elsewhere, 'state.lps'),
      });
      expect(byEnv.code, byEnv.stderr).toBe(0);
      expect(readdirSync(elsewhere).sort()).toEqual(['by-env', 'by-flag', 'state.lps']);
      expect(existsSync(join(root, '.lp'))).toBe(false);
    },
  );

  it('says so in --help', async () => {
    const run = await runCli(['start', '--help']);
    expect(run.stdout).toMatch(/dataDir, import, snapshotsDir and exportOnExit in it\s+must stay inside its folder/);
  });
});

describe('file modes', () => {
  it("snapshot files and everything in the data dir are its user's alone (0600, folders 0700), whatever the umask", async () => {
    const dataDir = join(scratch, `modes-${++folders}`);
    const snapshot = join(dataDir, 'snapshots', 'modes.snapshot');
    const instance = await launch('sh', [
      '-c',
      `umask 000 && exec "${process.execPath}" "${BIN}" start --port 0 --objstore-port 0 --quiet --data-dir ` +
        `"${dataDir}"`,
    ]);
    try {
      const fixtures = (await (await fetch(`${instance.apiUrl}/_localplane/fixtures`)).json()) as FixturesView;
      const s3 = s3For(instance.objstoreUrl, fullKey(fixtures));
      const bucket = fixtures.objstore.buckets[0]!;
      await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'private/data.txt', Body: 'secret data' }));
      // What s3rver itself still writes: copies (with and without new metadata), tags, an upload in progress.
      await s3.send(
        new CopyObjectCommand({
          Bucket: bucket,
          Key: 'copied/deeper/data.txt',
          CopySource: `${bucket}/private/data.txt`,
        }),
      );
      await s3.send(
        new CopyObjectCommand({
          Bucket: bucket,
          Key: 'replaced/data.txt',
          CopySource: `${bucket}/private/data.txt`,
          MetadataDirective: 'REPLACE',
          Metadata: { note: 'n' },
        }),
      );
      await s3.send(
        new PutObjectTaggingCommand({
          Bucket: bucket,
          Key: 'private/data.txt',
          Tagging: { TagSet: [{ Key: 'k', Value: 'v' }] },
        }),
      );
      await s3.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'uploading/data.txt' }));
      s3.destroy();
      const workspace = fixtures.workspaces[0]!;
      await fetch(`${instance.apiUrl}/api/v1/bulk-exports/destinations`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': workspace.api_key, 'x-tenant-id': workspace.id },
        body: JSON.stringify({
          display_name: 'secret',
          config: { bucket_name: fixtures.objstore.buckets[0], prefix: 'p' },
          credentials: credentialsOf(fullKey(fixtures)),
        }),
      });
      const mode = (path: string) => (lstatSync(path).mode & 0o777).toString(8);
      /** Every file and folder in the data dir whose mode is not 0600 (0700 for a folder). */
      const notPrivate = () =>
        readdirSync(dataDir, { recursive: true, withFileTypes: true })
          .map((entry) => ({
            path: relative(dataDir, join(entry.parentPath, entry.name)),
            mode: mode(join(entry.parentPath, entry.name)),
            folder: entry.isDirectory(),
          }))
          .filter((entry) => entry.mode !== (entry.folder ? '700' : '600'));
      expect(notPrivate()).toEqual([]);

      expect((await post(`${instance.apiUrl}/_localplane/snapshot`, { name: 'modes.snapshot' })).status).toBe(200);
      expect((await post(`${instance.apiUrl}/_localplane/restore`, { name: 'modes.snapshot' })).status).toBe(200);
      expect(mode(snapshot)).toBe('600');
      expect(mode(join(dataDir, 'snapshots'))).toBe('700');
      expect(mode(dataDir)).toBe('700');
      // seed.sqlite is a hard link to the template cache's file, 0600 as well.
      expect(
        readdirSync(dataDir, { recursive: true, withFileTypes: true }).map((entry) =>
          relative(dataDir, join(entry.parentPath, entry.name)),
        ),
      ).toEqual(
        expect.arrayContaining([
          'seed.sqlite',
          'localplane.sqlite',
          'localplane.sqlite-wal',
          'id-sequence',
          'restoring.sqlite',
          'snapshots/modes.snapshot',
          'objstore/exports/private/data.txt._S3rver_object',
          'objstore/exports/private/data.txt._S3rver_tagging.xml',
          'objstore/exports/copied/deeper/data.txt._S3rver_metadata.json',
          'objstore/exports/replaced/data.txt._S3rver_metadata.json',
          'objstore/exports/._S3rver_uploads',
          'files/exports/private/data.txt',
          'files/exports/copied/deeper/data.txt',
        ]),
      );
      expect(notPrivate()).toEqual([]);
    } finally {
      await instance.kill('SIGTERM');
    }
  });
});
