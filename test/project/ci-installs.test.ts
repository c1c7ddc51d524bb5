import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/cli.ts';

let dir: string;
let bin: string;
/** Where the fake apt-get puts what it installs: on PATH after bin, as /usr/bin is after a user's own tools. */
let installed: string;

/**
 * A PATH of its own: the tools the CI scripts use, an apt-get that records its calls (and, as
 * told by FAKE_APT, installs, fails until the package lists are updated, or always fails), and an
 * npm that reports 3 passed tests without running any. An installed chromium or aws is an empty
 * program; installed python3 packages are a python3 that imports anything, which stands for
 * Debian's /usr/bin/python3 too (LOCALPLANE_DEBIAN_PYTHON).
 */
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ci-installs-'));
  bin = join(dir, 'bin');
  installed = join(dir, 'installed');
  mkdirSync(bin);
  mkdirSync(installed);
  for (const tool of ['bash', 'chmod', 'dirname', 'grep', 'mktemp'])
    symlinkSync(spawnSync('bash', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).stdout.trim(), join(bin, tool));
  symlinkSync(process.execPath, join(bin, 'node'));
  script(
    'apt-get',
    `echo "apt-get $*" >> "${dir}/apt.log"
case "$FAKE_APT:$1" in
  *:update) exit 0 ;;
  ok:install) ;;
  needs-update:install)
    grep -q "apt-get update" "${dir}/apt.log" || { echo "E: Unable to locate package $3"; exit 100; } ;;
  *) echo "E: Unable to locate package $3"; exit 100 ;;
esac
for package in "\${@:3}"; do
  case "$package" in
    chromium) program=chromium ;;
    python3-*) program=python3 ;;
    awscli) program=aws ;;
  esac
  printf '#!/bin/sh\\n' > "${installed}/$program" && chmod +x "${installed}/$program"
done`,
  );
  script(
    'npm',
    `[ "$1 $2" = "run lint" ] && { echo "lint: $FAKE_LINT"; [ "$FAKE_LINT" != failing ]; exit; }
for arg in "$@"; do
  case "$arg" in
    --outputFile=*) echo '{"numPassedTests":3,"numFailedTests":0,"numFailedTestSuites":0}' > "\${arg#--outputFile=}" ;;
  esac
done`,
  );
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function script(name: string, body: string) {
  writeFileSync(join(bin, name), `#!/bin/bash\n${body}\n`);
  chmodSync(join(bin, name), 0o755);
}

function run(file: string, env: Record<string, string>) {
  // No reference document: the run is npm test's alone, wherever the checkout is.
  const result = spawnSync(join(REPO_ROOT, file), {
    env: {
      PATH: `${bin}:${installed}`,
      HOME: dir,
      LOCALPLANE_REFERENCE_OPENAPI: join(dir, 'no-reference.json'),
      LOCALPLANE_DEBIAN_PYTHON: join(installed, 'python3'),
      ...env,
    },
    encoding: 'utf8',
  });
  const aptCalls = existsSync(join(dir, 'apt.log'))
    ? readFileSync(join(dir, 'apt.log'), 'utf8').trim().split('\n')
    : [];
  return { status: result.status, output: result.stdout + result.stderr, aptCalls };
}

describe('.ci/install-chromium', () => {
  it('on CI without chromium on PATH, installs it with apt-get', () => {
    const { status, aptCalls } = run('.ci/install-chromium', { CI: 'true', FAKE_APT: 'ok' });
    expect(status).toBe(0);
    expect(aptCalls).toEqual(['apt-get install -y chromium']);
    expect(existsSync(join(installed, 'chromium'))).toBe(true);
  });

  it('updates the package lists when the install fails (a fresh runner has none), then installs', () => {
    const { status, aptCalls } = run('.ci/install-chromium', { CI: 'true', FAKE_APT: 'needs-update' });
    expect(status).toBe(0);
    expect(aptCalls).toEqual(['apt-get install -y chromium', 'apt-get update', 'apt-get install -y chromium']);
  });

  it('installs nothing off CI, or when chromium is on PATH', () => {
    expect(run('.ci/install-chromium', { FAKE_APT: 'ok' })).toMatchObject({ status: 0, aptCalls: [] });
    script('chromium', 'exit 0');
    expect(run('.ci/install-chromium', { CI: 'true', FAKE_APT: 'ok' })).toMatchObject({ status: 0, aptCalls: [] });
  });

  it('fails with a message when apt-get cannot install it', () => {
    const { status, output } = run('.ci/install-chromium', { CI: 'true', FAKE_APT: 'broken' });
    expect(status).toBe(1);
    expect(output).toContain(
      'chromium could not be installed with apt-get; the browser tests (test/ui/*-browser.test.ts) need it at ' +
        '/usr/bin/chromium',
    );
  });
});

