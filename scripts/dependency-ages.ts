/**
 * npx tsx scripts/dependency-ages.ts [--no-write] [--date YYYY-MM-DD] [--jobs N] [--help]
 *
 * Measures the production tree of package-lock.json (what `npm ls --omit=dev --all` holds,
 * with the other platforms' optional builds) against the rule of issue 36: no package whose
 * latest release is over two years old, unless only design-card packages pull it in (a
 * dependency rule never removes a design-card package or what it pulls in). See HELP below.
 *
 * test/project/dependencies.test.ts imports the lock-file reading from here, so that the test and the
 * script agree on what the production tree is and who pulls a package in.
 */
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

/** The packages of the design card: a dependency rule never removes them nor what they pull in. */
export const DESIGN_CARDS = [
  'hono',
  '@hono/node-server',
  'better-sqlite3',
  'apache-arrow',
  'parquet-wasm',
  'vitest',
] as const;

const HELP = `npx tsx scripts/dependency-ages.ts [--no-write] [--date YYYY-MM-DD] [--jobs N]

Lists every package of the production tree of package-lock.json (the entries without
"dev": true; "optional" and "devOptional" ones count, some platform installs them) with
the date of its latest release (npm view <name> time version, a few at a time), flags
those whose latest release is over two years old, and says which design-card packages
pull each one in (${DESIGN_CARDS.join(', ')}):
a dependency rule never removes them nor what they pull in.

Then it rewrites test/project/data/production-packages.json: every production package by name,
with its latest release as measured ("latest release 1.5.1 on 2024-02-27"), preceded by
"pulled in only by better-sqlite3 (design card), " where every path from the root to it
passes through a design-card package. test/project/dependencies.test.ts reads that list and
fails when:
  - the production tree holds a package the list does not name (a dependency was
    added or changed: run this script),
  - the list names a package the tree no longer holds, or says "pulled in only by" where
    the lock file now says otherwise (run this script),
  - a package's recorded latest release was, on the day the list was measured, over two
    years old and not only design-card packages pull it in (this script exits 1 then too;
    replace what pulls it in),
  - the tree holds s3rver, busboy < 1, dicer or fast-xml-parser < 4.
Review the rewritten list in the diff as any other change.

Exit code: 0 when every package over two years old is pulled in only by design-card
packages and no forbidden package is there; 1 otherwise (each is printed with the path
that pulls it in; the list is still written, with its date, so the test fails on it
too); 2 when a look-up failed (nothing is written).

  --no-write   print the measurement only; leave test/project/data/production-packages.json alone
  --date D     count "over two years old" back from D (YYYY-MM-DD) instead of today
  --jobs N     npm view calls at a time (default 4)
  --help       this text`;

export const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));
export const LOCK_FILE = fileURLToPath(new URL('../package-lock.json', import.meta.url));
export const PRODUCTION_PACKAGES_FILE = fileURLToPath(
  new URL('../test/project/data/production-packages.json', import.meta.url),
);

/** One entry of a lockfileVersion 3 `packages` map. */
export interface LockEntry {
  name?: string;
  version?: string;
  resolved?: string;
  link?: boolean;
  dev?: boolean;
  optional?: boolean;
  devOptional?: boolean;
  peer?: boolean;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  devDependencies?: Record<string, string>;
}

export interface Lockfile {
  name?: string;
  lockfileVersion: number;
  packages: Record<string, LockEntry>;
}

/** A package of the production tree: where the lock file puts it, its name and version. */
export interface ProductionPackage {
  location: string;
  name: string;
  version: string;
}

export function readLockfile(file = LOCK_FILE): Lockfile {
  const lock = JSON.parse(readFileSync(file, 'utf8')) as Lockfile;
  if (lock.lockfileVersion < 2 || !lock.packages || !lock.packages[''])
    throw new Error(`${file}: no "packages" map (lockfileVersion ${lock.lockfileVersion}); npm 7 or later writes one`);
  return lock;
}

