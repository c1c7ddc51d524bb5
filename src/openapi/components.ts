import type { z } from 'zod';

const named = new Map<string, z.ZodType>();

/**
 * Names response schemas after the hosted service's components: the served document lists
 * them under `components.schemas`, in the order named, and refers to them by name wherever
 * they are used. Each domain's module names its own when it loads.
 */
export function nameComponents(components: Readonly<Record<string, z.ZodType>>): void {
  for (const [name, schema] of Object.entries(components)) named.set(name, schema);
}

/** The components named so far, in the order named. */
export const namedComponents = (): ReadonlyMap<string, z.ZodType> => named;
