/**
 * Marks a request the instance makes to its own API in process (the dashboard reading and
 * changing state through the documented API): passed as hono's env, which no client over HTTP
 * can set. Such calls are neither journaled nor faulted, so looking at the dashboard changes
 * nothing a test asserts on.
 */
const IN_PROCESS_CALL = 'localplaneInProcessCall';

export const inProcessEnv = (): Record<string, unknown> => ({ [IN_PROCESS_CALL]: true });

export const isInProcessCall = (env: unknown): boolean =>
  typeof env === 'object' && env !== null && (env as Record<string, unknown>)[IN_PROCESS_CALL] === true;