/** The package's own name: the lock entry's `name` (an alias installs it under another folder), else its folder. */
export function nameAt(lock: Lockfile, location: string): string {
  if (location === '') return lock.packages['']?.name ?? lock.name ?? '(root)';
  const folder = location.lastIndexOf('node_modules/');
  return lock.packages[location]?.name ?? (folder === -1 ? location : location.slice(folder + 'node_modules/'.length));
}

/**
 * The production entries: every package entry but those npm marks `dev: true` (needed only by
 * devDependencies). `optional: true` ones (only optional dependencies reach them, like another
 * platform's build) and `devOptional: true` ones (a devDependency and, in the production tree,
 * an optional one) are in the production tree wherever they install. Links are followed by
 * their target entry, not counted twice.
 */
export function productionPackages(lock: Lockfile): ProductionPackage[] {
  return Object.entries(lock.packages)
    .filter(([location, entry]) => location !== '' && !entry.dev && !entry.link)
    .map(([location, entry]) => ({ location, name: nameAt(lock, location), version: entry.version ?? '(no version)' }));
}

/** Where Node finds `name` from the package at `from`: its own node_modules, then each enclosing one. */
export function resolveFrom(lock: Lockfile, from: string, name: string): string | undefined {
  for (let base = from; ;) {
    const candidate = base === '' ? `node_modules/${name}` : `${base}/node_modules/${name}`;
    const entry = lock.packages[candidate];
    if (entry) return entry.link && entry.resolved !== undefined ? entry.resolved : candidate;
    if (base === '') return undefined;
    const cut = base.lastIndexOf('/node_modules/');
    base = cut === -1 ? '' : base.slice(0, cut);
  }
}

/** The dependencies npm installs for a package: regular, optional, and the peers it does not mark optional. */
function edgesOf(lock: Lockfile, location: string): string[] {
  const entry = lock.packages[location]!;
  const optionalPeers = new Set(
    Object.entries(entry.peerDependenciesMeta ?? {})
      .filter(([, meta]) => meta.optional)
      .map(([name]) => name),
  );
  const optional = new Set(Object.keys(entry.optionalDependencies ?? {}));
  const names = [
    ...Object.keys(entry.dependencies ?? {}),
    ...optional,
    ...Object.keys(entry.peerDependencies ?? {}).filter((name) => !optionalPeers.has(name)),
  ];
  const targets: string[] = [];
  for (const name of new Set(names)) {
    const target = resolveFrom(lock, location, name);
    if (target !== undefined) targets.push(target);
    else if (!optional.has(name))
      throw new Error(
        `package-lock.json: ${name}, a dependency of ${location === '' ? 'the root' : location}, has no entry`,
      );
  }
  return targets;
}

/** The production graph: each production location (and the root, '') with the locations it pulls in. */
export function productionGraph(lock: Lockfile): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  const queue = [''];
  while (queue.length > 0) {
    const location = queue.shift()!;
    if (graph.has(location)) continue;
    const targets = edgesOf(lock, location);
    graph.set(location, targets);
    queue.push(...targets.filter((target) => !graph.has(target)));
  }
  return graph;
}

/**
 * Breadth first from `start` (the root by default): each location reached with the shortest
 * chain of locations that leads to it. Locations in `avoid` are neither reached nor walked through.
 */
export function chains(
  graph: Map<string, string[]>,
  start = '',
  avoid: ReadonlySet<string> = new Set(),
): Map<string, string[]> {
  const reached = new Map<string, string[]>([[start, [start]]]);
  const queue = [start];
  while (queue.length > 0) {
    const location = queue.shift()!;
    for (const target of graph.get(location) ?? []) {
      if (reached.has(target) || avoid.has(target)) continue;
      reached.set(target, [...reached.get(location)!, target]);
      queue.push(target);
    }
  }
  return reached;
}

/** A chain of locations as people read it: `localplane > better-sqlite3 > prebuild-install > rc`, with versions. */
export function showChain(lock: Lockfile, chain: string[]): string {
  return chain
    .map((location) =>
      location === '' ? nameAt(lock, '') : `${nameAt(lock, location)}@${lock.packages[location]?.version}`,
    )
    .join(' > ');
}

