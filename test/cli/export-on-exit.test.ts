import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, startCli } from '../support/cli.ts';
import { Api, credentialsOf, fullKey, workspaceByTier, type FixturesView } from '../support/instance.ts';

const scratch = mkdtempSync(join(tmpdir(), 'localplane-cli-snapshots-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const destinationsOf = async (api: Api, fixtures: FixturesView) =>
  (await api.as(workspaceByTier(fixtures, 'plus')).get('/api/v1/bulk-exports/destinations')).body as {
    id: string;
    display_name: string;
  }[];

describe('localplane start --export-on-exit and --import', () => {
  it('writes the state on SIGTERM, and a later start from it (LOCALPLANE_IMPORT) has it back', async () => {
    const file = join(scratch, 'on-exit.snapshot');
    const first = await startCli(['--export-on-exit', file]);
    const api = new Api(first.apiUrl);
    const fixtures = (await api.request<FixturesView>('GET', '/_localplane/fixtures')).body;
    const created = await api.as(workspaceByTier(fixtures, 'plus')).post('/api/v1/bulk-exports/destinations', {
      display_name: 'kept by the snapshot',
      config: { bucket_name: fixtures.objstore.buckets[0], prefix: 'kept' },
      credentials: credentialsOf(fullKey(fixtures)),
    });
    expect(created.status, created.text).toBe(200);
    expect(await first.kill('SIGTERM')).toEqual({ code: 0, signal: null });
    expect(existsSync(file)).toBe(true);

    const second = await startCli([], { ...process.env, LOCALPLANE_IMPORT: file });
    try {
      const restored = await destinationsOf(new Api(second.apiUrl), fixtures);
      expect(restored.map((destination) => destination.id)).toEqual([created.body.id]);
    } finally {
      await second.kill('SIGINT');
    }
    const third = await startCli(['--import', file]);
    try {
      expect(
        (await destinationsOf(new Api(third.apiUrl), fixtures)).map((destination) => destination.display_name),
      ).toEqual(['kept by the snapshot']);
    } finally {
      await third.kill('SIGHUP');
    }
  });

  it('refuses a missing or damaged file with one line and exit code 2', async () => {
    const damaged = join(scratch, 'damaged.snapshot');
    writeFileSync(damaged, 'localplane-snapshot 1\n{"not": "a header"}\n');
    for (const [file, words] of [
      [join(scratch, 'missing.snapshot'), 'does not exist'],
      [damaged, 'its header is damaged'],
    ] as const) {
      const run = await runCli(['start', '--port', '0', '--objstore-port', '0', '--import', file]);
      expect(run.code, run.stderr).toBe(2);
      expect(run.stderr.trim().split('\n')).toHaveLength(1);
      expect(run.stderr).toContain(words);
      expect(run.stdout).toBe('');
    }
  });
});
