// `localplane fixtures from-recording`: a recording of real exchanges with an upstream localplane
// becomes a fixtures directory that starts an instance with the upstream's resources.
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_FIXTURES_DIR, loadFixtures } from '../../src/fixtures/files.ts';
import { start, type Localplane } from '../../src/index.ts';
import type { RunResponse } from '../../src/bulk-exports/schemas.ts';
import {
  fixturesFromRecording,
  FromRecordingError,
  REPORT_FILE,
  type FromRecordingReport,
} from '../../src/recording/fixtures.ts';
import { expectUsageError, runCli } from '../support/cli.ts';
import { Api } from '../support/instance.ts';
import { RECORDED_BUCKET, RECORDED_OBJSTORE_KEY, recordScenario, type RecordedScenario } from './support/scenario.ts';

const scratch = mkdtempSync(join(tmpdir(), 'localplane-from-recording-'));
const cacheDir = join(scratch, 'cache');
const recording = join(scratch, 'recording.har');
/** What the upstream answered the recorder's client, to compare the started instance's answers with. */
let seen: RecordedScenario;
const globex = () => seen.workspace;

/** The fixture files as parsed, for the tests that spoil them: the parts those reach, any value allowed. */
type Fields = Record<string, unknown>;
interface BulkExportsJson {
  workspaces: { destinations: Fields[]; exports: Fields[] }[];
}
interface DeploymentsJson {
  workspaces: { listed_deployments: Fields[] }[];
}
interface ObjstoreJson {
  buckets: string[];
}

beforeAll(async () => {
  mkdirSync(cacheDir, { mode: 0o700 });
  const upstream = await start({ port: 0, objstorePort: 0, freezeClock: true, seed: 2, log: () => {} });
  try {
    seen = await recordScenario({ upstream, out: recording });
  } finally {
    await upstream.stop();
  }
});

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/**
 * Every file of the directory holds none of the recording's secrets (but the fixture key pairs',
 * which its objstore.json holds as the shipped one does), nor the recorded key pair's id, nor a masked value.
 */
function expectNoSecretIn(dir: string): void {
  const fixtureSecrets = new Set(loadFixtures(DEFAULT_FIXTURES_DIR).objstore.keys.map((key) => key.secret_access_key));
  const secrets = [
    ...seen.secrets.filter((secret) => !fixtureSecrets.has(secret)),
    RECORDED_OBJSTORE_KEY.access_key_id,
    '********',
  ];
  for (const name of readdirSync(dir)) {
    const text = readFileSync(join(dir, name), 'utf8');
    for (const secret of secrets) expect(text, `${name} holds ${secret}`).not.toContain(secret);
  }
}

