import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, REPO_ROOT } from '../support/cli.ts';
import { findPython, userEnvironment } from '../support/python.ts';

/**
 * python/tests, the Python package's suite, run once by Debian's pytest against instances of this checkout's
 * bin/localplane.js (npm test's pretest builds dist/), each pytest test reported as a vitest test of its own.
 */
const PYTHON_DIR = join(REPO_ROOT, 'python');
/** The whole Python run, in the beforeAll: about 60 s on 2 busy cores, with room to spare. */
const PYTEST_TIMEOUT = 300_000;

const found = findPython(
  ['pytest'],
  'apt-get install python3-pytest python3-pytest-xdist python3-boto3, or pip install pytest pytest-xdist boto3',
);

/** The user's environment without a localplane of theirs: the plugin starts its own, of this checkout. */
function pytestEnvironment(): NodeJS.ProcessEnv {
  const { LOCALPLANE_URL: _url, LOCALPLANE_ADMIN_TOKEN: _token, ...env } = userEnvironment();
  return { ...env, LOCALPLANE_BIN: BIN, NO_COLOR: '1' };
}

const PYTEST_ARGS = ['-m', 'pytest', '-q', '-p', 'no:cacheprovider'];

/** The node ids pytest collects (the lines before its summary), or what it said when it collected none. */
function collect(python: string): { ids: string[]; output: string } {
  const result = spawnSync(python, [...PYTEST_ARGS, '--collect-only'], {
    cwd: PYTHON_DIR,
    env: pytestEnvironment(),
    encoding: 'utf8',
  });
  const output = `${result.stdout}${result.stderr}`;
  if (result.status !== 0) return { ids: [], output };
  const listing = result.stdout.split('\n\n')[0];
  return { ids: listing.split('\n').filter((line) => line.includes('::')), output };
}

interface Outcome {
  status: 'passed' | 'failed' | 'skipped';
  /** The failure's or the skip's text. */
  text: string;
}

const ENTITIES: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

function unescapeXml(text: string): string {
  return text.replace(/&(#x[\da-f]+|#\d+|\w+);/gi, (entity, name: string) =>
    name.startsWith('#x') || name.startsWith('#X')
      ? String.fromCodePoint(parseInt(name.slice(2), 16))
      : name.startsWith('#')
        ? String.fromCodePoint(Number(name.slice(1)))
        : (ENTITIES[name] ?? entity),
  );
}

/**
 * The junit report's test cases by the key `caseKey` gives a node id. pytest names a case by its node id: the file's
 * path as a dotted module and any classes (`classname`), and the function with its parameters (`name`).
 */
function readJunit(xml: string): Map<string, Outcome> {
  const outcomes = new Map<string, Outcome>();
  for (const [, attributes, body = ''] of xml.matchAll(/<testcase\b([^>]*?)(?:\/>|>([\s\S]*?)<\/testcase>)/g)) {
    const attribute = (name: string) => unescapeXml(new RegExp(`\\b${name}="([^"]*)"`).exec(attributes)?.[1] ?? '');
    const element = (tag: string) => {
      const match = new RegExp(`<${tag}\\b([^>]*?)(?:/>|>([\\s\\S]*?)</${tag}>)`).exec(body);
      if (match === null) return undefined;
      const message = /\bmessage="([^"]*)"/.exec(match[1])?.[1];
      return unescapeXml([message, match[2]].filter(Boolean).join('\n'));
    };
    const failure = element('failure') ?? element('error');
    const skipped = element('skipped');
    outcomes.set(
      `${attribute('classname')}\n${attribute('name')}`,
      failure !== undefined
        ? { status: 'failed', text: failure }
        : skipped !== undefined
          ? { status: 'skipped', text: skipped }
          : { status: 'passed', text: '' },
    );
  }
  return outcomes;
}

/** A node id's junit key, as pytest's junitxml names it (mangle_test_address). */
function caseKey(id: string): string {
  const bracket = id.indexOf('[');
  const path = bracket === -1 ? id : id.slice(0, bracket);
  const names = path.split('::');
  names[0] = names[0].replaceAll('/', '.').replace(/\.py$/, '');
  names[names.length - 1] += bracket === -1 ? '' : id.slice(bracket);
  return `${names.slice(0, -1).join('.')}\n${names.at(-1)}`;
}

/**
 * A failed test's part of pytest's output: from its heading (`____ TestClass.test_name[param] ____`) to the next
 * heading or summary line, with the traceback and the plugin's "localplane" section, which the junit report leaves
 * out.
 */
function failureBlock(output: string, id: string): string | undefined {
  const heading = ` ${id.split('::').slice(1).join('.')} `;
  const lines = output.split('\n');
  const start = lines.findIndex((line) => /^_{3,} /.test(line) && line.replace(/^_+|_+$/g, '') === heading);
  if (start === -1) return undefined;
  const end = lines.findIndex(
    (line, at) => at > start && /^(_{3,} .* _{3,}|={3,} .* ={3,}|-{3,} generated xml file: .* -{3,})$/.test(line),
  );
  return lines.slice(start, end === -1 ? undefined : end).join('\n');
}

// Without a python3 that imports pytest, the file fails on CI (.ci/run installs Debian's) and is skipped elsewhere,
// its name saying what to install.
const skipped = found.missing !== undefined && !process.env.CI;
describe.skipIf(skipped)(`python/tests${skipped ? ` (skipped: ${found.missing})` : ''}`, () => {
  if (found.python === undefined) {
    it('runs with a python3 that imports pytest', () => {
      throw new Error(found.missing);
    });
    return;
  }
  const python = found.python;
  const collected = collect(python);
  if (collected.ids.length === 0) {
    it('collects the tests of python/tests', () => {
      expect.fail(`pytest collected no tests in ${PYTHON_DIR}:\n${collected.output}`);
    });
    return;
  }

  let reports: string;
  let outcomes: Map<string, Outcome>;
  let output = '';

  beforeAll(async () => {
    reports = mkdtempSync(join(tmpdir(), 'pytest-junit-'));
    const junit = join(reports, 'junit.xml');
    const child = spawn(python, [...PYTEST_ARGS, `--junitxml=${junit}`], {
      cwd: PYTHON_DIR,
      env: pytestEnvironment(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    // 0: all passed, 1: some failed; anything else (an internal error, a usage error) wrote no useful report.
    if (code !== 0 && code !== 1) throw new Error(`pytest ended with exit code ${code}:\n${output}`);
    outcomes = readJunit(readFileSync(junit, 'utf8'));
  }, PYTEST_TIMEOUT);
  afterAll(() => rmSync(reports, { recursive: true, force: true }));

  for (const id of collected.ids) {
    it(id, (context) => {
      const outcome = outcomes.get(caseKey(id));
      if (outcome === undefined) expect.fail(`pytest's report has no ${id}; pytest said:\n${output}`);
      if (outcome.status === 'skipped') context.skip(outcome.text);
      expect(outcome.status, failureBlock(output, id) ?? outcome.text).toBe('passed');
    });
  }
});

it("python/pyproject.toml's version is package.json's", () => {
  const { version } = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
  expect(readFileSync(join(PYTHON_DIR, 'pyproject.toml'), 'utf8')).toMatch(
    new RegExp(`^version = "${version.replaceAll('.', '\\.')}"$`, 'm'),
  );
});
