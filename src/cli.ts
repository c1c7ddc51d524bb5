import { existsSync, lstatSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve, sep } from 'node:path';
import { parseArgs } from 'node:util';
import { ProgressLine } from './cli-progress.ts';
import { launcherChain, watchLaunchers } from './launcher-watch.ts';
import { UUID_PATTERN } from './shared/ids.ts';
import { PACKAGE_VERSION } from './shared/package-version.ts';
import { ADMIN_TOKEN_RULE, ADMIN_TOKEN_SHAPE } from './shared/token-shape.ts';
import { withFileOpen } from './shared/private-files.ts';
import type { Localplane } from './localplane.ts';
import { OBJSTORE_STORAGE_KINDS } from './objstore/types.ts';

/**
 * How an option's value is read, and what it becomes (a `token-file` becomes the token the file holds; a `choice` is
 * one of its `choices`).
 */
type ValueKind =
  'port' | 'count' | 'text' | 'path' | 'directory' | 'switch' | 'url' | 'uuid' | 'token' | 'token-file' | 'choice';

type WarehouseCommand = 'demo' | 'query';
/** The commands other than `start`, whose options are theirs alone. */
type OwnOptionsCommand = WarehouseCommand | 'fixtures' | 'record' | 'verify';

interface OptionSpec {
  /** The flag without `--`; its camelCase form is the config-file key. */
  flag: string;
  value: ValueKind;
  /** The values a `choice` takes. */
  choices?: readonly string[];
  /** The value's name in the help, e.g. `<n>`. */
  placeholder?: string;
  env?: string;
  /** The default as the help shows it. */
  default?: string;
  help: string;
  /** Global options (help, version) are not `start` settings: no config-file key. */
  global?: boolean;
  /** Options of `demo`, `query`, `fixtures`, `record` or `verify`, not `start` settings: no config-file key. */
  commands?: readonly OwnOptionsCommand[];
  /** Other commands that take this `start` setting, read as start reads it. */
  alsoOf?: readonly OwnOptionsCommand[];
  short?: string;
  /**
   * Whether a config file may give this `start` setting (`loopback`: a loopback address only). A
   * cloned repository's config file is read as soon as localplane starts there: what opens the
   * instance to other machines or other sites' pages, or would switch a guard off, comes only from
   * a flag or the environment, as does where the admin token is read from.
   */
  fromConfig?: false | 'loopback';
}

/**
 * Every flag, once: the parser, the help, the environment variables and the config-file keys
 * are all derived from this table. Adding a flag is one entry (and using its setting in main).
 */
