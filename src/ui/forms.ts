import type { Context } from 'hono';
import { BODY_UNREADABLE } from '../shared/validation.ts';
import { DashboardApiError } from './api.ts';
import { isFragmentRequest } from './layout.tsx';

/** A form's fields as sent (text fields only), trimmed. */
export type FormValues = Record<string, string>;

/** What a form shows again: the values sent and the API's refusal, if it refused them. */
export interface FormState {
  values?: FormValues;
  error?: string;
}

/**
 * A posted form's text fields, trimmed (a repeated field gives its last value); a body that is no form is a 400, as the
 * API words it.
 */
export async function formValues(c: Context): Promise<FormValues> {
  let body: Record<string, unknown>;
  try {
    body = await c.req.parseBody();
  } catch {
    throw new DashboardApiError(400, BODY_UNREADABLE);
  }
  const values: FormValues = {};
  for (const [name, value] of Object.entries(body)) if (typeof value === 'string') values[name] = value.trim();
  return values;
}

/** A field left empty is left out of the request, so the API applies its default. */
export const optionalText = (text: string | undefined) => (text ? text : undefined);

/** A number typed in a field; what is not one goes to the API as typed, for the API to refuse in its words. */
export function optionalNumber(text: string | undefined): number | string | undefined {
  if (!text) return undefined;
  const number = Number(text);
  return Number.isFinite(number) ? number : text;
}

/** The API's refusal of an action as the form shows it; any other failure is not the form's to show. */
export function refusal(error: unknown): { status: number; detail: string } {
  if (error instanceof DashboardApiError && error.status < 500) return { status: error.status, detail: error.detail };
  throw error;
}

/**
 * The status of a page or fragment showing a refused action: the API's for a whole page, 200 for
 * htmx, which swaps in only what a success status brings (the alert would not be shown).
 */
export const refusedStatus = (c: Context, status: number) => (isFragmentRequest(c) ? 200 : status);
