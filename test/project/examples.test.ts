import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { start, type Localplane } from '../../src/index.ts';
import { REPO_ROOT } from '../support/cli.ts';

/** Runs one of examples/*.sh against the instance, as a user would. */
function runExample(script: string, apiUrl: string) {
  const child = spawn('bash', [join(REPO_ROOT, 'examples', script)], {
    env: { ...process.env, LOCALPLANE_URL: apiUrl },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.once('close', (code) => resolve({ code, stdout, stderr })),
  );
}

describe('the example scripts run against a fresh instance', () => {
  let lp: Localplane;
  beforeAll(async () => {
    lp = await start({ port: 0, objstorePort: 0, log: () => {} });
  });
  afterAll(() => lp?.stop());

  it.each([
    [
      'bulk-export.sh',
      [
        'ok: three daily runs, each Completed with files',
        'bytes of Parquet',
        'ok: the export is Cancelled',
        'ok: GET /api/v1/bulk-exports/destinations/',
      ],
    ],
    [
      'deployments-read.sh',
      [
        'ok: a full first page of dev deployments named *bot*',
        'ok: only DEPLOYED or BUILD_FAILED revisions',
        'ok: GET /v2/deployments/not-a-uuid -> 422',
      ],
    ],
    [
      'deployments-write.sh',
      ['after 10 s: DEPLOYED', 'ok: the second revision is active', 'ok: three revisions, newest first', '-> 207'],
    ],
    [
      'deployments-deploy.sh',
      [
        'ok: uploaded ',
        '  | Building the image from graph.json.',
        'final status: DEPLOYED',
        'ok: the deploy log ends with the server live',
        'ok: GET /v2/deployments/',
      ],
    ],
  ])('%s exits 0', async (script, lines) => {
    const result = await runExample(script, lp.apiUrl);
    expect(result.code, result.stdout + result.stderr).toBe(0);
    for (const line of lines) expect(result.stdout).toContain(line);
    expect(result.stderr).not.toMatch(/^FAILED:/m);
    // Each script puts the clock back as it found it.
    expect((await (await fetch(`${lp.apiUrl}/_localplane/clock`)).json()).frozen).toBe(false);
  });

  it('a script stops at the first unexpected answer, with a non-zero exit', async () => {
    const stopped = await start({ port: 0, objstorePort: 0, log: () => {} });
    const url = stopped.apiUrl;
    await stopped.stop();
    const result = await runExample('deployments-read.sh', url);
    expect(result.code).not.toBe(0);
    expect(result.stdout).not.toContain('ok:');
  });
});
