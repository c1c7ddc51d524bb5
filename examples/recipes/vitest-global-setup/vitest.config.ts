import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    root: import.meta.dirname,
    include: ['*.test.ts'],
    // The first call that reaches the objstore loads the AWS SDK: allow more than vitest's 5 s.
    testTimeout: 30_000,
    // One localplane for the whole run, started before any test file and stopped after the last;
    // `export default localplaneGlobalSetup({ ...options })` in a file of your own to pass options.
    globalSetup: ['localplane/vitest/global-setup'],
  },
});
