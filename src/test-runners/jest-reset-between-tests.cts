/**
 * localplane/jest/reset-between-tests (jest's `setupFilesAfterEnv`): the run's instance back to
 * its seed before each test. CommonJS, as jest loads setup files in its workers.
 */
declare const beforeEach: (hook: () => Promise<void>) => void;

beforeEach(async () => {
  const url = process.env.LOCALPLANE_URL;
  if (url === undefined) throw new Error('LOCALPLANE_URL is not set: add localplane/jest/global-setup to globalSetup in the jest config');
  const response = await fetch(`${url}/_localplane/reset`, { method: 'POST' });
  if (!response.ok) throw new Error(`localplane's reset answered ${response.status}: ${await response.text()}`);
});
