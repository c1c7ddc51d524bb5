import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { sourceFingerprint } from '../src/fixtures/source-fingerprint.ts';
import { DEFAULT_FIXTURES_DIR, prepareFixtures, start } from '../src/localplane.ts';
import { Api } from './support/instance.ts';

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

  it('gives the same template to the sources and to the build in dist/', async () => {
    const fixturesDir = smallFixtures();
    const cacheDir = newCache();
    const compiled = (await import(new URL('../dist/localplane.js', import.meta.url).href)) as { prepareFixtures: typeof prepareFixtures };
    expect(compiled.prepareFixtures({ fixturesDir, cacheDir })).toBe(prepareFixtures({ fixturesDir, cacheDir }));
    expect(templatesIn(cacheDir)).toHaveLength(1);
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
      writeFileSync(join(dist, `${name}.js.map`), JSON.stringify({ version: 3, sources: [`../src/${name}.ts`], sourcesContent: [source], mappings: '' }));
    }
    expect(sourceFingerprint(pathToFileURL(join(dist, 'entry.js')))).toBe(sourceFingerprint(pathToFileURL(join(dir, 'entry.ts'))));
  });
});
