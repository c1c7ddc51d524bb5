import { z } from 'zod';
import { customIssue } from '../shared/errors.ts';

export const REQUEST_SOURCES = ['api', 'objstore'] as const;
export type RequestSource = (typeof REQUEST_SOURCES)[number];

/** What the journal's filters and the fault rules match a request on. */
export interface MatchableRequest {
  source: RequestSource;
  method: string;
  path: string;
  /** Asked only by matches on a workspace (it may cost a lookup). */
  workspaceId(): string | null;
  /** A request header by its name (any case); undefined when not sent. */
  header(name: string): string | undefined;
}

type GlobToken = { literal: string } | 'segment' | 'any';

/** A glob's parts: `**` any run of characters (`/` included), `*` any run within one path segment. */
function globTokens(glob: string): GlobToken[] {
  return glob.split(/(\*+)/).flatMap((part): GlobToken[] => (part === '' ? [] : part.startsWith('*') ? [part.length === 1 ? 'segment' : 'any'] : [{ literal: part }]));
}

/**
 * A test of paths against a glob. Dynamic programming over (glob part, path position), so
 * that no glob costs more than parts x path length (a backtracking regex could take forever).
 */
export function globMatcher(glob: string): (path: string) => boolean {
  const tokens = globTokens(glob);
  if (tokens.length === 1 && typeof tokens[0] === 'object') return (path) => path === glob;
  // Two rows of the table, reused from path to path: row t holds whether tokens t.. match path.slice(p).
  let next = new Uint8Array(0);
  let current = new Uint8Array(0);
  return (path) => {
    if (next.length <= path.length) {
      next = new Uint8Array(path.length + 1);
      current = new Uint8Array(path.length + 1);
    }
    next.fill(0, 0, path.length + 1);
    next[path.length] = 1;
    for (let t = tokens.length - 1; t >= 0; t--) {
      const token = tokens[t]!;
      for (let p = path.length; p >= 0; p--) {
        if (typeof token === 'object') {
          current[p] = path.startsWith(token.literal, p) ? next[p + token.literal.length]! : 0;
        } else {
          const extend = p < path.length && (token === 'any' || path[p] !== '/') ? current[p + 1]! : 0;
          current[p] = next[p]! | extend;
        }
      }
      [next, current] = [current, next];
    }
    return next[0] === 1;
  };
}

/** At most this many wildcards in a glob, so matching stays cheap. */
const MAX_GLOB_WILDCARDS = 32;

export const pathGlob = z
  .string()
  .min(1)
  .max(1024)
  .refine((glob) => glob.startsWith('/') || glob.startsWith('*'), { message: 'A path glob starts with / (or a wildcard)' })
  .refine((glob) => (glob.match(/\*+/g) ?? []).length <= MAX_GLOB_WILDCARDS, { message: `A path glob has at most ${MAX_GLOB_WILDCARDS} wildcards` });

const headerName = z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/);

/** A request header: its name, and the exact value it must have (any value when omitted). */
export const headerMatch = z.strictObject({ name: headerName, value: z.string().optional() });
export type HeaderMatch = z.output<typeof headerMatch>;

/** `Name:value` (or `Name` for any value), as a query parameter gives it. */
export const headerMatchText = z.string().transform((text, ctx): HeaderMatch => {
  const colon = text.indexOf(':');
  const name = (colon === -1 ? text : text.slice(0, colon)).trim();
  if (!headerName.safeParse(name).success) {
    ctx.addIssue(customIssue('value_error', 'a header match is Name:value (or Name alone for any value)'));
    return z.NEVER;
  }
  return colon === -1 ? { name } : { name, value: text.slice(colon + 1).trim() };
});

/** The request fields the journal's filters and the fault rules have in common. */
export const requestMatchFields = {
  method: z.string().min(1).max(32).optional(),
  path: pathGlob.optional(),
  workspace_id: z.guid().optional(),
  header: headerMatch.optional(),
  source: z.enum(REQUEST_SOURCES).optional(),
};
export type RequestMatch = { method?: string; path?: string; workspace_id?: string; header?: HeaderMatch; source?: RequestSource };

/** A compiled test of a request against a match (all given fields must hold). */
export function requestMatcher(match: RequestMatch): (request: MatchableRequest) => boolean {
  const method = match.method?.toUpperCase();
  const path = match.path === undefined ? null : globMatcher(match.path);
  const workspaceId = match.workspace_id?.toLowerCase();
  const { header, source } = match;
  return (request) =>
    (method === undefined || request.method === method) &&
    (path === null || path(request.path)) &&
    (workspaceId === undefined || request.workspaceId() === workspaceId) &&
    (source === undefined || request.source === source) &&
    (header === undefined || headerHolds(header, request.header(header.name)));
}

function headerHolds(match: HeaderMatch, value: string | undefined): boolean {
  return value !== undefined && (match.value === undefined || match.value === value);
}
