export default {
  rootDir: import.meta.dirname,
  testMatch: ['<rootDir>/*.test.cjs'],
  // globalSetup runs in jest's own process (a real ES module import); tests in workers.
  globalSetup: '<rootDir>/global-setup.mjs',
  globalTeardown: '<rootDir>/global-teardown.mjs',
  transform: {},
};
