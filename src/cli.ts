import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { launcherChain, watchLaunchers } from './launcher-watch.ts';
import { start, type Localplane } from './localplane.ts';

const USAGE = `Usage: localplane start [options]

Options (environment variable in brackets):
  --host <host>            address to bind [LOCALPLANE_HOST] (default 127.0.0.1)
  --port <n>               API port, 0 = any free port [LOCALPLANE_PORT] (default 9400)
  --objstore-port <n>      objstore port, 0 = any free port [LOCALPLANE_OBJSTORE_PORT] (default 9401)
  --data-dir <dir>         keep SQLite and objstore data there [LOCALPLANE_DATA_DIR]
                           (default a fresh temp dir removed on exit)
  --fixtures <dir>         fixture directory [LOCALPLANE_FIXTURES] (default the shipped fixtures/)
  --seed <n>               seed for generated data and ids [LOCALPLANE_SEED] (default 1)
  --freeze-clock           start with the emulator clock frozen [LOCALPLANE_FREEZE_CLOCK=1|true|yes]
  --version                print the version
  -h, --help               print this help
`;

/** Bad flags or values: one line on stderr and exit code 2. */
class UsageError extends Error {}

const OPTIONS = {
  host: { type: 'string' },
  port: { type: 'string' },
  'objstore-port': { type: 'string' },
  'data-dir': { type: 'string' },
  fixtures: { type: 'string' },
  seed: { type: 'string' },
  'freeze-clock': { type: 'boolean' },
  quiet: { type: 'boolean', short: 'q' },
  version: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

function wholeNumber(name: string, text: string | undefined, max?: number): number | undefined {
  if (text === undefined) return undefined;
  const value = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!(value <= (max ?? Number.MAX_SAFE_INTEGER))) {
    throw new UsageError(`${name} must be a whole number${max === undefined ? '' : ` from 0 to ${max}`}, got "${text}"`);
  }
  return value;
}

const port = (name: string, text: string | undefined) => wholeNumber(name, text, 65535);

function yesOrNo(name: string, text: string | undefined): boolean | undefined {
  if (text === undefined || text === '') return undefined;
  if (/^(1|true|yes|on)$/i.test(text)) return true;
  if (/^(0|false|no|off)$/i.test(text)) return false;
  throw new UsageError(`${name} must be 1, true, yes, 0, false or no, got "${text}"`);
}

/**
 * parseArgs reads `--port -1` as a flag without its value; a value that looks like a negative
 * number is joined to its flag, so it gets the same clear error as any other bad number.
 */
function joinNegativeValues(argv: readonly string[]): string[] {
  const joined: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const name = argv[i]!.replace(/^--/, '');
    const takesValue = argv[i]!.startsWith('--') && (OPTIONS as Record<string, { type: string }>)[name]?.type === 'string';
    if (takesValue && /^-\d/.test(argv[i + 1] ?? '')) joined.push(`${argv[i]}=${argv[++i]}`);
    else joined.push(argv[i]!);
  }
  return joined;
}

function parse(argv: readonly string[]) {
  try {
    return parseArgs({ args: joinNegativeValues(argv), allowPositionals: true, options: OPTIONS });
  } catch (error) {
    // parseArgs' own words (unknown option, missing value), their first sentence.
    throw new UsageError(String((error as Error).message).split(/\.\s|\n/)[0]);
  }
}

function version(): string {
  const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  return manifest.version;
}

async function main(argv: readonly string[]) {
  const { values, positionals } = parse(argv);
  if (values.version) {
    process.stdout.write(`localplane ${version()}\n`);
    return;
  }
  if (values.help) {
    process.stdout.write(USAGE);
    return;
  }
  if (positionals[0] !== 'start' || positionals.length > 1) {
    throw new UsageError(positionals.length === 0 ? 'a command is required: localplane start' : `unknown command "${positionals.join(' ')}"`);
  }
  const env = process.env;
  const options = {
    host: values.host ?? env.LOCALPLANE_HOST,
    port: port('--port', values.port ?? env.LOCALPLANE_PORT),
    objstorePort: port('--objstore-port', values['objstore-port'] ?? env.LOCALPLANE_OBJSTORE_PORT),
    dataDir: values['data-dir'] ?? env.LOCALPLANE_DATA_DIR,
    fixturesDir: values.fixtures ?? env.LOCALPLANE_FIXTURES,
    seed: wholeNumber('--seed', values.seed ?? env.LOCALPLANE_SEED),
    freezeClock: values['freeze-clock'] ?? yesOrNo('LOCALPLANE_FREEZE_CLOCK', env.LOCALPLANE_FREEZE_CLOCK),
    requestLog: !(values.quiet ?? yesOrNo('LOCALPLANE_QUIET', env.LOCALPLANE_QUIET) ?? false),
  };
  const starting = start(options);
  // Installed before anything is printed, so a signal right after the ready line still cleans up.
  let stopping: Promise<void> | null = null;
  const shutdown = () => {
    stopping ??= starting
      .then((instance: Localplane) => instance.stop())
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
  const instance = await starting;
  process.stdout.write(`localplane ready api=${instance.apiUrl} objstore=${instance.objstoreUrl}\n`);
}

function fail(error: unknown, code: number): never {
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`localplane: ${message}${error instanceof UsageError ? ' (see localplane --help)' : ''}\n`);
  process.exit(code);
}

main(process.argv.slice(2)).catch((error: unknown) => fail(error, error instanceof UsageError ? 2 : 1));
