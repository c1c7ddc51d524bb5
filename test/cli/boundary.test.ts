/**
 * Who can reach an instance the CLI starts: a config file (a cloned repository's is read as soon as
 * localplane starts there) cannot open it to other sites or machines, and the admin token can be
 * given where other users of the machine do not see it.
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, startCli, type Launched } from '../support/cli.ts';
import { rawRequest } from '../support/objstore-server.ts';

const scratch = mkdtempSync(join(tmpdir(), 'localplane-cli-boundary-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const REBIND_HOST = 'rebind.attacker.example';
const TOKEN = 'tok-5e1d9c0b7a3f';

/** The environment without any LOCALPLANE_ setting of the test run, with `extra`. */
const cleanEnv = (extra: Record<string, string> = {}) => ({
  ...Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('LOCALPLANE_') || name === 'LOCALPLANE_CACHE_DIR'),
  ),
  ...extra,
});

let folders = 0;
/** A new folder holding `localplane.config.json` with `config`, if given. */
function folder(config?: Record<string, unknown>): string {
  const dir = join(scratch, `folder-${++folders}`);
  mkdirSync(dir);
  if (config !== undefined) writeFileSync(join(dir, 'localplane.config.json'), JSON.stringify(config));
  return dir;
}

/** A file holding `text`, with that mode. */
function fileWith(text: string, mode: number): string {
  const file = join(folder(), 'token');
  writeFileSync(file, text);
  chmodSync(file, mode);
  return file;
}

/** Runs `localplane` to its end, or stops it with SIGTERM once it says it is ready (what it should not be here). */
function runUnlessReady(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  cwd: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [BIN, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => {
    stdout += chunk;
    if (/ ready /.test(stdout)) child.kill('SIGTERM');
  });
  child.stderr.on('data', (chunk) => (stderr += chunk));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}

/** Runs `localplane` and expects a usage error: exit code 2, nothing on stdout, one line on stderr matching `words`. */
async function expectRefused(
  args: readonly string[],
  words: RegExp,
  env = cleanEnv(),
  cwd = folder(),
): Promise<string> {
  const result = await runUnlessReady(args, env, cwd);
  expect(result.stdout).toBe('');
  expect(result.code).toBe(2);
  expect(result.stdout).toBe('');
  expect(result.stderr).toMatch(words);
  expect(result.stderr.trim().split('\n'), 'one line, no stack trace').toHaveLength(1);
  return result.stderr;
}

/** The refusal of a config file's key that only a flag or the environment may give. */
const onlyFromFlagOrEnvironment = (key: string, flag: string, variable: string) =>
  new RegExp(
    `^localplane: localplane\\.config\\.json: "${key}" may come only from a flag or the environment, not a config ` +
      `file: use --${flag} or ${variable}`,
  );

/** The status of a GET of the admin API's state, with those headers (a `host` among them, else the instance's own). */
async function stateStatus(cli: Launched, headers: Record<string, string> = {}): Promise<number> {
  return (await rawRequest(cli.apiUrl, 'GET', '/_localplane/state', headers)).status;
}

/** Starts localplane with those flags and environment, and stops it once `use` is done. */
async function withStarted(
  flags: readonly string[],
  env: NodeJS.ProcessEnv,
  use: (cli: Launched) => Promise<void>,
  cwd = folder(),
): Promise<void> {
  const cli = await startCli(['--quiet', ...flags], env, cwd);
  try {
    await use(cli);
  } finally {
    expect(await cli.kill('SIGTERM')).toEqual({ code: 0, signal: null });
  }
}

