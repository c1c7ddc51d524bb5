import { z } from 'zod';
import { customIssue } from '../shared/errors.ts';
import { globMatcher, MAX_GLOB_LENGTH, MAX_GLOB_WILDCARDS } from './glob.ts';

export const REQUEST_SOURCES = ['api', 'objstore'] as const;
export type RequestSource = (typeof REQUEST_SOURCES)[number];

const HARNESS_FOLDERS = ['/_localplane', '/docs', '/ui'];
const HARNESS_PATHS = new Set(['/openapi.json', ...HARNESS_FOLDERS]);
const HARNESS_PREFIXES = HARNESS_FOLDERS.map((folder) => `${folder}/`);

/**
 * The harness's own paths, never journalled or faulted: the admin API, the API's description (/openapi.json, /docs) and
 * the dashboard (/ui).
 */
export const isHarnessPath = (path: string) =>
  HARNESS_PATHS.has(path) || HARNESS_PREFIXES.some((prefix) => path.startsWith(prefix));

/**
 * Whether every path a glob matches is the harness's own: its text before any wildcard is a harness path, and ends in
 * `/` when a wildcard follows.
 */
export function onlyHarnessPaths(glob: string): boolean {
  const [literal = ''] = glob.split('*');
  return (literal === glob || literal.endsWith('/')) && isHarnessPath(literal);
}

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
  .refine((glob) => (glob.match(/\*+/g) ?? []).length <= MAX_GLOB_WILDCARDS, {
    message: `A glob has at most ${MAX_GLOB_WILDCARDS} wildcards`,
  });

export const pathGlob = globText.refine((glob) => glob.startsWith('/') || glob.startsWith('*'), {
  message: 'A path glob starts with / (or a wildcard)',
});

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
export type RequestMatch = {
  method?: string;
  path?: string;
  workspace_id?: string;
  header?: HeaderMatch;
  source?: RequestSource;
};
/** The fields a match may name. */
export const MATCH_FIELDS = Object.keys(requestMatchFields) as [keyof RequestMatch, ...(keyof RequestMatch)[]];

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

/** A field of a match that a request missed: what the match wanted and what the request had. */
export interface MissedField {
  field: keyof RequestMatch;
  wanted: string;
  got: string | null;
}

/** A given field of a match as a test, and what a request shows of that field. */
interface FieldTest {
  field: keyof RequestMatch;
  wanted: string;
  holds(request: MatchableRequest): boolean;
  got(request: MatchableRequest): string | null;
}

function fieldTests(match: RequestMatch): FieldTest[] {
  const tests: FieldTest[] = [];
  if (match.method !== undefined) {
    const method = match.method.toUpperCase();
    tests.push({
      field: 'method',
      wanted: method,
      holds: (request) => request.method === method,
      got: (request) => request.method,
    });
  }
  const { source } = match;
  if (source !== undefined)
    tests.push({
      field: 'source',
      wanted: source,
      holds: (request) => request.source === source,
      got: (request) => request.source,
    });
  if (match.path !== undefined) {
    const glob = globMatcher(match.path);
    const got = (request: MatchableRequest) => {
      const decoded = decodedPath(request.path);
      return decoded === request.path ? request.path : `${request.path} (decoded ${decoded})`;
    };
    tests.push({ field: 'path', wanted: match.path, holds: (request) => pathHolds(glob, request), got });
  }
  if (match.workspace_id !== undefined) {
    const workspaceId = match.workspace_id.toLowerCase();
    tests.push({
      field: 'workspace_id',
      wanted: workspaceId,
      holds: (request) => request.workspaceId() === workspaceId,
      got: (request) => request.workspaceId(),
    });
  }
  const { header } = match;
  if (header !== undefined) {
    const shown = (value: string | undefined) => (value === undefined ? null : `${header.name}: ${value}`);
    tests.push({
      field: 'header',
      wanted: header.value === undefined ? header.name : `${header.name}: ${header.value}`,
      holds: (request) => headerHolds(header, request.header(header.name)),
      got: (request) => shown(request.header(header.name)),
    });
  }
  return tests;
}

/** A compiled test of a request against a match (all given fields must hold). */
export function requestMatcher(match: RequestMatch): (request: MatchableRequest) => boolean {
  const tests = fieldTests(match);
  return (request) => tests.every((test) => test.holds(request));
}

/** The fields of a match that a request misses, with what it wanted and what the request had (none: it matches). */
export function missedFields(match: RequestMatch): (request: MatchableRequest) => MissedField[] {
  const tests = fieldTests(match);
  return (request) =>
    tests
      .filter((test) => !test.holds(request))
      .map(({ field, wanted, got }) => ({ field, wanted, got: got(request) }));
}

/** Whether a header's value (undefined: not there) is what the match wants. */
export function headerHolds(match: HeaderMatch, value: string | undefined): boolean {
  return value !== undefined && (match.value === undefined || match.value === value);
}
