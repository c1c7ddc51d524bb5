/**
 * The objstore's storage, files or memory, as createLocalplane() and start() take it (the CLI's
 * flag, variable and config key are in test/cli/cli.test.ts), the limit that bounds memory storage, and
 * the test-runner helpers passing the choice on.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import {
  CreateMultipartUploadCommand,
  GetObjectTaggingCommand,
  HeadObjectCommand,
  ListPartsCommand,
  PutObjectCommand,
  PutObjectTaggingCommand,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestProject } from 'vitest/node';
import { DEFAULT_LIMITS } from '../../src/config.ts';
import { createLocalplane, start, type InProcessLocalplane, type ObjstoreStorageKind } from '../../src/index.ts';
import jestGlobalSetup, { globalTeardown as jestGlobalTeardown } from '../../src/test-runners/jest-global-setup.ts';
import { inProcessFileTest } from '../../src/test-runners/vitest.ts';
import { localplaneGlobalSetup, type RunInstance } from '../../src/test-runners/vitest-global-setup.ts';
import { NO_PLAIN_FILES } from '../../src/warehouse/answers.ts';
import { fixturesOf, inProcessApi } from '../support/in-process.ts';
import { fullKey } from '../support/instance.ts';
import { getBytes, s3For } from '../support/objstore.ts';

const quiet = { log: () => {} };
const MIB = 1024 * 1024;

/** `files_dir` as GET /_localplane/fixtures and GET /_localplane/state answer it. */
async function answeredFilesDirs(lp: InProcessLocalplane): Promise<(string | null)[]> {
  const state = await lp.state();
  return [(await fixturesOf(lp)).objstore.files_dir, state.objstore.files_dir];
}

/** `files_dir` of the fixtures view of an instance reached over HTTP. */
async function filesDirAt(apiUrl: string): Promise<string | null> {
  const fixtures = (await (await fetch(`${apiUrl}/_localplane/fixtures`)).json()) as {
    objstore: { files_dir: string | null };
  };
  return fixtures.objstore.files_dir;
}

describe('createLocalplane({ objstoreStorage })', () => {
  it.each([[undefined], ['files' as const]])(
    'objstoreStorage %s: every object also a plain file under <dataDir>/files, as lp.filesDir, the fixtures view ' +
      'and the state say',
    async (objstoreStorage) => {
      const lp = await createLocalplane({ ...quiet, objstoreStorage });
      try {
        expect(lp.filesDir).toBe(join(lp.dataDir, 'files'));
        expect(await answeredFilesDirs(lp)).toEqual([lp.filesDir, lp.filesDir]);
      } finally {
        await lp.stop();
      }
    },
  );

  it(
    'memory: no plain-file view, null in lp.filesDir, the fixtures view and the state; SQL and previews answer ' +
      '409 saying why',
    async () => {
      const lp = await createLocalplane({ ...quiet, objstoreStorage: 'memory' });
      try {
        expect(lp.filesDir).toBeNull();
        expect(await answeredFilesDirs(lp)).toEqual([null, null]);
        const api = inProcessApi(lp);
        const sql = await api.post('/_localplane/sql', {
          sql: 'select 1',
          export_id: '00000000-0000-4000-8000-000000000001',
        });
        const preview = await api.get('/_localplane/objstore/preview?bucket=exports&key=traces/a.parquet');
        for (const answer of [sql, preview])
          expect(answer).toMatchObject({ status: 409, body: { detail: NO_PLAIN_FILES } });
      } finally {
        await lp.stop();
      }
    },
  );

  it.each(['disk', 'Memory', ''])('refuses objstoreStorage %j, naming the kinds it takes', async (kind) => {
    const message = `objstoreStorage must be 'files' or 'memory', got ${JSON.stringify(kind)}`;
    const options = { ...quiet, objstoreStorage: kind as ObjstoreStorageKind };
    await expect(createLocalplane(options)).rejects.toThrow(new RangeError(message));
    await expect(start({ ...options, port: 0, objstorePort: 0 })).rejects.toThrow(new RangeError(message));
  });
});

/** What the test reads of the served OpenAPI document: the schema of PATCH /_localplane/config's body. */
interface ServedConfigPatch {
  paths: Record<
    string,
    { patch: { requestBody: { content: Record<string, { schema: { properties: Record<string, unknown> } }> } } }
  >;
}