const OPTIONS = [
  {
    flag: 'host',
    value: 'text',
    placeholder: '<host>',
    env: 'LOCALPLANE_HOST',
    default: '127.0.0.1',
    help: 'address both servers bind',
    alsoOf: ['record'],
    fromConfig: 'loopback',
  },
  {
    flag: 'port',
    value: 'port',
    placeholder: '<n>',
    env: 'LOCALPLANE_PORT',
    default: '9400',
    help: 'API port; 0 = any free port',
    alsoOf: ['record'],
  },
  {
    flag: 'objstore-port',
    value: 'port',
    placeholder: '<n>',
    env: 'LOCALPLANE_OBJSTORE_PORT',
    default: '9401',
    help: 'objstore port; 0 = any free port',
  },
  {
    flag: 'allow-hosts',
    value: 'text',
    placeholder: '<names>',
    env: 'LOCALPLANE_ALLOW_HOSTS',
    default: 'loopback names and --host',
    help: 'more host names both ports answer under (a rebinding page uses its own), comma-separated',
    fromConfig: false,
  },
  {
    flag: 'allow-endpoints',
    value: 'text',
    placeholder: '<host[:port],...>',
    env: 'LOCALPLANE_ALLOW_ENDPOINTS',
    default: 'loopback and --host',
    help: "more hosts a destination's endpoint_url may name (a real S3-compatible cluster), comma-separated",
    fromConfig: false,
  },
  {
    flag: 'admin-token',
    value: 'token',
    placeholder: '<token>',
    env: 'LOCALPLANE_ADMIN_TOKEN',
    default: 'none',
    help:
      'require this token of the admin API and the dashboard (Authorization: Bearer, or /ui?token=); the flag ' +
      'shows it in ps',
  },
  {
    flag: 'admin-token-file',
    value: 'token-file',
    placeholder: '<file>',
    default: 'none',
    help:
      'read the admin token from this file, which no other user may read or write (chmod 600); not with ' +
      '--admin-token or its env',
    fromConfig: false,
  },
  {
    flag: 'data-dir',
    value: 'path',
    placeholder: '<dir>',
    env: 'LOCALPLANE_DATA_DIR',
    default: 'a fresh temp dir, removed on exit',
    help: 'keep SQLite and the objstore there across restarts',
  },
  {
    flag: 'objstore-storage',
    value: 'choice',
    choices: OBJSTORE_STORAGE_KINDS,
    placeholder: '<kind>',
    env: 'LOCALPLANE_OBJSTORE_STORAGE',
    default: 'files',
    help:
      'where the objstore keeps objects: files (each also a plain file under <data dir>/files) or memory (not ' +
      'on disk: no SQL nor previews, gone on exit)',
  },
  {
    flag: 'fixtures',
    value: 'directory',
    placeholder: '<dir>',
    env: 'LOCALPLANE_FIXTURES',
    default: 'the shipped fixtures/',
    help: 'fixture directory',
  },
  {
    flag: 'seed',
    value: 'count',
    placeholder: '<n>',
    env: 'LOCALPLANE_SEED',
    default: '1',
    help: 'seed of generated runs and of ids',
  },
  {
    flag: 'freeze-clock',
    value: 'switch',
    env: 'LOCALPLANE_FREEZE_CLOCK',
    default: 'a running clock',
    help: 'start (and reset) with the emulator clock frozen',
  },
  {
    flag: 'quiet',
    value: 'switch',
    short: 'q',
    env: 'LOCALPLANE_QUIET',
    default: 'a line per request on stderr',
    help: 'no request log',
  },
  {
    flag: 'import',
    value: 'path',
    placeholder: '<file>',
    env: 'LOCALPLANE_IMPORT',
    default: 'the seeded fixtures',
    help: 'start from a snapshot file',
  },
  {
    flag: 'snapshots-dir',
    value: 'path',
    placeholder: '<dir>',
    env: 'LOCALPLANE_SNAPSHOTS_DIR',
    default: '<data dir>/snapshots',
    help: 'where the admin API and the dashboard save and restore snapshot files, by name',
  },
  {
    flag: 'export-on-exit',
    value: 'path',
    placeholder: '<file>',
    env: 'LOCALPLANE_EXPORT_ON_EXIT',
    default: 'none',
    help: 'write a snapshot there on SIGINT, SIGTERM or SIGHUP before stopping',
  },
  {
    flag: 'url',
    value: 'url',
    placeholder: '<url>',
    default: 'demo, verify: an instance of its own; query: the files in --dir',
    help:
      "a running localplane's API URL (demo exports there; query reads its export; verify replays into it as " +
      'it is); files come through the S3 API',
    commands: ['demo', 'query', 'verify'],
  },
  {
    flag: 'dir',
    value: 'path',
    placeholder: '<dir>',
    default: '<tmp>/localplane-demo',
    help: "where demo copies its export's files (replacing an earlier demo's) and query reads them",
    commands: ['demo', 'query'],
  },
  {
    flag: 'sql',
    value: 'text',
    placeholder: '<sql>',
    default: "the demo's tables",
    help: "print this query's result over the runs view instead",
    commands: ['demo'],
  },
  {
    flag: 'workspace',
    value: 'text',
    placeholder: '<id>',
    default: 'the recorded one if a fixture, else the first with bulk exports',
    help: 'the fixture workspace the recorded workspace stands for',
    commands: ['verify'],
  },
  {
    flag: 'json',
    value: 'switch',
    default: 'a table of what differs',
    help: 'print the report as one JSON document',
    commands: ['verify'],
  },
  {
    flag: 'export-id',
    value: 'uuid',
    placeholder: '<id>',
    default: 'every export in --dir; with --url the newest completed',
    help: 'the export query reads',
    commands: ['query'],
  },
  {
    flag: 'upstream',
    value: 'url',
    placeholder: '<url>',
    help: 'required: the base URL record passes requests on to',
    commands: ['record'],
  },
  {
    flag: 'out',
    value: 'path',
    placeholder: '<path>',
    help:
      'required: the HAR file record writes (replaced); the fixtures directory fixtures from-recording writes ' +
      '(new or empty)',
    commands: ['record', 'fixtures'],
  },
  {
    flag: 'upstream-timeout',
    value: 'count',
    placeholder: '<seconds>',
    default: '60',
    help: 'how long the upstream has to start answering before record answers 502; 0 = no limit',
    commands: ['record'],
  },
  {
    flag: 'recorded-only',
    value: 'switch',
    default: 'the shipped workspaces kept beside it',
    help: 'fixtures from-recording: only the recorded workspace',
    commands: ['fixtures'],
  },
  {
    flag: 'config',
    value: 'path',
    placeholder: '<file>',
    env: 'LOCALPLANE_CONFIG',
    default: './localplane.config.json if there is one',
    help: 'JSON file of settings, keys as the flags in camelCase',
    global: true,
  },
  { flag: 'version', value: 'switch', help: 'print the version', global: true },
  { flag: 'help', value: 'switch', short: 'h', help: 'print this help', global: true },
] as const satisfies readonly OptionSpec[];

