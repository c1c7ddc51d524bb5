/**
 * npm run screenshot:readme keeps making the README's picture of the dashboard from the overview browser test's
 * screenshot: the script runs exactly that test (it sets up the picture's scene, and checks that the committed picture
 * has its screenshot's size), and the README shows the picture under the lines that open the dashboard.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { README_TEST_COMMAND } from '../../scripts/readme-screenshot.ts';
import { REPO_ROOT } from '../support/cli.ts';
import { README_PICTURE, README_TEST_FILE, README_TEST_NAME } from '../ui/support/readme-picture.ts';

/** Width and height from a PNG's IHDR chunk. */
const pngSize = (bytes: Buffer) => ({
  signature: bytes.subarray(1, 4).toString('latin1'),
  width: bytes.readUInt32BE(16),
  height: bytes.readUInt32BE(20),
});

describe('npm run screenshot:readme', () => {
  it('runs the one browser test that screenshots the README scene, and no other', () => {
    const { scripts } = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(scripts['screenshot:readme']).toBe('tsx scripts/readme-screenshot.ts');
    const [command, ...args] = README_TEST_COMMAND;
    expect([command, ...args.slice(0, 2)]).toEqual(['npx', 'vitest', 'run']);
    const listed = spawnSync(command, ['vitest', 'list', ...args.slice(2)], { cwd: REPO_ROOT, encoding: 'utf8' });
    expect(listed.status, listed.stderr).toBe(0);
    expect(listed.stdout.trim().split('\n')).toEqual([
      `${README_TEST_FILE} > the README's picture > ${README_TEST_NAME}`,
    ]);
  });

  it('the README shows the committed picture, 1280 px wide, under the two lines that open the dashboard', () => {
    const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
    expect(readme).toContain('```sh\nnpx localplane start\n# then open http://127.0.0.1:9400/ui\n```');
    expect(readme).toContain(`](${relative(REPO_ROOT, README_PICTURE)})`);
    expect(readme).toContain(`The picture is the screenshot of a browser test (\`${README_TEST_FILE}\`)`);
    expect(pngSize(readFileSync(README_PICTURE))).toMatchObject({ signature: 'PNG', width: 1280 });
  });
});
