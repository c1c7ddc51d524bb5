import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, runCli } from '../support/cli.ts';

/**
 * Each refusal docs/cli.md documents (its exit codes table, its options and its quoted errors), walked: exit code 2,
 * nothing on stdout, one line on stderr that starts `localplane: `, names what is at fault and holds no stack frame.
 * The quoted lines themselves run in test/project/doc-blocks.test.ts.
 */

const CLI_DOC = readFileSync(join(REPO_ROOT, 'docs', 'cli.md'), 'utf8').replace(/\s+/g, ' ');
const root = mkdtempSync(join(tmpdir(), 'lp-usage-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A folder of the test's own, made as `make` says. */
function folder(name: string, make: (path: string) => void = () => {}): string {
  const path = join(root, name);
  mkdirSync(path, { recursive: true });
  make(path);
  return path;
}

const file = (name: string, text: string) => {
  const path = join(root, name);
  writeFileSync(path, text);
  return path;
};

interface Refusal {
  /** Words of docs/cli.md that document the refusal. */
  documented: string;
  args: () => string[];
  env?: Record<string, string>;
  /** What the line says. */
  says: RegExp;
}

const REFUSALS: Refusal[] = [
  { documented: 'an unknown flag or command', args: () => ['start', '--prot', '9400'], says: /--prot/ },
  { documented: 'an unknown flag or command', args: () => ['stat'], says: /stat/ },
  { documented: 'a bad value (`--port abc`', args: () => ['start', '--port', 'abc'], says: /--port .*"abc"/ },
  { documented: '`--port -1`', args: () => ['start', '--port', '-1'], says: /--port .*"-1"/ },
  { documented: 'a port outside 0–65535', args: () => ['start', '--port', '65536'], says: /--port .*"65536"/ },
  { documented: '`--seed <n>`', args: () => ['start', '--seed', 'x'], says: /--seed .*"x"/ },
  {
    documented: '`LOCALPLANE_FREEZE_CLOCK=maybe`',
    args: () => ['start'],
    env: { LOCALPLANE_FREEZE_CLOCK: 'maybe' },
    says: /LOCALPLANE_FREEZE_CLOCK must be 1, true, yes, on, 0, false, no or off, got "maybe"/,
  },
  {
    documented: '`--objstore-storage disk`',
    args: () => ['start', '--objstore-storage', 'disk'],
    says: /--objstore-storage must be files or memory, got "disk"/,
  },
  {
    documented: 'a fixtures dir that does not exist',
    args: () => ['start', '--fixtures', join(root, 'nowhere')],
    says: /--fixtures: directory .*nowhere does not exist/,
  },
  {
    documented: 'or holds an invalid file',
    args: () => [
      'start',
      '--fixtures',
      folder('bad-fixtures', (path) => writeFileSync(join(path, 'workspaces.json'), '{"workspaces": 7}')),
    ],
    says: /workspaces\.json/,
  },
  {
    documented: 'a data dir it cannot create',
    args: () => ['start', '--data-dir', join(file('a-file', ''), 'data')],
    says: /a-file/,
  },
  {
    documented: "will not use (another version's",
    args: () => [
      'start',
      '--data-dir',
      folder('old-data', (path) => {
        const db = new Database(join(path, 'localplane.sqlite'));
        db.exec('CREATE TABLE workspaces (id TEXT)');
        db.pragma('user_version = 1');
        db.close();
      }),
    ],
    says: /another version of localplane/,
  },
  {
    documented: 'a snapshot to `--import` that is missing or refused',
    args: () => ['start', '--import', join(root, 'missing.snapshot')],
    says: /missing\.snapshot/,
  },
  {
    documented: 'a snapshot to `--import` that is missing or refused',
    args: () => ['start', '--import', file('garbage.snapshot', 'not a snapshot')],
    says: /garbage\.snapshot/,
  },
  {
    documented: 'a config file it cannot read or use',
    args: () => ['start', '--config', join(root, 'missing.json')],
    says: /missing\.json/,
  },
  {
    documented: 'a config file it cannot read or use',
    args: () => ['start', '--config', file('broken.json', '{"port": ')],
    says: /broken\.json/,
  },
  {
    documented: 'an admin token that is malformed',
    args: () => ['start', '--admin-token', 'short'],
    says: /--admin-token must be 8 to 256 printable characters without spaces/,
  },
  {
    documented: 'a host that is not an address of this machine',
    args: () => ['start', '--host', '203.0.113.7', '--port', '0', '--objstore-port', '0'],
    says: /203\.0\.113\.7/,
  },
  {
    documented: 'any other command refuses them (`--sql is not an option of localplane start`)',
    args: () => ['start', '--sql', 'select 1'],
    says: /--sql is not an option of localplane start/,
  },
  {
    documented: 'those commands refuse the `start` flags',
    args: () => ['query', 'select 1', '--seed', '3'],
    says: /--seed is not an option of localplane query/,
  },
  {
    documented: '`query` or `demo --sql`: SQL that DuckDB refuses',
    args: () => ['query', 'selec 1', '--dir', folder('empty-query-dir')],
    says: /localplane: /,
  },
  {
    documented: 'no export files where it looks',
    args: () => ['query', 'select 1', '--dir', join(root, 'no-files')],
    says: /no export files in .*no-files/,
  },
  {
    documented: 'a `--url` that cannot be reached or answers an error',
    args: () => ['query', 'select 1', '--url', 'http://127.0.0.1:1'],
    says: /127\.0\.0\.1:1/,
  },
  {
    documented: 'a `--dir` holding other files',
    args: () => ['demo', '--dir', folder('holds-files', (path) => writeFileSync(join(path, 'notes.txt'), 'mine'))],
    says: /holds-files/,
  },
  {
    documented: 'a recording that cannot be read or is not HAR',
    args: () => ['verify', file('not-a.har', 'plain text')],
    says: /not-a\.har/,
  },
  {
    documented: 'a recording that cannot be read or is not HAR',
    args: () => ['fixtures', 'from-recording', join(root, 'missing.har'), '--out', join(root, 'out-missing')],
    says: /missing\.har/,
  },
  {
    documented: 'an `--out` that is not empty',
    args: () => [
      'fixtures',
      'from-recording',
      file('empty.har', JSON.stringify({ log: { version: '1.2', creator: { name: 't', version: '1' }, entries: [] } })),
      '--out',
      folder('used-out', (path) => writeFileSync(join(path, 'kept.txt'), 'mine')),
    ],
    says: /used-out is not empty/,
  },
  {
    documented: '`--upstream <url>` | | required',
    args: () => ['record', '--out', join(root, 'r.har')],
    says: /--upstream/,
  },
  {
    documented: '`--out <path>` | | required',
    args: () => ['record', '--upstream', 'http://127.0.0.1:1'],
    says: /--out/,
  },
];

describe('every documented refusal of the CLI', () => {
  const cases = REFUSALS.map((refusal) => {
    const args = refusal.args();
    return [args.map((arg) => arg.replace(root, '<tmp>')).join(' '), args, refusal] as const;
  });
  it.concurrent.each(cases)('localplane %s: one line, exit code 2', async (_, args, refusal) => {
    expect(CLI_DOC, 'the refusal is one docs/cli.md documents').toContain(refusal.documented);
    const result = await runCli(args, { ...process.env, ...refusal.env }, root);
    const lines = result.stderr.trimEnd().split('\n');
    expect({ code: result.code, stdout: result.stdout, lines: lines.length }, result.stderr).toEqual({
      code: 2,
      stdout: '',
      lines: 1,
    });
    expect(lines[0]).toMatch(/^localplane: /);
    expect(lines[0]).toMatch(refusal.says);
    expect(lines[0]).not.toMatch(/\bat .*\.(c?js|ts):\d+/);
  });
});
