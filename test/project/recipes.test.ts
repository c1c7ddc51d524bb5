import { spawn, spawnSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/cli.ts';
import { findPython, userEnvironment } from '../support/python.ts';

const bin = (name: string) => join(REPO_ROOT, 'node_modules', '.bin', name);
const recipe = (name: string) => join(REPO_ROOT, 'examples', 'recipes', name);

interface Recipe {
  name: string;
  command: string;
  /** The command's arguments, to run every test of the recipe or only the file `only`. */
  args: (only?: string) => string[];
  /** The runner's words for the recipe's two tests passing. */
  passed: RegExp;
  /**
   * A test file that fails an assertion against the recipe's instance, its file name, and any other text its failure
   * shows.
   */
  failing: { file: string; source: string; also?: string };
  /** Why the recipe's runner cannot run on this machine, and what to install; undefined where it can. */
  missing?: string;
  /** Variables the runner needs beside the user's own. */
  env?: Record<string, string>;
}

/**
 * The pytest recipe's runner: python3 with pytest and boto3 (.ci/run installs Debian's packages on CI), and the plugin
 * of python/ as a user's installed copy is loaded: by its pytest11 entry point if pytest-localplane is installed, else
 * from the checkout (PYTHONPATH and `-p localplane.plugin`).
 */
const pytestRecipe = (() => {
  const found = findPython(
    ['pytest', 'boto3'],
    'apt-get install python3-pytest python3-boto3, or pip install pytest boto3',
  );
  const installed =
    found.python !== undefined &&
    spawnSync(found.python, ['-c', 'import importlib.metadata as m; m.distribution("pytest-localplane")'], {
      stdio: 'ignore',
    }).status === 0;
  return {
    command: found.python ?? 'python3',
    plugin: installed ? [] : ['-p', 'localplane.plugin'],
    env: installed ? undefined : { PYTHONPATH: join(REPO_ROOT, 'python') },
    missing: found.missing,
  };
})();

const RECIPES: Recipe[] = [
  {
    name: 'vitest-global-setup',
    command: bin('vitest'),
    args: (only) => [
      'run',
      '--config',
      join(recipe('vitest-global-setup'), 'vitest.config.ts'),
      ...(only ? [only] : []),
    ],
    passed: /Tests\s+2 passed \(2\)/,
    failing: {
      file: 'failing.test.ts',
      source: `import { test } from 'localplane/vitest';
        import { expect } from 'vitest';
        test('fails', async ({ localplane }) => expect((await fetch(localplane.apiUrl + '/_localplane/health')).status).toBe(418));`,
    },
  },
  {
    name: 'vitest-per-file',
    command: bin('vitest'),
    args: (only) => ['run', '--config', join(recipe('vitest-per-file'), 'vitest.config.ts'), ...(only ? [only] : [])],
    passed: /Test Files\s+2 passed \(2\)[\s\S]*Tests\s+3 passed \(3\)/,
    failing: {
      file: 'failing.test.ts',
      // And a test of the run's instance in a config without the global setup, told what to add.
      source: `import { fileTest, test as runTest } from 'localplane/vitest';
        import { expect } from 'vitest';
        const test = fileTest();
        test('fails', async ({ localplane }) => expect((await fetch(localplane.apiUrl + '/_localplane/health')).status).toBe(418));
        runTest('reads the health', async ({ localplane }) => { await localplane.health(); });`,
      also:
        "add globalSetup: ['localplane/vitest/global-setup'] to the vitest config, or use fileTest() for an " +
        'instance per file',
    },
  },
  {
    name: 'jest-global-setup',
    command: bin('jest'),
    args: (only) => ['--config', join(recipe('jest-global-setup'), 'jest.config.mjs'), ...(only ? [only] : [])],
    passed: /Tests:\s+3 passed, 3 total/,
    failing: {
      file: 'failing.test.cjs',
      source:
        `test('fails', async () => expect((await fetch(process.env.LOCALPLANE_URL + ` +
        `'/_localplane/health')).status).toBe(418));`,
    },
  },
  {
    name: 'node-test',
    command: process.execPath,
    args: (only) => ['--test', only ? join(recipe('node-test'), only) : recipe('node-test')],
    passed: /^# pass 2\n# fail 0$/m,
    failing: {
      file: 'failing.test.mjs',
      source: `import assert from 'node:assert/strict';
        import { test } from 'node:test';
        import { start } from 'localplane';
        test('fails', async () => {
          const lp = await start({ port: 0, objstorePort: 0 });
          try {
            assert.equal((await fetch(lp.apiUrl + '/_localplane/health')).status, 418);
          } finally {
            await lp.stop();
          }
        });`,
    },
  },
  {
    name: 'pytest',
    command: pytestRecipe.command,
    // -B and no cache provider: no __pycache__ nor .pytest_cache left in the recipe's folder.
    args: (only) => [
      '-B',
      '-m',
      'pytest',
      '-p',
      'no:cacheprovider',
      ...pytestRecipe.plugin,
      only ? join(recipe('pytest'), only) : recipe('pytest'),
    ],
    passed: /^=+ 2 passed in [\d.]+s =+$/m,
    failing: {
      file: 'test_failing.py',
      source: `import urllib.request


def test_fails(localplane):
    request = urllib.request.Request(localplane.api_url + "/api/v1/bulk-exports/destinations")
    request.add_header("X-API-Key", "lp_test_acme_plus_0001")
    with urllib.request.urlopen(request) as response:
        assert response.status == 418
`,
      // The plugin's report section: the request the failing test made.
      also: '/api/v1/bulk-exports/destinations -> 200',
    },
    missing: pytestRecipe.missing,
    env: pytestRecipe.env,
  },
];

/** The recipe's runner as a user runs it, outside this vitest run (none of its variables). */
function run({ command, args, env }: Recipe, only?: string) {
  const child = spawn(command, args(only), {
    cwd: REPO_ROOT,
    env: { ...userEnvironment(), ...env, CI: 'true', NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  return new Promise<{ code: number | null; output: string }>((resolve) =>
    child.once('close', (code) => resolve({ code, output })),
  );
}

for (const entry of RECIPES) {
  // Without its runner, a recipe fails on CI (.ci/run installs it) and is skipped elsewhere, its name saying what to
  // install.
  const skipped = entry.missing !== undefined && !process.env.CI;
  describe.skipIf(skipped)(`recipe ${entry.name}${skipped ? ` (skipped: ${entry.missing})` : ''}`, () => {
    if (entry.missing !== undefined) {
      beforeAll(() => {
        throw new Error(entry.missing);
      });
    }

    it('passes, importing localplane as a user does', async () => {
      const result = await run(entry);
      expect(result.code, result.output).toBe(0);
      expect(result.output).toMatch(entry.passed);
    });

    it('reports a failing assertion with a non-zero exit', async () => {
      const file = join(recipe(entry.name), entry.failing.file);
      writeFileSync(file, entry.failing.source);
      try {
        const result = await run(entry, entry.failing.file);
        expect(result.code, result.output).not.toBe(0);
        expect(result.output).toMatch(/418/);
        if (entry.failing.also !== undefined) expect(result.output).toContain(entry.failing.also);
      } finally {
        rmSync(file, { force: true });
      }
    });
  });
}