describe('.ci/install-python-tools', () => {
  const ALL = 'apt-get install -y python3-pytest python3-pytest-xdist python3-boto3 black awscli';

  it(
    'on CI where no python3 imports pytest, xdist, boto3 and black and no aws is on PATH, installs ' +
      "Debian's packages of them with apt-get",
    () => {
      const { status, aptCalls } = run('.ci/install-python-tools', { CI: 'true', FAKE_APT: 'ok' });
      expect(status).toBe(0);
      expect(aptCalls).toEqual([ALL]);
      expect(existsSync(join(installed, 'aws'))).toBe(true);
    },
  );

  it('updates the package lists when the install fails (a fresh runner has none), then installs', () => {
    const { status, aptCalls } = run('.ci/install-python-tools', { CI: 'true', FAKE_APT: 'needs-update' });
    expect(status).toBe(0);
    expect(aptCalls).toEqual([ALL, 'apt-get update', ALL]);
  });

  it('installs only what is missing, and nothing off CI', () => {
    expect(run('.ci/install-python-tools', { FAKE_APT: 'ok' })).toMatchObject({ status: 0, aptCalls: [] });
    script('python3', '[ "$*" = "-c import pytest, xdist, boto3, black" ]');
    expect(run('.ci/install-python-tools', { CI: 'true', FAKE_APT: 'ok' })).toMatchObject({
      status: 0,
      aptCalls: ['apt-get install -y awscli'],
    });
    script('aws', 'exit 0');
    rmSync(join(dir, 'apt.log'));
    expect(run('.ci/install-python-tools', { CI: 'true', FAKE_APT: 'ok' })).toMatchObject({ status: 0, aptCalls: [] });
  });

  it('fails with a message when apt-get cannot install them', () => {
    const { status, output } = run('.ci/install-python-tools', { CI: 'true', FAKE_APT: 'broken' });
    expect(status).toBe(1);
    expect(output).toContain(
      'python3-pytest python3-pytest-xdist python3-boto3 black awscli could not be installed with apt-get; ' +
        'python/tests and the pytest recipe (examples/recipes/pytest) need python3 with pytest, xdist, boto3 and ' +
        'black, the aws CLI checks (test/objstore/aws-cli.test.ts) an aws on PATH',
    );
  });

  it("installs no python3 package where Debian's python3 imports them and the one on PATH does not", () => {
    // As a pyenv python3 first on PATH, with pytest, boto3 and black but no xdist: the tests use Debian's.
    script('python3', '[ "$*" = "-c import pytest, boto3, black" ]');
    script('aws', 'exit 0');
    const debian = join(dir, 'debian-python3');
    writeFileSync(debian, '#!/bin/sh\n');
    chmodSync(debian, 0o755);
    expect(
      run('.ci/install-python-tools', { CI: 'true', FAKE_APT: 'ok', LOCALPLANE_DEBIAN_PYTHON: debian }),
    ).toMatchObject({ status: 0, aptCalls: [] });
    // Without Debian's, the one on PATH lacking xdist gets the four packages.
    expect(run('.ci/install-python-tools', { CI: 'true', FAKE_APT: 'ok' })).toMatchObject({
      status: 0,
      aptCalls: ['apt-get install -y python3-pytest python3-pytest-xdist python3-boto3 black'],
    });
  });

  it('fails with a message when no python3 imports them after the install (no Debian python3 at /usr/bin)', () => {
    script('python3', 'exit 1');
    const debian = join(dir, 'no-python3');
    const { status, output } = run('.ci/install-python-tools', {
      CI: 'true',
      FAKE_APT: 'ok',
      LOCALPLANE_DEBIAN_PYTHON: debian,
    });
    expect(status).toBe(1);
    expect(output).toContain(
      `python3-pytest, python3-pytest-xdist, python3-boto3 and black are installed, but neither ${debian} nor ` +
        `${join(bin, 'python3')} imports pytest, xdist, boto3 and black`,
    );
  });
});

describe('.ci/run', () => {
  it('installs chromium and the python tools before the tests and ends with the count line', () => {
    const { status, output, aptCalls } = run('.ci/run', { CI: 'true', FAKE_APT: 'ok' });
    expect(aptCalls).toEqual([
      'apt-get install -y chromium',
      'apt-get install -y python3-pytest python3-pytest-xdist python3-boto3 black awscli',
    ]);
    expect(output.indexOf('== install: python3-pytest')).toBeLessThan(output.indexOf('== test: npm test'));
    expect(output.trim().split('\n').at(-1)).toBe('3 passed, 0 failed');
    expect(status).toBe(0);
  });

  it('counts each failed install as one failure and still runs the tests and ends with the count line', () => {
    const { status, output } = run('.ci/run', { CI: 'true', FAKE_APT: 'broken' });
    expect(output).toContain('chromium could not be installed with apt-get');
    expect(output).toContain(
      'python3-pytest python3-pytest-xdist python3-boto3 black awscli could not be installed with apt-get',
    );
    expect(output).toContain('== test: npm test');
    expect(output.trim().split('\n').at(-1)).toBe('3 passed, 2 failed');
    expect(status).toBe(1);
  });

  it('runs the linter before the tests, and counts a failed lint as one failure', () => {
    const passing = run('.ci/run', { CI: 'true', FAKE_APT: 'ok', FAKE_LINT: 'passing' });
    expect(passing.output.indexOf('lint: passing')).toBeLessThan(passing.output.indexOf('== test: npm test'));
    expect(passing.status).toBe(0);
    const failing = run('.ci/run', { CI: 'true', FAKE_APT: 'ok', FAKE_LINT: 'failing' });
    expect(failing.output).toContain('lint failed: npm run format fixes the layout');
    expect(failing.output).toContain('== test: npm test');
    expect(failing.output.trim().split('\n').at(-1)).toBe('3 passed, 1 failed');
    expect(failing.status).toBe(1);
  });
});
