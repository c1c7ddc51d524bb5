import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { exportClient, harness } from '../support/exports.ts';
import {
  Api,
  eventually,
  useLocalplane,
  workspaceByTier,
  type FixturesView,
  type TestContext,
} from '../support/instance.ts';
import { parquetUpload, startObjstoreProxy, type ObjstoreProxy, type ProxyFault } from '../support/objstore-proxy.ts';

const ONE_DAY = { start_time: '2026-10-01T00:00:00Z', end_time: '2026-10-02T00:00:00Z' };
const KEY_ID = 'LPTESTFAILURES000001';
const SECRET = 'lp-test-secret-failures-0001';

type JournalRecord = { operation: string; key: string | null; status: number };

/** Waits until the store has answered a Parquet upload with `status` (the journal of the instance behind `admin`). */
const uploadAnswered = (admin: Api, status: number, file = '.parquet') =>
  eventually(async () => {
    const journal = (await admin.request<JournalRecord[]>('GET', '/objstore/journal')).body;
    return journal.some(
      (record) => record.operation === 'PutObject' && record.key?.endsWith(file) && record.status === status,
    );
  }, `an upload answered ${status}`);

describe('storage failures of an export run', () => {
  const ctx = useLocalplane({ freezeClock: true });
  const acme = exportClient(ctx, () => workspaceByTier(ctx.fixtures, 'plus'));
  const { admin, advance, tasks, addKey } = harness(ctx);
  let proxy: ObjstoreProxy;

  beforeEach(async () => {
    await admin('POST', '/reset');
    await admin('POST', '/clock/set', { time: '2026-10-10T00:00:00Z' });
    proxy = await startObjstoreProxy(ctx.instance.objstoreUrl);
  });
  afterEach(async () => {
    proxy.release();
    await proxy.close();
  });

  /** Changes what the store thinks of the test's key pair after the destination was validated with it. */
  const keyChanges: [string, string, () => Promise<unknown>][] = [
    ['InvalidAccessKeyId', 'the key pair was revoked', () => admin('DELETE', `/objstore/keys/${KEY_ID}`)],
    [
      'AccessDenied',
      'the key pair lost its create permission',
      async () => {
        await admin('DELETE', `/objstore/keys/${KEY_ID}`);
        await addKey(KEY_ID, SECRET, ['get']);
      },
    ],
    [
      'SignatureDoesNotMatch',
      'the key pair got another secret',
      async () => {
        await admin('DELETE', `/objstore/keys/${KEY_ID}`);
        await addKey(KEY_ID, 'lp-test-secret-failures-rotated');
      },
    ],
  ];

  it.each(keyChanges)('fails the run at once, without retries, on %s (%s)', async (code, _, change) => {
    const destinationId = await acme.createDestination(`permanent-${code}`, {
      credentials: await addKey(KEY_ID, SECRET),
    });
    await change();
    const exportId = await acme.startExport(destinationId, 'support-bot-staging', ONE_DAY);
    await advance(0);
    const [run] = await acme.getRuns(exportId);
    expect(run).toMatchObject({ status: 'Failed', retry_number: 0 });
    expect(Object.keys(run!.errors!)).toEqual(['retry_0']);
    expect(run!.errors!.retry_0).toContain(`An error occurred (${code}) when calling the PutObject operation`);
    expect(run!.errors!.retry_0).not.toContain(SECRET);
    expect((await acme.getExport(exportId)).status).toBe('Failed');
    expect((await tasks()).filter((task) => task.label.includes(run!.id))).toEqual([]);
  });

  it('fails the run at once when the bucket is gone (NoSuchBucket)', async () => {
    const destinationId = await acme.createDestination('permanent-bucket', { endpointUrl: proxy.url });
    proxy.arm(
      { kind: 'answer', status: 404, code: 'NoSuchBucket', message: 'The specified bucket does not exist' },
      parquetUpload,
    );
    const exportId = await acme.startExport(destinationId, 'support-bot-staging', ONE_DAY);
    await advance(0);
    const [run] = await acme.getRuns(exportId);
    expect(run).toMatchObject({
      status: 'Failed',
      retry_number: 0,
      errors: {
        retry_0:
          'An error occurred (NoSuchBucket) when calling the PutObject operation: The specified bucket does not exist',
      },
    });
  });

  const transient: [string, ProxyFault, string][] = [
    [
      'SlowDown',
      { kind: 'answer', status: 503, code: 'SlowDown', message: 'Please reduce your request rate.' },
      'An error occurred (SlowDown)',
    ],
    [
      'a 500',
      { kind: 'answer', status: 500, code: 'InternalError', message: 'We encountered an internal error.' },
      'An error occurred (InternalError)',
    ],
    ['a dropped connection', { kind: 'drop' }, 'Invalid endpoint: Could not connect to the endpoint URL'],
  ];

  it.each(transient)('retries the run after %s, as configured, and completes', async (_, fault, words) => {
    const destinationId = await acme.createDestination('transient', { endpointUrl: proxy.url });
    proxy.arm(fault, parquetUpload);
    const exportId = await acme.startExport(destinationId, 'support-bot-staging', ONE_DAY);
    await advance(0);
    let [run] = await acme.getRuns(exportId);
    expect(run).toMatchObject({ status: 'Running', retry_number: 1 });
    expect(run!.errors!.retry_0).toContain(words);
    await advance(30);
    [run] = await acme.getRuns(exportId);
    expect(run).toMatchObject({ status: 'Completed', retry_number: 1 });
    expect(run!.metadata.result.rows_written).toBeGreaterThan(0);
  });

  it('records an upload that fails while the run waits (slow knob) as the run error, not a process failure', async () => {
    await admin('PATCH', '/config', { export_rows_per_file: 100 });
    await admin('POST', '/faults/export-runs', { mode: 'slow', count: 1, delay_seconds: 60 });
    const destinationId = await acme.createDestination('revoked-while-waiting', {
      endpointUrl: proxy.url,
      credentials: await addKey(KEY_ID, SECRET),
    });
    const exportId = await acme.startExport(destinationId, 'support-bot-staging', ONE_DAY);
    proxy.arm({ kind: 'hold' }, parquetUpload);
    // The first file's upload starts at +60 s; the run then waits until +120 s for its next step.
    await advance(60);
    await eventually(async () => proxy.held().length === 1, 'the first upload');
    expect((await admin('DELETE', `/objstore/keys/${KEY_ID}`)).status).toBe(204);
    proxy.release();
    await uploadAnswered(ctx.admin, 403);
    expect((await acme.getExport(exportId)).status).toBe('Running');
    await advance(60);
    const [run] = await acme.getRuns(exportId);
    expect(run).toMatchObject({ status: 'Failed', retry_number: 0 });
    expect(run!.errors!.retry_0).toContain(
      'An error occurred (InvalidAccessKeyId) when calling the PutObject operation',
    );
    expect((await acme.getExport(exportId)).status).toBe('Failed');
  });
});

