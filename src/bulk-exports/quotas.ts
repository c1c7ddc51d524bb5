import type { Limits } from '../config.ts';
import { HttpError } from '../shared/errors.ts';
import { MICROS_PER_HOUR, MICROS_PER_SECOND, type Micros } from '../shared/time.ts';
import type { BulkExportStore } from './store.ts';

export const hourlyCreatesExceeded = (limits: Limits) =>
  `Rate limit exceeded: a workspace may create at most ${limits.export_creates_per_hour} bulk exports per hour. ` +
  `Try again later.`;
export const recurringExportsExceeded = (limits: Limits) =>
  `Too many recurring bulk exports: a workspace may have at most ${limits.recurring_exports_per_workspace} active ` +
  `at once. Cancel one before creating another.`;

/**
 * The 429 of the rolling hour's creates, or null when another create fits. Retry-After says
 * in whole seconds, rounded up, when one will: once the create that fills the hour (the
 * limit-th newest) is an hour old. None fits ever under a limit of 0: no Retry-After then.
 */
function hourlyCreatesRefusal(store: BulkExportStore, limits: Limits, tenantId: string, now: Micros): HttpError | null {
  const perHour = limits.export_creates_per_hour;
  if (perHour === 0) return new HttpError(429, hourlyCreatesExceeded(limits));
  const filling = store.nthNewestCreateBetween(tenantId, now - MICROS_PER_HOUR, now, perHour);
  if (filling === null) return null;
  const retryAfter = Math.max(1, Math.ceil((filling + MICROS_PER_HOUR - now) / MICROS_PER_SECOND));
  return new HttpError(429, hourlyCreatesExceeded(limits), { 'retry-after': String(retryAfter) });
}

/**
 * The real service's create limits, checked before anything is stored: 429 past the
 * creates of a rolling hour (on the emulator clock; children a recurring export spawns
 * are not creates), and past the active recurring exports of a workspace.
 */
export function checkCreateQuota(
  store: BulkExportStore,
  limits: Limits,
  tenantId: string,
  recurring: boolean,
  now: Micros,
): void {
  const refusal = hourlyCreatesRefusal(store, limits, tenantId, now);
  if (refusal) throw refusal;
  if (recurring && store.activeRecurringCount(tenantId) >= limits.recurring_exports_per_workspace) {
    throw new HttpError(429, recurringExportsExceeded(limits));
  }
}
