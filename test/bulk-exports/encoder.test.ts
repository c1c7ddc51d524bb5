import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { EncoderThread, type EncodeRequest } from '../../src/bulk-exports/encoder-thread.ts';
import { encodeRunsParquet } from '../../src/bulk-exports/parquet.ts';
import type { Compression, FormatVersion } from '../../src/bulk-exports/schemas.ts';
import { openInstanceDb } from '../../src/shared/db.ts';
import { tracingTables, TracingStore } from '../../src/tracing/store.ts';
import { generateRuns, insertRuns } from '../../src/tracing/generator.ts';
import { RUN_COLUMNS, type RunColumn, type RunRow } from '../../src/tracing/schema.ts';
import { eventually, fullKey, useLocalplane, workspaceByTier } from '../support/instance.ts';
import { exportClient } from '../support/exports.ts';
import { getBytes, s3For } from '../support/objstore.ts';
import { inWindow, seededRuns } from '../support/source.ts';

const limits = { export_rows_per_file: 200, export_row_group_size: 64 };
const ctx = useLocalplane({ limits });
const exports = exportClient(ctx, () => workspaceByTier(ctx.fixtures, 'plus'));

const byCursor = (a: RunRow, b: RunRow) => a.start_time - b.start_time || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

async function exportedFiles(id: string): Promise<Uint8Array[]> {
  await eventually(async () => (await exports.getExport(id)).status === 'Completed', `export ${id}`);
  const [run] = await exports.getRuns(id);
  const s3 = s3For(ctx.instance.objstoreUrl, fullKey(ctx.fixtures));
  const bucket = ctx.fixtures.objstore.buckets[0]!;
  return Promise.all(
    run!.metadata.result.exported_files.map((file) => getBytes(s3, bucket, file.slice(bucket.length + 1))),
  );
}

describe('files encoded in the export worker', () => {
  const day = { start_time: '2026-10-02T00:00:00Z', end_time: '2026-10-03T00:00:00Z' };

  it.each([
    { session: 'support-bot-staging', formatVersion: 'v2_beta', compression: 'snappy', fields: null },
    {
      session: 'support-bot-staging',
      formatVersion: 'v1',
      compression: 'gzip',
      fields: ['end_time', 'id', 'total_cost', 'is_root', 'tags'],
    },
  ] as { session: string; formatVersion: FormatVersion; compression: Compression; fields: RunColumn[] | null }[])(
    'are byte for byte the in-thread encoding of the same runs: $session, $formatVersion, $compression',
    async ({ session, formatVersion, compression, fields }) => {
      const destinationId = await exports.createDestination(`encoder-${session}`);
      const created = await exports.client().post('/api/v1/bulk-exports', {
        bulk_export_destination_id: destinationId,
        session_id: ctx.fixtures.workspaces
          .flatMap((workspace) => workspace.sessions)
          .find((candidate) => candidate.name === session)!.id,
        format_version: formatVersion,
        compression,
        ...(fields ? { export_fields: fields } : {}),
        ...day,
      });
      expect(created.status, created.text).toBe(200);
      const files = await exportedFiles(created.body.id);

      const sessionId = created.body.session_id as string;
      const runs = inWindow(seededRuns(sessionId), day.start_time, day.end_time).sort(byCursor);
      const perFile = limits.export_rows_per_file;
      expect(files.length, 'several files, each read after the cursor of the one before').toBeGreaterThan(1);
      expect(files).toHaveLength(Math.ceil(runs.length / perFile));
      const options = {
        formatVersion,
        compression,
        columns: fields ?? RUN_COLUMNS,
        rowGroupSize: limits.export_row_group_size,
      };
      files.forEach((file, index) => {
        expect(
          Buffer.from(file).equals(encodeRunsParquet(runs.slice(index * perFile, (index + 1) * perFile), options)),
          `file ${index}`,
        ).toBe(true);
      });
    },
  );
});

