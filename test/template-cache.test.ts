import {
  chmodSync,
  chownSync,
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { sourceFingerprint } from '../src/shared/source-fingerprint.ts';
import { defaultCacheDir } from '../src/shared/user-cache.ts';
import { DEFAULT_FIXTURES_DIR, prepareFixtures, start, type Localplane } from '../src/localplane.ts';
import { BIN, REPO_ROOT, startCli } from './support/cli.ts';
import { Api, type FixturesView } from './support/instance.ts';

const scratch = mkdtempSync(join(tmpdir(), 'localplane-cache-test-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
let made = 0;

/** A copy of the shipped fixtures with a few runs per project, so templates build in milliseconds. */
function smallFixtures(): string {
  const dir = join(scratch, `fixtures-${++made}`);
  cpSync(DEFAULT_FIXTURES_DIR, dir, { recursive: true });
  const file = join(dir, 'workspaces.json');
  const workspaces = JSON.parse(readFileSync(file, 'utf8'));
  for (const workspace of workspaces.workspaces) for (const session of workspace.sessions) session.runs.count = 20;
  writeFileSync(file, JSON.stringify(workspaces, null, 2));
  return dir;
}

function renameFirstWorkspace(fixturesDir: string, name: string): void {
  const file = join(fixturesDir, 'workspaces.json');
  const workspaces = JSON.parse(readFileSync(file, 'utf8'));
  workspaces.workspaces[0].name = name;
  writeFileSync(file, JSON.stringify(workspaces, null, 2));
}

const newCache = () => join(scratch, `cache-${++made}`);
const templatesIn = (cacheDir: string) => readdirSync(cacheDir).sort();
const DAY_MS = 24 * 3600 * 1000;
const age = (path: string, ms: number) => utimesSync(path, new Date(Date.now() - ms), new Date(Date.now() - ms));

describe('the template cache', () => {
  it('keeps one template per fixtures dir and seed: a new build prunes the older ones', () => {
    const fixturesDir = smallFixtures();
    const cacheDir = newCache();
    const first = prepareFixtures({ fixturesDir, cacheDir });
    expect(prepareFixtures({ fixturesDir, cacheDir }), 'a cache hit').toBe(first);
    renameFirstWorkspace(fixturesDir, 'Acme Renamed');
    const second = prepareFixtures({ fixturesDir, cacheDir });
    expect(second).not.toBe(first);
    expect(templatesIn(cacheDir)).toEqual([basename(second)]);
    const otherSeed = prepareFixtures({ fixturesDir, cacheDir, seed: 2 });
    expect(templatesIn(cacheDir)).toEqual([basename(second), basename(otherSeed)].sort());
  });

  it('serves a template to any fixtures dir of the same content (a second checkout, a temp copy)', () => {
    const cacheDir = newCache();
    const fixturesDir = smallFixtures();
    const built = prepareFixtures({ fixturesDir, cacheDir });
    const copy = join(scratch, `fixtures-copy-${++made}`);
    cpSync(fixturesDir, copy, { recursive: true });
    expect(prepareFixtures({ fixturesDir: copy, cacheDir })).toBe(built);
    expect(templatesIn(cacheDir)).toHaveLength(1);
  });

  it('prunes templates unused for a week and abandoned builds when it builds one', () => {
    const cacheDir = newCache();
    mkdirSync(cacheDir, { recursive: true });
    const stale = join(cacheDir, 'template-0123abcd-00000000000000000000.sqlite');
    const legacy = join(cacheDir, 'template-3a9c5b54776905e9c18c.sqlite');
    const recent = join(cacheDir, 'template-4567abcd-00000000000000000000.sqlite');
    const abandoned = join(cacheDir, 'template-89abcdef-00000000000000000000.sqlite.1234.1.building');
    const building = join(cacheDir, 'template-89abcdef-11111111111111111111.sqlite.1235.2.building');
    for (const file of [stale, legacy, recent, abandoned, building]) writeFileSync(file, '');
    age(stale, 8 * DAY_MS);
    age(legacy, 8 * DAY_MS);
    age(recent, 6 * DAY_MS);
    age(abandoned, 2 * 3600 * 1000);
    const built = prepareFixtures({ fixturesDir: smallFixtures(), cacheDir });
    expect(templatesIn(cacheDir)).toEqual([built, recent, building].map((file) => basename(file)).sort());
  });

  it('counts a cache hit as a use', () => {
    const cacheDir = newCache();
    const fixturesDir = smallFixtures();
    const used = prepareFixtures({ fixturesDir, cacheDir });
    age(used, 8 * DAY_MS);
    expect(prepareFixtures({ fixturesDir, cacheDir })).toBe(used);
    expect(Date.now() - statSync(used).mtimeMs).toBeLessThan(DAY_MS);
    prepareFixtures({ fixturesDir: smallFixtures(), cacheDir });
    expect(existsSync(used)).toBe(true);
  });

  it('gives the same template to the sources, to the build in dist/ and to the bundled CLI', async () => {
    const fixturesDir = smallFixtures();
    const cacheDir = newCache();
    const compiled = (await import(new URL('../dist/localplane.js', import.meta.url).href)) as {
      prepareFixtures: typeof prepareFixtures;
    };
    const template = prepareFixtures({ fixturesDir, cacheDir });
    expect(compiled.prepareFixtures({ fixturesDir, cacheDir })).toBe(template);
    expect(templatesIn(cacheDir)).toHaveLength(1);
    const cli = await startCli(['--fixtures', fixturesDir], { ...process.env, LOCALPLANE_CACHE_DIR: cacheDir });
    await cli.kill('SIGTERM');
    // Another key would have built another template, and pruned this one (same fixtures and seed).
    expect(templatesIn(cacheDir).filter((name) => name.startsWith('template-'))).toEqual([basename(template)]);
  });

  it('never pulls a template from under a running instance', async () => {
    const fixturesDir = smallFixtures();
    const cacheDir = newCache();
    const instance = await start({ port: 0, objstorePort: 0, fixturesDir, cacheDir, log: () => {} });
    try {
      const old = prepareFixtures({ fixturesDir, cacheDir });
      // The instance attaches its own link to the template (same file, no copy), not the cache's name.
      expect(statSync(join(instance.dataDir, 'seed.sqlite')).ino).toBe(statSync(old).ino);
      renameFirstWorkspace(fixturesDir, 'Acme Pruned');
      prepareFixtures({ fixturesDir, cacheDir });
      expect(existsSync(old), 'pruned from the cache').toBe(false);
      await instance.reset();
      const admin = new Api(`${instance.apiUrl}/_localplane`);
      const fixtures = (await admin.request('GET', '/fixtures')).body;
      const workspace = fixtures.workspaces.find((candidate: { tier: string }) => candidate.tier === 'plus');
      const deployments = await new Api(instance.apiUrl).as(workspace).get('/v2/deployments');
      expect(deployments.status).toBe(200);
      expect(deployments.body.resources.length).toBeGreaterThan(0);
    } finally {
      await instance.stop();
    }
  });

  it('links the temp data dirs of a cache on another filesystem (a tmpfs temp dir) to one copy kept in the temp dir', async () => {
    const fixturesDir = smallFixtures();
    // The repository's disk, and the suite's temp dir (a tmpfs where there is one).
    mkdirSync(join(REPO_ROOT, 'test-results'), { recursive: true });
    const cacheDir = mkdtempSync(join(REPO_ROOT, 'test-results', 'template-cache-'));
    const tempDir = join(scratch, `temp-${++made}`);
    mkdirSync(tempDir);
    const copies = join(tempDir, `localplane-templates-${process.getuid?.() ?? 'user'}`);
    const crossing = statSync(cacheDir).dev !== statSync(tempDir).dev;
    const savedTmpdir = process.env.TMPDIR;
    const instances: Localplane[] = [];
    const startOne = async () => {
      process.env.TMPDIR = tempDir;
      try {
        instances.push(await start({ port: 0, objstorePort: 0, fixturesDir, cacheDir, log: () => {} }));
      } finally {
        process.env.TMPDIR = savedTmpdir;
      }
      return statSync(join(instances.at(-1)!.dataDir, 'seed.sqlite'));
    };
    try {
      const cached = prepareFixtures({ fixturesDir, cacheDir });
      const [first, second] = [await startOne(), await startOne()];
      expect(second.ino, 'one file, linked into both data dirs').toBe(first.ino);
      if (crossing) {
        expect(readdirSync(copies)).toEqual([basename(cached)]);
        expect(statSync(join(copies, basename(cached))).ino).toBe(first.ino);
        expect(statSync(copies).mode & 0o777).toBe(0o700);
      } else {
        expect(existsSync(copies), 'the cache is linked from directly').toBe(false);
        expect(statSync(cached).ino).toBe(first.ino);
      }

      // Another fixtures dir's copies: one unused for two hours, one for half an hour.
      const [stale, recent] = [
        'template-0000000a-00000000000000000000a.sqlite',
        'template-0000000b-00000000000000000000b.sqlite',
      ];
      if (crossing) {
        for (const name of [stale, recent]) writeFileSync(join(copies, name), '');
        age(join(copies, stale), 2 * 3600 * 1000);
        age(join(copies, recent), 1800 * 1000);
      }
      renameFirstWorkspace(fixturesDir, 'Acme Copied');
      const rebuilt = prepareFixtures({ fixturesDir, cacheDir });
      const third = await startOne();
      expect(third.ino).not.toBe(first.ino);
      if (crossing)
        expect(readdirSync(copies).sort(), 'the older copy and the one unused for an hour are pruned').toEqual(
          [basename(rebuilt), recent].sort(),
        );
      for (const instance of instances) expect((await instance.request('/_localplane/fixtures')).status).toBe(200);
    } finally {
      await Promise.all(instances.map((instance) => instance.stop()));
      rmSync(cacheDir, { recursive: true, force: true });
    }
  });
});

describe("the template cache is its user's own", () => {
  /** Another user's id: files can be given to it when the tests run as root. */
  const OTHER_UID = 4242;
  const isRoot = process.getuid?.() === 0;
  const modeOf = (path: string) => statSync(path).mode & 0o777;

  function withEnv<T>(env: Record<string, string | undefined>, run: () => T): T {
    const saved = Object.fromEntries(Object.keys(env).map((name) => [name, process.env[name]]));
    const set = (values: Record<string, string | undefined>) => {
      for (const [name, value] of Object.entries(values)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    };
    set(env);
    try {
      return run();
    } finally {
      set(saved);
    }
  }

  it(
    "defaults to localplane in the user's cache folder ($XDG_CACHE_HOME, else ~/.cache), not in the shared temp " +
      'dir',
    () => {
      expect(
        withEnv({ LOCALPLANE_CACHE_DIR: undefined, XDG_CACHE_HOME: '/home/someone/.cache-elsewhere' }, defaultCacheDir),
      ).toBe('/home/someone/.cache-elsewhere/localplane');
      expect(withEnv({ LOCALPLANE_CACHE_DIR: undefined, XDG_CACHE_HOME: undefined }, defaultCacheDir)).toBe(
        join(homedir(), '.cache', 'localplane'),
      );
      expect(withEnv({ LOCALPLANE_CACHE_DIR: undefined, XDG_CACHE_HOME: 'relative/ignored' }, defaultCacheDir)).toBe(
        join(homedir(), '.cache', 'localplane'),
      );
      expect(withEnv({ LOCALPLANE_CACHE_DIR: '/srv/lp-cache', XDG_CACHE_HOME: '/x' }, defaultCacheDir)).toBe(
        '/srv/lp-cache',
      );
    },
  );

  it('creates its folder 0700 and its templates 0600, whatever the umask', () => {
    const cacheDir = join(newCache(), 'made');
    const previous = process.umask(0o002);
    try {
      const template = prepareFixtures({ fixturesDir: smallFixtures(), cacheDir });
      expect(modeOf(cacheDir).toString(8)).toBe('700');
      expect(modeOf(template).toString(8)).toBe('600');
      expect(prepareFixtures({ fixturesDir: smallFixtures(), cacheDir }), 'trusted: a cache hit').toBe(template);
    } finally {
      process.umask(previous);
    }
  });

  it.each([
    ['others', 0o777, 'mode 777'],
    ['its group', 0o770, 'mode 770'],
  ])('refuses a folder %s can write to, and builds nothing there', (_, mode, words) => {
    const cacheDir = newCache();
    mkdirSync(cacheDir);
    chmodSync(cacheDir, mode);
    expect(() => prepareFixtures({ fixturesDir: smallFixtures(), cacheDir })).toThrow(
      `the template cache ${cacheDir} is writable by group or others (${words}): another user could plant a ` +
        `template there; use a folder only you can write to (LOCALPLANE_CACHE_DIR)`,
    );
    expect(readdirSync(cacheDir)).toEqual([]);
  });

  it("refuses a folder another user owns (root gives one away; any other user is refused root's)", () => {
    const cacheDir = isRoot ? newCache() : '/';
    if (isRoot) {
      mkdirSync(cacheDir, { mode: 0o755 });
      chownSync(cacheDir, OTHER_UID, OTHER_UID);
    }
    const owner = statSync(cacheDir).uid;
    expect(owner).not.toBe(process.getuid?.());
    expect(() => prepareFixtures({ fixturesDir: smallFixtures(), cacheDir })).toThrow(
      `the template cache ${cacheDir} is owned by uid ${owner}, not ${process.getuid?.()}`,
    );
  });

  it('stops the CLI with one line that names the folder (exit 2)', async () => {
    const cacheDir = newCache();
    mkdirSync(cacheDir);
    chmodSync(cacheDir, 0o777);
    const fixturesDir = smallFixtures();
    const launched = await startCli(['--fixtures', fixturesDir], {
      ...process.env,
      LOCALPLANE_CACHE_DIR: cacheDir,
    }).catch((error: Error) => error);
    if (!(launched instanceof Error)) await launched.kill('SIGTERM');
    expect(launched).toBeInstanceOf(Error);
    expect((launched as Error).message).toBe(
      `${process.execPath} ${BIN} start --port 0 --objstore-port 0 --fixtures ${fixturesDir} exited (2) before it ` +
        `was ready: ` +
        (`localplane: the template cache ${cacheDir} is writable by group or others (mode 777): another user could ` +
          `plant a template there; use a folder only you can write to (LOCALPLANE_CACHE_DIR)\n`),
    );
  });

  /** A cache whose template for `fixturesDir` was replaced by one built from other fixtures, with another API key. */
  function plantedCache(fixturesDir: string): { cacheDir: string; template: string } {
    const cacheDir = newCache();
    const template = prepareFixtures({ fixturesDir, cacheDir });
    const otherFixtures = smallFixtures();
    const file = join(otherFixtures, 'workspaces.json');
    const workspaces = JSON.parse(readFileSync(file, 'utf8'));
    workspaces.workspaces[0].api_key = PLANTED_API_KEY;
    writeFileSync(file, JSON.stringify(workspaces, null, 2));
    rmSync(template);
    copyFileSync(prepareFixtures({ fixturesDir: otherFixtures, cacheDir: newCache() }), template);
    return { cacheDir, template };
  }
  const PLANTED_API_KEY = 'lp-planted-by-another-user';

  async function apiKeysOfAStart(fixturesDir: string, cacheDir: string): Promise<string[]> {
    const instance = await start({ port: 0, objstorePort: 0, fixturesDir, cacheDir, log: () => {} });
    try {
      await instance.reset();
      const fixtures = (await new Api(`${instance.apiUrl}/_localplane`).request<FixturesView>('GET', '/fixtures')).body;
      return fixtures.workspaces.map((workspace) => workspace.api_key);
    } finally {
      await instance.stop();
    }
  }

  it('never starts from a template group or others can write: it is removed and built again', async () => {
    const fixturesDir = smallFixtures();
    const { cacheDir, template } = plantedCache(fixturesDir);
    chmodSync(template, 0o666);
    const keys = await apiKeysOfAStart(fixturesDir, cacheDir);
    expect(keys).not.toContain(PLANTED_API_KEY);
    expect(keys.length).toBeGreaterThan(0);
    expect(modeOf(template).toString(8), 'built again in its place').toBe('600');
  });

  it('never starts from a template another user owns (as root; any other user can only check its own are used)', async () => {
    const fixturesDir = smallFixtures();
    const { cacheDir, template } = plantedCache(fixturesDir);
    chmodSync(template, 0o644);
    if (isRoot) chownSync(template, OTHER_UID, OTHER_UID);
    const keys = await apiKeysOfAStart(fixturesDir, cacheDir);
    // Without root the planted file is the user's own: trusted, as any template the user built.
    expect(keys.includes(PLANTED_API_KEY)).toBe(!isRoot);
    expect(statSync(template).uid).toBe(process.getuid?.());
  });
});

describe('the source fingerprint', () => {
  function moduleTree(): string {
    const dir = join(scratch, `modules-${++made}`, 'src');
    mkdirSync(join(dir, 'nested'), { recursive: true });
    writeFileSync(join(dir, 'entry.ts'), "import { used } from './nested/used.ts';\nexport const entry = used;\n");
    writeFileSync(join(dir, 'nested', 'used.ts'), "export { deeper as used } from '../deeper.ts';\n");
    writeFileSync(join(dir, 'deeper.ts'), "export const deeper = () => import('./lazy.ts');\n");
    writeFileSync(join(dir, 'lazy.ts'), 'export const lazy = 1;\n');
    writeFileSync(join(dir, 'unrelated.ts'), 'export const unrelated = 1;\n');
    return dir;
  }

  it('changes with any module the entry imports, transitively, and with no other', () => {
    const dir = moduleTree();
    const entry = pathToFileURL(join(dir, 'entry.ts'));
    const before = sourceFingerprint(entry);
    writeFileSync(join(dir, 'unrelated.ts'), 'export const unrelated = 2;\n');
    expect(sourceFingerprint(entry)).toBe(before);
    writeFileSync(join(dir, 'lazy.ts'), 'export const lazy = 2;\n');
    expect(sourceFingerprint(entry)).not.toBe(before);
  });

  it('is the same for compiled modules whose source maps carry those sources', () => {
    const dir = moduleTree();
    const dist = join(dir, '..', 'dist');
    mkdirSync(join(dist, 'nested'), { recursive: true });
    for (const name of ['entry', 'nested/used', 'deeper', 'lazy']) {
      const source = readFileSync(join(dir, `${name}.ts`), 'utf8');
      writeFileSync(join(dist, `${name}.js`), source.replaceAll('.ts', '.js'));
      writeFileSync(
        join(dist, `${name}.js.map`),
        JSON.stringify({ version: 3, sources: [`../src/${name}.ts`], sourcesContent: [source], mappings: '' }),
      );
    }
    expect(sourceFingerprint(pathToFileURL(join(dist, 'entry.js')))).toBe(
      sourceFingerprint(pathToFileURL(join(dir, 'entry.ts'))),
    );
  });
});