/** For each production package name: the design-card packages that pull it in, and whether only they do. */
export interface Provenance {
  name: string;
  versions: string[];
  /** The shortest chain from the root to one of its locations, as showChain writes it. */
  path: string;
  /** Design-card packages from which one of its locations is reached (itself, if it is one). */
  designCards: string[];
  /** Every chain from the root to every one of its locations passes through a design-card package. */
  onlyByDesignCards: boolean;
  /** Where not: the shortest chain that passes through none. */
  pathAvoidingDesignCards?: string;
}

export function provenance(lock: Lockfile): Map<string, Provenance> {
  const graph = productionGraph(lock);
  const fromRoot = chains(graph);
  const designCardLocations = [...graph.keys()].filter(
    (location) => location !== '' && (DESIGN_CARDS as readonly string[]).includes(nameAt(lock, location)),
  );
  const avoiding = chains(graph, '', new Set(designCardLocations));
  const reachedBy = designCardLocations.map((location) => ({
    card: nameAt(lock, location),
    reached: chains(graph, location),
  }));
  const byName = new Map<string, Provenance>();
  for (const { location, name, version } of productionPackages(lock)) {
    const chain = fromRoot.get(location);
    if (!chain)
      throw new Error(
        `package-lock.json: ${location} is not marked dev, yet no chain of dependencies from the root reaches it`,
      );
    const known = byName.get(name) ?? {
      name,
      versions: [],
      path: showChain(lock, chain),
      designCards: [],
      onlyByDesignCards: true,
    };
    if (!known.versions.includes(version)) known.versions.push(version);
    for (const { card, reached } of reachedBy)
      if (reached.has(location) && !known.designCards.includes(card)) known.designCards.push(card);
    const around = avoiding.get(location);
    if (around && known.onlyByDesignCards) {
      known.onlyByDesignCards = false;
      known.pathAvoidingDesignCards = showChain(lock, around);
    }
    byName.set(name, known);
  }
  for (const known of byName.values()) known.designCards.sort();
  return new Map([...byName].sort(([a], [b]) => a.localeCompare(b)));
}

/** Semantic-version order (major.minor.patch, a pre-release before its release); enough for the rules here. */
export function compareVersions(a: string, b: string): number {
  const parse = (version: string) => {
    const match = /^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:-([0-9A-Za-z.-]+))?(?:\+.*)?$/.exec(version.trim());
    if (!match) throw new Error(`not a version: ${version}`);
    return {
      numbers: [match[1], match[2], match[3]].map((part) => Number(part ?? 0)),
      pre: match[4]?.split('.') ?? [],
    };
  };
  const left = parse(a);
  const right = parse(b);
  for (let index = 0; index < 3; index++)
    if (left.numbers[index] !== right.numbers[index]) return left.numbers[index]! < right.numbers[index]! ? -1 : 1;
  if (left.pre.length === 0 || right.pre.length === 0) return Math.sign(right.pre.length - left.pre.length);
  for (let index = 0; index < Math.max(left.pre.length, right.pre.length); index++) {
    const [x, y] = [left.pre[index], right.pre[index]];
    if (x === undefined) return -1;
    if (y === undefined) return 1;
    if (x === y) continue;
    const [xNumeric, yNumeric] = [/^\d+$/.test(x), /^\d+$/.test(y)];
    if (xNumeric && yNumeric) return Number(x) < Number(y) ? -1 : 1;
    if (xNumeric !== yNumeric) return xNumeric ? -1 : 1;
    return x < y ? -1 : 1;
  }
  return 0;
}

/** Packages the production tree must not hold (issue 36): s3rver, and what it pulled in that is unmaintained. */
export const FORBIDDEN: { name: string; below?: string; why: string }[] = [
  { name: 's3rver', why: 'the objstore answers S3 itself; s3rver left the dependencies in d37e65c' },
  { name: 'busboy', below: '1.0.0', why: 'the 0.x line, unmaintained (s3rver pulled in 0.3.1)' },
  { name: 'dicer', why: "busboy 0.x's multipart parser, unmaintained (s3rver pulled in 0.3.0)" },
  {
    name: 'fast-xml-parser',
    below: '4.0.0',
    why: 'the 3.x line and older, unmaintained (s3rver pulled in 3.21.1); the objstore uses 5',
  },
];

