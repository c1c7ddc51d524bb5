export default {
  rootDir: import.meta.dirname,
  testMatch: ['<rootDir>/*.test.cjs'],
  // One localplane for the run, in jest's own process; the tests, in workers, find it in LOCALPLANE_URL.
  globalSetup: 'localplane/jest/global-setup',
  globalTeardown: 'localplane/jest/global-teardown',
  // Back to the seed before each test.
  setupFilesAfterEnv: ['localplane/jest/reset-between-tests'],
  // start()'s options.
  globals: { localplane: { freezeClock: true } },
  transform: {},
};