describe('a config file cannot widen who reaches the instance', () => {
  it('refuses allowHosts: one line naming the key, the flag and the variable, exit code 2', async () => {
    await expectRefused(
      ['start'],
      onlyFromFlagOrEnvironment('allowHosts', 'allow-hosts', 'LOCALPLANE_ALLOW_HOSTS'),
      cleanEnv(),
      folder({ allowHosts: REBIND_HOST, port: 0, objstorePort: 0 }),
    );
  });

  it('refuses allowHosts also when a flag gives the setting, and for `record`, which reads the same file', async () => {
    const cwd = folder({ allowHosts: REBIND_HOST });
    await expectRefused(
      ['start', '--allow-hosts', 'localplane'],
      /"allowHosts" may come only from a flag or the environment/,
      cleanEnv(),
      cwd,
    );
    await expectRefused(
      ['record', '--upstream', 'http://127.0.0.1:9', '--out', join(cwd, 'out.har')],
      /"allowHosts" may come only from a flag/,
      cleanEnv(),
      cwd,
    );
  });

  it.each(['0.0.0.0', '::', '192.0.2.10', 'dev-box.localhost'])(
    'refuses the host %j, not a loopback address: one line naming the key and --host',
    async (host) => {
      await expectRefused(
        ['start'],
        new RegExp(
          `^localplane: localplane\\.config\\.json: "host" ${JSON.stringify(host).replace(/\./g, '\\.')} is not a ` +
            `loopback address, .*: use --host or LOCALPLANE_HOST`,
        ),
        cleanEnv(),
        folder({ host, port: 0, objstorePort: 0 }),
      );
    },
  );

  it('refuses allowEndpoints: where exports may send comes from the flag or the variable', async () => {
    await expectRefused(
      ['start'],
      onlyFromFlagOrEnvironment('allowEndpoints', 'allow-endpoints', 'LOCALPLANE_ALLOW_ENDPOINTS'),
      cleanEnv(),
      folder({ allowEndpoints: 'minio.corp.example:9000', port: 0, objstorePort: 0 }),
    );
  });

  it('refuses adminTokenFile: the token file comes from the flag', async () => {
    await expectRefused(
      ['start'],
      /"adminTokenFile" may come only from a flag, not a config file: use --admin-token-file/,
      cleanEnv(),
      folder({ adminTokenFile: 'token' }),
    );
  });

  it.each(['127.0.0.1', 'localhost'])('still takes the loopback host %j, and its other settings', async (host) => {
    const cli = await startCli([], cleanEnv(), folder({ host, port: 0, objstorePort: 0, quiet: true }));
    try {
      expect(new URL(cli.apiUrl).hostname).toBe(host);
      expect(await stateStatus(cli)).toBe(200);
      expect(cli.stderr()).toBe('');
    } finally {
      await cli.kill('SIGTERM');
    }
  });

  it.each([
    ['--allow-hosts', [`--allow-hosts=${REBIND_HOST}`], {}],
    ['LOCALPLANE_ALLOW_HOSTS', [], { LOCALPLANE_ALLOW_HOSTS: REBIND_HOST }],
  ])('%s still allows a host name: the admin API answers under it, and refuses another', async (_, flags, env) => {
    await withStarted(flags, cleanEnv(env), async (cli) => {
      expect(await stateStatus(cli, { host: REBIND_HOST })).toBe(200);
      expect((await rawRequest(cli.apiUrl, 'POST', '/_localplane/reset', { host: REBIND_HOST })).status).toBe(200);
      expect(await stateStatus(cli, { host: 'other.attacker.example' })).toBe(403);
    });
  });

  it(
    '--host with an address other machines reach still comes from the flag, with the warning of an instance ' +
      'without a token',
    async () => {
      await withStarted(['--host', '0.0.0.0'], cleanEnv(), async (cli) => {
        await expect.poll(() => cli.stderr()).toContain('bound to 0.0.0.0, which other machines can reach');
      });
    },
  );
});