/**
 * Each production package that a FORBIDDEN rule names, as a sentence with its version and the path that pulls it in.
 */
export function forbiddenPackages(lock: Lockfile): string[] {
  const fromRoot = chains(productionGraph(lock));
  const found: string[] = [];
  for (const { location, name, version } of productionPackages(lock)) {
    for (const rule of FORBIDDEN) {
      if (rule.name !== name || (rule.below !== undefined && compareVersions(version, rule.below) >= 0)) continue;
      const chain = fromRoot.get(location);
      found.push(
        `${name}@${version} (${rule.below ? `below ${rule.below}` : 'any version'}: ${rule.why}), pulled in ` +
          `by ${chain ? showChain(lock, chain) : `${location}, which no chain from the root reaches`}`,
      );
    }
  }
  return found;
}

/** The day `date` falls on, in UTC: 2024-02-27. */
export const day = (date: Date) => date.toISOString().slice(0, 10);

/**
 * Whether a release on `released` was over two years before `today`, counted in days (UTC): a
 * release on 2024-12-04 is over two years old from 2026-12-05 on. The list keeps days only, so
 * the script and the test count alike.
 */
export function overTwoYearsOld(released: Date, today: Date): boolean {
  const limit = new Date(`${day(today)}T00:00:00Z`);
  limit.setUTCFullYear(limit.getUTCFullYear() - 2);
  return day(released) < day(limit);
}

/** What test/project/data/production-packages.json holds. */
export interface ProductionPackagesFile {
  about: string;
  measuredOn: string;
  packages: Record<string, string>;
}

/** `[pulled in only by a, b (design card), ]latest release <version> on <YYYY-MM-DD>`. */
export const REASON = /^(?:pulled in only by (.+) \(design card\), )?latest release (\S+) on (\d{4}-\d{2}-\d{2})$/;

export function reason(latest: string, released: Date, onlyBy: string[] | undefined): string {
  return (
    `${onlyBy ? `pulled in only by ${onlyBy.join(', ')} (design card), ` : ''}latest release ${latest} ` +
    `on ${day(released)}`
  );
}

export function parseReason(text: string): { onlyBy?: string[]; latest: string; released: Date } | undefined {
  const match = REASON.exec(text);
  if (!match) return undefined;
  return { onlyBy: match[1]?.split(', '), latest: match[2]!, released: new Date(`${match[3]}T00:00:00Z`) };
}

interface Measured {
  known: Provenance;
  latest: string;
  released: Date;
}

async function latestRelease(name: string): Promise<{ latest: string; released: Date }> {
  const { stdout } = await promisify(execFile)('npm', ['view', name, 'time', 'version', '--json'], {
    maxBuffer: 64 * 1024 * 1024,
  });
  const answer = JSON.parse(stdout) as { time?: Record<string, string>; version?: string };
  const latest = answer.version;
  const when = latest === undefined ? undefined : answer.time?.[latest];
  if (latest === undefined || when === undefined)
    throw new Error(`npm view ${name} gave no latest version with its date`);
  return { latest, released: new Date(when) };
}

/** Runs `task` on each item, `jobs` at a time, keeping the items' order. */
async function pooled<T, R>(
  items: T[],
  jobs: number,
  task: (item: T) => Promise<R>,
): Promise<PromiseSettledResult<R>[]> {
  const results: PromiseSettledResult<R>[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await task(items[index]!).then(
        (value) => ({ status: 'fulfilled', value }) as const,
        (reason: unknown) => ({ status: 'rejected', reason }) as const,
      );
    }
  };
  await Promise.all(Array.from({ length: Math.min(jobs, items.length) }, worker));
  return results;
}

