import { parseArgs } from 'node:util';
import { start } from './localplane.ts';

const USAGE = `Usage: localplane start [options]

Options (environment variable in brackets):
  --host <host>            address to bind [LOCALPLANE_HOST] (default 127.0.0.1)
  --port <n>               API port, 0 = any free port [LOCALPLANE_PORT] (default 9400)
  --objstore-port <n>      objstore port, 0 = any free port [LOCALPLANE_OBJSTORE_PORT] (default 9401)
  --data-dir <dir>         keep SQLite and objstore data there [LOCALPLANE_DATA_DIR]
                           (default a fresh temp dir removed on exit)
  --fixtures <dir>         fixture directory [LOCALPLANE_FIXTURES] (default the shipped fixtures/)
  --seed <n>               seed for generated data and ids [LOCALPLANE_SEED] (default 1)
  --freeze-clock           start with the emulator clock frozen [LOCALPLANE_FREEZE_CLOCK=1]
`;

function integer(name: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text)) {
    process.stderr.write(`localplane: ${name} must be a whole number, got "${text}"\n${USAGE}`);
    process.exit(2);
  }
  return Number(text);
}

// The embedded objstore client's notice about future Node versions is not localplane's to print.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

async function main(argv: string[]) {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      host: { type: 'string' },
      port: { type: 'string' },
      'objstore-port': { type: 'string' },
      'data-dir': { type: 'string' },
      fixtures: { type: 'string' },
      seed: { type: 'string' },
      'freeze-clock': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help || positionals[0] !== 'start') {
    process.stdout.write(USAGE);
    process.exit(values.help ? 0 : 2);
  }
  const env = process.env;
  const starting = start({
    host: values.host ?? env.LOCALPLANE_HOST,
    port: integer('--port', values.port ?? env.LOCALPLANE_PORT),
    objstorePort: integer('--objstore-port', values['objstore-port'] ?? env.LOCALPLANE_OBJSTORE_PORT),
    dataDir: values['data-dir'] ?? env.LOCALPLANE_DATA_DIR,
    fixturesDir: values.fixtures ?? env.LOCALPLANE_FIXTURES,
    seed: integer('--seed', values.seed ?? env.LOCALPLANE_SEED),
    freezeClock: values['freeze-clock'] ?? env.LOCALPLANE_FREEZE_CLOCK === '1',
  });
  // Installed before anything is printed, so a signal right after the ready line still cleans up.
  const shutdown = () => {
    starting
      .then((instance) => instance.stop())
      .then(
        () => process.exit(0),
        (error) => {
          process.stderr.write(`localplane: stop failed: ${String(error)}\n`);
          process.exit(1);
        },
      );
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
  const instance = await starting;
  process.stdout.write(`localplane ready api=${instance.apiUrl} objstore=${instance.objstoreUrl}\n`);
}

main(process.argv.slice(2)).catch((error) => {
  process.stderr.write(`localplane: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