describe('the admin token', () => {
  const bearer = { authorization: `Bearer ${TOKEN}` };
  const noFlagWarning = (cli: Launched) => expect(cli.stderr()).not.toContain('--admin-token shows the token');

  it(
    '--admin-token-file reads it (one trailing newline left out) from a file only its user may read: the admin ' +
      'API then requires it',
    async () => {
      await withStarted(['--admin-token-file', fileWith(`${TOKEN}\n`, 0o600)], cleanEnv(), async (cli) => {
        expect(await stateStatus(cli)).toBe(401);
        expect(await stateStatus(cli, bearer)).toBe(200);
        noFlagWarning(cli);
        expect(cli.stderr()).not.toContain(TOKEN);
      });
    },
  );

  it.each(['644', '640', '660', '602'])(
    '--admin-token-file refuses a file of mode %s, which other users can read or write: one line, exit code 2',
    async (mode) => {
      const file = fileWith(TOKEN, Number.parseInt(mode, 8));
      const stderr = await expectRefused(
        ['start', '--admin-token-file', file],
        new RegExp(
          `^localplane: --admin-token-file: ${file} is readable or writable by group or others \\(mode ${mode}\\)`,
        ),
      );
      expect(stderr).not.toContain(TOKEN);
    },
  );

  it('--admin-token-file refuses a missing file, and one that is not a file', async () => {
    await expectRefused(
      ['start', '--admin-token-file', join(scratch, 'absent')],
      /^localplane: --admin-token-file: cannot read .*absent \(ENOENT\)/,
    );
    await expectRefused(
      ['start', '--admin-token-file', scratch],
      /^localplane: --admin-token-file: .* is not a regular file/,
    );
  });

  it('LOCALPLANE_ADMIN_TOKEN gives it without the warning', async () => {
    await withStarted([], cleanEnv({ LOCALPLANE_ADMIN_TOKEN: TOKEN }), async (cli) => {
      expect(await stateStatus(cli)).toBe(401);
      expect(await stateStatus(cli, bearer)).toBe(200);
      noFlagWarning(cli);
    });
  });

  it('--admin-token still gives it, with one line warning that every user of the machine sees it', async () => {
    await withStarted(['--admin-token', TOKEN], cleanEnv(), async (cli) => {
      expect(await stateStatus(cli)).toBe(401);
      expect(await stateStatus(cli, bearer)).toBe(200);
      const warnings = () =>
        cli
          .stderr()
          .split('\n')
          .filter((line) => line.includes('--admin-token shows the token'));
      await expect
        .poll(warnings)
        .toEqual([
          'localplane: --admin-token shows the token to every user of this machine (ps); give it with ' +
            '--admin-token-file or LOCALPLANE_ADMIN_TOKEN',
        ]);
      expect(cli.stderr()).not.toContain(TOKEN);
    });
  });

  it.each([
    ['--admin-token', () => ({ args: ['--admin-token', 'short'], env: {} })],
    ['--admin-token', () => ({ args: ['--admin-token', 'has a space'], env: {} })],
    ['LOCALPLANE_ADMIN_TOKEN', () => ({ args: [], env: { LOCALPLANE_ADMIN_TOKEN: 'short' } })],
    ['--admin-token-file', () => ({ args: ['--admin-token-file', fileWith('short\n', 0o600)], env: {} })],
    ['--admin-token-file', () => ({ args: ['--admin-token-file', fileWith('', 0o600)], env: {} })],
  ])(
    'a malformed token from %s: one line naming where it came from, no stack trace, exit code 2',
    async (source, given) => {
      const { args, env } = given();
      const stderr = await expectRefused(
        ['start', ...args],
        /must be 8 to 256 printable characters without spaces/,
        cleanEnv(env),
      );
      expect(stderr.startsWith(`localplane: ${source}`)).toBe(true);
      expect(stderr).not.toContain('short');
    },
  );

  it.each([
    [['--admin-token', TOKEN, '--admin-token-file', '/any'], {}, '--admin-token and --admin-token-file'],
    [['--admin-token', TOKEN], { LOCALPLANE_ADMIN_TOKEN: TOKEN }, '--admin-token and LOCALPLANE_ADMIN_TOKEN'],
    [
      ['--admin-token-file', '/any'],
      { LOCALPLANE_ADMIN_TOKEN: TOKEN },
      '--admin-token-file and LOCALPLANE_ADMIN_TOKEN',
    ],
  ])('%j with %j: one way at most, exit code 2', async (args, env, named) => {
    await expectRefused(
      ['start', ...args],
      new RegExp(`^localplane: ${named} each give the admin token: give it one way`),
      cleanEnv(env),
    );
  });

  it("a config file's adminToken still applies, and --admin-token-file takes its place", async () => {
    const cwd = folder({ adminToken: 'tok-of-the-config' });
    await withStarted(
      [],
      cleanEnv(),
      async (cli) => expect(await stateStatus(cli, { authorization: 'Bearer tok-of-the-config' })).toBe(200),
      cwd,
    );
    await withStarted(
      ['--admin-token-file', fileWith(TOKEN, 0o400)],
      cleanEnv(),
      async (cli) => {
        expect(await stateStatus(cli, { authorization: 'Bearer tok-of-the-config' })).toBe(401);
        expect(await stateStatus(cli, bearer)).toBe(200);
      },
      cwd,
    );
  });

  it('a config file cannot take the token away: an empty or null adminToken is refused', async () => {
    for (const adminToken of ['', null]) {
      await expectRefused(
        ['start', '--admin-token-file', fileWith(TOKEN, 0o600)],
        /localplane\.config\.json: "adminToken" must/,
        cleanEnv(),
        folder({ adminToken }),
      );
    }
  });
});
