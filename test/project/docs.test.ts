import { existsSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { adminApiTable, ADMIN_API_BLOCK, type Document } from '../../scripts/docs-admin-api.ts';
import {
  columnsFromCode,
  columnsTable,
  COLUMNS_BLOCK,
  neverNullColumns,
  type WrittenColumn,
} from '../../scripts/docs-columns.ts';
import { withGeneratedBlock } from '../../scripts/generated-docs.ts';
import { FORMAT_VERSIONS, type FormatVersion } from '../../src/bulk-exports/schemas.ts';
import { isTerminalStatus } from '../../src/bulk-exports/statuses.ts';
import { DEFAULT_LIMITS } from '../../src/config.ts';
import { createLocalplane, type InstanceClock } from '../../src/index.ts';
import { REPO_ROOT, runCli } from '../support/cli.ts';
import { exportClient, statuses } from '../support/exports.ts';
import { eventually, useLocalplane, workspaceByTier } from '../support/instance.ts';
import { duckdb } from '../support/objstore.ts';

const DOCS = [
  'README.md',
  ...readdirSync(join(REPO_ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];
const read = (file: string) => readFileSync(join(REPO_ROOT, file), 'utf8');

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as dashes. */
const anchor = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .trim()
    .replace(/\s/g, '-');

interface Manifest {
  scripts?: Record<string, string>;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}
const manifestOf = (directory: string) => JSON.parse(readFileSync(join(directory, 'package.json'), 'utf8')) as Manifest;

/** Where Node finds a package from a directory: in its node_modules or a parent's. */
function installedAt(name: string, from: string): string | undefined {
  for (let directory = from; ; directory = dirname(directory)) {
    const candidate = join(directory, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return realpathSync(candidate);
    if (dirname(directory) === directory) return undefined;
  }
}

/**
 * The packages of localplane's production dependency tree (with the optional dependencies
 * and peers npm installs) that have an install script as npm counts them: preinstall, install,
 * postinstall, or a binding.gyp (an implied `node-gyp rebuild`).
 */
function productionPackagesWithInstallScripts(): string[] {
  const withScripts = new Set<string>();
  const visited = new Set<string>();
  const visit = (directory: string, manifest: Manifest) => {
    const optionalPeers = new Set(
      Object.entries(manifest.peerDependenciesMeta ?? {})
        .filter(([, meta]) => meta.optional)
        .map(([name]) => name),
    );
    const optional = new Set(Object.keys(manifest.optionalDependencies ?? {}));
    // An optional peer is the consumer's own choice to install (vitest for localplane/vitest), and its scripts the
    // consumer's to allow.
    const peers = Object.keys(manifest.peerDependencies ?? {}).filter((name) => !optionalPeers.has(name));
    for (const name of [
      ...new Set([...Object.keys({ ...manifest.dependencies, ...manifest.optionalDependencies }), ...peers]),
    ]) {
      const dependency = installedAt(name, directory);
      if (dependency === undefined) {
        if (optional.has(name)) continue; // another platform's build, or a peer nobody asked for
        throw new Error(`${name}, a dependency of ${directory}, is not installed`);
      }
      if (visited.has(dependency)) continue;
      visited.add(dependency);
      const dependencyManifest = manifestOf(dependency);
      const { preinstall, install, postinstall } = dependencyManifest.scripts ?? {};
      if (preinstall || install || postinstall || existsSync(join(dependency, 'binding.gyp'))) withScripts.add(name);
      visit(dependency, dependencyManifest);
    }
  };
  visit(REPO_ROOT, manifestOf(REPO_ROOT));
  return [...withScripts].sort();
}

function anchorsOf(file: string): Set<string> {
  const withoutCode = read(file).replace(/^```[^]*?^```/gm, '');
  return new Set([...withoutCode.matchAll(/^#+ (.+)$/gm)].map((match) => anchor(match[1]!)));
}

describe('the docs', () => {
  it.each(DOCS)('%s: every relative link names a file that exists, and a heading in it', (file) => {
    const text = read(file).replace(/^```[^]*?^```/gm, '');
    const links = [...text.matchAll(/\]\(([^)\s]+)\)/g)]
      .map((match) => match[1]!)
      .filter((link) => !/^[a-z]+:/.test(link));
    for (const link of links) {
      const [path, hash] = link.split('#') as [string, string | undefined];
      const target = path === '' ? file : join(dirname(file), path);
      const exists = existsSync(resolve(REPO_ROOT, target));
      expect(exists, `${file} links to ${link}`).toBe(true);
      if (exists && hash !== undefined && target.endsWith('.md'))
        expect(anchorsOf(target), `${file} links to ${link}`).toContain(hash);
    }
  });

  it('docs/admin-api.md lists every /_localplane endpoint as the served document has it (npm run docs:admin)', async () => {
    const lp = await createLocalplane();
    try {
      const document = (await (await lp.request('/openapi.json')).json()) as Document;
      const current = readFileSync(ADMIN_API_BLOCK.file, 'utf8');
      expect(current).toBe(withGeneratedBlock(current, ADMIN_API_BLOCK, adminApiTable(document)));
      expect(current).toContain('| `POST /fault-rules` |');
    } finally {
      await lp.stop();
    }
  });

  it('docs/exports.md lists the Parquet columns the export encoder declares (npm run docs:admin)', () => {
    const current = readFileSync(COLUMNS_BLOCK.file, 'utf8');
    expect(current).toBe(withGeneratedBlock(current, COLUMNS_BLOCK, columnsTable(columnsFromCode())));
    expect(current).toContain('| `first_token_time` |');
  });

  it('README.md lists every example script (but lib.sh, which they source)', () => {
    const listed = [...read('README.md').matchAll(/^\| \[examples\/([\w-]+\.sh)\]/gm)].map((match) => match[1]!);
    const scripts = readdirSync(join(REPO_ROOT, 'examples')).filter(
      (name) => name.endsWith('.sh') && name !== 'lib.sh',
    );
    expect(listed.sort()).toEqual(scripts.sort());
  });

  it('awaits the clock methods in code blocks that return promises, and only those', async () => {
    const lp = await createLocalplane({ freezeClock: true });
    try {
      // Each method called as harmlessly as it can be: nothing due is run, the clock stays frozen.
      const calls: Record<Exclude<keyof InstanceClock, 'frozen'>, () => unknown> = {
        now: () => lp.clock.now(),
        unfreeze: () => lp.clock.unfreeze(),
        freeze: () => lp.clock.freeze(),
        set: () => lp.clock.set(lp.clock.now()),
        advance: () => lp.clock.advance(0),
        advanceToNext: () => lp.clock.advanceToNext(),
        runUntilIdle: () => lp.clock.runUntilIdle({ withinSeconds: 0 }),
        settle: () => lp.clock.settle(),
      };
      for (const file of DOCS) {
        const code = [...read(file).matchAll(/^```(?:ts|js)\n([^]*?)^```/gm)].map((match) => match[1]!).join('\n');
        for (const [, awaited, method] of code.matchAll(/(await )?lp\.clock\.(\w+)\(/g)) {
          expect(Object.keys(calls), `${file}: lp.clock.${method}()`).toContain(method);
          const result = calls[method as keyof typeof calls]();
          await result;
          expect(Boolean(awaited), `${file}: lp.clock.${method}() ${awaited ? 'is awaited' : 'is not awaited'}`).toBe(
            result instanceof Promise,
          );
        }
      }
    } finally {
      await lp.stop();
    }
  });

  it("docs/testing.md's allowScripts names every production dependency with an install script", () => {
    const block = [...read('docs/testing.md').matchAll(/^```json\n([^]*?)^```/gm)]
      .map((match) => match[1]!)
      .find((json) => json.includes('"allowScripts"'));
    const documented = (JSON.parse(block!) as { allowScripts: Record<string, boolean> }).allowScripts;
    expect(Object.keys(documented).sort()).toEqual(productionPackagesWithInstallScripts());
    expect(documented['better-sqlite3'], 'localplane cannot open its database without it').toBe(true);
  });

  it("docs/harness.md gives the seeded state's snapshot size the snapshot has (within 2%)", async () => {
    const [, shown] = /a snapshot of the seeded state \((\d+) KiB\)/.exec(read('docs/harness.md'))!;
    const lp = await createLocalplane();
    try {
      const { bytes } = await lp.snapshot(join(lp.dataDir, 'seeded.snapshot'));
      expect(Math.abs(bytes / 1024 / Number(shown) - 1), `${bytes / 1024} KiB, ${shown} in the doc`).toBeLessThan(0.02);
    } finally {
      await lp.stop();
    }
  });

  it("docs/cli.md's options table has the flags `localplane --help` prints, in its order", async () => {
    const help = await runCli(['--help']);
    expect(help.code).toBe(0);
    const printed = [...help.stdout.matchAll(/^ {2}(?:-\w, )?(--[\w-]+)/gm)].map((match) => match[1]);
    const table = read('docs/cli.md').split('| flag | env | default | meaning |')[1]!.split('\n\n')[0]!;
    const documented = [...table.matchAll(/^\| `(?:-\w`, `)?(--[\w-]+)/gm)].map((match) => match[1]);
    expect(documented).toEqual(printed);
    expect(documented).toContain('--snapshots-dir');
  });

  it('docs/limits.md gives the defaults the code has', () => {
    // The default column: a number (of MiB where it says so), or a JSON value in backticks.
    const rows = new Map(
      [...read('docs/limits.md').matchAll(/^\| `(\w+)` \| (?:`([^`]+)`|([\d.]+)( MiB)?)/gm)].map((match) => {
        const shown = match[2] !== undefined ? JSON.parse(match[2]) : Number(match[3]) * (match[4] ? 1024 * 1024 : 1);
        return [match[1]!, shown];
      }),
    );
    expect([...rows.keys()].sort()).toEqual(Object.keys(DEFAULT_LIMITS).sort());
    for (const [name, shown] of rows) expect(shown, name).toEqual(DEFAULT_LIMITS[name as keyof typeof DEFAULT_LIMITS]);
  });
});

/**
 * DuckDB's account of a Parquet logical type, e.g. `TimestampType(isAdjustedToUTC=1, unit=TimeUnit(MILLIS=<null>,
 * MICROS=MicroSeconds(), NANOS=<null>))`, in the Parquet spec's notation.
 */
function logicalType(described: string | null): string {
  if (described === null) return '';
  if (described === 'StringType()') return ' STRING';
  const timestamp = /^TimestampType\(isAdjustedToUTC=([01]), unit=TimeUnit\(.*\b(MILLIS|MICROS|NANOS)=(?!<null>)/.exec(
    described,
  );
  if (timestamp) return ` TIMESTAMP(isAdjustedToUTC=${timestamp[1] === '1'}, unit=${timestamp[2]})`;
  return ` ${described}`;
}

describe("docs/exports.md's Parquet columns", () => {
  const ctx = useLocalplane();
  const acme = exportClient(ctx, () => workspaceByTier(ctx.fixtures, 'plus'));

  /** The files of a one-day export of every column, as paths in the objstore's plain-file view. */
  async function exportedFiles(formatVersion: FormatVersion): Promise<string[]> {
    const destinationId = await acme.createDestination(`columns-${formatVersion}`);
    const exportId = await acme.startExport(destinationId, 'support-bot-staging', {
      start_time: '2026-10-01T00:00:00Z',
      end_time: '2026-10-02T00:00:00Z',
      format_version: formatVersion,
    });
    await eventually(async () => isTerminalStatus((await acme.getExport(exportId)).status), `export ${exportId}`);
    const runs = await acme.getRuns(exportId);
    expect(statuses(runs)).toEqual(['Completed']);
    return runs[0]!.metadata.result.exported_files.map((file) => join(ctx.fixtures.objstore.files_dir, file));
  }

  it('are those of the files an export writes in each format version, as DuckDB reads them', async () => {
    const written = new Map<string, WrittenColumn>();
    for (const formatVersion of FORMAT_VERSIONS) {
      const files = await exportedFiles(formatVersion);
      const [file] = files;
      const described = await duckdb<{ column_name: string; column_type: string }>(
        `DESCRIBE SELECT * FROM read_parquet('${file}', hive_partitioning = false)`,
      );
      const schema = await duckdb<{ name: string; type: string; repetition_type: string; logical_type: string | null }>(
        `SELECT name, type, repetition_type, logical_type FROM parquet_schema('${file}') WHERE type IS NOT NULL`,
      );
      expect(schema.map((element) => element.name)).toEqual(described.map((column) => column.column_name));
      for (const [index, { column_name: name, column_type: duckdbType }] of described.entries()) {
        const element = schema[index]!;
        const column = written.get(name) ?? { name, optional: true, types: {} as WrittenColumn['types'] };
        column.optional &&= element.repetition_type === 'OPTIONAL';
        column.types[formatVersion] = {
          parquet: `${element.type}${logicalType(element.logical_type)}`,
          duckdb: duckdbType,
        };
        written.set(name, column);
      }

      const neverNull = neverNullColumns();
      const nullCounts = neverNull.map(
        (column) => `count(*) FILTER (WHERE "${column}" IS NULL)::INTEGER AS "${column}"`,
      );
      const [counts] = await duckdb<Record<string, number>>(
        `SELECT count(*)::INTEGER AS runs, ${nullCounts.join(', ')} FROM ` +
          `read_parquet([${files.map((path) => `'${path}'`).join(', ')}], hive_partitioning = false)`,
      );
      const { runs, ...nulls } = counts!;
      expect(runs).toBeGreaterThan(0);
      expect(nulls, formatVersion).toEqual(Object.fromEntries(neverNull.map((column) => [column, 0])));
    }
    const current = readFileSync(COLUMNS_BLOCK.file, 'utf8');
    expect(current).toBe(withGeneratedBlock(current, COLUMNS_BLOCK, columnsTable([...written.values()])));
  });
});
