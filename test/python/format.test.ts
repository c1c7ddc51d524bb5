import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/cli.ts';
import { findPython } from '../support/python.ts';

/** The Python code's layout is black's (python/pyproject.toml configures it; `npm run format:python` applies it). */
const PYTHON_CODE = ['python', 'examples/recipes/pytest'];

const found = findPython(['black'], 'apt-get install black, or pip install black');

// Without black, the file fails on CI (.ci/run installs Debian's) and is skipped elsewhere, saying what to install.
const skipped = found.missing !== undefined && !process.env.CI;
describe.skipIf(skipped)(`the Python code's layout${skipped ? ` (skipped: ${found.missing})` : ''}`, () => {
  it(`is black's in ${PYTHON_CODE.join(' and ')}`, () => {
    if (found.python === undefined) throw new Error(found.missing);
    const result = spawnSync(
      found.python,
      ['-m', 'black', '--config', 'python/pyproject.toml', '--check', '--diff', ...PYTHON_CODE],
      { cwd: REPO_ROOT, encoding: 'utf8' },
    );
    expect(result.status, `${result.stdout}${result.stderr}\nnpm run format:python lays it out`).toBe(0);
  });
});
