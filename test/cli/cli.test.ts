import { spawn } from 'node:child_process';
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { prepareFixtures } from '../../src/localplane.ts';
import { defaultCacheDir } from '../../src/shared/user-cache.ts';
import { BIN, expectUsageError, launch, REPO_ROOT, runCli, startCli, type Launched } from '../support/cli.ts';
import { Api, credentialsOf, eventually, fullKey, workspaceByTier, type FixturesView } from '../support/instance.ts';

const scratch = mkdtempSync(join(tmpdir(), 'localplane-cli-test-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The environment of a user's terminal: none of the npm variables of the test run itself. */
const terminalEnv = () => Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('npm_')));

describe('localplane start', () => {
  it('prints one ready line, serves, and exits cleanly on SIGTERM', async () => {
    const cli = await startCli();
    expect(cli.stdout()).toMatch(
      /^localplane ready api=http:\/\/127\.0\.0\.1:\d+ objstore=http:\/\/127\.0\.0\.1:\d+\n$/,
    );
    expect((await fetch(`${cli.apiUrl}/_localplane/health`)).status).toBe(200);
    expect((await fetch(`${cli.apiUrl}/ui`)).status).toBe(200);
    expect(await cli.kill('SIGTERM')).toEqual({ code: 0, signal: null });
    expect(cli.stdout().trim().split('\n')).toHaveLength(1);
    expect(cli.stderr()).toContain(`localplane: dashboard at ${cli.apiUrl}/ui\n`);
  });

  it.each([
    ['npx', ['localplane', 'start']],
    ['npm', ['start', '--silent', '--']],
  ])('the documented command %s %j prints the ready line first, on a line of its own', async (command, args) => {
    const cli = await launch(command, [...args, '--port', '0', '--objstore-port', '0'], terminalEnv());
    try {
      expect(cli.stdout()).toMatch(/^localplane ready api=\S+ objstore=\S+\n$/);
    } finally {
      await cli.kill('SIGTERM');
    }
  });

  it(
    'keeps a code cache its user alone can write, written as a start that served exits (pruning those a week ' +
      'old); the next start runs from it, and a damaged one is written again',
    async () => {
      const cacheDir = mkdtempSync(join(scratch, 'cache-'));
      const template = prepareFixtures();
      copyFileSync(template, join(cacheDir, basename(template)));
      const env = { ...process.env, LOCALPLANE_CACHE_DIR: cacheDir };
      const codeCaches = () => readdirSync(cacheDir).filter((name) => name.endsWith('.v8cache'));
      // A destination check loads the AWS SDK on demand, from code the cache holds once a start has run.
      const createsADestination = async (cli: Launched) => {
        const api = new Api(cli.apiUrl);
        const fixtures = (await api.request<FixturesView>('GET', '/_localplane/fixtures')).body;
        const created = await api.as(workspaceByTier(fixtures, 'plus')).post('/api/v1/bulk-exports/destinations', {
          display_name: 'checked',
          config: { bucket_name: fixtures.objstore.buckets[0], prefix: 'checked' },
          credentials: credentialsOf(fullKey(fixtures)),
        });
        expect(created.status, created.text).toBe(200);
        expect(await cli.kill('SIGTERM')).toEqual({ code: 0, signal: null });
      };

      const weekOld = new Date(Date.now() - 8 * 24 * 3600 * 1000);
      for (const name of ['cli-of-another-node.v8cache', 'cli-a-start-died-writing.v8cache.123.writing']) {
        writeFileSync(join(cacheDir, name), 'stale');
        utimesSync(join(cacheDir, name), weekOld, weekOld);
      }
      writeFileSync(join(cacheDir, 'cli-of-another-bundle-in-use.v8cache'), 'recent');
      const planted = codeCaches();
      // Neither writes one: it would hold little of what a start compiles.
      expect((await runCli(['start', '--help'], env)).code).toBe(0);
      expect(
        (await runCli(['start', '--port', '0', '--objstore-port', '0', '--fixtures', join(cacheDir, 'nowhere')], env))
          .code,
      ).toBe(2);
      expect(codeCaches()).toEqual(planted);

      await createsADestination(await startCli([], env));
      const [cacheName, ...others] = codeCaches().filter((name) => name !== 'cli-of-another-bundle-in-use.v8cache');
      expect(others, 'the week-old ones are pruned').toEqual([]);
      expect(readdirSync(cacheDir).filter((name) => name.endsWith('.writing'))).toEqual([]);
      const cache = join(cacheDir, cacheName!);
      expect(statSync(cache).mode & 0o777).toBe(0o600);
      const written = statSync(cache).mtimeMs;

      await createsADestination(await startCli([], env));
      expect(statSync(cache).mtimeMs, 'used, not written again').toBe(written);

      writeFileSync(cache, 'not a code cache');
      await createsADestination(await startCli([], env));
      expect(statSync(cache).size).toBeGreaterThan(100_000);
    },
  );

  it('keeps a code cache per checkout: two checkouts of one build each write and run their own, their stack traces naming their own bundle', async () => {
    const cacheDir = mkdtempSync(join(scratch, 'cache-'));
    const template = prepareFixtures();
    copyFileSync(template, join(cacheDir, basename(template)));
    const codeCaches = () => readdirSync(cacheDir).filter((name) => name.endsWith('.v8cache'));
    const checkouts = ['first', 'second'].map((name) => checkoutOfThisBuild(join(scratch, `checkout-${name}`)));
    // --trace-exit: the process.exit(0) of a stop prints its stack, the bundle's functions in it.
    const env = {
      ...process.env,
      LOCALPLANE_CACHE_DIR: cacheDir,
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --trace-exit`,
    };
    /** Starts and stops the checkout's executable: the bundles its stop's stack trace names. */
    const bundlesNamed = async (checkout: string) => {
      const cli = await launch(
        process.execPath,
        [join(checkout, 'bin', 'localplane.js'), 'start', '--port', '0', '--objstore-port', '0'],
        env,
        checkout,
      );
      expect(await cli.kill('SIGTERM')).toEqual({ code: 0, signal: null });
      expect(cli.stderr()).toContain('Exited the environment with code 0');
      return [...new Set(cli.stderr().match(/[^\s()]*cli\.bundle\.cjs(?=:\d)/g))];
    };
    const bundleOf = (checkout: string) => join(realpathSync(checkout), 'dist', 'cli.bundle.cjs');

    for (const checkout of checkouts) expect(await bundlesNamed(checkout)).toEqual([bundleOf(checkout)]);
    const written = codeCaches();
    expect(written, 'one cache each').toHaveLength(2);
    const writtenAt = written.map((name) => statSync(join(cacheDir, name)).mtimeMs);
    for (const checkout of [...checkouts].reverse()) expect(await bundlesNamed(checkout)).toEqual([bundleOf(checkout)]);
    expect(codeCaches(), 'each used, none written again').toEqual(written);
    expect(written.map((name) => statSync(join(cacheDir, name)).mtimeMs)).toEqual(writtenAt);
  });

  it.each(['true', 'yes', '1'])('starts with the clock frozen for LOCALPLANE_FREEZE_CLOCK=%s', async (value) => {
    const cli = await startCli([], { ...process.env, LOCALPLANE_FREEZE_CLOCK: value });
    try {
      expect((await new Api(`${cli.apiUrl}/_localplane`).request('GET', '/clock')).body.frozen).toBe(true);
    } finally {
      await cli.kill('SIGTERM');
    }
  });
});

describe('bad flags and failed starts', () => {
  it.each([
    [['start', '--port', '70000'], /^localplane: --port must be a whole number from 0 to 65535, got "70000"/],
    [['start', '--port', '-1'], /^localplane: --port must be a whole number from 0 to 65535, got "-1"/],
    [['start', '--objstore-port', '65536'], /^localplane: --objstore-port must be a whole number from 0 to 65535/],
    [['start', '--seed', 'one'], /^localplane: --seed must be a whole number, got "one"/],
    [['start', '--port', 'abc'], /^localplane: --port must be a whole number from 0 to 65535, got "abc"/],
    [['start', '--port'], /^localplane: Option '--port <value>' argument missing/],
    [['start', '--host', ''], /^localplane: --host must not be empty/],
    [['start', '--objstore-storage', 'disk'], /^localplane: --objstore-storage must be files or memory, got "disk"/],
    [['start', '--objstore-storage'], /^localplane: Option '--objstore-storage <value>' argument missing/],
    [['start', '--verbose'], /^localplane: Unknown option '--verbose'/],
    [['stop'], /^localplane: unknown command "stop"/],
    [[], /^localplane: a command is required/],
  ])('%j: one line on stderr, exit code 2', async (args, words) => {
    await expectUsageError(args, words);
  });

  it.each([
    ['LOCALPLANE_PORT', 'abc', /^localplane: LOCALPLANE_PORT must be a whole number from 0 to 65535, got "abc"/],
    ['LOCALPLANE_SEED', '-3', /^localplane: LOCALPLANE_SEED must be a whole number, got "-3"/],
    [
      'LOCALPLANE_FIXTURES',
      '/no/such/fixtures',
      /^localplane: LOCALPLANE_FIXTURES: directory \/no\/such\/fixtures does not exist/,
    ],
    [
      'LOCALPLANE_OBJSTORE_STORAGE',
      'Memory',
      /^localplane: LOCALPLANE_OBJSTORE_STORAGE must be files or memory, got "Memory"/,
    ],
  ])('rejects %s=%s with one line naming the variable, exit code 2', async (name, value, words) => {
    const result = await runCli(['start'], { ...process.env, [name]: value });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(words);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('rejects a LOCALPLANE_FREEZE_CLOCK it cannot read', async () => {
    const result = await runCli(['start'], { ...process.env, LOCALPLANE_FREEZE_CLOCK: 'maybe' });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /^localplane: LOCALPLANE_FREEZE_CLOCK must be 1, true, yes, on, 0, false, no or off, got "maybe"/,
    );
  });

  it('prints its version', async () => {
    const { version } = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
    const result = await runCli(['--version']);
    expect(result).toMatchObject({ code: 0, stdout: `localplane ${version}\n`, stderr: '' });
  });

  describe('a start that fails leaves no temp dir behind', () => {
    let busy: Server;
    let busyPort: number;
    afterAll(() => busy?.close());

    /**
     * Runs the CLI with its own tmp dir (the shared template cache stays where it is). The
     * template copies kept there for a cache on another filesystem are a cache, not a leftover.
     */
    async function failedStart(flags: string[]) {
      const tmp = mkdtempSync(join(scratch, 'tmp-'));
      const result = await runCli(['start', ...flags], {
        ...process.env,
        TMPDIR: tmp,
        LOCALPLANE_CACHE_DIR: defaultCacheDir(),
      });
      return { ...result, leftovers: readdirSync(tmp).filter((name) => !name.startsWith('localplane-templates-')) };
    }

    it.each([
      [
        'the API port is in use',
        () => ['--port', String(busyPort), '--objstore-port', '0'],
        /^localplane: the API port \d+ on 127\.0\.0\.1 is already in use$/,
      ],
      [
        'the objstore port is in use',
        () => ['--port', '0', '--objstore-port', String(busyPort)],
        /^localplane: the objstore port \d+ on 127\.0\.0\.1 is already in use$/,
      ],
      [
        'the fixtures dir is missing',
        () => ['--port', '0', '--objstore-port', '0', '--fixtures', join(scratch, 'none')],
        /^localplane: --fixtures: directory .* does not exist \(see localplane --help\)$/,
      ],
      [
        'a fixture file is invalid',
        () => {
          const dir = smallFixtures(join(scratch, 'invalid-fixtures'), 1);
          writeFileSync(join(dir, 'workspaces.json'), JSON.stringify({ workspaces: [], unknown_api_key: '' }));
          return ['--port', '0', '--objstore-port', '0', '--fixtures', dir];
        },
        /^localplane: invalid fixture file .*workspaces\.json: .*at workspaces; .*at unknown_api_key$/,
      ],
      [
        'the host is not an address of this machine',
        () => ['--host', '192.0.2.1', '--port', '0', '--objstore-port', '0'],
        /^localplane: cannot listen on 192\.0\.2\.1: it is not an address of this machine$/,
      ],
      [
        'the data dir cannot be made',
        () => ['--port', '0', '--objstore-port', '0', '--data-dir', join(BIN, 'data')],
        /^localplane: ENOTDIR: not a directory, mkdir '.*'$/,
      ],
    ])('when %s: one line, exit code 2', async (_, flags, words) => {
      busy ??= await new Promise<Server>((resolve) => {
        const server = createServer().listen(0, '127.0.0.1', () => resolve(server));
      });
      busyPort = (busy.address() as { port: number }).port;
      const result = await failedStart(flags());
      expect(result.code).toBe(2);
      expect(result.stderr.trim()).toMatch(words);
      expect(result.leftovers).toEqual([]);
    });
  });
});

/** Every process below `pid`, from /proc. */
function descendantsOf(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
    } catch {
      // exited meanwhile
    }
  }
  const found: number[] = [];
  for (let queue = [pid]; queue.length > 0;) {
    const next = children.get(queue.shift()!) ?? [];
    found.push(...next);
    queue.push(...next);
  }
  return found;
}

/** Running, and not a zombie waiting for its parent to reap it. */
function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** Signals the launcher and expects the server, and every process it started, to be gone. */
async function expectAllGoneAfter(launched: Launched, signal: NodeJS.Signals) {
  const below = descendantsOf(launched.child.pid!);
  expect(below.length).toBeGreaterThan(0);
  launched.child.kill(signal);
  await eventually(async () => below.every((pid) => !alive(pid)), `the processes ${below.join(', ')} to exit`, 15_000);
  await expect(fetch(`${launched.apiUrl}/_localplane/health`)).rejects.toThrow();
}

describe('the server ends with its launcher', () => {
  const POLL_MS = 10;
  /** A user's terminal, with the launcher watch looking every POLL_MS. */
  const watchedEnv = () => ({ ...terminalEnv(), LOCALPLANE_LAUNCHER_POLL_MS: String(POLL_MS) });
  const npmStart = () =>
    launch('npm', ['start', '--silent', '--', '--port', '0', '--objstore-port', '0'], watchedEnv());

  it('npm start, when npm gets SIGTERM', async () => {
    await expectAllGoneAfter(await npmStart(), 'SIGTERM');
  });

  it('npm start, when npm is killed', async () => {
    await expectAllGoneAfter(await npmStart(), 'SIGKILL');
  });

  it('npx localplane start (the compiled executable), when npm is killed', async () => {
    await expectAllGoneAfter(
      await launch(
        'npm',
        ['exec', '--offline', '--', 'localplane', 'start', '--port', '0', '--objstore-port', '0'],
        watchedEnv(),
      ),
      'SIGKILL',
    );
  });

  it('tsx src/cli.ts start, when tsx is killed', async () => {
    const tsx = join(REPO_ROOT, 'node_modules', '.bin', 'tsx');
    await expectAllGoneAfter(
      await launch(tsx, ['src/cli.ts', 'start', '--port', '0', '--objstore-port', '0'], watchedEnv()),
      'SIGKILL',
    );
  });

  it('but outlives a plain parent, such as a shell that started it in the background', async () => {
    const out = join(scratch, 'background.out');
    // The shell waits for its input to end, so that it exits after the server is up.
    const shell = spawn(
      'sh',
      ['-c', `"${process.execPath}" "${BIN}" start --port 0 --objstore-port 0 > "${out}" 2>&1 & echo $!; read _`],
      { env: watchedEnv() },
    );
    const shellGone = new Promise((resolve) => shell.once('exit', resolve));
    const pid = Number(
      await new Promise<string>((resolve) => shell.stdout.on('data', (chunk) => resolve(String(chunk)))),
    );
    try {
      const apiUrl = await eventually(
        async () => /api=(\S+)/.exec(existsSync(out) ? readFileSync(out, 'utf8') : '')?.[1],
        'the ready line',
      );
      shell.stdin.end();
      await shellGone;
      // Its shell is gone; ten of the launcher watch's polls later, it still serves.
      await new Promise((resolve) => setTimeout(resolve, 10 * POLL_MS));
      expect((await fetch(`${apiUrl}/_localplane/health`)).status).toBe(200);
    } finally {
      process.kill(pid, 'SIGTERM');
      await eventually(async () => !alive(pid), 'the server to stop');
    }
  });
});

describe('used as a package', () => {
  /** A consumer's script: start(), a destination (the first S3 client), stop(). */
  const consumer = `
    import { start } from ${JSON.stringify(join(REPO_ROOT, 'dist', 'index.js'))};
    const lp = await start({ port: 0, objstorePort: 0, log: () => {} });
    const fixtures = await (await fetch(lp.apiUrl + '/_localplane/fixtures')).json();
    const workspace = fixtures.workspaces.find((w) => w.tier === 'enterprise');
    const key = fixtures.objstore.keys.find((k) => k.permissions.includes('buckets'));
    const response = await fetch(lp.apiUrl + '/api/v1/bulk-exports/destinations', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': workspace.api_key, 'x-tenant-id': workspace.id },
      body: JSON.stringify({
        display_name: 'warn',
        config: { bucket_name: fixtures.objstore.buckets[0], prefix: 'warn' },
        credentials: { access_key_id: key.access_key_id, secret_access_key: key.secret_access_key },
      }),
    });
    console.log(response.status);
    console.log(process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ?? 'unset');
    await lp.stop();
  `;
  const sdkAlone =
    `import { S3Client } from '@aws-sdk/client-s3'; new S3Client({ region: 'us-east-1' }); ` +
    `console.log('created');`;

  function runModule(source: string) {
    const env = { ...process.env };
    delete env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED;
    const child = spawn(process.execPath, ['--input-type=module', '-e', source], {
      cwd: REPO_ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    return new Promise<{ stdout: string; stderr: string }>((resolve) =>
      child.once('close', () => resolve({ stdout, stderr })),
    );
  }

  it("start() keeps the AWS SDK's Node version notice out of the consumer's output, and its environment as it was", async () => {
    const [mine, control] = await Promise.all([runModule(consumer), runModule(sdkAlone)]);
    expect(mine.stdout.trim().split('\n')).toEqual(['200', 'unset']);
    expect(mine.stderr).not.toContain('NodeVersionSupportWarning');
    // The same environment without localplane: the SDK does print it on the Node versions it warns about.
    expect(control.stdout.trim()).toBe('created');
    expect(control.stderr.includes('NodeVersionSupportWarning')).toBe(Number(process.versions.node.split('.')[0]) < 22);
  });
});

describe('help', () => {
  /** Every flag of `start`, with its environment variable and default as the help shows them. */
  const START_FLAGS: [flag: string, env: string, defaultValue: string][] = [
    ['--host <host>', 'LOCALPLANE_HOST', '127.0.0.1'],
    ['--port <n>', 'LOCALPLANE_PORT', '9400'],
    ['--objstore-port <n>', 'LOCALPLANE_OBJSTORE_PORT', '9401'],
    ['--data-dir <dir>', 'LOCALPLANE_DATA_DIR', 'a fresh temp dir, removed on exit'],
    ['--objstore-storage <kind>', 'LOCALPLANE_OBJSTORE_STORAGE', 'files'],
    ['--fixtures <dir>', 'LOCALPLANE_FIXTURES', 'the shipped fixtures/'],
    ['--seed <n>', 'LOCALPLANE_SEED', '1'],
    ['--freeze-clock', 'LOCALPLANE_FREEZE_CLOCK', 'a running clock'],
    ['--quiet', 'LOCALPLANE_QUIET', 'a line per request on stderr'],
    ['--import <file>', 'LOCALPLANE_IMPORT', 'the seeded fixtures'],
    ['--snapshots-dir <dir>', 'LOCALPLANE_SNAPSHOTS_DIR', '<data dir>/snapshots'],
    ['--export-on-exit <file>', 'LOCALPLANE_EXPORT_ON_EXIT', 'none'],
    ['--config <file>', 'LOCALPLANE_CONFIG', './localplane.config.json if there is one'],
  ];

  it.each([[['--help']], [['-h']], [['start', '--help']]])(
    '%j lists every flag with its env var and default',
    async (args) => {
      const result = await runCli(args);
      expect(result).toMatchObject({ code: 0, stderr: '' });
      for (const [flag, env, defaultValue] of START_FLAGS) {
        expect(result.stdout).toMatch(
          new RegExp(
            `^  (?:-\\w, )?${escape(flag)} +\\S.*\\n +\\(env ${env}; default ${escape(defaultValue)}\\)$`,
            'm',
          ),
        );
      }
      expect(result.stdout).toContain('-h, --help');
      expect(result.stdout).toContain('Precedence: flag, then environment variable, then config file, then default.');
    },
  );

  it('docs/cli.md has a row for every flag of the help, with its env var', async () => {
    const helpText = (await runCli(['--help'])).stdout;
    const doc = readFileSync(join(REPO_ROOT, 'docs', 'cli.md'), 'utf8');
    const flags = [...helpText.matchAll(/^ {2}(?:-\w, )?(--[\w-]+)(?: <\w+>)? {2}.*(?:\n +\(env (\w+))?/gm)];
    expect(flags.length).toBeGreaterThanOrEqual(START_FLAGS.length);
    for (const [, flag, env] of flags) {
      expect(doc, flag).toMatch(
        new RegExp(`^\\| \`(-\\w\`, \`)?${flag}[ \`].*\\|${env ? ` \`${env}\`` : ' \\|'}`, 'm'),
      );
    }
  });

  it('localplane --help names the commands; start --help the ready line', async () => {
    expect((await runCli(['--help'])).stdout).toMatch(
      /^Usage: localplane <command> \[options\]\n\nCommands:\n {2}start .*\n {2}demo .*\n {2}query /,
    );
    const startHelp = (await runCli(['start', '--help'])).stdout;
    expect(startHelp).toMatch(/^Usage: localplane start \[options\]\n/);
    expect(startHelp).toContain('localplane ready api=<url> objstore=<url>\nThe dashboard is at <api url>/ui');
  });

  it.each([
    ['demo', ['--url <url>', '--dir <dir>', '--sql <sql>'], ['--export-id', '--port']],
    ['query', ['--url <url>', '--dir <dir>', '--export-id <id>'], ['--sql', '--port']],
  ])('%s --help lists its own flags with their defaults, and no start flag', async (command, flags, others) => {
    const result = await runCli([command, '--help']);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toMatch(new RegExp(`^Usage: localplane ${command} `));
    for (const flag of flags)
      expect(result.stdout).toMatch(new RegExp(`^  ${escape(flag)} +\\S.*\\n +\\(default .+\\)$`, 'm'));
    for (const flag of others) expect(result.stdout).not.toContain(`${flag} `);
  });

  it.each([
    [
      ['query', 'select 1', '--url', 'localhost:9400'],
      /^localplane: --url must be an http:\/\/ or https:\/\/ URL, got "localhost:9400"/,
    ],
    [['query', 'select 1', '--sql', 'select 2'], /^localplane: --sql is not an option of localplane query/],
    [['demo', 'extra'], /^localplane: unknown command "demo extra"/],
    [['start', '--dir', '/tmp'], /^localplane: --dir is not an option of localplane start/],
  ])('%j: the demo and query flags are theirs alone, checked like the others (exit code 2)', async (args, words) => {
    const result = await runCli(args);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(words);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
  });
});

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\/<>]/g, '\\$&');

/** A port nothing listens on right now. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * Another checkout of this build, in `dir`: a bin/ and dist/ of its own (a copy), the rest it reads
 * (package.json, fixtures/, src/ui/assets/, node_modules/) linked to this one's.
 */
function checkoutOfThisBuild(dir: string): string {
  mkdirSync(dir);
  for (const name of ['bin', 'dist']) cpSync(join(REPO_ROOT, name), join(dir, name), { recursive: true });
  for (const name of ['package.json', 'fixtures', 'src', 'node_modules'])
    symlinkSync(join(REPO_ROOT, name), join(dir, name));
  return dir;
}

/** A copy of the shipped fixtures with few runs: its template builds in a moment, in its own cache. */
function smallFixtures(dir: string, runsPerSession: number): string {
  mkdirSync(dir, { recursive: true });
  for (const name of readdirSync(join(REPO_ROOT, 'fixtures')))
    copyFileSync(join(REPO_ROOT, 'fixtures', name), join(dir, name));
  const file = join(dir, 'workspaces.json');
  const workspaces = JSON.parse(readFileSync(file, 'utf8')) as {
    workspaces: { sessions: { runs: { count: number } }[] }[];
  };
  for (const session of workspaces.workspaces.flatMap((workspace) => workspace.sessions))
    session.runs.count = runsPerSession;
  writeFileSync(file, JSON.stringify(workspaces));
  return dir;
}

const portOf = (url: string) => Number(new URL(url).port);

describe('config file', () => {
  const folder = (name: string, config?: unknown) => {
    const dir = join(scratch, name);
    mkdirSync(dir, { recursive: true });
    if (config !== undefined)
      writeFileSync(join(dir, 'localplane.config.json'), typeof config === 'string' ? config : JSON.stringify(config));
    return dir;
  };
  const frozen = async (cli: Launched) =>
    (await new Api(`${cli.apiUrl}/_localplane`).request('GET', '/clock')).body.frozen as boolean;
  /** The environment without any LOCALPLANE_ setting of the test run. */
  const cleanEnv = (extra: Record<string, string> = {}) => ({
    ...Object.fromEntries(
      Object.entries(process.env).filter(
        ([name]) => !name.startsWith('LOCALPLANE_') || name === 'LOCALPLANE_CACHE_DIR',
      ),
    ),
    ...extra,
  });

  it('localplane.config.json in the working directory is read; flag beats env beats file', async () => {
    const [filePort, envPort, flagPort] = [await freePort(), await freePort(), await freePort()];
    const cwd = folder('precedence', { port: filePort, objstorePort: 0, freezeClock: true });
    const run = (flags: string[], env: Record<string, string>) =>
      launch(process.execPath, [BIN, 'start', ...flags], cleanEnv(env), cwd);

    const fromFile = await run([], {});
    expect(portOf(fromFile.apiUrl)).toBe(filePort);
    expect(await frozen(fromFile)).toBe(true);
    await fromFile.kill('SIGTERM');

    const fromEnv = await run([], { LOCALPLANE_PORT: String(envPort), LOCALPLANE_FREEZE_CLOCK: 'no' });
    expect(portOf(fromEnv.apiUrl)).toBe(envPort);
    expect(await frozen(fromEnv)).toBe(false);
    await fromEnv.kill('SIGTERM');

    const fromFlag = await run(['--port', String(flagPort), '--freeze-clock'], {
      LOCALPLANE_PORT: String(envPort),
      LOCALPLANE_FREEZE_CLOCK: 'no',
    });
    expect(portOf(fromFlag.apiUrl)).toBe(flagPort);
    expect(await frozen(fromFlag)).toBe(true);
    await fromFlag.kill('SIGTERM');
  });

  it(
    'objstoreStorage in the config file, LOCALPLANE_OBJSTORE_STORAGE and --objstore-storage choose the storage ' +
      '(flag beats env beats file); files without any',
    async () => {
      const cwd = folder('storage', { port: 0, objstorePort: 0, objstoreStorage: 'memory' });
      const filesDirOf = async (flags: string[], env: Record<string, string>, where = cwd) => {
        const cli = await launch(
          process.execPath,
          [BIN, 'start', '--port', '0', '--objstore-port', '0', ...flags],
          cleanEnv(env),
          where,
        );
        try {
          return (await new Api(`${cli.apiUrl}/_localplane`).request<FixturesView>('GET', '/fixtures')).body.objstore
            .files_dir;
        } finally {
          await cli.kill('SIGTERM');
        }
      };
      const aFolder = expect.stringMatching(/[/\\]files$/);
      expect(await filesDirOf([], {}), 'from the file').toBeNull();
      expect(await filesDirOf([], { LOCALPLANE_OBJSTORE_STORAGE: 'files' }), 'env beats file').toEqual(aFolder);
      expect(
        await filesDirOf(['--objstore-storage', 'memory'], { LOCALPLANE_OBJSTORE_STORAGE: 'files' }),
        'flag beats env',
      ).toBeNull();
      expect(await filesDirOf([], {}, folder('storage-default')), 'the default').toEqual(aFolder);
    },
  );

  it('--config and LOCALPLANE_CONFIG name a file elsewhere; its paths are relative to it; seed and fixtures apply', async () => {
    const project = folder('named');
    smallFixtures(join(project, 'fx'), 20);
    writeFileSync(
      join(project, 'settings.json'),
      JSON.stringify({ port: 0, objstorePort: 0, seed: 7, fixtures: './fx', dataDir: 'data' }),
    );
    const deploymentIds = async (cli: Launched) => {
      const fixtures = (await new Api(`${cli.apiUrl}/_localplane`).request('GET', '/fixtures')).body as FixturesView;
      await cli.kill('SIGTERM');
      return {
        ids: fixtures.workspaces.flatMap((workspace) => workspace.deployments.map((deployment) => deployment.id)),
        runs: fixtures.workspaces[0]!.sessions[0]!.run_count,
      };
    };
    const viaFlag = await launch(
      process.execPath,
      [BIN, 'start', '--config', join(project, 'settings.json')],
      cleanEnv(),
      scratch,
    );
    const dataDir = join(project, 'data');
    expect(existsSync(join(dataDir, 'localplane.sqlite')), 'dataDir relative to the config file').toBe(true);
    const seven = await deploymentIds(viaFlag);
    expect(seven.runs, 'fixtures relative to the config file').toBe(20);

    rmSync(dataDir, { recursive: true });
    const viaEnv = await launch(
      process.execPath,
      [BIN, 'start'],
      cleanEnv({ LOCALPLANE_CONFIG: join(project, 'settings.json') }),
      scratch,
    );
    expect(await deploymentIds(viaEnv)).toEqual(seven);

    const seedOne = await launch(
      process.execPath,
      [BIN, 'start', '--port', '0', '--objstore-port', '0', '--fixtures', join(project, 'fx')],
      cleanEnv(),
      scratch,
    );
    expect((await deploymentIds(seedOne)).ids).not.toEqual(seven.ids);
  });

  it.each([
    [
      'flags',
      (fixtures: string, dataDir: string, port: number) => ({
        args: [
          '--host',
          '127.0.0.2',
          '--port',
          String(port),
          '--objstore-port',
          '0',
          '--data-dir',
          dataDir,
          '--seed',
          '7',
          '--fixtures',
          fixtures,
        ],
        env: {},
      }),
    ],
    [
      'environment variables',
      (fixtures: string, dataDir: string, port: number) => ({
        args: [],
        env: {
          LOCALPLANE_HOST: '127.0.0.2',
          LOCALPLANE_PORT: String(port),
          LOCALPLANE_OBJSTORE_PORT: '0',
          LOCALPLANE_DATA_DIR: dataDir,
          LOCALPLANE_SEED: '7',
          LOCALPLANE_FIXTURES: fixtures,
        },
      }),
    ],
  ])('--host, --port, --objstore-port, --data-dir, --seed and --fixtures apply as %s', async (how, settings) => {
    const fixtures = smallFixtures(join(scratch, 'apply-fixtures'), 20);
    const dataDir = join(scratch, `apply-data-${how.replace(/\W/g, '-')}`);
    const port = await freePort();
    const { args, env } = settings(fixtures, dataDir, port);
    const cli = await launch(process.execPath, [BIN, 'start', ...args], cleanEnv(env), scratch);
    expect(cli.apiUrl).toBe(`http://127.0.0.2:${port}`);
    expect(cli.objstoreUrl).toMatch(/^http:\/\/127\.0\.0\.2:\d+$/);
    const view = (await new Api(`${cli.apiUrl}/_localplane`).request('GET', '/fixtures')).body as FixturesView;
    expect(view.workspaces[0]!.sessions[0]!.run_count, 'the small fixtures').toBe(20);
    expect(view.objstore.files_dir).toBe(join(dataDir, 'files'));
    await cli.kill('SIGTERM');
    expect(existsSync(join(dataDir, 'localplane.sqlite')), 'a data dir of its own is kept').toBe(true);
    const ids = view.workspaces.flatMap((workspace) => workspace.deployments.map((deployment) => deployment.id));
    const seedOne = await launch(
      process.execPath,
      [BIN, 'start', '--port', '0', '--objstore-port', '0', '--fixtures', fixtures],
      cleanEnv(),
      scratch,
    );
    const seedOneView = (await new Api(`${seedOne.apiUrl}/_localplane`).request('GET', '/fixtures'))
      .body as FixturesView;
    await seedOne.kill('SIGTERM');
    expect(
      seedOneView.workspaces.flatMap((workspace) => workspace.deployments.map((deployment) => deployment.id)),
      'seed 7 draws other ids than seed 1',
    ).not.toEqual(ids);
  });

  it.each([
    [
      'unknown key',
      { port: 0, prot: 1 },
      /^localplane: .*localplane\.config\.json: unknown key "prot" \(known keys: host, port, objstorePort, /,
    ],
    ['flag spelling', { 'objstore-port': 0 }, /^localplane: .*localplane\.config\.json: unknown key "objstore-port"/],
    ['bad JSON', '{"port": 0,', /^localplane: .*localplane\.config\.json: not valid JSON \(/],
    ['not an object', '[1, 2]', /^localplane: .*localplane\.config\.json: must hold a JSON object of settings/],
    [
      'a bad port',
      { port: 70000 },
      /^localplane: .*localplane\.config\.json: "port" must be a whole number from 0 to 65535, got "70000"/,
    ],
    ['a port as text', { port: 'abc' }, /^localplane: .*localplane\.config\.json: "port" must be a number, got "abc"/],
    [
      'a switch as text',
      { freezeClock: 'yes' },
      /^localplane: .*localplane\.config\.json: "freezeClock" must be a boolean, got "yes"/,
    ],
    [
      'a storage it does not have',
      { objstoreStorage: 'disk' },
      /^localplane: .*localplane\.config\.json: "objstoreStorage" must be files or memory, got "disk"/,
    ],
    [
      'a storage as a boolean',
      { objstoreStorage: true },
      /^localplane: .*localplane\.config\.json: "objstoreStorage" must be a string, got true/,
    ],
    [
      'a missing fixtures dir',
      { fixtures: 'nowhere' },
      /^localplane: .*localplane\.config\.json: "fixtures": directory .*nowhere does not exist/,
    ],
  ])('%s: one line naming the file and key, exit code 2', async (name, config, words) => {
    const result = await runCli(['start'], cleanEnv(), folder(`bad-${name.replace(/\W/g, '-')}`, config));
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(words);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
  });

  it.each([
    ['--config', (file: string) => [['start', '--config', file], cleanEnv()] as const],
    ['LOCALPLANE_CONFIG', (file: string) => [['start'], cleanEnv({ LOCALPLANE_CONFIG: file })] as const],
  ])('a config file named by %s that cannot be read: one line, exit code 2', async (_, how) => {
    for (const [file, reason] of [
      [join(scratch, 'absent.json'), 'ENOENT'],
      [scratch, 'EISDIR'],
    ] as const) {
      const [args, env] = how(file);
      const result = await runCli(args, env, folder('unreadable'));
      expect(result.code).toBe(2);
      expect(result.stderr).toBe(
        `localplane: ${file}: cannot read the config file (${reason}) (see localplane --help)\n`,
      );
    }
  });
});

describe('progress display', () => {
  it("in a terminal: a status line while a fixture template builds and while an export runs; the export's end stays", async () => {
    const fixtures = smallFixtures(join(scratch, 'progress-fixtures'), 3000);
    const env = { ...terminalEnv(), LOCALPLANE_CACHE_DIR: join(scratch, 'progress-cache'), COLUMNS: '200' };
    // exec: no shell stays between script(1) and the CLI, whatever $SHELL is, so Ctrl-C reaches the CLI alone.
    const command = `exec "${process.execPath}" "${BIN}" start --port 0 --objstore-port 0 --fixtures "${fixtures}"`;
    // script(1) runs the CLI in a pseudo-terminal: its stdout and stderr are a TTY.
    const terminal = spawn('script', ['-qfec', command, '/dev/null'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let screen = '';
    terminal.stdout.on('data', (chunk) => (screen += chunk));
    // script(1) exits with the CLI's own exit code (-e) once the CLI has stopped.
    const exited = new Promise<number | null>((resolve) => terminal.once('exit', resolve));
    let exitCode: number | null;
    try {
      const apiUrl = await eventually(async () => /localplane ready api=(\S+)/.exec(screen)?.[1], 'the ready line');
      expect(screen).toMatch(/\r\x1b\[2Kbuilding fixtures: \d{1,3}(,\d{3})*\/15,000 runs \(\d+%\)/);
      expect(screen, 'the finished build leaves no status behind').toMatch(/\r\x1b\[2Klocalplane ready/);

      const admin = new Api(`${apiUrl}/_localplane`);
      const view = (await admin.request<FixturesView>('GET', '/fixtures')).body;
      const workspace = view.workspaces.find((candidate) => candidate.tier === 'plus')!;
      const client = new Api(apiUrl).as(workspace);
      const destination = await client.post('/api/v1/bulk-exports/destinations', {
        display_name: 'progress',
        config: { bucket_name: view.objstore.buckets[0], prefix: 'progress' },
        credentials: {
          access_key_id: view.objstore.keys[0]!.access_key_id,
          secret_access_key: view.objstore.keys[0]!.secret_access_key,
        },
      });
      expect(destination.status, destination.text).toBe(200);
      const session = workspace.sessions[0]!;
      const created = await client.post('/api/v1/bulk-exports', {
        bulk_export_destination_id: destination.body.id,
        session_id: session.id,
        start_time: session.first_run_start_time,
        end_time: new Date(Date.parse(session.last_run_start_time) + 1000).toISOString(),
        format_version: 'v2_beta',
        compression: 'snappy',
      });
      expect(created.status, created.text).toBe(200);
      const id = created.body.id as string;
      await eventually(
        async () => screen.includes(`localplane: export ${id} Completed`),
        "the export's last line",
        30_000,
      );
      expect(screen).toMatch(
        new RegExp(`localplane: export ${id} Completed: runs (\\d+)/\\1, 3,000 rows written\\r?\\n`),
      );
    } finally {
      // Ctrl-C as a user stops it: SIGINT through the terminal, and the CLI cleans up before script(1) exits.
      terminal.stdin.write('\x03');
      exitCode = await exited;
    }
    expect(exitCode).toBe(0);
  });

  it('not in a terminal: nothing but the ready line and log lines', async () => {
    const fixtures = smallFixtures(join(scratch, 'quiet-fixtures'), 3000);
    const cli = await startCli(['--fixtures', fixtures], {
      ...process.env,
      LOCALPLANE_CACHE_DIR: join(scratch, 'quiet-cache'),
    });
    await cli.kill('SIGTERM');
    expect(cli.stdout()).toMatch(/^localplane ready [^\n]*\n$/);
    expect(cli.stderr()).not.toMatch(/building fixtures|\x1b/);
  });
});