type CamelCase<Name extends string> = Name extends `${infer Head}-${infer Tail}`
  ? `${Head}${Capitalize<CamelCase<Tail>>}`
  : Name;
type ValueOf<Option extends OptionSpec> = Option extends { choices: readonly (infer Choice)[] }
  ? Choice
  : Option['value'] extends 'port' | 'count'
    ? number
    : Option['value'] extends 'switch'
      ? boolean
      : string;
type StartOption = Exclude<(typeof OPTIONS)[number], { global: true } | { commands: readonly OwnOptionsCommand[] }>;
/** The `start` settings after flags, environment and config file are merged; a missing one takes start()'s default. */
type Settings = { [Option in StartOption as CamelCase<Option['flag']>]?: ValueOf<Option> };

const CONFIG_FILE = 'localplane.config.json';

const camelCase = (flag: string) => flag.replace(/-(\w)/g, (_, letter: string) => letter.toUpperCase());
const startOptions: readonly OptionSpec[] = OPTIONS.filter((option: OptionSpec) => !option.global && !option.commands);

/** Bad flags, values or config, or a start they make fail: one line on stderr and exit code 2. */
class UsageError extends Error {
  constructor(
    message: string,
    /** Whether the help could tell what is wrong (not for a port in use). */
    readonly pointsToHelp = true,
  ) {
    super(message);
  }
}

/** Where a value came from, in the words of an error about it. */
type Source = { kind: 'flag' | 'env'; name: string } | { kind: 'config'; file: string; key: string };
const describe = (source: Source) => (source.kind === 'config' ? `${source.file}: "${source.key}"` : source.name);

function wholeNumber(text: string, max: number | undefined, source: Source): number {
  const value = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!(value <= (max ?? Number.MAX_SAFE_INTEGER))) {
    throw new UsageError(
      `${describe(source)} must be a whole number${max === undefined ? '' : ` from 0 to ${max}`}, got "${text}"`,
    );
  }
  return value;
}

function yesOrNo(text: string, source: Source): boolean {
  if (/^(1|true|yes|on)$/i.test(text)) return true;
  if (/^(0|false|no|off)$/i.test(text)) return false;
  throw new UsageError(`${describe(source)} must be 1, true, yes, on, 0, false, no or off, got "${text}"`);
}

function existingDirectory(path: string, source: Source): string {
  if (!existsSync(path) || !statSync(path).isDirectory())
    throw new UsageError(`${describe(source)}: directory ${path} does not exist`);
  return path;
}

/** Reads a value given as text (a flag, an environment variable). */
function fromText(option: OptionSpec, text: string, source: Source): string | number | boolean {
  switch (option.value) {
    case 'port':
      return wholeNumber(text, 65535, source);
    case 'count':
      return wholeNumber(text, undefined, source);
    case 'switch':
      return yesOrNo(text, source);
    case 'directory':
      return existingDirectory(text, source);
    case 'url':
      if (!/^https?:\/\/[^/\s]+/.test(text))
        throw new UsageError(`${describe(source)} must be an http:// or https:// URL, got "${text}"`);
      return text;
    case 'uuid':
      if (!UUID_PATTERN.test(text))
        throw new UsageError(`${describe(source)} must be an export id (a UUID), got "${text}"`);
      return text;
    case 'text':
    case 'path':
      if (text === '') throw new UsageError(`${describe(source)} must not be empty`);
      return text;
    case 'token':
      return validToken(text, describe(source));
    case 'token-file':
      if (text === '') throw new UsageError(`${describe(source)} must not be empty`);
      return tokenFromFile(text, source);
    case 'choice': {
      const choices = option.choices!;
      if (!choices.includes(text))
        throw new UsageError(
          `${describe(source)} must be ${choices.slice(0, -1).join(', ')} or ${choices.at(-1)}, got "${text}"`,
        );
      return text;
    }
  }
}

/**
 * The check start() makes of an adminToken, in the words of where the token came from and without the token, a secret.
 */
function validToken(token: string, what: string): string {
  if (!ADMIN_TOKEN_SHAPE.test(token)) throw new UsageError(`${what} ${ADMIN_TOKEN_RULE}`);
  return token;
}

/**
 * The token a file holds, without one trailing newline. Only its user may read or write the file:
 * another user could read the token from it, or set one of theirs. (Files on Windows have no such mode.)
 */