describe('the encoder thread', () => {
  const dir = mkdtempSync(join(tmpdir(), 'localplane-test-encoder-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const database = { path: join(dir, 'none.sqlite'), templatePath: join(dir, 'none-seed.sqlite') };
  const request: EncodeRequest = {
    reads: [{ sessionId: 'none', after: null }],
    from: 0,
    to: 1,
    limit: 1,
    filter: null,
    parquet: { formatVersion: 'v2_beta', compression: 'snappy', columns: RUN_COLUMNS, rowGroupSize: 1 },
  };

  it('fails the requests of a worker that died with a clear error, and starts a new worker for the next one', async () => {
    const dying = join(dir, 'dying-worker.mjs');
    writeFileSync(
      dying,
      "import { parentPort } from 'node:worker_threads'; parentPort.on('message', () => process.exit(7));",
    );
    const encoder = new EncoderThread(database, pathToFileURL(dying));
    try {
      await expect(encoder.encode(request)).rejects.toThrow('The export encoder stopped unexpectedly (exit code 7)');
      await expect(encoder.encode(request)).rejects.toThrow('The export encoder stopped unexpectedly (exit code 7)');
    } finally {
      await encoder.close();
    }
  });

  it("answers null when no rows are left, and a failed read as that request's error", async () => {
    const template = new Database(join(dir, 'seed.sqlite'));
    template.exec(tracingTables.ddl);
    template.close();
    const db = openInstanceDb(join(dir, 'instance.sqlite'), join(dir, 'seed.sqlite'), [tracingTables], {
      durable: false,
    });
    const encoder = new EncoderThread({ path: join(dir, 'instance.sqlite'), templatePath: join(dir, 'seed.sqlite') });
    try {
      await expect(encoder.encode(request)).resolves.toBeNull();
      await expect(encoder.encode({ ...request, filter: { sql: 'no_such_column = ?', params: [1] } })).rejects.toThrow(
        'no such column: no_such_column',
      );
      await expect(encoder.encode(request), 'the worker lives on').resolves.toBeNull();
    } finally {
      await encoder.close();
      db.close();
    }
  });

  it("keeps a closed encoder's idle worker for the next one, each reading its own database", async () => {
    const template = join(dir, 'pooled-seed.sqlite');
    const seed = new Database(template);
    seed.exec(tracingTables.ddl);
    seed.close();
    const databases = ['empty', 'traced'].map((name) => {
      const path = join(dir, `pooled-${name}.sqlite`);
      const db = openInstanceDb(path, template, [tracingTables], { durable: false });
      if (name === 'traced') {
        const tracing = new TracingStore(db);
        tracing.addRuns(
          generateRuns({ tenantId: 't', sessionId: 'traced', count: 5, startMicros: 1_000_000, days: 1, seed: 7 }),
        );
        tracing.addedChunkWriter!.close();
      }
      db.close();
      return { path, templatePath: template };
    });
    const reads = (sessionId: string): EncodeRequest => ({
      ...request,
      reads: [{ sessionId, after: null }],
      from: 0,
      to: Number.MAX_SAFE_INTEGER,
      limit: 10,
    });

    const first = new EncoderThread(databases[0]!);
    await expect(first.encode(reads('traced'))).resolves.toBeNull();
    await first.close();
    const second = new EncoderThread(databases[1]!);
    try {
      await expect(second.encode(reads('traced'))).resolves.toMatchObject({ sessionId: 'traced', rows: 5 });
    } finally {
      await second.close();
    }
  });

  it(
    'reads seeded and runtime runs of a session as one sequence, a runtime run first on a tie, byte for byte the ' +
      'in-thread encoding',
    async () => {
      const template = join(dir, 'merged-seed.sqlite');
      const seed = new Database(template);
      seed.exec(tracingTables.ddl);
      const seeded = [
        ...generateRuns({ tenantId: 't', sessionId: 's', count: 300, startMicros: 1_000_000, days: 1, seed: 1 }),
      ];
      insertRuns(seed, seeded);
      seed.close();
      const path = join(dir, 'merged.sqlite');
      const db = openInstanceDb(path, template, [tracingTables], { durable: false });
      const added = [
        ...generateRuns({ tenantId: 't', sessionId: 's', count: 200, startMicros: 1_000_000, days: 1, seed: 2 }),
      ];
      // The same cursor in both tables: the runtime copy (another name) is read first.
      const tie = { ...seeded[150]!, name: 'runtime copy', inputs: null };
      insertRuns(db, [...added, tie]);
      db.close();
      const merged = [...added, tie, ...seeded].sort(byCursor);
      const options = {
        formatVersion: 'v2_beta' as const,
        compression: 'snappy' as const,
        columns: RUN_COLUMNS,
        rowGroupSize: 64,
      };
      const encoder = new EncoderThread({ path, templatePath: template });
      try {
        const files = [];
        let after = null;
        for (;;) {
          const file = await encoder.encode({
            ...request,
            reads: [{ sessionId: 's', after }],
            to: Number.MAX_SAFE_INTEGER,
            limit: 120,
            parquet: options,
          });
          if (file === null) break;
          files.push(file);
          after = file.last;
        }
        expect(files.map((file) => file.rows)).toEqual([120, 120, 120, 120, 21]);
        files.forEach((file, index) => {
          const runs = merged.slice(index * 120, (index + 1) * 120);
          expect(file.last).toEqual({ startTime: runs.at(-1)!.start_time, id: runs.at(-1)!.id });
          expect(Buffer.from(file.parquet).equals(encodeRunsParquet(runs, options)), `file ${index}`).toBe(true);
        });
      } finally {
        await encoder.close();
      }
    },
  );

  it('hands an idle worker to one encoder at a time, and stops a busy one on close', async () => {
    const answering = join(dir, 'thread-id-worker.mjs');
    writeFileSync(
      answering,
      `import { parentPort, threadId } from 'node:worker_threads';
      parentPort.on('message', (message) =>
        parentPort.postMessage(
          'close' in message ? { id: message.id, file: null } : { id: message.id, error: 'thread ' + threadId },
        ),
      );`,
    );
    const module = pathToFileURL(answering);
    const threadOf = async (encoder: EncoderThread) =>
      ((await encoder.encode(request).catch((error: Error) => error)) as Error).message;
    const first = new EncoderThread(database, module);
    const firstThread = await threadOf(first);
    await first.close();
    const [second, third] = [new EncoderThread(database, module), new EncoderThread(database, module)];
    expect(await threadOf(second), "the closed encoder's worker").toBe(firstThread);
    expect(await threadOf(third), 'a worker of its own').not.toBe(firstThread);
    await Promise.all([second.close(), third.close()]);

    const silent = join(dir, 'silent-pooled-worker.mjs');
    writeFileSync(silent, "import { parentPort } from 'node:worker_threads'; parentPort.on('message', () => {});");
    const busy = new EncoderThread(database, pathToFileURL(silent));
    const waiting = busy.encode(request);
    await busy.close();
    await expect(waiting).rejects.toThrow('The export encoder was closed');
  });

  it('once closed, fails what was waiting and refuses new requests', async () => {
    const silent = join(dir, 'silent-worker.mjs');
    writeFileSync(silent, "import { parentPort } from 'node:worker_threads'; parentPort.on('message', () => {});");
    const encoder = new EncoderThread(database, pathToFileURL(silent));
    const waiting = encoder.encode(request);
    await encoder.close();
    await expect(waiting).rejects.toThrow('The export encoder was closed');
    await expect(encoder.encode(request)).rejects.toThrow('The export encoder is closed');
  });
});
