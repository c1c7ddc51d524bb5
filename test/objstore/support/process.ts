/**
 * An objstore in a process of its own (the compiled dist/, which `pretest` builds) with a low
 * limit of open file descriptors, as many laptops have (macOS: 256): a test that the store
 * bounds its descriptors fails the same on every machine, whatever this one's limit.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

import { afterAll, beforeAll } from 'vitest';

import type { ObjstoreKey } from '../../../src/objstore/index.ts';
import { REPO_ROOT } from '../../support/cli.ts';

export interface ObjstoreProcessOptions {
  directoryPrefix: string;
  keys: readonly ObjstoreKey[];
  buckets: readonly string[];
  /** `ulimit -n` of the process. */
  maxOpenFiles: number;
  minPartSize?: number;
}

export interface ObjstoreProcess {
  url: string;
  directory: string;
}

const SOURCE = `
const { startObjstore } = await import(process.env.LP_OBJSTORE_MODULE);
const { keys, ...options } = JSON.parse(process.env.LP_OBJSTORE_OPTIONS);
const byId = new Map(keys.map((key) => [key.accessKeyId, key]));
const objstore = await startObjstore({ ...options, host: '127.0.0.1', port: 0, keys: { find: (id) => byId.get(id) } });
process.on('SIGTERM', () => objstore.close().then(() => process.exit(0)));
console.log(objstore.url);
`;

/** Starts the objstore process for the calling test file and stops it afterwards. */
export function useObjstoreProcess({
  directoryPrefix,
  maxOpenFiles,
  ...options
}: ObjstoreProcessOptions): ObjstoreProcess {
  const context = {} as ObjstoreProcess;
  let stop = async () => {};
  beforeAll(async () => {
    context.directory = fs.mkdtempSync(path.join(os.tmpdir(), directoryPrefix));
    const env = {
      ...process.env,
      LP_OBJSTORE_MODULE: pathToFileURL(path.join(REPO_ROOT, 'dist', 'objstore', 'index.js')).href,
      LP_OBJSTORE_OPTIONS: JSON.stringify({ ...options, directory: context.directory }),
    };
    const child = spawn(
      'sh',
      ['-c', `ulimit -n ${maxOpenFiles} && exec "$0" --input-type=module -e "$1"`, process.execPath, SOURCE],
      {
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stderr = '';
    let stopping = false;
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    // Requests to a store that died fail with "socket hang up": say why it died.
    void exited.then(() => stopping || console.error(`the objstore process exited: ${stderr}`));
    context.url = await new Promise<string>((resolve, reject) => {
      let stdout = '';
      child.stdout.on('data', (chunk) => {
        stdout += chunk;
        if (stdout.includes('\n')) resolve(stdout.trim());
      });
      void exited.then(() => reject(new Error(`the objstore process exited before it listened: ${stderr}`)));
    });
    stop = async () => {
      stopping = true;
      child.kill('SIGTERM');
      await exited;
    };
  });
  afterAll(async () => {
    await stop();
    if (context.directory) fs.rmSync(context.directory, { recursive: true, force: true });
  });
  return context;
}
