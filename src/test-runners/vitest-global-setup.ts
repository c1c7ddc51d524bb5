/**
 * localplane/vitest/global-setup: one instance for the whole vitest run, started before the
 * first test file and stopped after the last; test files reach it through localplane/vitest's
 * `test`. As `globalSetup: ['localplane/vitest/global-setup']`, or with options from a file of
 * your own: `export default localplaneGlobalSetup({ freezeClock: true })`.
 */
import type { TestProject } from 'vitest/node';
import { start, type StartOptions } from '../index.ts';

/** What the global setup hands the test files. */
export interface RunInstance {
  apiUrl: string;
  objstoreUrl: string;
  adminToken?: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    localplane: RunInstance;
  }
}

export function localplaneGlobalSetup(options: StartOptions = {}) {
  return async (project: TestProject) => {
    const lp = await start({ port: 0, objstorePort: 0, ...options });
    project.provide('localplane', { apiUrl: lp.apiUrl, objstoreUrl: lp.objstoreUrl, adminToken: options.adminToken });
    return () => lp.stop();
  };
}

export default localplaneGlobalSetup();
