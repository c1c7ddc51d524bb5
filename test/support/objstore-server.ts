/**
 * Helpers for the tests that start the objstore by itself (the files of test/objstore/); tests
 * against a whole localplane use ./objstore.ts.
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';

import { S3Client, type S3ClientConfig } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect } from 'vitest';

import { FaultRules } from '../../src/journal/fault-rules.ts';
import { RequestJournal } from '../../src/journal/journal.ts';
import { objstoreJournal, type ObjstoreJournalRecord } from '../../src/journal/objstore-journal.ts';
import { RequestObserver } from '../../src/journal/observe.ts';
import { startObjstore, type Objstore, type ObjstoreKey, type ObjstoreOptions } from '../../src/objstore/index.ts';
import { OBJSTORE_STORAGE_KINDS, type ObjstoreStorageKind } from '../../src/objstore/types.ts';
import { createClock } from '../../src/shared/clock.ts';

export type Credentials = Pick<ObjstoreKey, 'accessKeyId' | 'secretAccessKey'>;

/** Checksums only where an operation requires them, as the app's own client sends them. */
export const CHECKSUMS_WHEN_REQUIRED = {
  requestChecksumCalculation: 'WHEN_REQUIRED',
  responseChecksumValidation: 'WHEN_REQUIRED',
} as const satisfies Partial<S3ClientConfig>;

/** A path-style client for the key that tries each request once; the SDK's defaults otherwise, unless overridden. */
export function s3ClientFor(url: string, key: Credentials, overrides: Partial<S3ClientConfig> = {}): S3Client {
  return new S3Client({
    endpoint: url,
    forcePathStyle: true,
    region: 'us-east-1',
    credentials: { accessKeyId: key.accessKeyId, secretAccessKey: key.secretAccessKey },
    maxAttempts: 1,
    ...overrides,
  });
}

/**
 * The storage a test file's store has when it names none: LOCALPLANE_TEST_OBJSTORE_STORAGE
 * (files or memory; `npm run test:objstore-memory` runs the objstore's test files with memory), default files.
 */
export function testedStorage(): ObjstoreStorageKind {
  const kind = process.env['LOCALPLANE_TEST_OBJSTORE_STORAGE'] || 'files';
  if (!(OBJSTORE_STORAGE_KINDS as readonly string[]).includes(kind)) {
    throw new RangeError(
      `LOCALPLANE_TEST_OBJSTORE_STORAGE must be ${OBJSTORE_STORAGE_KINDS.join(' or ')}, got ${JSON.stringify(kind)}`,
    );
  }
  return kind as ObjstoreStorageKind;
}

/**
 * Runs a file's tests once per storage, in a describe block of each (`with files`, `with memory`),
 * whatever LOCALPLANE_TEST_OBJSTORE_STORAGE says: the body starts its own store with the storage given.
 */
export function forEachStorage(body: (storage: ObjstoreStorageKind) => void): void {
  describe.each(OBJSTORE_STORAGE_KINDS)('with %s', body);
}

export interface ObjstoreTestOptions extends Omit<
  ObjstoreOptions,
  'host' | 'port' | 'directory' | 'keys' | 'observer'
> {
  /** How the name of the store's temp directory starts. */
  directoryPrefix: string;
  keys: readonly ObjstoreKey[];
  /** Settings of every client from `client(key)`, over those of `s3ClientFor`. */
  clientConfig?: Partial<S3ClientConfig>;
}

export interface ObjstoreTestContext {
  /** The store; its `reset()` also empties the journal, as an instance's reset does. */
  objstore: Objstore;
  /** The store's requests, oldest first, as an instance's GET /_localplane/objstore/journal answers them. */
  journal(): ObjstoreJournalRecord[];
  /** Where the store keeps its files ('files'); with 'memory' it stays empty. */
  directory: string;
  storage: ObjstoreStorageKind;
  /** The keys the store knows, by access key id; a test may add, change or remove keys while it runs. */
  keys: Map<string, ObjstoreKey>;
  /** A new client for the key (destroyed after the file's tests), with these settings over the file's. */
  client(key: Credentials, config?: Partial<S3ClientConfig>): S3Client;
}

/**
 * Starts one objstore for the calling test file (or describe block), on 127.0.0.1 (any port) in its
 * own temp directory, and stops it afterwards; with `storage` (default: testedStorage()) 'memory',
 * the directory must still be empty then.
 */
export function useObjstore({
  directoryPrefix,
  keys,
  clientConfig = {},
  storage = testedStorage(),
  ...options
}: ObjstoreTestOptions): ObjstoreTestContext {
  const clients: S3Client[] = [];
  const context = {
    storage,
    keys: new Map(keys.map((key) => [key.accessKeyId, key])),
    client(key: Credentials, config: Partial<S3ClientConfig> = {}): S3Client {
      const client = s3ClientFor(context.objstore.url, key, { ...clientConfig, ...config });
      clients.push(client);
      return client;
    },
  } as ObjstoreTestContext;
  beforeAll(async () => {
    context.directory = fs.mkdtempSync(path.join(os.tmpdir(), directoryPrefix));
    // An instance's request journal, which sees the store's requests through its observer.
    const journal = new RequestJournal();
    const observer = new RequestObserver({
      journal,
      faultRules: new FaultRules(0, () => true),
      clock: createClock(),
      workspaceOfApiKey: () => null,
      requestLog: null,
      colour: false,
    });
    const objstore = await startObjstore({
      host: '127.0.0.1',
      port: 0,
      directory: context.directory,
      keys: { find: (accessKeyId) => context.keys.get(accessKeyId) },
      observer: observer.objstore(),
      storage,
      ...options,
    });
    context.objstore = {
      ...objstore,
      async reset() {
        await objstore.reset();
        journal.reset();
      },
    };
    context.journal = () => objstoreJournal(journal);
  });
  afterAll(async () => {
    for (const client of clients) client.destroy();
    await context.objstore?.close();
    if (!context.directory) return;
    const left = fs.readdirSync(context.directory, { recursive: true });
    fs.rmSync(context.directory, { recursive: true, force: true });
    // The memory storage writes nothing to disk.
    if (storage === 'memory') expect(left, `what the memory storage left in ${context.directory}`).toEqual([]);
  });
  return context;
}

/** Resolves to the error a command failed with (fails the test if it succeeded). */
export async function failure(promise: Promise<unknown>): Promise<Error & { $metadata: { httpStatusCode?: number } }> {
  try {
    await promise;
  } catch (err) {
    return err as Error & { $metadata: { httpStatusCode?: number } };
  }
  throw new Error('expected the request to fail');
}

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/**
 * Sends an HTTP request as given, unsigned, to the server at `url` (Node adds only the host,
 * connection and framing headers it needs). A single body goes in one piece with its length; the
 * pieces of an array body are written one by one (as chunked transfer unless the headers give a length).
 * Each request has a connection of its own unless an agent is given.
 */
export function rawRequest(
  url: string,
  method: string,
  pathAndQuery: string,
  headers: Record<string, string> = {},
  body?: Buffer | Buffer[] | string,
  agent: http.Agent | false = false,
): Promise<RawResponse> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const request = http.request({ hostname, port, method, path: pathAndQuery, headers, agent }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({
          status: response.statusCode!,
          headers: response.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        }),
      );
      response.on('error', reject);
    });
    request.on('error', reject);
    if (Array.isArray(body)) {
      for (const piece of body) request.write(piece);
      request.end();
    } else {
      request.end(body);
    }
  });
}

export { NodeSha256 } from '../../src/shared/node-sha256.ts';