describe('fixtures from-recording', () => {
  let report: FromRecordingReport;
  let dir: string;
  let instance: Localplane;
  let api: ReturnType<Api['as']>;

  beforeAll(async () => {
    dir = join(scratch, 'recorded-only');
    report = fixturesFromRecording({ recording, out: dir, recordedOnly: true });
    instance = await start({ fixturesDir: dir, port: 0, objstorePort: 0, freezeClock: true, cacheDir, log: () => {} });
    api = new Api(instance.apiUrl).as({ id: report.workspace.id, api_key: report.workspace.apiKey });
  });
  afterAll(async () => {
    await instance?.stop();
  });

  it('puts the recorded resources in the recorded workspace, with a new API key, and says so', () => {
    expect(report.workspace).toMatchObject({ id: globex().id, name: globex().name });
    expect(report.workspace.apiKey).toMatch(/^lp_recorded_[0-9a-f]{24}$/);
    expect(report.placed).toMatchObject({
      deployments: seen.deployments.length - 1,
      listeners: 3,
      'OAuth providers': 4,
      destinations: 2,
      exports: 2,
      'codehost integrations': 1,
    });
    expect(report.notPlaced).toEqual([]);
    const text = readFileSync(join(dir, REPORT_FILE), 'utf8');
    expect(text).toContain(`Workspace ${globex().id} (${globex().name}), API key ${report.workspace.apiKey}`);
    expect(text).toMatch(/revisions were only named by their deployments/);
    expect(text).toMatch(/Export runs are not kept/);
    // The recording keeps secrets' names (only their values are masked), so none is made up.
    expect(text).not.toMatch(/RECORDED_SECRET/);
  });

  it(
    'answers GET /v2/deployments as the upstream did: the same deployments, ids, names, sources, configs, ' +
      'statuses, times and secret names; the deleted one absent',
    async () => {
      const answer = await api.get('/v2/deployments?limit=100');
      expect(answer.status).toBe(200);
      expect(seen.deployments.find((deployment) => deployment.id === seen.deletedDeploymentId)).toMatchObject({
        status: 'AWAITING_DELETE',
      });
      const upstreamDeployments = seen.deployments.filter((deployment) => deployment.id !== seen.deletedDeploymentId);
      expect(answer.body.resources).toHaveLength(upstreamDeployments.length);
      expect(upstreamDeployments.some((deployment) => deployment.secrets.length > 0)).toBe(true);
      for (const [index, upstreamDeployment] of upstreamDeployments.entries())
        expect(answer.body.resources[index], upstreamDeployment.name).toEqual(upstreamDeployment);
      for (const [id, revisions] of seen.revisions)
        expect((await api.get(`/v2/deployments/${id}/revisions`)).body.resources).toEqual(revisions);
    },
  );

  it(
    'has the OAuth provider without its client secret, the listener, the destination on the fixture objstore and ' +
      'the export',
    async () => {
      expect((await api.get('/v2/auth/providers')).body).toContainEqual(seen.provider);
      expect((await api.get('/v2/listeners?limit=100')).body.resources).toContainEqual(seen.listener);
      const { credentials_keys: _keys, ...destination } = seen.destination;
      expect((await api.get(`/api/v1/bulk-exports/destinations/${seen.destination.id}`)).body).toMatchObject(
        destination,
      );
      const { status, updated_at: _updated, ...settings } = seen.pendingExport;
      expect((await api.get(`/api/v1/bulk-exports/${seen.pendingExport.id}`)).body).toMatchObject(settings);
      expect(status).toMatch(/^(Created|Running|Completed)$/);
    },
  );

  it('runs the recorded export into the recorded bucket, now a fixture bucket, signing with the fixture key pair', async () => {
    expect(loadFixtures(dir).objstore.buckets).toContain(RECORDED_BUCKET);
    const path = `/api/v1/bulk-exports/${seen.pendingExport.id}`;
    // The instance's clock is frozen (so the deployments compare as recorded): run the export's work.
    await instance.clock.runUntilIdle();
    expect((await api.get(path)).body.status).toBe('Completed');
    const runs = (await api.get<RunResponse[]>(`${path}/runs`)).body;
    const files = runs.flatMap((run) => run.metadata.result?.exported_files ?? []);
    expect(files.length).toBeGreaterThan(0);
    for (const file of files)
      expect(file).toMatch(new RegExp(`^${RECORDED_BUCKET}/traces/recorded/export_id=${seen.pendingExport.id}/`));
  });

  it.each([
    [
      'bulk-exports.json',
      (file: BulkExportsJson) => (file.workspaces[0].destinations[0].objstore_key = 'LPNOSUCHKEY'),
      /LPNOSUCHKEY is not a key of objstore\.json[^]*workspaces\[0\]\.destinations\[0\]\.objstore_key/,
    ],
    [
      'bulk-exports.json',
      (file: BulkExportsJson) => (file.workspaces[0].exports[0].session_id = '00000000-0000-4000-8000-000000000000'),
      /not a tracing project[^]*exports\[0\]\.session_id/,
    ],
    [
      'bulk-exports.json',
      (file: BulkExportsJson) => (file.workspaces[0].exports[0].filter = 'eq(name'),
      /a filter that parses[^]*exports\[0\]\.filter/,
    ],
    [
      'deployments.json',
      (file: DeploymentsJson) =>
        (file.workspaces[0].listed_deployments[0].secrets = [{ name: 'OPENAI_API_KEY', value: 'sk-live' }]),
      /Unrecognized key: "value"[^]*listed_deployments\[0\]\.secrets\[0\]/,
    ],
    [
      'deployments.json',
      (file: DeploymentsJson) =>
        (file.workspaces[0].listed_deployments[0].active_revision_id = '00000000-0000-4000-8000-000000000000'),
      /not one of this deployment's revisions[^]*listed_deployments\[0\]\.active_revision_id/,
    ],
    ['objstore.json', (file: ObjstoreJson) => file.buckets.push('../../victim'), /a bucket name is[^]*buckets\[4\]/],
  ])(
    'the fixtures it writes are checked as untrusted input: a bad value in %s is refused naming the file and the field',
    (name, spoil, words) => {
      const spoilt = join(scratch, `spoilt-${name}-${Math.random().toString(36).slice(2)}`);
      cpSync(dir, spoilt, { recursive: true });
      const file = JSON.parse(readFileSync(join(spoilt, name), 'utf8'));
      spoil(file);
      writeFileSync(join(spoilt, name), JSON.stringify(file));
      expect(() => loadFixtures(spoilt)).toThrow(
        new RegExp(`^invalid fixture file ${join(spoilt, name).replaceAll('.', '\\.')}: [^]*${words.source}`),
      );
    },
  );

  it('writes no secret: no recorded value, no masked one, not the upstream API key', () => {
    expectNoSecretIn(dir);
    const recorded = readFileSync(recording, 'utf8');
    expect(seen.secrets.filter((secret) => recorded.includes(secret))).toEqual([]);
  });
});