describe('the CLI', () => {
  const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
  let child: ChildProcess | undefined;
  afterEach(() => {
    child?.kill('SIGTERM');
  });

  it(
    'stays alive when a key pair is revoked while a slowed export waits, and the export ends Failed with the store ' +
      'words',
    async () => {
      child = spawn(process.execPath, ['bin/localplane.js', 'start', '--port', '0', '--objstore-port', '0'], {
        cwd: repoRoot,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const exited = new Promise<number | null>((resolve) => child!.once('exit', resolve));
      const ready = await new Promise<string>((resolve, reject) => {
        let stdout = '';
        child!.stdout!.on('data', (chunk: Buffer) => {
          stdout += chunk.toString();
          if (stdout.includes('\n')) resolve(stdout);
        });
        child!.once('exit', (code) => reject(new Error(`exited ${code} before ready`)));
      });
      const apiUrl = /api=(\S+)/.exec(ready)![1]!;
      const admin = new Api(`${apiUrl}/_localplane`);
      const ctx = {
        api: new Api(apiUrl),
        admin,
        fixtures: (await admin.request<FixturesView>('GET', '/fixtures')).body,
      } as TestContext;
      const acme = exportClient(ctx, () => workspaceByTier(ctx.fixtures, 'plus'));
      const { advance, addKey } = harness(ctx);

      await admin.request('POST', '/clock/freeze');
      await admin.request('POST', '/clock/set', { body: { time: '2026-10-10T00:00:00Z' } });
      await admin.request('PATCH', '/config', { body: { export_rows_per_file: 100 } });
      await admin.request('POST', '/faults/export-runs', { body: { mode: 'slow', count: 1, delay_seconds: 6 } });
      const destinationId = await acme.createDestination('cli-revoked', { credentials: await addKey(KEY_ID, SECRET) });
      const exportId = await acme.startExport(destinationId, 'support-bot-staging', ONE_DAY);
      await advance(6);
      // The first file is stored; the run waits 6 s before the next one.
      await uploadAnswered(admin, 200, '_0.parquet');
      expect((await admin.request('DELETE', `/objstore/keys/${KEY_ID}`)).status).toBe(204);
      // The second file's upload starts, and is refused while the run waits for its next step.
      await advance(6);
      await uploadAnswered(admin, 403);
      expect(child.exitCode).toBeNull();
      await advance(6);
      const [run] = await acme.getRuns(exportId);
      expect(run).toMatchObject({ status: 'Failed', retry_number: 0 });
      expect(run!.errors!.retry_0).toContain(
        'An error occurred (InvalidAccessKeyId) when calling the PutObject operation',
      );
      expect((await acme.getExport(exportId)).status).toBe('Failed');
      expect((await admin.request('GET', '/health')).body.status).toBe('ok');
      expect(child.exitCode).toBeNull();
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    },
  );
});
