import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultCacheDir } from '../src/fixtures/template.ts';
import { BIN, launch, REPO_ROOT, runCli, startCli, type Launched } from './support/cli.ts';
import { Api, eventually } from './support/instance.ts';

const scratch = mkdtempSync(join(tmpdir(), 'localplane-cli-test-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The environment of a user's terminal: none of the npm variables of the test run itself. */
const terminalEnv = () => Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('npm_')));

describe('localplane start', () => {
  it('prints one ready line, serves, and exits cleanly on SIGTERM', async () => {
    const cli = await startCli();
    expect(cli.stdout()).toMatch(/^localplane ready api=http:\/\/127\.0\.0\.1:\d+ objstore=http:\/\/127\.0\.0\.1:\d+\n$/);
    expect((await fetch(`${cli.apiUrl}/_localplane/health`)).status).toBe(200);
    expect(await cli.kill('SIGTERM')).toEqual({ code: 0, signal: null });
    expect(cli.stdout().trim().split('\n')).toHaveLength(1);
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
    [['start', '--port'], /^localplane: Option '--port <value>' argument missing/],
    [['start', '--verbose'], /^localplane: Unknown option '--verbose'/],
    [['stop'], /^localplane: unknown command "stop"/],
    [[], /^localplane: a command is required/],
  ])('%j: one line on stderr, exit code 2', async (args, words) => {
    const result = await runCli(args);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(words);
    expect(result.stderr.trim().split('\n'), 'one line, no stack trace').toHaveLength(1);
  });

  it('rejects a LOCALPLANE_FREEZE_CLOCK it cannot read', async () => {
    const result = await runCli(['start'], { ...process.env, LOCALPLANE_FREEZE_CLOCK: 'maybe' });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^localplane: LOCALPLANE_FREEZE_CLOCK must be 1, true, yes, 0, false or no, got "maybe"/);
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

    /** Runs the CLI with its own tmp dir (the shared template cache stays where it is). */
    async function failedStart(flags: string[]) {
      const tmp = mkdtempSync(join(scratch, 'tmp-'));
      const result = await runCli(['start', ...flags], { ...process.env, TMPDIR: tmp, LOCALPLANE_CACHE_DIR: defaultCacheDir() });
      return { ...result, leftovers: readdirSync(tmp) };
    }

    it.each([
      ['the API port is in use', () => ['--port', String(busyPort), '--objstore-port', '0'], /^localplane: the API port \d+ on 127\.0\.0\.1 is already in use$/],
      ['the objstore port is in use', () => ['--port', '0', '--objstore-port', String(busyPort)], /^localplane: the objstore port \d+ on 127\.0\.0\.1 is already in use$/],
      ['the fixtures dir is missing', () => ['--port', '0', '--objstore-port', '0', '--fixtures', join(scratch, 'none')], /^localplane: fixtures directory .* does not exist$/],
    ])('when %s', async (_, flags, words) => {
      busy ??= await new Promise<Server>((resolve) => {
        const server = createServer().listen(0, '127.0.0.1', () => resolve(server));
      });
      busyPort = (busy.address() as { port: number }).port;
      const result = await failedStart(flags());
      expect(result.code).toBe(1);
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
  for (let queue = [pid]; queue.length > 0; ) {
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
  const npmStart = () => launch('npm', ['start', '--silent', '--', '--port', '0', '--objstore-port', '0'], terminalEnv());

  it('npm start, when npm gets SIGTERM', async () => {
    await expectAllGoneAfter(await npmStart(), 'SIGTERM');
  });

  it('npm start, when npm is killed', async () => {
    await expectAllGoneAfter(await npmStart(), 'SIGKILL');
  });

  it('npx localplane start (the compiled executable), when npm is killed', async () => {
    await expectAllGoneAfter(await launch('npm', ['exec', '--offline', '--', 'localplane', 'start', '--port', '0', '--objstore-port', '0'], terminalEnv()), 'SIGKILL');
  });

  it('tsx src/cli.ts start, when tsx is killed', async () => {
    const tsx = join(REPO_ROOT, 'node_modules', '.bin', 'tsx');
    await expectAllGoneAfter(await launch(tsx, ['src/cli.ts', 'start', '--port', '0', '--objstore-port', '0'], terminalEnv()), 'SIGKILL');
  });

  it('but outlives a plain parent, such as a shell that started it in the background', async () => {
    const out = join(scratch, 'background.out');
    const shell = spawn('sh', ['-c', `"${process.execPath}" "${BIN}" start --port 0 --objstore-port 0 > "${out}" 2>&1 & echo $!`], { env: terminalEnv() });
    const pid = Number(await new Promise<string>((resolve) => shell.stdout.on('data', (chunk) => resolve(String(chunk)))));
    try {
      const apiUrl = await eventually(async () => /api=(\S+)/.exec(existsSync(out) ? readFileSync(out, 'utf8') : '')?.[1], 'the ready line');
      // Its shell is gone; a few of the launcher watch's polls later, it still serves.
      await new Promise((resolve) => setTimeout(resolve, 1000));
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
    const key = fixtures.objstore.keys.find((k) => k.permissions.length === 4);
    const response = await fetch(lp.apiUrl + '/api/v1/bulk-exports/destinations', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': workspace.api_key, 'x-tenant-id': workspace.id },
      body: JSON.stringify({ display_name: 'warn', config: { bucket_name: fixtures.objstore.buckets[0], prefix: 'warn' },
        credentials: { access_key_id: key.access_key_id, secret_access_key: key.secret_access_key } }),
    });
    console.log(response.status);
    await lp.stop();
  `;
  const sdkAlone = `import { S3Client } from '@aws-sdk/client-s3'; new S3Client({ region: 'us-east-1' }); console.log('created');`;

  function runModule(source: string) {
    const env = { ...process.env };
    delete env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED;
    const child = spawn(process.execPath, ['--input-type=module', '-e', source], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    return new Promise<{ stdout: string; stderr: string }>((resolve) => child.once('close', () => resolve({ stdout, stderr })));
  }

  it("start() keeps the AWS SDK's Node version notice out of the consumer's output", async () => {
    const [mine, control] = await Promise.all([runModule(consumer), runModule(sdkAlone)]);
    expect(mine.stdout.trim()).toBe('200');
    expect(mine.stderr).not.toContain('NodeVersionSupportWarning');
    // The same environment without localplane: the SDK does print it on the Node versions it warns about.
    expect(control.stdout.trim()).toBe('created');
    expect(control.stderr.includes('NodeVersionSupportWarning')).toBe(Number(process.versions.node.split('.')[0]) < 22);
  });
});