describe('objstore_memory_limit_mb', () => {
  let lp: InProcessLocalplane;
  beforeAll(async () => {
    lp = await createLocalplane(quiet);
  });
  afterAll(() => lp?.stop());

  it(
    'is 1024 by default, in the served OpenAPI document, patched by PATCH /_localplane/config and put back by a ' +
      'reset',
    async () => {
      expect(DEFAULT_LIMITS.objstore_memory_limit_mb).toBe(1024);
      expect((await lp.config.get()).objstore_memory_limit_mb).toBe(1024);
      const document = (await (await lp.request('/openapi.json')).json()) as ServedConfigPatch;
      const patchBody = document.paths['/_localplane/config'].patch.requestBody.content['application/json'].schema;
      expect(patchBody.properties.objstore_memory_limit_mb).toEqual({
        type: 'integer',
        minimum: 1,
        maximum: 1_000_000,
      });
      expect((await lp.config.patch({ objstore_memory_limit_mb: 1 })).objstore_memory_limit_mb).toBe(1);
      expect((await lp.config.patch({ objstore_memory_limit_mb: 1_000_000 })).objstore_memory_limit_mb).toBe(1_000_000);
      await lp.reset();
      expect((await lp.config.get()).objstore_memory_limit_mb).toBe(1024);
    },
  );

  it.each([0, -1, 1.5, 1_000_001, '64', null])(
    'refuses %j with a 422 on the field, and keeps the limit',
    async (value) => {
      const answer = await inProcessApi(lp).patch('/_localplane/config', { objstore_memory_limit_mb: value });
      expect(answer.status).toBe(422);
      expect(answer.body.detail.map((detail: { loc: unknown }) => detail.loc)).toEqual([
        ['body', 'objstore_memory_limit_mb'],
      ]);
      expect((await lp.config.get()).objstore_memory_limit_mb).toBe(1024);
    },
  );

  it('is a start option too', async () => {
    const started = await createLocalplane({ ...quiet, limits: { objstore_memory_limit_mb: 64 } });
    try {
      expect((await started.config.get()).objstore_memory_limit_mb).toBe(64);
    } finally {
      await started.stop();
    }
  });
});

// vitest defines a file-scoped fixture (the per-file helpers' instance) only at a file's top level.
const filesTest = inProcessFileTest(quiet);
const memoryTest = inProcessFileTest({ ...quiet, objstoreStorage: 'memory' });

filesTest('the test-runner helpers keep files storage unless told: inProcessFileTest()', ({ localplane }) => {
  expect(localplane.filesDir).toBe(join(localplane.dataDir, 'files'));
});

memoryTest(
  "the test-runner helpers pass objstoreStorage on: inProcessFileTest({ objstoreStorage: 'memory' })",
  ({ localplane }) => {
    expect(localplane.filesDir).toBeNull();
  },
);

describe('the test-runner helpers keep files storage unless told, and pass objstoreStorage on', () => {
  it.each([[undefined], ['memory' as const]])(
    'localplane/vitest/global-setup with objstoreStorage %s',
    async (objstoreStorage) => {
      let run: RunInstance | undefined;
      const project = { provide: (_key: string, value: RunInstance) => (run = value) } as unknown as TestProject;
      const stop = await localplaneGlobalSetup({ ...quiet, objstoreStorage })(project);
      try {
        expect(await filesDirAt(run!.apiUrl)).toEqual(
          objstoreStorage === 'memory' ? null : expect.stringMatching(/[/\\]files$/),
        );
      } finally {
        await stop();
      }
    },
  );

  it.each([[undefined], ['memory' as const]])(
    'localplane/jest/global-setup with objstoreStorage %s',
    async (objstoreStorage) => {
      // The setup leaves the instance's URLs in the environment, for jest's workers: put back as they were after.
      const before = {
        LOCALPLANE_URL: process.env.LOCALPLANE_URL,
        LOCALPLANE_OBJSTORE_URL: process.env.LOCALPLANE_OBJSTORE_URL,
      };
      await jestGlobalSetup(undefined, { globals: { localplane: { ...quiet, objstoreStorage } } });
      try {
        expect(await filesDirAt(process.env.LOCALPLANE_URL!)).toEqual(
          objstoreStorage === 'memory' ? null : expect.stringMatching(/[/\\]files$/),
        );
      } finally {
        await jestGlobalTeardown();
        for (const [name, value] of Object.entries(before)) {
          if (value === undefined) delete process.env[name];
          else process.env[name] = value;
        }
      }
    },
  );
});

describe('an instance with memory storage', () => {
  it(
    'makes no objstore nor files folder in its data dir, serves an object put with the AWS SDK, and refuses an ' +
      'upload past objstore_memory_limit_mb',
    async () => {
      const lp = await start({ ...quiet, port: 0, objstorePort: 0, objstoreStorage: 'memory' });
      const fixtures = await fixturesOf(lp);
      const s3 = s3For(lp.objstoreUrl, fullKey(fixtures));
      const bucket = fixtures.objstore.buckets[0]!;
      try {
        await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'memory/hello.txt', Body: 'kept in memory' }));
        expect(Buffer.from(await getBytes(s3, bucket, 'memory/hello.txt')).toString()).toBe('kept in memory');
        const entries = readdirSync(lp.dataDir);
        expect(entries).not.toContain('objstore');
        expect(entries).not.toContain('files');
        // The core's own files alone: the database, the fixture template it started from, the id sequence.
        expect(
          entries.filter((name) => !/^(localplane\.sqlite(-wal|-shm)?|seed\.sqlite|id-sequence)$/.test(name)),
        ).toEqual([]);

        await lp.config.patch({ objstore_memory_limit_mb: 1 });
        await expect(
          s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'memory/too-big.bin', Body: Buffer.alloc(2 * MIB) })),
        ).rejects.toMatchObject({
          name: 'InsufficientStorage',
          $metadata: { httpStatusCode: 507 },
        });
      } finally {
        s3.destroy();
        await lp.stop();
      }
    },
  );
});