describe('localplane fixtures from-recording (the CLI)', () => {
  it('writes the directory, the shipped workspaces beside the recorded one, and prints the report it keeps', async () => {
    const dir = join(scratch, 'cli');
    const result = await runCli(['fixtures', 'from-recording', recording, '--out', dir]);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toBe(readFileSync(join(dir, REPORT_FILE), 'utf8'));
    const apiKey = /API key (\S+)/.exec(result.stdout)![1]!;
    const fixtures = loadFixtures(dir);
    expect(fixtures.workspaces.workspaces.map((workspace) => [workspace.name, workspace.api_key === apiKey])).toEqual([
      ['Acme Analytics', false],
      ['Initech Hobby', false],
      ['Globex Research', true],
    ]);
    expect(
      fixtures.deployments.workspaces
        .find((workspace) => workspace.workspace_id === globex().id)!
        .listed_deployments.map((deployment) => deployment.id),
    ).not.toContain(seen.deletedDeploymentId);
    expectNoSecretIn(dir);
  });

  it('refuses a file that is not a HAR recording, and an --out that is not empty (exit code 2)', async () => {
    const notJson = join(scratch, 'not-json.har');
    writeFileSync(notJson, 'GET /v2/deployments 200');
    const notHar = join(scratch, 'not-har.har');
    writeFileSync(notHar, JSON.stringify({ log: { entries: [] } }));
    await expectUsageError(
      ['fixtures', 'from-recording', notJson, '--out', join(scratch, 'never-1')],
      /not-json\.har is not JSON/,
    );
    await expectUsageError(
      ['fixtures', 'from-recording', notHar, '--out', join(scratch, 'never-2')],
      /not-har\.har is not a HAR recording: log\.version/,
    );
    const used = join(scratch, 'used');
    mkdirSync(used);
    writeFileSync(join(used, 'notes.txt'), 'mine');
    await expectUsageError(['fixtures', 'from-recording', recording, '--out', used], /--out .*used is not empty/);
    expect(readdirSync(used)).toEqual(['notes.txt']);
    expect(() => fixturesFromRecording({ recording: notHar, out: join(scratch, 'never-3') })).toThrow(
      FromRecordingError,
    );
    expect(readdirSync(scratch)).not.toContain('never-1');
  });
});
