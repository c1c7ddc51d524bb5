import type { z } from 'zod';

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** An error response an endpoint can give: named example bodies, the first being what `Prefer: code=<status>` answers. */
export interface ErrorResponse {
  status: number;
  description: string;
  examples: Readonly<Record<string, unknown>>;
}

export interface SuccessResponse {
  status: number;
  description: string;
  /** The body's schema; none for a body-less answer (204). */
  schema?: z.ZodType;
  /** Default application/json. */
  contentType?: string;
}

export type Schema = z.ZodType | undefined;

/** One endpoint, declared once: what it takes, what it answers, and the errors it can give. */
export interface RouteDeclaration<P extends Schema = Schema, Q extends Schema = Schema, B extends Schema = Schema> {
  method: Method;
  /** Relative to the app the route is declared on; `:name` is a path parameter. */
  path: string;
  summary: string;
  description?: string;
  params?: P;
  query?: Q;
  /** Query parameters read as lists (see queryParams). */
  queryLists?: readonly string[];
  body?: B;
  /** The body may be left out (FastAPI's `body: Model | None = None`): the handler then gets undefined. */
  bodyOptional?: boolean;
  response: SuccessResponse | readonly SuccessResponse[];
  /** Beyond those the app's guards and the request's parts give (401/403, 400/413/422). */
  errors?: readonly ErrorResponse[];
}

type Parsed<S extends Schema> = S extends z.ZodType ? z.output<S> : undefined;

export interface RouteInput<P extends Schema, Q extends Schema, B extends Schema> {
  params: Parsed<P>;
  query: Parsed<Q>;
  body: Parsed<B>;
}

/** A route as the served document describes it: its full path, its tag and every error it can give. */
export interface DocumentedRoute {
  declaration: RouteDeclaration;
  /** Hono syntax, from the root. */
  path: string;
  tag: string;
  /** Grows as the route is mounted under a guarded folder (see OpenApiHono.guardFolder). */
  errors: ErrorResponse[];
}
