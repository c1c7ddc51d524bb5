// Guards the module graph of src/: a relative import cycle makes load order matter and hides who depends on whom.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

const SRC = path.resolve(import.meta.dirname, '../src');
const RELATIVE_IMPORT = /^\s*(?:import|export)\s[^;]*?from\s*'(\.{1,2}\/[^']+\.ts)'/gm;
/** `import('./x.ts')`: a module loaded on first use is as much a dependency as one imported at the top. */
const DYNAMIC_IMPORT = /\bimport\(\s*'(\.{1,2}\/[^']+\.ts)'\s*\)/g;

function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(directory, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(SRC)) {
    const text = readFileSync(file, 'utf8');
    const imported = [...text.matchAll(RELATIVE_IMPORT), ...text.matchAll(DYNAMIC_IMPORT)].map((match) => path.resolve(path.dirname(file), match[1]!));
    graph.set(file, imported);
  }
  return graph;
}

/** Depth-first search; returns every cycle found as a list of files, the first repeated at the end. */
function findCycles(graph: Map<string, string[]>): string[][] {
  const cycles: string[][] = [];
  const done = new Set<string>();
  const onPath: string[] = [];
  const visit = (file: string): void => {
    const index = onPath.indexOf(file);
    if (index >= 0) {
      cycles.push([...onPath.slice(index), file]);
      return;
    }
    if (done.has(file)) return;
    onPath.push(file);
    for (const imported of graph.get(file) ?? []) visit(imported);
    onPath.pop();
    done.add(file);
  };
  for (const file of graph.keys()) visit(file);
  return cycles;
}

describe('src/ module graph', () => {
  it('reads the relative imports of every module', () => {
    const graph = importGraph();
    expect(graph.get(path.join(SRC, 'localplane.ts'))).toContain(path.join(SRC, 'objstore/module.ts'));
    // Loaded on the first request.
    expect(graph.get(path.join(SRC, 'objstore/objstore.ts'))).toContain(path.join(SRC, 'objstore/server/gateway.ts'));
  });

  it('has no import cycle', () => {
    const cycles = findCycles(importGraph()).map((cycle) => cycle.map((file) => path.relative(SRC, file)).join(' -> '));
    expect(cycles).toEqual([]);
  });

  it("keeps the objstore's storage and file view below its server", () => {
    const server = path.join(SRC, 'objstore/server') + path.sep;
    const lower = [path.join(SRC, 'objstore/storage'), path.join(SRC, 'objstore/file-view')].map((folder) => folder + path.sep);
    const upward = [...importGraph()]
      .filter(([file]) => lower.some((folder) => file.startsWith(folder)))
      .flatMap(([file, imported]) => imported.filter((target) => target.startsWith(server)).map((target) => `${path.relative(SRC, file)} -> ${path.relative(SRC, target)}`));
    expect(upward).toEqual([]);
  });
});
