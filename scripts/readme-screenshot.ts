/**
 * npm run screenshot:readme
 *
 * The README's picture of the dashboard, docs/images/dashboard.png, is a browser test's screenshot: this runs that one
 * test (test/ui/support/readme-picture.ts names it and sets up its scene) with UPDATE_README_PICTURE set, and the test
 * copies the screenshot it saves in test-results/screenshots/ over the picture. Rerun after changing the dashboard,
 * and commit the picture.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { README_TEST_FILE, README_TEST_NAME, UPDATE_README_PICTURE } from '../test/ui/support/readme-picture.ts';

/** The command that runs the picture's test alone. */
export const README_TEST_COMMAND = ['npx', 'vitest', 'run', README_TEST_FILE, '-t', README_TEST_NAME] as const;

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [command, ...args] = README_TEST_COMMAND;
  const run = spawnSync(command, args, {
    stdio: 'inherit',
    cwd: fileURLToPath(new URL('..', import.meta.url)),
    env: { ...process.env, [UPDATE_README_PICTURE]: '1' },
  });
  if (run.status !== 0) throw new Error(`${README_TEST_COMMAND.join(' ')} failed (exit ${run.status})`);
}
