import { spawnSync } from 'node:child_process';

/** Debian's Python, which python3-pytest, python3-pytest-xdist and python3-boto3 install into (.ci/run on CI). */
const DEBIAN_PYTHON = '/usr/bin/python3';

export type FoundPython = { python: string; missing?: undefined } | { python?: undefined; missing: string };

/**
 * The Python that imports all of `modules`: Debian's /usr/bin/python3 first (a python3 of pyenv or a venv, first on
 * PATH, may have other versions of them or lack some), else the python3 on PATH. Where neither does, `missing` says
 * so and how to `install` them.
 */
export function findPython(modules: readonly string[], install: string): FoundPython {
  const imports = (python: string) =>
    spawnSync(python, ['-c', `import ${modules.join(', ')}`], { stdio: 'ignore' }).status === 0;
  const python = [DEBIAN_PYTHON, 'python3'].find(imports);
  if (python !== undefined) return { python };
  return {
    missing: `python3 cannot import ${modules.join(', ')}: install them (${install})`,
  };
}

/** The environment of a program a test runs as a user would, outside this vitest run (none of its variables). */
export function userEnvironment(): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !/^(VITEST|NODE_OPTIONS$|TEST$)/.test(name)),
  );
}
