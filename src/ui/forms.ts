import type { Context } from 'hono';
import { BODY_UNREADABLE } from '../shared/validation.ts';
import { DashboardApiError, type ApiIssue } from './api.ts';
import { isFragmentRequest } from './fragments.ts';

/** A form's fields as sent (text fields only), trimmed. */
export type FormValues = Record<string, string>;

/** What a form shows again: the values sent and the API's refusal, if it refused them. */
export interface FormState {
  values?: FormValues;
  /** The refusal, or the part of it that is about no field of the form. */
  error?: string;
  /** The API's words on each field it refused, by the field's name (see Field in layout.tsx). */
  fieldErrors?: Record<string, string>;
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

/** The request parts a 422 item's location starts with: the form's fields are named after what follows. */
const REQUEST_PARTS = new Set(['body', 'query', 'path', 'header']);

/** A validator's message in plain words: without its "Value error, " and starting as a sentence. */
export function plainMessage(message: string): string {
  const words = message.replace(/^Value error, /, '');
  return /^[a-z]+\b(?!_)/.test(words) ? words[0]!.toUpperCase() + words.slice(1) : words;
}

/**
 * The field of a form that sent the value a 422 item refused: the longest run of the item's location (after its
 * request part) that, joined with `_`, names a field the form sent, the innermost of equals.
 * `['body', 'match', 'path']` is `match_path`, `['body', 'action', 'status']` is `status`,
 * `['body', 'action', 'headers', 'X-A']` is `headers`; a form's field named with `.` matches too
 * (`['body', 'source_config', 'repo_url']` is `source_config.repo_url` where the form has that field).
 */
function fieldOf({ loc }: ApiIssue, fields: ReadonlySet<string>): string | undefined {
  const path = loc.map(String);
  if (REQUEST_PARTS.has(path[0]!)) path.shift();
  for (let length = path.length; length > 0; length--) {
    for (let start = path.length - length; start >= 0; start--) {
      const run = path.slice(start, start + length);
      // A form may name a nested field as the API's body nests it: `source_config.repo_url`.
      const name = [run.join('_'), run.join('.')].find((joined) => fields.has(joined));
      if (name !== undefined) return name;
    }
  }
  return undefined;
}

/**
 * The API's refusal of what a form sent, as the form shows it again: each 422 item at the field that sent it, in plain
 * words; what is about no field (or a refusal that is no 422) as `error`. Any other failure is not the form's to show.
 */
export function refusedForm(error: unknown, values: FormValues): { status: number; state: FormState } {
  const { status, detail } = refusal(error);
  const issues = (error as DashboardApiError).issues;
  if (issues.length === 0) return { status, state: { values, error: detail } };
  const fields = new Set(Object.keys(values));
  const fieldErrors: Record<string, string> = {};
  const others: string[] = [];
  for (const issue of issues) {
    const field = fieldOf(issue, fields);
    const message = plainMessage(issue.msg);
    if (field === undefined) {
      const where = (REQUEST_PARTS.has(String(issue.loc[0])) ? issue.loc.slice(1) : issue.loc).join('.');
      others.push(where ? `${where}: ${message}` : message);
    } else fieldErrors[field] = fieldErrors[field] ? `${fieldErrors[field]}; ${message}` : message;
  }
  return {
    status,
    state: { values, fieldErrors, ...(others.length > 0 ? { error: others.join('; ') } : {}) },
  };
}

/**
 * The API's refusal of a form whose words are about one field (an unreadable span, a refused statement): what
 * refusedForm would show in the form's alert is shown at that field too.
 */
export function refusedAt(field: string, error: unknown, values: FormValues): { status: number; state: FormState } {
  const { status, state } = refusedForm(error, values);
  if (state.error === undefined) return { status, state };
  const { error: message, fieldErrors = {} } = state;
  const joined = fieldErrors[field] ? `${fieldErrors[field]}; ${message}` : message;
  return { status, state: { values, fieldErrors: { ...fieldErrors, [field]: joined } } };
}

/** Every value of a repeated field (checkboxes of one name), trimmed; a body that is no form is a 400. */
export async function formList(c: Context, name: string): Promise<string[]> {
  let values: unknown;
  try {
    values = (await c.req.parseBody({ all: true }))[name];
  } catch {
    throw new DashboardApiError(400, BODY_UNREADABLE);
  }
  return (Array.isArray(values) ? values : [values])
    .filter((value) => typeof value === 'string')
    .map((value) => value.trim());
}
