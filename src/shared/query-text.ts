import type { z } from 'zod';

/**
 * A query's parameters as code passes them: each the text the URL would carry, or a number or boolean written as text.
 */
export type QueryInput<S extends z.ZodType> = { [K in keyof z.input<S>]?: z.input<S>[K] | number | boolean };

/** The parameters as a URL carries them: text, those left undefined dropped. */
export function queryText(query: Readonly<Record<string, unknown>>): Record<string, string> {
  const text: Record<string, string> = {};
  for (const [name, value] of Object.entries(query)) if (value !== undefined) text[name] = String(value);
  return text;
}
