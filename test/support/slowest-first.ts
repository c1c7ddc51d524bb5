import { existsSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The files that take longest, longest first (measured in full runs: child processes, a fuzz
 * run, crash and snapshot cycles, Chromium). The pool starts them first, so that none of them
 * begins near the end and holds the run up alone. Vitest's own order (by the durations it
 * cached in an earlier run, else by file size) does this only on a machine that has run the
 * suite before, and CI's clone never has.
 */
export const SLOWEST_FILES = [
  'test/python/pytest.test.ts',
  'test/project/recipes.test.ts',
  'test/instance/robustness-fuzz.test.ts',
  'test/cli/cli.test.ts',
  'test/snapshots/safety.test.ts',
  'test/instance/crash-safety.test.ts',
  'test/workspaces/isolation.test.ts',
  'test/project/examples.test.ts',
  'test/instance/memory-per-request.test.ts',
  'test/recording/verify.test.ts',
  'test/objstore/keys.test.ts',
  'test/demo/demo.test.ts',
  'test/objstore/many-parts.test.ts',
  'test/openapi/docs-browser.test.ts',
  'test/ui/deployments-browser.test.ts',
  'test/ui/faults-browser.test.ts',
  'test/journal/request-log.test.ts',
];

const missing = SLOWEST_FILES.filter((file) => !existsSync(resolve(import.meta.dirname, '../..', file)));
if (missing.length > 0)
  throw new Error(`test/support/slowest-first.ts names files that are gone: ${missing.join(', ')}`);

export class SlowestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (file: TestSpecification) => {
      const at = SLOWEST_FILES.indexOf(relative(this.ctx.config.root, file.moduleId));
      return at === -1 ? SLOWEST_FILES.length : at;
    };
    const byVitest = await super.sort(files);
    return byVitest
      .map((file, order) => ({ file, order }))
      .sort((a, b) => rank(a.file) - rank(b.file) || a.order - b.order)
      .map(({ file }) => file);
  }
}
