import { z } from 'zod';
import { customIssue } from '../shared/errors.ts';
import { globMatcher, MAX_GLOB_LENGTH, MAX_GLOB_WILDCARDS } from './glob.ts';

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

/** A glob (see glob.ts) of at most MAX_GLOB_LENGTH characters and MAX_GLOB_WILDCARDS wildcards. */
export const globText = z
  .string()
  .min(1)
  .max(MAX_GLOB_LENGTH)
  .refine((glob) => (glob.match(/\*+/g) ?? []).length <= MAX_GLOB_WILDCARDS, { message: `A glob has at most ${MAX_GLOB_WILDCARDS} wildcards` });

export const pathGlob = globText.refine((glob) => glob.startsWith('/') || glob.startsWith('*'), { message: 'A path glob starts with / (or a wildcard)' });

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

/**
 * The path as a router reads it: percent-decoded, an encoded `/` kept as `%2F` inside its
 * segment; the path itself when it holds no escape, or a malformed one.
 */
export function decodedPath(path: string): string {
  if (!path.includes('%')) return path;
  try {
    return decodeURIComponent(path.replace(/%2f/gi, '%252F'));
  } catch {
    return path;
  }
}

/** An objstore path naming a bucket alone, with or without its trailing slash. */
const BUCKET_ALONE = /^\/[^/]+\/?$/;

/**
 * Whether a path glob matches the request's path as it arrived or as decoded (clients encode
 * differently: the AWS SDK sends `=` as `%3D`); a bucket's own requests match `/bucket` and
 * `/bucket/` alike.
 */
function pathHolds(glob: (path: string) => boolean, request: MatchableRequest): boolean {
  const { path } = request;
  if (glob(path)) return true;
  const decoded = decodedPath(path);
  if (decoded !== path && glob(decoded)) return true;
  if (request.source !== 'objstore' || !BUCKET_ALONE.test(decoded)) return false;
  return glob(decoded.endsWith('/') ? decoded.slice(0, -1) : `${decoded}/`);
}

/** A compiled test of a request against a match (all given fields must hold). */
export function requestMatcher(match: RequestMatch): (request: MatchableRequest) => boolean {
  const method = match.method?.toUpperCase();
  const path = match.path === undefined ? null : globMatcher(match.path);
  const workspaceId = match.workspace_id?.toLowerCase();
  const { header, source } = match;
  return (request) =>
    (method === undefined || request.method === method) &&
    (path === null || pathHolds(path, request)) &&
    (workspaceId === undefined || request.workspaceId() === workspaceId) &&
    (source === undefined || request.source === source) &&
    (header === undefined || headerHolds(header, request.header(header.name)));
}

function headerHolds(match: HeaderMatch, value: string | undefined): boolean {
  return value !== undefined && (match.value === undefined || match.value === value);
}
