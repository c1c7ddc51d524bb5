import type { Limits } from '../config.ts';
import { HttpError } from '../shared/errors.ts';
import { MICROS_PER_HOUR, type Micros } from '../shared/time.ts';
import type { BulkExportStore } from './store.ts';

export const hourlyCreatesExceeded = (limits: Limits) =>
  `Rate limit exceeded: a workspace may create at most ${limits.export_creates_per_hour} bulk exports per hour. Try again later.`;
export const recurringExportsExceeded = (limits: Limits) =>
  `Too many recurring bulk exports: a workspace may have at most ${limits.recurring_exports_per_workspace} active at once. Cancel one before creating another.`;

/**
 * The real service's create limits, checked before anything is stored: 429 past the
 * creates of a rolling hour (on the emulator clock; children a recurring export spawns
 * are not creates), and past the active recurring exports of a workspace.
 */
export function checkCreateQuota(store: BulkExportStore, limits: Limits, tenantId: string, recurring: boolean, now: Micros): void {
  if (store.createdBetween(tenantId, now - MICROS_PER_HOUR, now) >= limits.export_creates_per_hour) {
    throw new HttpError(429, hourlyCreatesExceeded(limits));
  }
  if (recurring && store.activeRecurringCount(tenantId) >= limits.recurring_exports_per_workspace) {
    throw new HttpError(429, recurringExportsExceeded(limits));
  }
}