function tokenFromFile(path: string, source: Source): string {
  let text: string;
  try {
    text = withFileOpen(path, (descriptor, stats) => {
      if (!stats.isFile()) throw new UsageError(`${describe(source)}: ${path} is not a regular file`);
      if (process.getuid !== undefined && (stats.mode & 0o077) !== 0) {
        const mode = (stats.mode & 0o777).toString(8);
        throw new UsageError(
          `${describe(source)}: ${path} is readable or writable by group or others (mode ${mode}); chmod 600 it`,
        );
      }
      return readFileSync(descriptor, 'utf8');
    });
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(
      `${describe(source)}: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
    );
  }
  return validToken(text.replace(/\r?\n$/, ''), `${describe(source)}: the token in ${path}`);
}

/**
 * The settings a config file may give only inside its own folder: a config file comes with a
 * project (a cloned repository's is loaded as soon as localplane starts there), and these write
 * the instance's state or read it from a file. A flag or environment variable may name any path.
 */
const CONFINED_TO_CONFIG_FOLDER: ReadonlySet<string> = new Set(['dataDir', 'import', 'snapshotsDir', 'exportOnExit']);

/** Reads a config-file value: JSON numbers, booleans and strings; paths relative to the file. */
function fromConfig(
  option: OptionSpec,
  value: unknown,
  source: Source & { kind: 'config' },
): string | number | boolean {
  const expected =
    option.value === 'port' || option.value === 'count' ? 'number' : option.value === 'switch' ? 'boolean' : 'string';
  if (typeof value !== expected)
    throw new UsageError(`${describe(source)} must be a ${expected}, got ${JSON.stringify(value)}`);
  const text = String(value);
  const relative = option.value === 'path' || option.value === 'directory';
  const read = fromText(option, relative && text !== '' ? resolve(dirname(source.file), text) : text, source);
  if (CONFINED_TO_CONFIG_FOLDER.has(source.key)) {
    const folder = realpathSync(dirname(resolve(source.file)));
    if (!isInside(folder, realLocation(read as string))) {
      throw new UsageError(
        `${describe(source)} must stay inside the config file's folder ${folder}, got ${JSON.stringify(text)}; ` +
          `give a path elsewhere with --${option.flag} or ${option.env}`,
      );
    }
  }
  return read;
}

/**
 * Where a path leads once every symbolic link on it is followed, for a path that may not exist
 * yet: its deepest existing folder's real path, then the rest. A link whose target does not exist
 * leads nowhere that can be told (null).
 */
function realLocation(path: string): string | null {
  const missing: string[] = [];
  for (let existing = path; ; existing = dirname(existing)) {
    try {
      return join(realpathSync(existing), ...missing.reverse());
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if ((code !== 'ENOENT' && code !== 'ENOTDIR') || isLink(existing) || dirname(existing) === existing) return null;
      missing.push(basename(existing));
    }
  }
}

function isLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

const isInside = (folder: string, path: string | null) =>
  path !== null && (path === folder || path.startsWith(`${folder}${sep}`));

function parse(argv: readonly string[]) {
  const parserOptions = Object.fromEntries(
    OPTIONS.map((option: OptionSpec) => [
      option.flag,
      { type: option.value === 'switch' ? 'boolean' : 'string', ...(option.short ? { short: option.short } : {}) },
    ]),
  ) as Record<string, { type: 'string' | 'boolean'; short?: string }>;
  try {
    return parseArgs({ args: joinNegativeValues(argv, parserOptions), allowPositionals: true, options: parserOptions });
  } catch (error) {
    // parseArgs' own words (unknown option, missing value), their first sentence.
    throw new UsageError(String((error as Error).message).split(/\.\s|\n/)[0]);
  }
}

/**
 * parseArgs reads `--port -1` as a flag without its value; a value that looks like a negative
 * number is joined to its flag, so it gets the same clear error as any other bad number.
 */
function joinNegativeValues(argv: readonly string[], parserOptions: Record<string, { type: string }>): string[] {
  const joined: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const takesValue = argv[i]!.startsWith('--') && parserOptions[argv[i]!.slice(2)]?.type === 'string';
    if (takesValue && /^-\d/.test(argv[i + 1] ?? '')) joined.push(`${argv[i]}=${argv[++i]}`);
    else joined.push(argv[i]!);
  }
  return joined;
}

/**
 * The config file named by --config or LOCALPLANE_CONFIG (which must exist), else ./localplane.config.json if present.
 */
function readConfigFile(
  flagValue: string | undefined,
  env: NodeJS.ProcessEnv,
): { file: string; values: Record<string, unknown> } | null {
  const named = flagValue ?? (env.LOCALPLANE_CONFIG || undefined);
  if (named === undefined && !existsSync(CONFIG_FILE)) return null;
  const file = named ?? CONFIG_FILE;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(
      `${file}: cannot read the config file (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
    );
  }
  let values: unknown;
  try {
    values = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${file}: not valid JSON (${(error as Error).message.split('\n')[0]})`);
  }
  if (typeof values !== 'object' || values === null || Array.isArray(values))
    throw new UsageError(`${file}: must hold a JSON object of settings`);
  return { file, values: values as Record<string, unknown> };
}

/**
 * Each setting (of those in `read`) from its flag, else its environment variable, else the config file; none means
 * start()'s default. The admin token comes from its flag, its file or its environment variable, one of them, else the
 * config file.
 */