function option(name: string): string | undefined {
  const index = process.argv.indexOf(name);
  return index === -1 ? undefined : process.argv[index + 1];
}

async function main() {
  if (process.argv.includes('--help') || process.argv.includes('-h')) {
    process.stdout.write(`${HELP}\n`);
    return;
  }
  const dateOption = option('--date');
  const today = dateOption ? new Date(`${dateOption}T00:00:00Z`) : new Date();
  if (Number.isNaN(today.getTime())) throw new Error(`--date ${dateOption}: not a YYYY-MM-DD date`);
  const jobs = Number(option('--jobs') ?? 4);
  const lock = readLockfile();
  const forbidden = forbiddenPackages(lock);
  const packages = [...provenance(lock).values()];

  const settled = await pooled(packages, jobs, (known) => latestRelease(known.name));
  const failed = settled.flatMap((result, index) =>
    result.status === 'rejected'
      ? [`${packages[index]!.name}: ${String(result.reason instanceof Error ? result.reason.message : result.reason)}`]
      : [],
  );
  if (failed.length > 0) {
    process.stderr.write(`Look-ups failed, nothing written:\n${failed.map((line) => `  ${line}\n`).join('')}`);
    process.exit(2);
  }
  const measured: Measured[] = settled.map((result, index) => ({
    known: packages[index]!,
    ...(result as PromiseFulfilledResult<{ latest: string; released: Date }>).value,
  }));
  measured.sort((a, b) => a.released.getTime() - b.released.getTime() || a.known.name.localeCompare(b.known.name));

  const lines: string[] = [];
  const blocking: Measured[] = [];
  for (const entry of measured) {
    const { known, latest, released } = entry;
    const old = overTwoYearsOld(released, today);
    const by =
      known.designCards.length === 0
        ? ''
        : known.onlyByDesignCards
          ? `pulled in only by ${known.designCards.join(', ')} (design card)`
          : `pulled in by ${known.designCards.join(', ')} (design card) and by ${known.pathAvoidingDesignCards}`;
    if (old && !known.onlyByDesignCards) blocking.push(entry);
    lines.push(
      `${day(released)}  ${old ? 'OLD ' : '    '} ${known.name}@${known.versions.join(', ')} ` +
        `(latest ${latest})${by ? `  ${by}` : ''}`,
    );
  }
  process.stdout.write(
    `The production tree of package-lock.json: ${measured.length} packages, by the date of their latest release ` +
      `(OLD: over two years before ${day(today)}).\n\n${lines.join('\n')}\n\n`,
  );
  const old = measured.filter(({ released }) => overTwoYearsOld(released, today));
  process.stdout.write(
    `${old.length} over two years old, ${old.length - blocking.length} of them pulled in only by design-card ` +
      `packages.\n`,
  );
  for (const { known, latest, released } of blocking)
    process.stdout.write(
      `NOT ALLOWED: ${known.name} (latest release ${latest} on ${day(released)}), pulled in ` +
        `by ${known.pathAvoidingDesignCards}\n`,
    );
  for (const line of forbidden) process.stdout.write(`FORBIDDEN: ${line}\n`);

  if (!process.argv.includes('--no-write')) {
    const file: ProductionPackagesFile = {
      about:
        'The production tree of package-lock.json with the latest release of each package. Written by npx tsx ' +
        'scripts/dependency-ages.ts (run it after changing the dependencies), read by ' +
        'test/project/dependencies.test.ts.',
      measuredOn: day(today),
      packages: Object.fromEntries(
        [...measured]
          .sort((a, b) => a.known.name.localeCompare(b.known.name))
          .map(({ known, latest, released }) => [
            known.name,
            reason(latest, released, known.onlyByDesignCards ? known.designCards : undefined),
          ]),
      ),
    };
    writeFileSync(PRODUCTION_PACKAGES_FILE, `${JSON.stringify(file, null, 2)}\n`);
    process.stdout.write(`Wrote ${PRODUCTION_PACKAGES_FILE}.\n`);
  }
  if (blocking.length > 0 || forbidden.length > 0) process.exit(1);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
