/**
 * Deletes and puts racing over shared prefixes, through the AWS SDK against a whole instance, with
 * each storage: never a 5xx, the S3 view holds the objects the last requests leave, and with files
 * the plain-file view holds exactly the objects the S3 view lists, byte for byte.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { join, relative } from 'node:path';
import {
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  PutObjectCommand,
  type S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { afterAll, describe, expect, it } from 'vitest';

import { fullKey, useLocalplane } from '../support/instance.ts';
import { listKeys } from '../support/objstore.ts';
import { forEachStorage, s3ClientFor } from '../support/objstore-server.ts';

/** A small deterministic generator, so a failure can be run again as it was. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

/** Every file under `root`, by its path from there. */
const filesUnder = (root: string): string[] =>
  readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(root, join(entry.parentPath, entry.name)))
    .sort();

/** Sends every request at once; the status of each, or what it failed with. */
const sendAll = (requests: (() => Promise<{ $metadata: { httpStatusCode?: number } }>)[]) =>
  Promise.all(
    requests.map((send) =>
      send().then(
        (response) => response.$metadata.httpStatusCode,
        (error: unknown) => error,
      ),
    ),
  );

const describeFailure = (error: unknown) =>
  error instanceof S3ServiceException ? `${error.$metadata.httpStatusCode} ${error.name}` : String(error);

forEachStorage((storage) => {
  const ctx = useLocalplane({ freezeClock: true, objstoreStorage: storage });
  const bucket = () => ctx.fixtures.objstore.buckets[0]!;

  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  let client: S3Client | null = null;
  /**
   * One client for every request, up to 64 at once over kept-alive connections; each request is tried once, so a 5xx is
   * seen.
   */
  function s3(): S3Client {
    const key = fullKey(ctx.fixtures);
    client ??= s3ClientFor(
      ctx.instance.objstoreUrl,
      { accessKeyId: key.access_key_id, secretAccessKey: key.secret_access_key },
      { requestChecksumCalculation: 'WHEN_REQUIRED', requestHandler: new NodeHttpHandler({ httpAgent: agent }) },
    );
    return client;
  }

  afterAll(() => {
    client?.destroy();
    agent.destroy();
  });

  describe('deletes and puts racing in the same folders', () => {
    it(
      '1,000 concurrent requests: no 5xx, and the S3 view (with files, the plain-file view too) holds what the ' +
        'last requests left, byte for byte',
      async () => {
        const next = random(20261126);
        // 30 keys in 6 folders under race/: deletes empty the folders that puts are filling.
        const keys = Array.from({ length: 30 }, (_, index) => `race/p${index % 3}/q${index % 2}/k${index}`);
        const put = (key: string, body: string) => () =>
          s3().send(new PutObjectCommand({ Bucket: bucket(), Key: key, Body: body }));
        const remove = (key: string, versionId?: string) => () =>
          s3().send(new DeleteObjectCommand({ Bucket: bucket(), Key: key, VersionId: versionId }));
        const racing = Array.from({ length: 900 }, (_, index) => {
          const key = keys[Math.floor(next() * keys.length)]!;
          const roll = next();
          if (roll < 0.55) return put(key, `${key} #${index}`);
          if (roll < 0.95) return remove(key, roll < 0.75 ? 'null' : undefined);
          const batch = keys.filter(() => next() < 0.1).map((Key) => ({ Key, VersionId: 'null' }));
          return () =>
            s3().send(
              new DeleteObjectsCommand({
                Bucket: bucket(),
                Delete: { Objects: [{ Key: key }, ...batch], Quiet: true },
              }),
            );
        });
        // Then 100 more at once that leave a known state whatever their order: the even keys put again, the odd ones
        // deleted.
        const settling = Array.from({ length: 100 }, (_, index) =>
          index % 2 === 0 ? put(keys[index % 30]!, `${keys[index % 30]} last`) : remove(keys[index % 30]!),
        );
        const outcomes = [...(await sendAll(racing)), ...(await sendAll(settling))];
        expect(outcomes).toHaveLength(1000);
        expect(outcomes.filter((outcome) => typeof outcome !== 'number').map(describeFailure)).toEqual([]);
        expect(new Set(outcomes)).toEqual(new Set([200, 204]));

        const expected = keys.filter((_, index) => index % 2 === 0).sort();
        expect(await listKeys(s3(), bucket(), 'race/')).toEqual(expected);
        for (const key of expected) {
          const stored = await (
            await s3().send(new GetObjectCommand({ Bucket: bucket(), Key: key }))
          ).Body!.transformToString();
          expect(stored).toBe(`${key} last`);
        }
        if (storage === 'memory') {
          expect(ctx.instance.filesDir).toBeNull();
          expect(existsSync(join(ctx.instance.dataDir, 'objstore'))).toBe(false);
          return;
        }
        const viewRoot = join(ctx.instance.filesDir!, bucket());
        expect(filesUnder(join(viewRoot, 'race')).map((key) => `race/${key}`)).toEqual(expected);
        for (const key of expected)
          expect(readFileSync(join(viewRoot, ...key.split('/')), 'utf8'), key).toBe(`${key} last`);
        // The q1 folders held odd keys only, all deleted at the end: gone from the store's layout as from the view.
        for (const root of [viewRoot, join(ctx.instance.dataDir, 'objstore', bucket())]) {
          const folders = readdirSync(join(root, 'race'), { recursive: true, withFileTypes: true }).filter((entry) =>
            entry.isDirectory(),
          );
          expect(
            folders.map((folder) => relative(join(root, 'race'), join(folder.parentPath, folder.name))).sort(),
            root,
          ).toEqual(['p0', 'p0/q0', 'p1', 'p1/q0', 'p2', 'p2/q0']);
        }
      },
    );
  });
});
