import { accessSync, constants, statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';
import { SlowestFirst } from './test/support/slowest-first.ts';

/**
 * The suite's instances, stores and CLI runs make and remove tens of thousands of small files in
 * their temp dirs. Where the machine has a tmpfs at /dev/shm and TMPDIR names no other place,
 * those dirs go there (the workers and every process they start inherit TMPDIR): on an ext4
 * disk that has just freed many files, as after a test run, the kernel spends up to a
 * millisecond finding a free inode for each new file.
 */
function isWritableDirectory(directory: string): boolean {
  try {
    accessSync(directory, constants.W_OK);
    return statSync(directory).isDirectory();
  } catch {
    return false;
  }
}

if (!process.env.TMPDIR && isWritableDirectory('/dev/shm')) process.env.TMPDIR = '/dev/shm';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Needs the hosted service's reference document beside the project: npm run check:reference.
    exclude: [...configDefaults.exclude, 'test/reference/**'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // A file per core and one more: files wait on child processes, Chromium and the
    // dashboard's refreshes part of the time, and the extra file fills those waits (on 2
    // cores, one run each: 3 files at once took 124 s, 2 took 135 s, 4 took 140 s). Vitest's
    // default, cores - 1, runs one at a time on 2 cores.
    maxWorkers: availableParallelism() + 1,
    // The files a worker runs one after another share its process and the modules it has loaded
    // (loading src/ again for each of 68 files cost a fifth of the suite). Nothing else is shared:
    // every file starts its own instances in their own temp dirs, and a file that changes
    // process.env puts it back.
    isolate: false,
    // The workers allocate much short-lived data (responses, SDK requests, parsed documents):
    // a young generation of 64 MB, not 16, spends less on scavenges and on promoting what
    // would soon have died.
    execArgv: ['--max-semi-space-size=64'],
    globalSetup: ['test/support/global-setup.ts'],
    sequence: { sequencer: SlowestFirst },
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
  },
});
