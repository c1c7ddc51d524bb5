import type { Context } from 'hono';

/**
 * True when htmx asks for the part of a view that changes, not for the whole page (a history restore asks for the
 * page).
 */
export const isFragmentRequest = (c: Context) =>
  c.req.header('hx-request') === 'true' && c.req.header('hx-history-restore-request') !== 'true';
