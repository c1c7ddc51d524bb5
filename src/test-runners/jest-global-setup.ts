/**
 * localplane/jest/global-setup and localplane/jest/global-teardown: one instance for the whole
 * jest run. Jest runs both in its own process and the tests in workers, which inherit the
 * environment the setup leaves: LOCALPLANE_URL and LOCALPLANE_OBJSTORE_URL. Options come from
 * the jest config's `globals.localplane` (those of `start()`).
 */
import { start, type Localplane, type StartOptions } from '../index.ts';

/** Where the setup leaves the instance for the teardown, in jest's process. */
const RUN_INSTANCE = Symbol.for('localplane.jest.instance');

type JestGlobal = typeof globalThis & { [RUN_INSTANCE]?: Localplane };

export default async function globalSetup(
  _globalConfig: unknown,
  projectConfig: { globals?: { localplane?: StartOptions } } = {},
): Promise<void> {
  const lp = await start({ port: 0, objstorePort: 0, ...projectConfig.globals?.localplane });
  process.env.LOCALPLANE_URL = lp.apiUrl;
  process.env.LOCALPLANE_OBJSTORE_URL = lp.objstoreUrl;
  (globalThis as JestGlobal)[RUN_INSTANCE] = lp;
}

export async function globalTeardown(): Promise<void> {
  const jestGlobal = globalThis as JestGlobal;
  await jestGlobal[RUN_INSTANCE]?.stop();
  delete jestGlobal[RUN_INSTANCE];
}
