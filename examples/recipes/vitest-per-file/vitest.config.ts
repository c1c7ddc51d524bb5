import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    root: import.meta.dirname,
    include: ['*.test.ts'],
    // Files in parallel even on a small machine: each has its own instance.
    fileParallelism: true,
    maxWorkers: 2,
  },
});