function settingsFrom(
  values: Record<string, string | boolean | undefined>,
  env: NodeJS.ProcessEnv,
  read: readonly OptionSpec[] = startOptions,
): Settings {
  const config = readConfigFile(values.config as string | undefined, env);
  const byKey = new Map(startOptions.map((option) => [camelCase(option.flag), option]));
  if (config) checkConfigKeys(config, byKey);
  const givenTokens = [
    values['admin-token'] !== undefined && '--admin-token',
    values['admin-token-file'] !== undefined && '--admin-token-file',
    env.LOCALPLANE_ADMIN_TOKEN && 'LOCALPLANE_ADMIN_TOKEN',
  ].filter((source) => typeof source === 'string');
  if (givenTokens.length > 1)
    throw new UsageError(`${givenTokens.join(' and ')} each give the admin token: give it one way`);
  const settings: Record<string, string | number | boolean> = {};
  for (const [key, option] of byKey) {
    if (!read.includes(option)) continue;
    const flagValue = values[option.flag];
    const envValue = option.env === undefined ? undefined : env[option.env];
    if (flagValue !== undefined) {
      settings[key] =
        typeof flagValue === 'boolean'
          ? flagValue
          : fromText(option, flagValue, { kind: 'flag', name: `--${option.flag}` });
    } else if (envValue !== undefined && envValue !== '') {
      settings[key] = fromText(option, envValue, { kind: 'env', name: option.env! });
    } else if (config && config.values[key] !== undefined) {
      settings[key] = fromConfig(option, config.values[key], { kind: 'config', file: config.file, key });
    }
  }
  if (settings.adminTokenFile !== undefined) settings.adminToken = settings.adminTokenFile;
  delete settings.adminTokenFile;
  return settings as Settings;
}

/**
 * An address to bind that only this machine reaches: 127.0.0.0/8, ::1 or `localhost` itself. Not
 * the browser guard's wider `*.localhost` Host names: a name to bind is looked up, maybe in DNS.
 */
const isLoopbackAddress = (host: string) =>
  /^127(\.\d{1,3}){3}$/.test(host) || host === '::1' || host.toLowerCase() === 'localhost';

/**
 * Refuses a key that is no start setting, and a setting only a flag or the environment may give
 * (OptionSpec.fromConfig).
 */
function checkConfigKeys(
  config: { file: string; values: Record<string, unknown> },
  byKey: ReadonlyMap<string, OptionSpec>,
): void {
  const keys = [...byKey].filter(([, option]) => option.fromConfig !== false).map(([key]) => key);
  for (const [key, value] of Object.entries(config.values)) {
    const option = byKey.get(key);
    if (option === undefined)
      throw new UsageError(`${config.file}: unknown key "${key}" (known keys: ${keys.join(', ')})`);
    const source = describe({ kind: 'config', file: config.file, key });
    const from = `a flag${option.env ? ' or the environment' : ''}`;
    const instead = `use --${option.flag}${option.env ? ` or ${option.env}` : ''}`;
    if (option.fromConfig === false)
      throw new UsageError(`${source} may come only from ${from}, not a config file: ${instead}`);
    // A value of the wrong type is refused later, as any other config value is.
    if (option.fromConfig === 'loopback' && typeof value === 'string' && value !== '' && !isLoopbackAddress(value)) {
      throw new UsageError(
        `${source} ${JSON.stringify(value)} is not a loopback address, which only ${from} may give: ${instead}`,
      );
    }
  }
}

const commaSeparated = (text: string | undefined) =>
  text
    ?.split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');

function optionLines(options: readonly OptionSpec[]): string {
  const left = options.map((option) => {
    const short = option.short ? `-${option.short}, ` : '';
    return `${short}--${option.flag}${option.placeholder ? ` ${option.placeholder}` : ''}`;
  });
  const width = Math.max(...left.map((text) => text.length)) + 2;
  return options
    .map((option, index) => {
      const details = [option.env && `env ${option.env}`, option.default && `default ${option.default}`]
        .filter(Boolean)
        .join('; ');
      const lines = [`  ${left[index]!.padEnd(width)}${option.help}`];
      if (details) lines.push(`  ${' '.repeat(width)}(${details})`);
      return lines.join('\n');
    })
    .join('\n');
}

const CONFIG_HELP = `Precedence: flag, then environment variable, then config file, then default.
The config file holds the start options by their camelCase names, e.g.
  {"port": 0, "objstorePort": 0, "seed": 7, "freezeClock": true, "fixtures": "./fixtures"}
(paths in it are relative to the file). dataDir, import, snapshotsDir and exportOnExit in it
must stay inside its folder (symbolic links followed); their flags and variables take any path.
What opens the instance to other sites or machines comes only from a flag or the environment:
allowHosts, allowEndpoints and a host other than a loopback address are refused in it, as is
adminTokenFile.`;

