/**
 * What every fixture file shares: how it is read (whole, bounded, parsed by its schema) and the pieces its schemas are
 * made of. Each domain declares the schema of its own file.
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';

/** A fixture file is read whole: a larger one is refused before it is read. */
export const MAX_FIXTURE_FILE_BYTES = 64 * 1024 * 1024;
/** The most deployments, destinations or exports one workspace of the fixtures lists one by one. */
export const MAX_LISTED = 10_000;

export const fixtureTimestamp = z.iso.datetime({ offset: true });

export const invalidFixtureFile = (path: string, error: z.ZodError) =>
  new Error(`invalid fixture file ${path}: ${z.prettifyError(error)}`);

/** A fixture file's value, as its schema parses it, and its text. */
export function readFixtureFile<S extends z.ZodType>(
  dir: string,
  name: string,
  schema: S,
): { value: z.output<S>; text: string } {
  const path = join(dir, name);
  const size = statSync(path).size;
  if (size > MAX_FIXTURE_FILE_BYTES)
    throw new Error(
      `invalid fixture file ${path}: ${size} bytes, more than the ${MAX_FIXTURE_FILE_BYTES} a fixture file may hold`,
    );
  const text = readFileSync(path, 'utf8');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new Error(`invalid fixture file ${path}: not JSON (${(error as Error).message})`, { cause: error });
  }
  // Parsed once per start: zod's compiled fast path would cost more to generate than it saves.
  const result = schema.safeParse(json, { jitless: true });
  if (!result.success) throw invalidFixtureFile(path, result.error);
  return { value: result.data, text };
}

/** Issues for each id that `idsOf` finds more than once in the file (a table's primary key). */
export function refineUniqueIds<T>(what: string, idsOf: (value: T) => { id: string; path: PropertyKey[] }[]) {
  return (value: T, ctx: z.RefinementCtx) => {
    const seen = new Set<string>();
    for (const { id, path } of idsOf(value)) {
      if (seen.has(id)) ctx.addIssue({ code: 'custom', message: `${what} ${id} appears twice`, path });
      seen.add(id);
    }
  };
}
