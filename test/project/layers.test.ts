// The layers of src/ (docs/architecture.md, "Layers"): each rule names imports that point the wrong way.
import path from 'node:path';
import { cruise, type IRegularForbiddenRuleType, type IViolation } from 'dependency-cruiser';
import { beforeAll, describe, expect, it } from 'vitest';

const REPO = path.resolve(import.meta.dirname, '../..');
const COMPOSITION_ROOT = '^src/(localplane|cli|index)\\.ts$';

/** Static, dynamic (`import('./x.ts')`) and type-only imports alike: each is a dependency. */
const RULES: IRegularForbiddenRuleType[] = [
  {
    name: 'shared-is-the-bottom',
    comment: 'src/shared/ imports nothing of src/ outside shared/ (node built-ins and npm packages only)',
    from: { path: '^src/shared/' },
    to: { path: '^src/', pathNot: '^src/shared/' },
  },
  {
    name: 'openapi-knows-no-domain',
    comment: 'src/openapi/ imports only shared/: the domains name their components and declare their routes with it',
    from: { path: '^src/openapi/' },
    to: { path: '^src/', pathNot: '^src/(openapi|shared)/' },
  },
  {
    name: 'objstore-storage-below-server',
    comment: "the objstore's storage and plain-file view do not import its server",
    from: { path: '^src/objstore/(storage|file-view)/' },
    to: { path: '^src/objstore/server/' },
  },
  {
    name: 'objstore-not-a-client',
    comment: 'the objstore (the S3 server side) does not import the S3 client side (destinations/)',
    from: { path: '^src/objstore/' },
    to: { path: '^src/destinations/' },
  },
  {
    name: 'no-composition-root-below-it',
    comment:
      'only the composition root (localplane.ts, cli.ts, index.ts) imports itself and admin/; test-runners/ is ' +
      'above it, a user of the package API',
    from: { path: '^src/', pathNot: `${COMPOSITION_ROOT}|^src/(admin|test-runners)/` },
    to: { path: `${COMPOSITION_ROOT}|^src/admin/` },
  },
  {
    name: 'test-runners-on-top',
    comment: 'nothing below src/test-runners/ (localplane/vitest, localplane/jest/*) imports it',
    from: { path: '^src/', pathNot: '^src/test-runners/' },
    to: { path: '^src/test-runners/' },
  },
  {
    name: 'test-runners-use-the-package-api',
    comment: 'src/test-runners/ imports only the package API (index.ts) and its own files',
    from: { path: '^src/test-runners/' },
    to: { path: '^src/', pathNot: '^src/(index\\.ts$|test-runners/)' },
  },
  {
    name: 'helpers-know-no-domain',
    comment: 'config.ts and progress.ts import shared/ only',
    from: { path: '^src/(config|progress)\\.ts$' },
    to: { path: '^src/', pathNot: '^src/shared/' },
  },
  {
    name: 'core-knows-no-domain',
    comment: 'core.ts imports shared/, fixtures/, config.ts and progress.ts only',
    from: { path: '^src/core\\.ts$' },
    to: { path: '^src/', pathNot: '^src/(shared/|fixtures/|(config|progress)\\.ts$)' },
  },
  {
    name: 'no-cycle',
    comment: 'a cycle makes load order matter and hides who depends on whom',
    from: { path: '^src/' },
    to: { circular: true },
  },
];

interface Dependency {
  resolved: string;
  dependencyTypes: string[];
}

let modules: Map<string, Dependency[]>;
let violations: IViolation[];

beforeAll(async () => {
  const { output } = await cruise(['src'], {
    baseDir: REPO,
    // Type-only imports are read from the TypeScript source (they are gone from its JavaScript).
    tsPreCompilationDeps: true,
    includeOnly: '^src/',
    validate: true,
    ruleSet: { forbidden: RULES.map((rule) => ({ ...rule, severity: 'error' })) },
  });
  if (typeof output === 'string') throw new Error('dependency-cruiser answered text, not its result');
  modules = new Map(output.modules.map((module) => [module.source, module.dependencies]));
  violations = output.summary.violations;
});

const ruleComments = new Map(RULES.map((rule) => [rule.name, rule.comment]));

/** `a.ts -> b.ts breaks <rule> (<what the rule says>)`; a cycle is told whole. */
function describeViolation(violation: IViolation): string {
  const imports = violation.cycle
    ? [violation.from, ...violation.cycle.map((step) => step.name)]
    : [violation.from, violation.to];
  return `${imports.join(' -> ')} breaks ${violation.rule.name} (${ruleComments.get(violation.rule.name)})`;
}

describe('src/ layers', () => {
  it('reads static, dynamic and type-only imports of every module', () => {
    const importsOf = (module: string) =>
      (modules.get(module) ?? []).map(({ resolved, dependencyTypes }) => `${resolved} ${dependencyTypes.join(',')}`);
    expect(modules.size).toBeGreaterThan(150);
    expect(importsOf('src/localplane.ts')).toContain('src/core.ts local,import');
    // Loaded on the first request.
    expect(importsOf('src/objstore/objstore.ts')).toContain('src/objstore/server/gateway.ts local,dynamic-import');
    expect(importsOf('src/cli.ts')).toContain('src/localplane.ts local,type-only,import');
  });

  it('has no import that points the wrong way, nor a cycle', () => {
    expect(violations.map(describeViolation)).toEqual([]);
  });

  it(
    "never loads DuckDB into the instance's process, not even on first use: its own process does " +
      '(docs/architecture.md, "What a start loads")',
    () => {
      const loadable = new Set<string>();
      const visit = (module: string) => {
        if (loadable.has(module)) return;
        loadable.add(module);
        for (const { resolved, dependencyTypes } of modules.get(module) ?? []) {
          if (!dependencyTypes.includes('type-only')) visit(resolved);
        }
      };
      visit('src/localplane.ts');
      expect(loadable).toContain('src/warehouse/duckdb-process.ts');
      expect(
        [...loadable].filter((module) =>
          ['src/warehouse/sandbox.ts', 'src/warehouse/duckdb.ts', 'src/warehouse/duckdb-child.ts'].includes(module),
        ),
      ).toEqual([]);
    },
  );
});