const COMMANDS_HELP = {
  demo: `Usage: localplane demo [options]

The warehouse demo: starts localplane (or uses the one at --url), creates a destination,
exports a seeded project (v2_beta, snappy), then queries its Parquet files with DuckDB
over hive partitions and prints the tables, a BigQuery external table and a ClickHouse
s3() query for the same files. See docs/warehouse-demo.md.`,
  query: `Usage: localplane query "<SQL>" [options]

Runs the SQL with DuckDB over an export's Parquet files, with a ready-made view
  runs = read_parquet('<dir>/export_id=*/**/*.parquet', hive_partitioning = true)
and prints the result as a table. It reads the last demo's copy unless --dir or --url
say otherwise. See docs/warehouse-demo.md.`,
  fixtures: `Usage: localplane fixtures from-recording <recording> --out <dir> [--recorded-only]

Writes a fixtures directory (for localplane start --fixtures <dir>) holding the deployments,
revisions, OAuth providers, listeners, codehost repositories, destinations and exports that a
HAR recording's answers show, in one workspace with a new API key, and prints what it placed
and what it could not (also in <dir>/from-recording.txt). See docs/recording.md.`,
  record: `Usage: localplane record --upstream <url> --out <file> [options]

A recording proxy: give clients its URL as their base URL. Each request goes on to the
upstream unchanged and its answer comes back unchanged, streamed; each exchange is appended
to the HAR file as it ends, secrets masked. Prints one line once it listens:
  localplane record ready proxy=<url> upstream=<url> out=<file>
and stops on SIGINT or SIGTERM, the file whole. --host and --port are where it listens,
as start's API would. See docs/recording.md.`,
  verify: `Usage: localplane verify <recording> [options]

Replays a recording (HAR) in order against localplane (an instance of its own, its clock
frozen and moved by the recorded gaps, unless --url) and compares each answer: status,
content type, the body's shape, 422 error types. Prints the exchanges that differ and a
summary; exits 1 on drift. See docs/recording.md#verify.`,
} satisfies Record<OwnOptionsCommand, string>;

function help(command: 'localplane' | 'start' | OwnOptionsCommand): string {
  if (command === 'start') {
    return `Usage: localplane start [options]

Starts the API and the objstore and prints one line once both listen:
  localplane ready api=<url> objstore=<url>
The dashboard is at <api url>/ui (docs/dashboard.md).

Options:
${optionLines(OPTIONS.filter((option: OptionSpec) => option.flag !== 'version' && !option.commands))}

${CONFIG_HELP}
`;
  }
  if (command !== 'localplane') {
    const ofCommand = (option: OptionSpec) =>
      option.commands?.includes(command) || option.alsoOf?.includes(command) || option.flag === 'help';
    return `${COMMANDS_HELP[command]}

Options:
${optionLines(OPTIONS.filter(ofCommand))}
`;
  }
  return `Usage: localplane <command> [options]

Commands:
  start   start the emulator (localplane start --help for its options)
  demo    the warehouse demo: export a seeded project, query its Parquet with DuckDB
  query   localplane query "<SQL>": SQL over an export's Parquet files, with a runs view
  record  a recording proxy: localplane record --upstream <url> --out <file>
  fixtures  fixtures from-recording <recording> --out <dir>: a fixtures dir from a recording
  verify  localplane verify <recording>: replay a recording against localplane, report what differs

Options:
${optionLines(OPTIONS)}

${CONFIG_HELP}
`;
}

const COMMANDS = ['start', 'demo', 'query', 'record', 'verify', 'fixtures'] as const;
type Command = (typeof COMMANDS)[number];
const isCommand = (word: string | undefined): word is Command =>
  (COMMANDS as readonly (string | undefined)[]).includes(word);

/** Each option given must be one of the command's: start's settings for start, demo's and query's own for them. */
function checkOptionsOf(command: Command, values: Record<string, string | boolean | undefined>): void {
  for (const option of OPTIONS as readonly OptionSpec[]) {
    if (values[option.flag] === undefined || option.global) continue;
    const belongs = option.commands
      ? (option.commands as readonly string[]).includes(command)
      : command === 'start' || (option.alsoOf as readonly string[] | undefined)?.includes(command);
    if (!belongs) throw new UsageError(`--${option.flag} is not an option of localplane ${command}`);
  }
}

