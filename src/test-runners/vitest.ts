/**
 * localplane/vitest: a `test` whose `localplane` fixture is an instance, reset before each test
 * that uses it. `test` reaches the run's instance, started once by localplane/vitest/global-setup
 * (over HTTP: test files run in other processes); `fileTest()` and `inProcessFileTest()` start one
 * per test file, in the file's own process.
 */
import { inject, test as base } from 'vitest';
import {
  connect,
  createLocalplane,
  start,
  type CreateOptions,
  type InProcessLocalplane,
  type Localplane,
  type LocalplaneClient,
  type StartOptions,
} from '../index.ts';
// The type of what the global setup provides (vitest's ProvidedContext).
import type {} from './vitest-global-setup.ts';

/** The run's instance as a test file reaches it. */
export interface RunLocalplane extends LocalplaneClient {
  objstoreUrl: string;
}

/** The run's instance (localplane/vitest/global-setup), reset before each test that uses it. */
export const test = base.extend<{ localplane: RunLocalplane }>({
  // vitest reads what a fixture depends on from its first parameter's pattern: none here.
  // eslint-disable-next-line no-empty-pattern -- vitest reads the fixtures a test uses from this pattern
  localplane: async ({}, use) => {
    const run = inject('localplane');
    if (run === undefined)
      throw new Error(
        "localplane/vitest's test reaches the run's instance: add globalSetup: ['localplane/vitest/global-setup'] " +
          'to the vitest config, or use fileTest() for an instance per file',
      );
    const { apiUrl, objstoreUrl, adminToken } = run;
    const client: RunLocalplane = { ...connect(apiUrl, { adminToken }), objstoreUrl };
    await client.reset();
    await use(client);
  },
});

/**
 * A test whose instance is made once per file, the first time a test of the file uses it, and stopped after the file's
 * last test.
 */
function perFile<T extends InProcessLocalplane>(make: () => Promise<T>) {
  return base.extend<{ $test: { localplane: T }; $file: { fileInstance: T } }>({
    fileInstance: [
      // eslint-disable-next-line no-empty-pattern -- vitest reads the fixtures a test uses from this pattern
      async ({}, use) => {
        const lp = await make();
        try {
          await use(lp);
        } finally {
          await lp.stop();
        }
      },
      { scope: 'file' },
    ],
    localplane: async ({ fileInstance }, use) => {
      await fileInstance.reset();
      await use(fileInstance);
    },
  });
}

/**
 * An instance of the test file's own, listening on free ports (`start({ port: 0, objstorePort: 0, ...options })`): for
 * clients that need a URL.
 */
export const fileTest = (options: StartOptions = {}) =>
  perFile<Localplane>(() => start({ port: 0, objstorePort: 0, ...options }));

/**
 * An instance of the test file's own that answers in process (`createLocalplane(options)`, `lp.request()`): no port at
 * all.
 */
export const inProcessFileTest = (options: CreateOptions = {}) =>
  perFile<InProcessLocalplane>(() => createLocalplane(options));