describe('snapshots across storages', () => {
  it.each([
    ['files', 'memory'],
    ['memory', 'files'],
  ] as const)(
    'a snapshot taken with %s storage restores into %s storage: objects, metadata, tags and uploads in progress',
    async (from, into) => {
      const source = await start({ ...quiet, port: 0, objstorePort: 0, objstoreStorage: from });
      const target = await start({ ...quiet, port: 0, objstorePort: 0, objstoreStorage: into });
      const fixtures = await fixturesOf(source);
      const bucket = fixtures.objstore.buckets[0]!;
      const sourceS3 = s3For(source.objstoreUrl, fullKey(fixtures));
      const targetS3 = s3For(target.objstoreUrl, fullKey(fixtures));
      try {
        await sourceS3.send(
          new PutObjectCommand({
            Bucket: bucket,
            Key: 'moved/a b/ü.txt',
            Body: 'across',
            ContentType: 'text/plain',
            Metadata: { kept: 'yes' },
          }),
        );
        await sourceS3.send(
          new PutObjectTaggingCommand({
            Bucket: bucket,
            Key: 'moved/a b/ü.txt',
            Tagging: { TagSet: [{ Key: 'k', Value: 'v' }] },
          }),
        );
        const { UploadId } = await sourceS3.send(
          new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'moved/pending.bin' }),
        );
        await sourceS3.send(
          new UploadPartCommand({
            Bucket: bucket,
            Key: 'moved/pending.bin',
            UploadId,
            PartNumber: 1,
            Body: Buffer.alloc(5 * MIB, 1),
          }),
        );
        const snapshot = join(source.dataDir, 'across.snapshot');
        await source.snapshot(snapshot);
        await target.restore(snapshot);

        const head = await targetS3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'moved/a b/ü.txt' }));
        expect(head).toMatchObject({ ContentType: 'text/plain', Metadata: { kept: 'yes' }, ContentLength: 6 });
        expect(Buffer.from(await getBytes(targetS3, bucket, 'moved/a b/ü.txt')).toString()).toBe('across');
        expect(
          (await targetS3.send(new GetObjectTaggingCommand({ Bucket: bucket, Key: 'moved/a b/ü.txt' }))).TagSet,
        ).toEqual([{ Key: 'k', Value: 'v' }]);
        const parts = await targetS3.send(new ListPartsCommand({ Bucket: bucket, Key: 'moved/pending.bin', UploadId }));
        expect(parts.Parts?.map((part) => [part.PartNumber, part.Size])).toEqual([[1, 5 * MIB]]);
        expect(target.filesDir === null ? [] : readdirSync(join(target.filesDir, bucket, 'moved'))).toEqual(
          into === 'files' ? ['a b'] : [],
        );
      } finally {
        sourceS3.destroy();
        targetS3.destroy();
        await source.stop();
        await target.stop();
      }
    },
  );

  it('a snapshot whose objects exceed the memory budget is refused, and the store keeps what it held', async () => {
    const source = await start({ ...quiet, port: 0, objstorePort: 0 });
    const target = await start({
      ...quiet,
      port: 0,
      objstorePort: 0,
      objstoreStorage: 'memory',
      limits: { objstore_memory_limit_mb: 1 },
    });
    const fixtures = await fixturesOf(source);
    const bucket = fixtures.objstore.buckets[0]!;
    const sourceS3 = s3For(source.objstoreUrl, fullKey(fixtures));
    const targetS3 = s3For(target.objstoreUrl, fullKey(fixtures));
    try {
      await sourceS3.send(new PutObjectCommand({ Bucket: bucket, Key: 'big.bin', Body: Buffer.alloc(2 * MIB) }));
      await targetS3.send(new PutObjectCommand({ Bucket: bucket, Key: 'small.txt', Body: 'kept' }));
      const snapshot = join(source.dataDir, 'big.snapshot');
      await source.snapshot(snapshot);
      await expect(target.restore(snapshot)).rejects.toThrow(/more than the memory storage keeps/);
      expect(Buffer.from(await getBytes(targetS3, bucket, 'small.txt')).toString()).toBe('kept');
    } finally {
      sourceS3.destroy();
      targetS3.destroy();
      await source.stop();
      await target.stop();
    }
  });
});
