/**
 * Issue 36: the production tree (`npm ls --omit=dev --all`) holds no package whose latest
 * release is over two years old, and none of s3rver, busboy < 1, dicer or fast-xml-parser < 4.
 * House rule: a dependency rule never removes a design-card package (hono, @hono/node-server,
 * better-sqlite3, apache-arrow, parquet-wasm, vitest) nor what it pulls in; those are named as
 * exceptions.
 *
 * This test reads package-lock.json (lockfileVersion 3, its `packages` map): the production
 * tree is every entry not marked `dev: true` (`optional` ones, another platform's build, and
 * `devOptional` ones count), and who pulls a package in comes from walking the entries'
 * dependencies from the root's, as Node resolves them (scripts/dependency-ages.ts holds that
 * code; the test and the script share it).
 *
 * A release date cannot be read offline, so the ages come from a checked-in list,
 * test/project/data/production-packages.json, that `npx tsx scripts/dependency-ages.ts` writes: every
 * production package by name, with its latest release as measured from the registry
 * ("latest release 1.5.1 on 2024-02-27"), preceded by "pulled in only by better-sqlite3
 * (design card), " where every path to it passes through a design-card package.
 *
 * When you add, remove or change a dependency, this test fails on the packages the list does
 * not name (or no longer should): run the script, read what it prints (a package over two
 * years old that not only design-card packages pull in makes it exit 1), and commit the list
 * it rewrote. Ages are judged as of the day the list was measured (its `measuredOn`), so the
 * test answers the same every day; the script judges them as of today: run it now and then,
 * and where a package has had no release for two years, replace what pulls it in.
 * `npx tsx scripts/dependency-ages.ts --help` says the same.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  compareVersions,
  forbiddenPackages,
  overTwoYearsOld,
  parseReason,
  PRODUCTION_PACKAGES_FILE,
  productionGraph,
  productionPackages,
  provenance,
  readLockfile,
  type Lockfile,
  type ProductionPackagesFile,
} from '../../scripts/dependency-ages.ts';

const RUN_THE_SCRIPT =
  'run npx tsx scripts/dependency-ages.ts, which measures the latest releases and rewrites ' +
  'test/project/data/production-packages.json';

describe('the production tree of package-lock.json', () => {
  const lock = readLockfile();
  const packages = provenance(lock);
  const listFile = JSON.parse(readFileSync(PRODUCTION_PACKAGES_FILE, 'utf8')) as ProductionPackagesFile;
  const listed = listFile.packages;

  it(
    "is what the lock file's dev flags say it is: every entry not marked dev, each reached from the root's " +
      'dependencies',
    () => {
      const reached = [...productionGraph(lock).keys()].filter((location) => location !== '');
      expect(reached.sort()).toEqual(
        productionPackages(lock)
          .map(({ location }) => location)
          .sort(),
      );
      expect(packages.size).toBeGreaterThan(50);
    },
  );

  it('holds no s3rver, busboy below 1, dicer, nor fast-xml-parser below 4', () => {
    expect(forbiddenPackages(lock)).toEqual([]);
  });

  it('holds only packages test/project/data/production-packages.json names, and that list names only those', () => {
    const unlisted = [...packages.values()]
      .filter(({ name }) => !(name in listed))
      .map(
        ({ name, versions, path }) => `${name}@${versions.join(', ')} (${path}) is not in the list: ${RUN_THE_SCRIPT}`,
      );
    const gone = Object.keys(listed)
      .filter((name) => !packages.has(name))
      .map((name) => `${name} is in the list, no longer in the production tree: ${RUN_THE_SCRIPT}`);
    expect([...unlisted, ...gone]).toEqual([]);
  });

  it('says in the list "pulled in only by" a design-card package exactly where the lock file says so', () => {
    const wrong: string[] = [];
    for (const [name, text] of Object.entries(listed)) {
      const reason = parseReason(text);
      const known = packages.get(name);
      if (!reason)
        wrong.push(
          `${name}: "${text}" does not read "[pulled in only by <packages> (design card), ]latest release ` +
            `<version> on <YYYY-MM-DD>": ${RUN_THE_SCRIPT}`,
        );
      else if (!known)
        continue; // named by the test above
      else if (reason.onlyBy && !known.onlyByDesignCards)
        wrong.push(
          `${name}: the list says only ${reason.onlyBy.join(', ')} (design card) pulls it in, ` +
            `yet ${known.pathAvoidingDesignCards} does: ${RUN_THE_SCRIPT}`,
        );
      else if (reason.onlyBy?.join(', ') !== (known.onlyByDesignCards ? known.designCards.join(', ') : undefined))
        wrong.push(
          `${name}: the list says "${text}", the lock file has it pulled in ` +
            (known.onlyByDesignCards ? `only by ${known.designCards.join(', ')} (design card)` : `by ${known.path}`) +
            `: ${RUN_THE_SCRIPT}`,
        );
    }
    expect(wrong).toEqual([]);
  });

  // As of the day the list was measured, not today: the test gives the same answer every day, and the script (run by
  // hand) answers for today.
  it(
    'held no package whose latest release was over two years old when the list was measured, but those only ' +
      'design-card packages pull in',
    () => {
      const measuredOn = new Date(`${listFile.measuredOn}T23:59:59Z`);
      const old = Object.entries(listed).flatMap(([name, text]) => {
        const reason = parseReason(text);
        const known = packages.get(name);
        if (!reason || !known || known.onlyByDesignCards || !overTwoYearsOld(reason.released, measuredOn)) return [];
        return [
          `${name}@${known.versions.join(', ')}: the list has its latest release, ${reason.latest}, out ` +
            `on ${text.slice(-10)}, over two years ago; it is pulled in ` +
            (`by ${known.pathAvoidingDesignCards}. ${RUN_THE_SCRIPT}; if it still has no newer release, replace ` +
              `what pulls it in`),
        ];
      });
      expect(old).toEqual([]);
    },
  );
});

describe('the checks themselves', () => {
  it('order versions as semver does', () => {
    expect(compareVersions('0.3.1', '1.0.0')).toBe(-1);
    expect(compareVersions('1.0.0-alpha.1', '1.0.0')).toBe(-1);
    expect(compareVersions('1.0.0-alpha.2', '1.0.0-alpha.10')).toBe(-1);
    expect(compareVersions('1.0.0-alpha', '1.0.0-alpha.1')).toBe(-1);
    expect(compareVersions('1.6.0', '1.0.0')).toBe(1);
    expect(compareVersions('3.21.1', '4.0.0')).toBe(-1);
    expect(compareVersions('4.5.7', '4.0.0')).toBe(1);
    expect(compareVersions('10.0.0', '9.9.9')).toBe(1);
    expect(compareVersions('4.0.0', '4')).toBe(0);
    expect(compareVersions('1.5.6-r.1', '1.5.6')).toBe(-1);
  });

  it('count "over two years" in days', () => {
    const released = new Date('2024-12-04T21:36:12Z');
    expect(overTwoYearsOld(released, new Date('2026-12-04T23:00:00Z'))).toBe(false);
    expect(overTwoYearsOld(released, new Date('2026-12-05T00:00:00Z'))).toBe(true);
  });

  it(
    'find the forbidden packages of a lock file like the one before s3rver left, with their paths, and none of ' +
      'the dev tree',
    () => {
      const before: Lockfile = {
        lockfileVersion: 3,
        packages: {
          '': {
            name: 'localplane',
            dependencies: { s3rver: '^3.7.1', '@scope/uploads': '1.0.0' },
            devDependencies: { tool: '1.0.0' },
          },
          'node_modules/s3rver': { version: '3.7.1', dependencies: { busboy: '^0.3.1', 'fast-xml-parser': '^3.19.0' } },
          'node_modules/busboy': { version: '0.3.1', dependencies: { dicer: '0.3.0' } },
          'node_modules/dicer': { version: '0.3.0' },
          'node_modules/fast-xml-parser': { version: '3.21.1' },
          'node_modules/@scope/uploads': { version: '1.0.0', dependencies: { busboy: '1.0.0-alpha.1' } },
          'node_modules/@scope/uploads/node_modules/busboy': { version: '1.0.0-alpha.1' },
          'node_modules/tool': {
            version: '1.0.0',
            dev: true,
            dependencies: { busboy: '^1', 'fast-xml-parser': '^4', dicer: '*' },
          },
          'node_modules/tool/node_modules/busboy': { version: '1.6.0', dev: true },
          'node_modules/tool/node_modules/fast-xml-parser': { version: '4.5.7', dev: true },
          'node_modules/tool/node_modules/dicer': { version: '0.3.1', dev: true },
        },
      };
      const found = forbiddenPackages(before);
      expect(found.map((line) => line.slice(0, line.indexOf(' '))).sort()).toEqual([
        'busboy@0.3.1',
        'busboy@1.0.0-alpha.1',
        'dicer@0.3.0',
        'fast-xml-parser@3.21.1',
        's3rver@3.7.1',
      ]);
      expect(found).toContainEqual(expect.stringContaining('dicer@0.3.0 (any version'));
      expect(found).toContainEqual(
        expect.stringMatching(
          /^dicer@0\.3\.0 .*pulled in by localplane > s3rver@3\.7\.1 > busboy@0\.3\.1 > dicer@0\.3\.0$/,
        ),
      );
      expect(found).toContainEqual(
        expect.stringMatching(
          new RegExp(
            String.raw`^busboy@1\.0\.0-alpha\.1 \(below 1\.0\.0.*` +
              String.raw`pulled in by localplane > @scope\/uploads@1\.0\.0 > busboy@1\.0\.0-alpha\.1$`,
          ),
        ),
      );
    },
  );

  it(
    'tell a package only design-card packages pull in from one another package pulls in too, and count optional ' +
      'packages but not dev ones',
    () => {
      const lock: Lockfile = {
        lockfileVersion: 3,
        packages: {
          '': {
            name: 'localplane',
            dependencies: { 'better-sqlite3': '12', 'swagger-ui-dist': '5' },
            devDependencies: { tool: '1' },
          },
          'node_modules/better-sqlite3': { version: '12.0.0', dependencies: { 'prebuild-install': '7' } },
          'node_modules/prebuild-install': {
            version: '7.1.3',
            dependencies: { once: '1', 'detect-libc': '2' },
            optionalDependencies: { 'other-platform': '1', absent: '1' },
          },
          'node_modules/once': { version: '1.4.0' },
          'node_modules/detect-libc': { version: '2.1.2' },
          'node_modules/other-platform': { version: '1.0.0', optional: true },
          'node_modules/swagger-ui-dist': {
            version: '5.0.0',
            dependencies: { 'detect-libc': '2' },
            optionalDependencies: { shared: '1' },
          },
          'node_modules/shared': { version: '1.0.0', devOptional: true },
          'node_modules/tool': { version: '1.0.0', dev: true, dependencies: { shared: '1' } },
        },
      };
      const known = provenance(lock);
      expect([...known.keys()]).toEqual([
        'better-sqlite3',
        'detect-libc',
        'once',
        'other-platform',
        'prebuild-install',
        'shared',
        'swagger-ui-dist',
      ]);
      expect(known.get('once')).toMatchObject({
        onlyByDesignCards: true,
        designCards: ['better-sqlite3'],
        path: 'localplane > better-sqlite3@12.0.0 > prebuild-install@7.1.3 > once@1.4.0',
      });
      expect(known.get('better-sqlite3')).toMatchObject({ onlyByDesignCards: true, designCards: ['better-sqlite3'] });
      expect(known.get('detect-libc')).toMatchObject({
        onlyByDesignCards: false,
        designCards: ['better-sqlite3'],
        pathAvoidingDesignCards: 'localplane > swagger-ui-dist@5.0.0 > detect-libc@2.1.2',
      });
      expect(known.get('shared')).toMatchObject({ onlyByDesignCards: false, designCards: [] });
    },
  );
});
