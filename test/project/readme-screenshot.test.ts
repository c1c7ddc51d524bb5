/**
 * npm run screenshot:readme keeps working: the README's picture of the dashboard, made the way
 * the script makes it (into a temp file here, on free ports), and the README's lines that open it.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { captureDashboard, README_SCREENSHOT } from '../../scripts/readme-screenshot.ts';
import { REPO_ROOT } from '../support/cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'readme-screenshot-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Width and height from a PNG's IHDR chunk. */
const pngSize = (bytes: Buffer) => ({
  signature: bytes.subarray(1, 4).toString('latin1'),
  width: bytes.readUInt32BE(16),
  height: bytes.readUInt32BE(20),
});

describe('npm run screenshot:readme', () => {
  it('saves the overview of an instance that has run an export, at 1280x800, from a page that logged no error', async () => {
    const file = join(dir, 'dashboard.png');
    const { pageErrors } = await captureDashboard({ file, port: 0, objstorePort: 0 });
    expect(pageErrors).toEqual([]);
    expect(pngSize(readFileSync(file))).toEqual({ signature: 'PNG', width: 1280, height: 800 });
  });

  it('the README shows the committed picture under the two lines that open the dashboard', () => {
    const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
    expect(readme).toContain('```sh\nnpx localplane start\n# then open http://127.0.0.1:9400/ui\n```');
    expect(readme).toContain(`](${relative(REPO_ROOT, README_SCREENSHOT)})`);
    expect(pngSize(readFileSync(README_SCREENSHOT))).toEqual({ signature: 'PNG', width: 1280, height: 800 });
  });
});
