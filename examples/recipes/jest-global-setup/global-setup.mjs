import { start } from 'localplane';

export default async function globalSetup() {
  const lp = await start({ port: 0, objstorePort: 0 });
  // Test workers inherit the environment; the teardown runs in this process and finds the instance.
  process.env.LOCALPLANE_URL = lp.apiUrl;
  globalThis.localplane = lp;
}