async function main(argv: readonly string[]) {
  const { values, positionals } = parse(argv);
  if (values.version) {
    process.stdout.write(`localplane ${PACKAGE_VERSION}\n`);
    return;
  }
  const command = positionals[0];
  if (values.help) {
    process.stdout.write(help(isCommand(command) ? command : 'localplane'));
    return;
  }
  if (
    !isCommand(command) ||
    positionals.length > (command === 'query' || command === 'verify' ? 2 : command === 'fixtures' ? 3 : 1)
  ) {
    throw new UsageError(
      positionals.length === 0
        ? 'a command is required: localplane start, demo, query, record, verify or fixtures'
        : `unknown command "${positionals.join(' ')}"`,
    );
  }
  checkOptionsOf(command, values);
  if (command === 'record') return recordCommand(values);
  if (command === 'verify') return verify(positionals[1], values);
  if (command === 'fixtures') return fixturesFromRecording(positionals.slice(1), values);
  if (command !== 'start') return warehouse(command, positionals[1], values);
  const settings = settingsFrom(values, process.env);
  if (values['admin-token'] !== undefined) {
    const warning =
      '--admin-token shows the token to every user of this machine (ps); give it with --admin-token-file or ' +
      'LOCALPLANE_ADMIN_TOKEN';
    process.stderr.write(`localplane: ${warning}\n`);
  }
  // Loaded only to start: help, version and bad flags answer without loading the emulator.
  // The instance alone, not the package's other exports (the recording commands' modules).
  const [{ start }, { SnapshotFileError }] = await Promise.all([
    import('./localplane.ts'),
    import('./snapshots/format.ts'),
  ]);
  const progress = process.stderr.isTTY ? new ProgressLine(process.stderr) : null;
  const starting = start({
    host: settings.host,
    allowedHosts: commaSeparated(settings.allowHosts),
    allowedEndpoints: commaSeparated(settings.allowEndpoints),
    adminToken: settings.adminToken,
    port: settings.port,
    objstorePort: settings.objstorePort,
    dataDir: settings.dataDir,
    objstoreStorage: settings.objstoreStorage,
    fixturesDir: settings.fixtures,
    seed: settings.seed,
    freezeClock: settings.freezeClock,
    importFrom: settings.import,
    snapshotsDir: settings.snapshotsDir,
    requestLog: settings.quiet ? false : process.stderr.isTTY && !process.env.NO_COLOR ? 'colour' : true,
    ...(progress ? { progress: progress.show, log: progress.log } : {}),
  });
  // Installed before anything is printed, so a signal right after the ready line still cleans up.
  let stopping: Promise<void> | null = null;
  const shutdown = () => {
    stopping ??= starting
      .then(async (instance: Localplane) => {
        // A snapshot that cannot be written is reported, and the instance still cleans up.
        const exported =
          settings.exportOnExit === undefined
            ? null
            : instance.snapshot(settings.exportOnExit).then(
                () => null,
                (error: unknown) => error,
              );
        const failure = await exported;
        await instance.stop();
        if (failure) throw failure;
      })
      .then(
        () => process.exit(0),
        (error: unknown) => fail(error, 1),
      );
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(signal, shutdown);
  watchLaunchers(launcherChain(), () => {
    process.stderr.write('localplane: the process that launched it has exited; stopping\n');
    shutdown();
  });
  const instance = await starting.catch((error: unknown) => {
    progress?.clear();
    throw error instanceof SnapshotFileError ? new UsageError(error.message, false) : couldNotStart(error);
  });
  process.stdout.write(`localplane ready api=${instance.apiUrl} objstore=${instance.objstoreUrl}\n`);
  if (!settings.quiet) process.stderr.write(`localplane: dashboard at ${instance.apiUrl}/ui\n`);
}

/**
 * A command's own flag (no environment variable, no config-file key), read as its kind says; undefined when not given.
 */
function ownFlag(values: Record<string, string | boolean | undefined>, flag: string) {
  const text = values[flag];
  return typeof text === 'string'
    ? fromText(
        OPTIONS.find((spec) => spec.flag === flag)!,
        text,
        { kind: 'flag', name: `--${flag}` },
      )
    : undefined;
}

/**
 * `localplane demo` and `localplane query`: their failures on what they were given (bad SQL, no files, an instance that
 * refuses) are usage errors.
 */
async function warehouse(
  command: WarehouseCommand,
  sql: string | undefined,
  values: Record<string, string | boolean | undefined>,
) {
  const option = (flag: string) => ownFlag(values, flag) as string | undefined;
  const { runDemo, runQuery, formatTable, DEFAULT_DEMO_DIR, isWarehouseUsageError } = await import('./demo/index.ts');
  try {
    if (command === 'query') {
      if (sql === undefined || sql.trim() === '') throw new UsageError('query needs the SQL: localplane query "<SQL>"');
      process.stdout.write(
        formatTable(await runQuery({ sql, dir: option('dir'), url: option('url'), exportId: option('export-id') })),
      );
      return;
    }
    const progress = process.stderr.isTTY ? new ProgressLine(process.stderr) : null;
    const url = option('url');
    // Without --url the demo runs on an instance of its own: in process, on free ports, in its own temp dir.
    const instance =
      url === undefined
        ? { start: async () => (await import('./index.ts')).start({ port: 0, objstorePort: 0, log: () => {} }) }
        : { url };
    await runDemo({
      ...instance,
      dir: option('dir') ?? DEFAULT_DEMO_DIR,
      sql: option('sql'),
      print: (text) => process.stdout.write(text),
      // The status line while the export runs; its last state the demo prints itself, on stdout.
      ...(progress
        ? {
            progress: (event) =>
              event.kind === 'export' && ['Created', 'Running'].includes(event.status)
                ? progress.show(event)
                : progress.clear(),
          }
        : {}),
    });
  } catch (error) {
    throw isWarehouseUsageError(error) ? new UsageError((error as Error).message, false) : error;
  }
}

/**
 * `localplane fixtures from-recording <recording> --out <dir>`: a recording that is not one, or an --out in use, is a
 * usage error.
 */
async function fixturesFromRecording(
  [subcommand, recording]: string[],
  values: Record<string, string | boolean | undefined>,
) {
  const usage = 'localplane fixtures from-recording <recording> --out <dir>';
  if (subcommand !== 'from-recording')
    throw new UsageError(`unknown command "fixtures${subcommand ? ` ${subcommand}` : ''}": ${usage}`);
  if (recording === undefined || typeof values.out !== 'string')
    throw new UsageError(`the recording and --out are required: ${usage}`);
  const out = ownFlag(values, 'out') as string;
  const { fixturesFromRecording, formatFromRecordingReport, FromRecordingError } =
    await import('./recording/fixtures.ts');
  try {
    process.stdout.write(
      formatFromRecordingReport(
        fixturesFromRecording({ recording, out, recordedOnly: values['recorded-only'] === true }),
      ),
    );
  } catch (error) {
    throw error instanceof FromRecordingError ? new UsageError(error.message, false) : error;
  }
}

/**
 * `localplane record`: a recording proxy until SIGINT, SIGTERM or SIGHUP; an upstream or file it cannot use, or a port
 * in use, is a usage error.
 */
async function recordCommand(values: Record<string, string | boolean | undefined>) {
  const upstream = ownFlag(values, 'upstream') as string | undefined;
  const out = ownFlag(values, 'out') as string | undefined;
  if (upstream === undefined || out === undefined)
    throw new UsageError('record needs --upstream <url> and --out <file>');
  const { host, port } = settingsFrom(
    values,
    process.env,
    OPTIONS.filter((spec: OptionSpec) => spec.alsoOf?.includes('record')),
  );
  const { record, RecordOptionError } = await import('./recording/record.ts');
  const recorder = await record({
    upstream,
    out,
    host,
    port,
    upstreamTimeoutSeconds: ownFlag(values, 'upstream-timeout') as number | undefined,
  }).catch((error: unknown) => {
    throw error instanceof RecordOptionError ? new UsageError(error.message) : couldNotStart(error);
  });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const)
    process.once(
      signal,
      () =>
        void recorder.stop().then(
          () => process.exit(0),
          (error: unknown) => fail(error, 1),
        ),
    );
  process.stdout.write(`localplane record ready proxy=${recorder.url} upstream=${recorder.upstream} out=${out}\n`);
}

