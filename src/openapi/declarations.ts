import type { z } from 'zod';

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

/**
 * An error response an endpoint can give: named example bodies, the first being what `Prefer: code=<status>` answers.
 */
export interface ErrorResponse {
  status: number;
  description: string;
  examples: Readonly<Record<string, unknown>>;
  /** Headers it may carry beyond the framing ones: OpenAPI Header Objects by name. */
  headers?: Readonly<Record<string, ResponseHeader>>;
}

export interface ResponseHeader {
  description: string;
  /** A JSON Schema. */
  schema: Readonly<Record<string, unknown>>;
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

/** A credential a request carries, as the document's components.securitySchemes describes it. */
export interface SecurityScheme {
  /** Its key in components.securitySchemes, by which operations name it. */
  id: string;
  /** An OpenAPI Security Scheme Object: a header, or a bearer token in Authorization. */
  scheme:
    | { type: 'apiKey'; in: 'header'; name: string; description?: string }
    | { type: 'http'; scheme: 'bearer'; description?: string };
}

/**
 * What lets a request through: any one of the alternatives, each the schemes sent together
 * (OpenAPI's `security`: `[[a, b], [a]]` is a and b, or a alone).
 */
export type SecurityRequirement = readonly (readonly SecurityScheme[])[];

/**
 * What a guard documents on each route it guards: the errors it can give, and the credentials it reads (none if no
 * security).
 */
export interface GuardDocumentation {
  errors: readonly ErrorResponse[];
  security?: SecurityRequirement;
}

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
  /** A body other than JSON (an uploaded file), read by the handler itself: documented by its content type. */
  rawBody?: { contentType: string; description: string };
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
  /** What its guards read; none for a route anyone may call. */
  security?: SecurityRequirement;
}
