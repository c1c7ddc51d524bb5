// The layers of src/ (docs/architecture.md, "Layers"), as .dependency-cruiser.cjs holds them: each rule names imports
// that point the wrong way. The architecture page shows the same rules and every top-level part of src/.
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { cruise, type IConfiguration, type IViolation } from 'dependency-cruiser';
import { beforeAll, describe, expect, it } from 'vitest';

const REPO = path.resolve(import.meta.dirname, '../..');
const CONFIG = createRequire(import.meta.url)(path.join(REPO, '.dependency-cruiser.cjs')) as IConfiguration;
const RULES = CONFIG.forbidden ?? [];
const ARCHITECTURE = readFileSync(path.join(REPO, 'docs/architecture.md'), 'utf8');

interface Dependency {
  resolved: string;
  dependencyTypes: string[];
}

let modules: Map<string, Dependency[]>;
let violations: IViolation[];

beforeAll(async () => {
  const { output } = await cruise(['src'], {
    ...CONFIG.options,
    baseDir: REPO,
    validate: true,
    ruleSet: { forbidden: RULES },
  });
  if (typeof output === 'string') throw new Error('dependency-cruiser answered text, not its result');
  modules = new Map(output.modules.map((module) => [module.source, module.dependencies]));
  violations = output.summary.violations;
});

const ruleComments = new Map(RULES.map((rule) => [rule.name, rule.comment]));

/** The section of docs/architecture.md under `heading`, up to the next one. */
const section = (heading: string) => ARCHITECTURE.split(`\n## ${heading}\n`)[1]!.split('\n## ')[0]!;

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

  it('are the rules docs/architecture.md shows, each rule named once in its table, and every rule is an error', () => {
    const documented = [...section('Layers').matchAll(/^\| ([a-z-]+) \|/gm)].map((match) => match[1]);
    expect(documented.filter((name) => name !== 'rule' && name !== '---')).toEqual(RULES.map((rule) => rule.name));
    expect(RULES.filter((rule) => rule.severity !== 'error').map((rule) => rule.name)).toEqual([]);
  });

  it("names every top-level folder and file of src/ in docs/architecture.md's layout", () => {
    const layout = section('Layout');
    const parts = readdirSync(path.join(REPO, 'src'), { withFileTypes: true }).map((entry) =>
      entry.isDirectory() ? `${entry.name}/` : entry.name,
    );
    expect(parts.length).toBeGreaterThan(20);
    expect(parts.filter((part) => !new RegExp(`^  ${part.replaceAll('.', '\\.')}\\s`, 'm').test(layout))).toEqual([]);
  });
});
