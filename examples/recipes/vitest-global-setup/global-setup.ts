import { start } from 'localplane';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    localplaneUrl: string;
  }
}

export default async function setup(project: TestProject) {
  const lp = await start({ port: 0, objstorePort: 0 });
  // Test files run in other processes: they reach the instance over HTTP, by its URL.
  project.provide('localplaneUrl', lp.apiUrl);
  return () => lp.stop();
}