/**
 * `localplane verify <recording>`: exits 1 on drift; a recording it cannot read, or an instance or workspace it cannot
 * use, is a usage error.
 */
async function verify(recording: string | undefined, values: Record<string, string | boolean | undefined>) {
  if (recording === undefined) throw new UsageError('verify needs a recording: localplane verify <recording.har>');
  const { verifyRecording, formatVerifyReport, RecordingFileError, VerifyError } = await import('./index.ts');
  const report = await verifyRecording(recording, {
    url: ownFlag(values, 'url') as string | undefined,
    workspace: ownFlag(values, 'workspace') as string | undefined,
  }).catch((error: unknown) => {
    throw error instanceof RecordingFileError || error instanceof VerifyError
      ? new UsageError(error.message, false)
      : error;
  });
  process.stdout.write(values.json ? `${JSON.stringify(report, null, 2)}\n` : formatVerifyReport(report));
  if (report.drift > 0) process.exitCode = 1;
}

/**
 * A start that fails on what it was given (a port in use, an address not of this machine, a
 * fixtures file or data dir it cannot use: plain Errors and system errors) is a usage error;
 * anything else is a bug, reported with its stack.
 */
function couldNotStart(error: unknown): unknown {
  if (error instanceof Error && error.constructor === Error)
    return new UsageError(error.message.split('\n').filter(Boolean).join('; '), false);
  return error;
}

function fail(error: unknown, code: number): never {
  const message =
    error instanceof UsageError
      ? error.message
      : error instanceof Error
        ? (error.stack ?? error.message)
        : String(error);
  process.stderr.write(
    `localplane: ${message}${error instanceof UsageError && error.pointsToHelp ? ' (see localplane --help)' : ''}\n`,
  );
  process.exit(code);
}

main(process.argv.slice(2)).catch((error: unknown) => fail(error, error instanceof UsageError ? 2 : 1));
